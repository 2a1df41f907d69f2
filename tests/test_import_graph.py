"""The light commands start light: `--help`, `--version` and a group's help import click and a
few vocabulary modules, never the journal, the contracts, an engine or a heavy library (each
costs a hook or a status line its start-up time: issue 36)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from autoresearch.experiments import (
    InitParams,
    LogParams,
    RunParams,
    init_session,
    log_experiment,
    run_experiment,
)
from autoresearch.supervisor.prepare import prepare
from helpers import make_repo

# Runs the real entry point in a fresh interpreter (then the probe prints what it saw).
RUN_MAIN = """
import sys
from autoresearch.cli import main
sys.argv = ["autoresearch", *sys.argv[1:]]
try:
    main()
except SystemExit:
    pass
seen = sorted(sys.modules)  # what it imported (json among them or not: then the probe's)
import json
"""
PROBE = RUN_MAIN + "print(json.dumps(seen), file=sys.stderr)\n"

HEAVY = (
    "autoresearch.journal",
    "autoresearch.contracts",
    "autoresearch.supervisor",
    "autoresearch.experiments",
    "autoresearch.worker",
    "autoresearch.mcp",
    "autoresearch.crash",
    "sqlite3",
    "rich",
    "yaml",
    "mcp",
    "pydantic",
    "matplotlib",
    "mlflow",
    "ctypes",  # proc.py's subreaper call needs it, a driver only
    "hashlib",  # OpenSSL: paths.py's repository key needs it, a command that reads state
    "dataclasses",  # a record class builds its methods with exec: cli/lazy.py's is a NamedTuple
    *(
        # the process layer: the loop options' sandbox modes (confine.py) brought it to every
        # command, as cli/options.py now brings it to the commands that take them only
        "autoresearch.confine",
        "autoresearch.proc",
        "autoresearch.cli.options",
        "subprocess",
        "selectors",
    ),
)


# What a command that reads runs (`status`, a hook, `mcp`) must not import: the engine that
# drives runs (its threads, agents and evaluator) and the YAML parser of sandbox.md.
ENGINE = (
    "autoresearch.supervisor.prepare",
    "autoresearch.supervisor.step",
    "autoresearch.supervisor.record",
    "autoresearch.supervisor.executor",
    "autoresearch.supervisor.lifecycle",
    "autoresearch.agents",
    "autoresearch.evaluate",
    "concurrent.futures",
    "logging",
    "yaml",
)

# What reading a run needs no more than the engine does: a driven run's handle (its sandbox,
# reset rule and child registry) and git.py, whose question (where the repository is)
# git_files.py answers from files
DRIVEN = (
    "autoresearch.supervisor.handle",
    "autoresearch.git",
    "autoresearch.children",
    "autoresearch.reset",
)


def imported_by(*args: str, cwd: Path | None = None, stdin: str = "") -> list[str]:
    done = subprocess.run(
        [sys.executable, "-c", PROBE, *args],
        capture_output=True,
        text=True,
        check=True,
        cwd=cwd,
        input=stdin,
    )
    modules: list[str] = json.loads(done.stderr.splitlines()[-1])
    return modules


def among(modules: list[str], banned: tuple[str, ...]) -> list[str]:
    return [m for m in modules if any(m == b or m.startswith(f"{b}.") for b in banned)]


def heavy(modules: list[str]) -> list[str]:
    return among(modules, HEAVY)


@pytest.mark.parametrize(
    "args",
    [("--help",), ("--version",), ("exp", "--help"), ("exp", "hook", "--help"), ("mcp", "--help")],
    ids=" ".join,
)
def test_a_light_command_imports_nothing_heavy(args: tuple[str, ...]) -> None:
    assert heavy(imported_by(*args)) == []


@pytest.mark.parametrize("args", [("--help",), ("--version",), ("exp", "--help")], ids=" ".join)
def test_a_group_help_imports_no_pathlib_nor_json(args: tuple[str, ...]) -> None:
    # a listing of commands names no path and writes no JSON: pathlib (with urllib.parse and
    # ipaddress) and json are imported where a command uses them (cli/common.py)
    assert among(imported_by(*args), ("pathlib", "urllib", "ipaddress", "json")) == []


def test_help_imports_no_command_module() -> None:
    # the listing comes from the table in cli/__init__.py: no command's module is imported
    commands = [m for m in imported_by("--help") if m.startswith("autoresearch.cli.")]
    assert commands == [
        "autoresearch.cli.common",
        "autoresearch.cli.lazy",
        "autoresearch.cli.startup",
    ]


def test_the_probe_sees_a_heavy_import() -> None:
    # `status` reads the journal: were the probe blind, the tests above would pass vacuously
    assert "autoresearch.journal.views" in heavy(imported_by("status", "--help"))


@pytest.mark.parametrize(
    ("args", "offered"),
    [(("stauts",), "Did you mean 'status'?"), (("exp", "hok"), "'hook', 'hooks'")],
)
def test_a_mistyped_command_is_offered_one_not_imported_yet(
    args: tuple[str, ...], offered: str
) -> None:
    # in a fresh interpreter: no command module imported before the typo is resolved
    done = subprocess.run(
        [sys.executable, "-m", "autoresearch", *args], capture_output=True, text=True, check=False
    )
    assert done.returncode == 2
    assert offered in done.stderr.splitlines()[-1]


# What `status` needs no more than `--help` does: the commands that drive runs and their
# options (cli/status_cmd.py is a module of its own), the sandbox and the process layer (a
# reader starts no process; the modes its records name are sandbox_modes.py's)
READER_SKIPS = (
    "autoresearch.cli.run_cmds",
    "autoresearch.cli.loop_cmds",
    "autoresearch.cli.options",
    "autoresearch.confine",
    "autoresearch.proc",
    "subprocess",
    # nor a run's frozen mission's contracts: sandbox.md's parser and the tune, screen and
    # isolation contracts below it (journal/runs.py decodes it at its first read; the views
    # read its noise policy alone)
    "autoresearch.contracts.frozen",
    "autoresearch.contracts.sandbox",
    "autoresearch.contracts.tune",
    "autoresearch.contracts.screen",
    "autoresearch.contracts.isolation",
    # nor an iteration's agent session (decoded at its first read: a run with one agent shows
    # none of it)
    "autoresearch.contracts.agent_record",
    "autoresearch.journal.children",  # nor the child registry's store: a reader reaps nothing
    # nor hashlib, whose import loads OpenSSL: the state directory's name, the seals and an
    # archive's tie-break take CPython's own SHA-256 and BLAKE2b
    "hashlib",
    "secrets",  # journal/seals.py makes a seal key once per machine: no reader imports it
    "difflib",  # the closest id to an unknown one (supervisor/run_ids.py): a typo's only
    # nor what only a writer needs: tempfile (atomic writes, a Ray node's folder) and shutil
    # (a backup's restore, the demo's next steps), with the compressors shutil brings
    "tempfile",
    "shutil",
    "shlex",  # a command quoted for a shell: only a demo's next steps
)


def test_status_reads_runs_without_the_engine(mission_dir: Path) -> None:
    with prepare(mission_dir, run_tag="T1") as h:
        run_id, root = h.run_id, h.repo.repo_root
    listing = imported_by("status", cwd=root)
    assert "autoresearch.journal.runs" in listing  # the probe saw the journal read
    banned = ENGINE + DRIVEN + READER_SKIPS
    assert among(listing, banned) == []
    # nor, listing the runs, what only one run's details show: its lanes, archive and agents
    one_run = (
        "autoresearch.journal.lanes",
        "autoresearch.supervisor.archive_view",
        "autoresearch.supervisor.portfolio",
        "autoresearch.supervisor.summary",  # its records (the headline is run_summary.py's)
        "autoresearch.contracts.stored_evaluation",  # an iteration's evaluation, decoded late
        # nor the loop's contract: a running run's pause is one key of it (RunRecord.paused)
        "autoresearch.contracts.loop",
        "autoresearch.journal.totals",  # nor a finished run's totals (supervisor/report.py)
        "autoresearch.journal.manifest",  # nor a run's manifest.json (`status RUN` shows it)
        "autoresearch.journal.iteration_records",  # nor any iteration as a record
        # nor any contract, a run's evaluator's among them: the listing reads its direction
        # alone (journal/runs.py decodes the rest at its first read)
        "autoresearch.contracts",
    )
    assert among(listing, one_run) == []
    # nor statistics (with random, decimal and fractions) while no reading varies: an interval
    # and a certified change import it where they are computed
    assert among(listing, ("statistics", "random", "decimal", "fractions")) == []
    assert among(imported_by("status", run_id, cwd=root), banned) == []


def test_a_run_of_a_command_agent_reads_no_package_metadata(mission_dir: Path) -> None:
    # importlib.metadata (~12 ms) answers plugins' names: a `cmd:` agent with no tracker names
    # none, and the suite starts ~1,500 runs and resumes (issue 36)
    root = mission_dir.parents[1]
    args = ("run", str(mission_dir), "--agent", "cmd:true", "--max-iterations", "1")
    seen = imported_by(*args, cwd=root)
    assert "autoresearch.supervisor.lifecycle" in seen  # the probe saw the run
    assert among(seen, ("importlib.metadata", "autoresearch.plugins")) == []
    # its progress goes into a pipe here: plain lines, written without rich (~26 ms); and a
    # single loop's driver never loads the lane scheduler
    assert among(seen, ("rich", "autoresearch.supervisor.lanes")) == []


# The record classes of autoresearch that a command's run defined: each frozen dataclass
# compiles its generated methods with exec at import (~0.5 ms), the largest share of what
# `status` costs beyond importing click (45 at f024c74).
RECORDS_PROBE = (
    RUN_MAIN
    + """
