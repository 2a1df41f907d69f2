"""A keep policy from a throwaway distribution (a dist-info folder with its entry point on
sys.path, no edit of the project): sandbox.md names it, a run is prepared, stepped, stored and
read under it, and `autoresearch run` from a fresh virtual environment with the plugin
installed keeps what it decides; one that fails to import is one line and records nothing."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import sysconfig
import textwrap
import venv
from collections.abc import Iterator
from pathlib import Path

import pytest
from sup_helpers import submit, submit_and_step

from autoresearch.contracts import sandbox as sb
from autoresearch.errors import ContractError
from autoresearch.journal import runs
from autoresearch.journal.db import Journal
from autoresearch.supervisor.prepare import prepare
from autoresearch.supervisor.step import step
from helpers import GIT_ENV, Repo, sandbox_text

# keeps whatever passes its checks, however it scored: not a rule any built-in has
POLICY = textwrap.dedent(
    """\
    from autoresearch.decide import Decision
    from autoresearch.policies import Final, Need, Request
    from autoresearch.states import DecisionKind

    class KeepAnything:
        def next(self, seen):
            first = seen.taken(Need.CANDIDATE)
            if not first:
                return Request(Need.CANDIDATE)
            if seen.checks is None:
                return Request(Need.CHECKS)
            kept = Decision(DecisionKind.KEEP, "the plugin keeps anything")
            return Final(kept, rescore=True, kept_score=first[0].result.score)

    class NeverDecides:
        def next(self, seen):
            return Request(Need.CANDIDATE)
    """
)


ENTRY_POINTS = "[autoresearch.policies]\nkeep_anything = keep_anything_policy:KeepAnything\n"
BROKEN = (
    "broken_policy = keep_anything_broken:Nothing\n"
    "never_decides = keep_anything_policy:NeverDecides\n"
)


def install_plugin(site_packages: Path, entry_points: str = ENTRY_POINTS) -> None:
    """What installing the plugin's wheel writes: its modules and its dist-info."""
    dist = site_packages / "keep_anything-1.0.dist-info"
    dist.mkdir(parents=True)
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: keep-anything\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text(entry_points)
    (site_packages / "keep_anything_policy.py").write_text(POLICY)
    (site_packages / "keep_anything_broken.py").write_text("raise RuntimeError('cannot start')\n")


@pytest.fixture
def site(tmp_path: Path) -> Iterator[Path]:
    """A folder on sys.path holding a distribution that registers two keep policies."""
    folder = tmp_path / "site"
    install_plugin(folder, ENTRY_POINTS + BROKEN)
    sys.path.insert(0, str(folder))
    try:
        yield folder
    finally:
        sys.path.remove(str(folder))
        for name in ("keep_anything_policy", "keep_anything_broken"):
            sys.modules.pop(name, None)


def policy_sandbox(name: str) -> str:
    return sandbox_text(extra=f"  keep_policy: {name}\n")


def test_a_plugin_policy_is_named_in_the_error_and_accepted(site: Path) -> None:
    with pytest.raises(ContractError) as refused:
        sb.parse_sandbox(policy_sandbox("nope"))
    assert str(refused.value) == (
        "sandbox.md frontmatter evaluator.keep_policy must be one of: score_improvement, "
        "pass_only, broken_policy, keep_anything, never_decides."
    )
    assert sb.parse_sandbox(policy_sandbox("keep_anything")).evaluator.keep_policy == (
        "keep_anything"
    )


def test_a_run_under_a_plugin_policy_keeps_what_it_decides(site: Path, repo: Repo) -> None:
    with prepare(repo.mission(sandbox=policy_sandbox("keep_anything")), run_tag="PLG") as h:
        worse = submit_and_step(h, {"value.txt": "0\n"})
        assert (worse.decision, worse.decision_reason) == ("keep", "the plugin keeps anything")
        assert h.run.last_kept_score == 0.0
        run_id, journal = h.run_id, h.repo.journal
    with Journal.open(journal) as opened:  # stored, scanned and read back under its name
        run = runs.get_run(opened, run_id)
        assert run is not None and run.keep_policy == "keep_anything"


def test_a_plugin_installed_in_a_fresh_venv_is_run_by_the_cli(tmp_path: Path, repo: Repo) -> None:
    """`autoresearch run` from a new virtual environment that sees autoresearch (as this
    interpreter does) and has the plugin installed: the run keeps what the plugin decides."""
    home = tmp_path / "venv"
    venv.create(home, with_pip=False)
    python = str(home / "bin" / "python")
    where = "import sysconfig; print(sysconfig.get_paths()['purelib'])"
    site_packages = Path(subprocess.check_output([python, "-c", where], text=True).strip())
    ours = sysconfig.get_paths()["purelib"]  # autoresearch and its dependencies, as installed
    (site_packages / "host.pth").write_text(f"import site; site.addsitedir({ours!r})\n")
    install_plugin(site_packages)
    repo.mission(sandbox=policy_sandbox("keep_anything"))
    agent = Path(__file__).parents[1] / "agents/fakes/cmd_agent.py"
    done = subprocess.run(
        [python, "-m", "autoresearch", "run", "missions/demo", "--agent",
         f"cmd:{sys.executable} {agent}", "--max-iterations", "1", "--run-tag", "V1", "--json"],
        cwd=repo.root, env={**os.environ, **GIT_ENV, "FAKE_PLAN": "worse"},
        capture_output=True, text=True, timeout=180,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert (summary["keep_policy"], summary["counts"]) == ("keep_anything", {"keep": 1})
    assert summary["last_kept_score"] == 0.5  # worse than the baseline's 1, and kept
    last = json.loads(Path(summary["ledger_file"]).read_text())["entries"][-1]
    assert (last["decision_reason"], last["keep_policy"]) == (
        "the plugin keeps anything",
        "keep_anything",
    )


NOISE = "noise:\n  mode: sequential\n  max_evals: 3\n  confirm: 1\n"


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("broken_policy", "plugin 'broken_policy' (keep_anything_broken:Nothing from "
         "keep-anything) failed to load: RuntimeError: cannot start"),
        ("never_decides", "keep policy 'never_decides' asked for over 8 readings of one "
         "candidate without deciding; fix or uninstall the plugin that provides it"),
    ],
)  # fmt: skip
def test_a_plugin_policy_that_cannot_decide_is_one_line(
    site: Path, repo: Repo, name: str, message: str
) -> None:
    """One that fails to import records nothing; one that asks for readings without end is
    stopped (max_evals 3 and confirm 1 allow 8)."""
    sandbox = sandbox_text(extra=f"  keep_policy: {name}\n{NOISE}")
    with prepare(repo.mission(sandbox=sandbox), run_tag="BAD") as h:
        submit(h, {"value.txt": "5\n"})
        with pytest.raises(ContractError) as refused:
            step(h)
        assert str(refused.value) == message
        if name == "broken_policy":
            assert h.run.iteration == 0 and h.paths.candidate.exists()  # nothing recorded
