"""The child environment is built in one place (`children.child_env`) and the reapers match
what it builds: a stray left by each kind of child is found by its owner's tag (real
processes), and no module spells a child variable itself."""

from __future__ import annotations

import ast
import json
import os
import signal
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from autoresearch import proc
from autoresearch.agents.base import SessionRequest
from autoresearch.agents.command import command_agent
from autoresearch.children import ChildEnv, ChildTag, child_env, harness_tag, job_tag, run_tag
from autoresearch.contracts.sandbox import EvaluatorSpec
from autoresearch.evaluate import evaluator_env, run_evaluator
from autoresearch.experiments import InitParams, RunParams, init_session, run_experiment
from autoresearch.settings import OWNER_TAG_NAMES
from autoresearch.supervisor import record
from autoresearch.supervisor.executor import EvaluationTask
from autoresearch.supervisor.prepare import prepare
from helpers import make_repo, not_a_subreaper, pid_alive, sandbox_text, until

SRC = Path(__file__).resolve().parents[1] / "src" / "autoresearch"
RUN = run_tag("r-1", Path("/wt"))
RUN_VARS = {"AUTORESEARCH_RUN_ID": "r-1", "AUTORESEARCH_WORKTREE": "/wt"}


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        (ChildEnv(RUN), RUN_VARS),
        (
            ChildEnv(RUN, iteration=3, mission_dir=Path("/wt/m"), sealed_dir=Path("/s")),
            {
                **RUN_VARS,
                "AUTORESEARCH_ITERATION": "3",
                "AUTORESEARCH_MISSION_DIR": "/wt/m",
                "AUTORESEARCH_SEALED_DIR": "/s",
            },
        ),
        (
            ChildEnv(
                RUN,
                iteration=0,
                instructions_file=Path("/r/i.md"),
                candidate_file=Path("/r/c.json"),
                base_commit="abc",
                lane=2,
                extra={"OPENAI_BASE_URL": "http://127.0.0.1:1/v1"},
            ),
            {
                **RUN_VARS,
                "AUTORESEARCH_ITERATION": "0",
                "AUTORESEARCH_INSTRUCTIONS_FILE": "/r/i.md",
                "AUTORESEARCH_CANDIDATE_FILE": "/r/c.json",
                "AUTORESEARCH_BASE_COMMIT": "abc",
                "AUTORESEARCH_LANE": "2",
                "OPENAI_BASE_URL": "http://127.0.0.1:1/v1",
            },
        ),
        (ChildEnv(RUN, lane=0), RUN_VARS),  # no lanes: no AUTORESEARCH_LANE
        (
            ChildEnv(harness_tag(4, 7, "/d"), sealed_dir=Path("/d/sealed")),
            {
                "AUTORESEARCH_EXP_RUN": "4-7",
                "AUTORESEARCH_EXP_DIR": "/d",
                "AUTORESEARCH_SEALED_DIR": "/d/sealed",
            },
        ),
        (ChildEnv(job_tag("job_a")), {"AUTORESEARCH_JOB_ID": "job_a"}),
    ],
    ids=["run", "evaluator", "agent", "no-lane", "harness", "job"],
)
def test_child_env_is_the_contract_names(spec: ChildEnv, expected: dict[str, str]) -> None:
    """The names are contract (commands read them): spelt out here, so a constant changed
    in settings.py fails this table."""
    assert child_env(spec) == expected


def _every_child_name() -> set[str]:
    full = dict(
        iteration=1,
        mission_dir=Path("/m"),
        sealed_dir=Path("/s"),
        instructions_file=Path("/i"),
        candidate_file=Path("/c"),
        base_commit="b",
        lane=1,
    )
    names: set[str] = set()
    for tag in (RUN, harness_tag(1, 1, "/d"), job_tag("j")):
        names |= set(child_env(ChildEnv(tag, **full)))  # type: ignore[arg-type]
    return names


def _literals(tree: ast.AST) -> Iterator[tuple[int, str]]:
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and id(node) not in docstrings:
            if isinstance(node.value, bytes):
                yield node.lineno, node.value.decode("utf-8", "replace")
            elif isinstance(node.value, str):
                yield node.lineno, node.value


def test_no_module_but_settings_spells_a_child_variable() -> None:
    """One definition: a literal copy elsewhere (a builder or a reaper matching
    b"AUTORESEARCH_RUN_ID=") would keep working after the constant changed, and drift."""
    names = _every_child_name()
    assert len(names) == 12
    copies = [
        f"{path.relative_to(SRC)}:{line}: {text!r}"
        for path in sorted(SRC.rglob("*.py"))
        if path.name != "settings.py"
        for line, text in _literals(ast.parse(path.read_text()))
        if any(name in text for name in names)
    ]
    assert copies == []


# --- real children of each door, and the reaper -------------------------------------------