import dataclasses
print(json.dumps(sorted(
    f"{name}.{value.__name__}"
    for name, module in list(sys.modules.items())
    if name.startswith("autoresearch")
    for value in vars(module).values()
    if isinstance(value, type) and dataclasses.is_dataclass(value) and value.__module__ == name
)), file=sys.stderr)
"""
)
STATUS_RECORD_BUDGET = 1  # as many as today: a new one on this path must take one off


def test_status_listing_the_runs_builds_few_record_classes(mission_dir: Path) -> None:
    with prepare(mission_dir, run_tag="T1") as h:
        root = h.repo.repo_root
    done = subprocess.run(
        [sys.executable, "-c", RECORDS_PROBE, "status"],
        capture_output=True, text=True, check=True, cwd=root,
    )  # fmt: skip
    built: list[str] = json.loads(done.stderr.splitlines()[-1])
    assert "autoresearch.journal.runs.RunRecord" in built  # the probe saw the records
    # nor records of what `status` without RUN never shows: a run's manifest, its totals
    shown_elsewhere = ("RunManifest", "RunTotals", "IterationRecord")
    assert [name for name in built if name.rpartition(".")[2] in shown_elsewhere] == []
    # a new one on this path: import it where it is used, or make a fixed one a NamedTuple
    assert len(built) <= STATUS_RECORD_BUDGET, built


HARNESS = '#!/bin/bash\necho "METRIC score=$(cat value.txt)"\n'


@pytest.mark.parametrize("event", ["stop", "session-start"])
def test_a_hook_answers_without_the_engine_or_the_runner(tmp_path: Path, event: str) -> None:
    # a session with one logged experiment: the hook reads its ledger and status
    repo = make_repo(tmp_path / "repo")
    repo.write("autoresearch.sh", HARNESS)
    init_session(repo.root, InitParams(name="speed up", metric="score"))
    run_experiment(repo.root, RunParams())
    log_experiment(repo.root, LogParams(status="keep", description="baseline"))
    # a SessionStart after a compaction: the one that reads the session (any other adds nothing)
    payload = '{"source": "compact"}' if event == "session-start" else "{}"
    modules = imported_by("exp", "hook", event, cwd=repo.root, stdin=payload)
    assert "autoresearch.journal.sessions" in modules  # the probe saw the session read
    # nor the supervisor's run store and the contracts its records decode: a session's hook
    # reads the sessions table (journal/views.py names run records for its types only)
    session_engine = (
        "autoresearch.experiments.runner",
        "autoresearch.experiments.logger",
        "autoresearch.journal.runs",
        "autoresearch.contracts.frozen",
        # nor git.py: the session's worktree, repository and branch are read from git's files
        "autoresearch.git",
        "autoresearch.children",  # nor the child registry: a hook reaps no harness
        # nor the process layer: a hook starts no process (cli/options.py's sandbox modes
        # brought it to every command)
        "autoresearch.proc",
        "autoresearch.confine",
        "subprocess",
        # nor the run's decision table: a session's plateau is states.DEFAULT_PLATEAU
        "autoresearch.decide",
        "autoresearch.experiments.params",  # nor the parameters of init, run and log
        "secrets",  # nor what makes a seal key (once per machine)
        # nor a writer's tempfile and shutil: a hook writes nothing
        "tempfile",
        "shutil",
        # nor the session commands (init, run, log, …): the `exp` group is cli/exp_group.py
        "autoresearch.cli.exp_cmds",
        "hashlib",  # nor OpenSSL: the seals and the state directory's name do without it
    )
    # nor evaluate.py and the sandbox.md contract: how the benchmark ended is states.py's
    banned = (*ENGINE, *session_engine, "autoresearch.contracts.sandbox")
    assert among(modules, banned) == []


def test_the_mcp_server_starts_without_the_engine(tmp_path: Path) -> None:
    # the SDK brings logging and concurrent.futures itself, the job and worker tools the agents'
    # records and the session runner evaluate: the engine that drives runs stays out
    pytest.importorskip("mcp")
    built = (
        "import json, sys; from pathlib import Path; from autoresearch.mcp.server import "
        "build_server; build_server(Path.cwd()); print(json.dumps(sorted(sys.modules)))"
    )
    done = subprocess.run(
        [sys.executable, "-c", built], cwd=tmp_path, capture_output=True, text=True, check=True
    )
    modules: list[str] = json.loads(done.stdout.splitlines()[-1])
    assert "autoresearch.mcp.schemas" in modules  # the probe saw the server built
    engine = (*(m for m in ENGINE if m.startswith("autoresearch.supervisor.")), "yaml")
    assert among(modules, engine) == []


def test_a_stdio_mcp_server_answers_the_handshake_before_building_its_tools(
    tmp_path: Path,
) -> None:
    # building ~30 tools (their modules, the core's records, the SDK's models of their
    # signatures) is what a host no longer waits for before the answer to initialize:
    # mcp/first_use.py builds them at the first request past the handshake
    pytest.importorskip("mcp")
    built = (
        "import json, sys; from pathlib import Path; from autoresearch.mcp.server import "
        "build_server; build_server(Path.cwd(), at_first_use=True); "
        "print(json.dumps(sorted(sys.modules)))"
    )
    done = subprocess.run(
        [sys.executable, "-c", built], cwd=tmp_path, capture_output=True, text=True, check=True
    )
    modules: list[str] = json.loads(done.stdout.splitlines()[-1])
    assert "autoresearch.mcp.first_use" in modules  # the probe saw the server built
    tools = (
        "autoresearch.mcp.session_tools",
        "autoresearch.mcp.schemas",
        "autoresearch.mcp.job_tools",
        "autoresearch.mcp.worker_tools",
        "autoresearch.experiments",
        "autoresearch.journal",
        "autoresearch.contracts",
        "autoresearch.supervisor",
    )
    assert among(modules, tools) == []


def test_a_stop_without_a_session_reads_no_ledger(mission_dir: Path) -> None:
    # a repository whose journal holds a run and no session (the hook stays installed after
    # `exp off`): the answer needs the sessions table only, not a session's ledger and status
    with prepare(mission_dir, run_tag="T1") as h:
        root = h.repo.repo_root
    modules = imported_by("exp", "hook", "stop", cwd=root, stdin="{}")
    assert "autoresearch.experiments.hooks" in modules  # the probe saw the hook answer
    ledger = (
        "autoresearch.experiments.ledger",
        "autoresearch.experiments.status",
        "autoresearch.experiments.confidence",
        "autoresearch.experiments.notes",
        "autoresearch.contracts.check_record",  # nor a session run's checks (first read)
        # nor the noise arithmetic and its statistics: the journal's scan of its values at
        # open names a reading's role, states.py's
        "autoresearch.noise",
        "statistics",
        # nor the journal's open (its integrity scan, the seal check of every decided
        # iteration) and its records: a glance at the sessions table says no session is open
        "autoresearch.experiments.context",
        "autoresearch.journal.db",
        "autoresearch.journal.integrity",
        "autoresearch.journal.seals",
        "autoresearch.journal.records",
        "autoresearch.journal.sessions",
        # nor the session commands' verbs, nor the redactor of an answer it does not give
        "autoresearch.experiments.verbs",
        "autoresearch.redact",
        "autoresearch.contracts.evaluator_output",
    )
    assert among(modules, ledger) == []


def test_a_stop_that_lets_the_agent_stop_builds_no_status(tmp_path: Path) -> None:
    # a session whose last experiment was resumed already: the Stop reads the counters and the
    # segment's progress, and builds the status (its statistics) only for a resume message
    repo = make_repo(tmp_path / "repo")
    repo.write("autoresearch.sh", HARNESS)
    init_session(repo.root, InitParams(name="speed up", metric="score"))
    run_experiment(repo.root, RunParams())
    log_experiment(repo.root, LogParams(status="keep", description="baseline"))
    imported_by("exp", "hook", "stop", cwd=repo.root, stdin="{}")  # resumes once
    modules = imported_by("exp", "hook", "stop", cwd=repo.root, stdin="{}")
    assert "autoresearch.experiments.ledger" in modules  # the probe saw the session's Stop
    log = (repo.root / ".autoresearch" / "hooks.log").read_text().splitlines()
    assert "stop: stop (nothing logged since the last resume)" in log[-1]
    status = (
        "autoresearch.experiments.status",
        "autoresearch.experiments.confidence",
        "autoresearch.experiments.report",
        "autoresearch.noise",
        "statistics",
        # nor a report's JSON shapes, nor the evaluator's output contract (no benchmark judged)
        "autoresearch.jsonshape",
        "autoresearch.contracts.evaluator_output",
    )
    assert among(modules, status) == []