# Leaves a stray in its own session (as an agent's or benchmark's background job would),
# its output detached so that the child itself can end; the stray writes its pid to the file.
STRAY = (
    "setsid sh -c 'echo $$ > \"$0\"; exec sleep 60' {pidfile} </dev/null >/dev/null 2>&1 & "
    "while [ ! -s {pidfile} ]; do sleep 0.02; done;"  # the child's group is stopped when it ends
)


@pytest.fixture(autouse=True)
def _not_a_subreaper() -> Iterator[None]:
    """These tests need a door's strays alive to read their environment."""
    with not_a_subreaper():
        yield


def _environ(pid: int) -> list[bytes]:
    return Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")


def _stray_pid(pidfile: Path) -> int:
    until(lambda: pidfile.is_file() and pidfile.read_text().strip(), what="the stray's pid")
    return int(pidfile.read_text())


def _reaped_by(tag: ChildTag, pid: int) -> bool:
    """Whether the reaper's own search for `tag` (what `children.reap` does after the
    registry) finds the stray's group and stops it."""
    try:
        group = os.getpgid(pid)
        found = proc.kill_marked(tag.markers())
        until(lambda: not pid_alive(pid), timeout=10, what="the stray to stop")
        return group in found
    finally:
        if pid_alive(pid):
            os.kill(pid, signal.SIGKILL)


def _evaluate(tmp_path: Path, env: dict[str, str]) -> None:
    command = STRAY.format(pidfile=tmp_path / "stray.pid") + ' echo \'{"pass": true, "score": 1}\''
    spec = EvaluatorSpec(command=command, format="json", timeout_seconds=30)
    record = run_evaluator(spec, tmp_path, env, tmp_path / "eval.log", grace_seconds=0.5)
    assert record.status == "pass", record.to_dict()


def _evaluator(tmp_path: Path) -> ChildTag:
    _evaluate(tmp_path, evaluator_env("r-eval", 2, tmp_path, tmp_path / "m", tmp_path / "s"))
    return run_tag("r-eval", tmp_path)


def _executor_task(tmp_path: Path) -> ChildTag:
    task = EvaluationTask(
        run_id="r-lane",
        lane=1,
        iteration=3,
        commit="c",
        tree=tmp_path,
        relative_dir="m",
        evaluator=EvaluatorSpec(command="true", format="json"),
        log_path=tmp_path / "eval.log",
        sealed_dir=tmp_path / "sealed",
    )
    _evaluate(tmp_path, task.env())
    return run_tag("r-lane", tmp_path)


def _run_checks(tmp_path: Path) -> ChildTag:
    """sandbox.md's checks of a sealed run, started by the supervisor itself."""
    repo = make_repo(tmp_path / "repo")
    repo.write("scripts/check.sh", STRAY.format(pidfile=tmp_path / "stray.pid") + "\n")
    extra = "sealed: [scripts/eval.py]\nchecks: sh scripts/check.sh\n"
    # unboxed: the stray notes its pid outside the repository (and in the box it could not
    # outlive the checks: their PID namespace ends with them)
    h = prepare(repo.mission(sandbox=sandbox_text(extra=extra, unboxed=True)), run_tag="T1")
    try:
        assert record.run_checks(h, 1) is None
        env = record.measuring_env(h, 1, h.worktree, h.mission_dir)
        assert env["AUTORESEARCH_SEALED_DIR"] == str(h.paths.sealed)
        return run_tag(h.run_id, h.worktree)
    finally:
        h.close()


def _agent_session(tmp_path: Path) -> ChildTag:
    request = SessionRequest(
        run_id="r-agent",
        iteration=1,
        worktree=tmp_path,
        instructions_file=tmp_path / "instructions.md",
        candidate_file=tmp_path / "candidate.json",
        base_commit="abc",
        log_path=tmp_path / "agent.log",
        timeout=30,
        lane=2,
    )
    agent = command_agent(STRAY.format(pidfile=tmp_path / "stray.pid"))
    result = agent.run(request, lambda: False, lambda _pid: None)
    assert result.exit_code == 0
    return run_tag("r-agent", tmp_path)


def _session_harness(tmp_path: Path) -> ChildTag:
    repo = make_repo(tmp_path / "repo")
    pidfile = tmp_path / "stray.pid"
    repo.write(
        "autoresearch.sh", f"#!/bin/bash\n{STRAY.format(pidfile=pidfile)}\necho 'METRIC score=1'\n"
    )
    init_session(repo.root, InitParams(name="strays", metric="score"))
    report = run_experiment(repo.root, RunParams())
    assert report.status == "pass", report
    return harness_tag(1, report.run, str(repo.root))


def _job_runner(tmp_path: Path) -> ChildTag:
    tag = job_tag(f"job_{abs(hash(str(tmp_path))):x}")
    script = STRAY.format(pidfile=tmp_path / "stray.pid")
    proc.spawn_detached(["sh", "-c", script], tmp_path, tag.env(), tmp_path / "runner.log")
    return tag


# door → how it starts a child (a driver, as subreaper, leaves a stray carrying another
# owner's tag to that owner: proc.owner_tagged)
DOORS: dict[str, Callable[[Path], ChildTag]] = {
    "evaluator": _evaluator,
    "executor-evaluation": _executor_task,
    "run-checks": _run_checks,
    "agent-session": _agent_session,
    "session-harness": _session_harness,
    "job-runner": _job_runner,
}


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
@pytest.mark.parametrize("door", list(DOORS))
def test_a_stray_of_each_door_carries_the_tag_its_reaper_looks_for(
    tmp_path: Path, door: str
) -> None:
    tag = DOORS[door](tmp_path)
    pid = _stray_pid(tmp_path / "stray.pid")
    environ = _environ(pid)
    assert all(marker.encode() in environ for marker in tag.markers())
    assert proc.owner_tagged(environ)
    assert _reaped_by(tag, pid)


@pytest.mark.parametrize(
    ("environ", "tagged"),
    [
        ([b"PATH=/bin", b"AUTORESEARCH_RUN_ID=r-1", b"AUTORESEARCH_WORKTREE=/wt"], True),
        ([b"AUTORESEARCH_EXP_RUN=1-2", b"AUTORESEARCH_EXP_DIR=/repo"], True),
        ([b"AUTORESEARCH_JOB_ID=job_1"], True),
        ([b"PATH=/bin", b"AUTORESEARCH_WORKTREE=/wt", b"AUTORESEARCH_ITERATION=3"], False),
        ([b"MY_AUTORESEARCH_RUN_ID=r-1"], False),  # an owner's name inside another's
        ([b""], False),  # a scrubbed environment (or a kernel thread's)
    ],
)
def test_an_owner_tag_is_a_run_harness_run_or_job_entry(environ: list[bytes], tagged: bool) -> None:
    assert proc.owner_tagged(environ) is tagged


@pytest.mark.parametrize(
    "tag", [run_tag("r-1", Path("/wt")), harness_tag(1, 2, "/repo"), job_tag("job_1")]
)
def test_every_owner_tag_leads_with_a_name_the_orphan_reaper_knows(tag: ChildTag) -> None:
    assert tag.entries[0][0] in OWNER_TAG_NAMES
    assert proc.owner_tagged([m.encode() for m in tag.markers()])


# A driver (a subreaper) that detaches one process of each kind and starts a node's watcher
# of run r-1 (as a task of a local Ray cluster does), then ends a supervised child of run r-1
# in /wt; prints which of them still run. Its own process: what a subreaper adopted stays
# adopted, and the pytest worker must not become one here.
SUBREAPER = """
import json, os, shutil, sys, time
from pathlib import Path
from autoresearch import proc
from autoresearch.children import harness_tag, job_tag, run_tag
from autoresearch.supervisor import remote, watcher

tmp = Path(sys.argv[1])
plain = {k: v for k, v in os.environ.items() if not k.startswith("AUTORESEARCH_")}
os.environ.clear()
os.environ.update(plain)
kinds = {
    "the session's own stray": dict(run_tag("r-1", Path("/wt")).entries),
    "a scrubbed stray": {},
    "another run's child": dict(run_tag("r-2", Path("/other")).entries),
    "a harness run's child": dict(harness_tag(1, 2, str(tmp)).entries),
    "a delegation job's runner": dict(job_tag("job_1").entries),
}
assert proc.become_subreaper()
pids = {
    kind: proc.spawn_detached(["sleep", "60"], tmp, {**plain, **entries}, tmp / "detached.log")
    for kind, entries in kinds.items()
}
node = tmp / "node" / "r-1"
node.mkdir(parents=True)
remote.start_watcher("r-1", node, idle_seconds=60)
end = time.monotonic() + 20
while not watcher.watching(node) and time.monotonic() < end:
    time.sleep(0.02)
assert watcher.watching(node), "the watcher did not start"
child = {**plain, **dict(run_tag("r-1", Path("/wt")).entries)}
proc.run_supervised(proc.SupervisedSpec(["true"], tmp, child, tmp / "child.log"))
alive = {"the run's watcher on a node": watcher.watching(node)}
shutil.rmtree(node)  # the watcher leaves with its folder
for kind, pid in pids.items():  # the killed were reaped too: their ids are free
    try:
        os.killpg(os.getpgid(pid), 9)
        alive[kind] = True
    except ProcessLookupError:
        alive[kind] = False
print(json.dumps(alive))
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="a child subreaper")
def test_a_driver_reaps_its_sessions_strays_and_leaves_other_owners_processes(
    tmp_path: Path,
) -> None:
    out = subprocess.run(
        [sys.executable, "-c", SUBREAPER, str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert json.loads(out.stdout) == {
        "the run's watcher on a node": True,
        "the session's own stray": False,
        "a scrubbed stray": False,
        "another run's child": True,
        "a harness run's child": True,
        "a delegation job's runner": True,
    }, out.stderr
