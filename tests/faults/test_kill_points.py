"""A driver killed with SIGKILL at any of 13 points of prepare or an iteration: after `resume`,
journal, views and git agree, no kept commit is lost, no iteration is recorded twice, and the
run ends with the same history as an uninterrupted run of the same (deterministic) agent."""

from __future__ import annotations

import json
import signal
from pathlib import Path
from typing import Any

import pytest

from helpers import cli, git

ITERATIONS = "6"
# (failpoint, which hit kills): the baseline counts as the first evaluation and decision.
KILL_POINTS = [
    ("prepare.after_worktree", "1"),
    ("prepare.after_baseline", "1"),
    ("loop.before_agent", "3"),
    ("loop.after_agent", "3"),
    ("step.after_start_evaluation", "3"),
    ("evaluate.after_spawn", "3"),
    ("step.after_evaluator", "3"),
    ("step.after_decided", "3"),
    ("apply.before_reset", "1"),
    ("step.after_applied", "2"),  # only resetting decisions get here
    ("views.after_ledger", "3"),
    ("views.after_placeholder", "3"),
    ("step.after_views", "3"),
]


def run_id_of(repo: Path) -> str:
    listing = json.loads(cli("--repo", str(repo), "status", "--json", cwd=repo).stdout)
    (run,) = listing["runs"]
    return str(run["run_id"])


def details_of(repo: Path, run_id: str) -> dict[str, Any]:
    """`status RUN --json`, read once per run: a test checks its history and its consistency on
    the same reading (each `autoresearch` process costs ~0.3 s of CPU)."""
    return dict(json.loads(cli("--repo", str(repo), "status", run_id, "--json", cwd=repo).stdout))


def history(details: dict[str, Any]) -> list[tuple[int, str, str, float | None]]:
    return [
        (it["iteration"], it["decision"], it["description"], (it["evaluator"] or {}).get("score"))
        for it in details["iterations"]
    ]


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> list[tuple[int, str, str, float | None]]:
    root = tmp_path_factory.mktemp("reference")
    done = cli("demo", str(root / "demo"), "--iterations", ITERATIONS, cwd=root)
    assert done.returncode == 0, done.stderr
    return history(details_of(root / "demo", run_id_of(root / "demo")))


def assert_consistent(details: dict[str, Any]) -> None:
    manifest = details["manifest"]
    numbers = [it["iteration"] for it in details["iterations"]]
    assert numbers == list(range(len(numbers))), "iterations missing or recorded twice"
    ledger = json.loads(Path(manifest["ledger_file"]).read_text())["entries"]
    assert [(e["iteration"], e["decision"]) for e in ledger] == [
        (it["iteration"], it["decision"]) for it in details["iterations"]
    ]
    rows = Path(manifest["results_file"]).read_text().splitlines()[1:]
    assert [r.split("\t")[0] for r in rows] == [str(n) for n in numbers]
    worktree = Path(manifest["worktree_path"])
    head = git(worktree, "rev-parse", "HEAD")
    assert head == manifest["last_kept_commit"] == details["last_kept_commit"]
    assert git(worktree, "status", "--porcelain") == ""
    for it in details["iterations"]:
        if it["decision"] == "keep":  # no kept commit is lost
            git(worktree, "merge-base", "--is-ancestor", it["candidate_commit"], head)
    candidate = json.loads(Path(manifest["candidate_file"]).read_text())
    assert candidate["description"] == "not-yet-written"


@pytest.mark.parametrize(("failpoint", "nth"), KILL_POINTS)
def test_kill_and_resume(tmp_path: Path, reference: list, failpoint: str, nth: str) -> None:
    repo = tmp_path / "demo"
    done = cli(
        "demo", str(repo), "--iterations", ITERATIONS, cwd=tmp_path,
        env={"AUTORESEARCH_FAILPOINTS": f"{failpoint}@{nth}"},
    )  # fmt: skip
    assert done.returncode == -signal.SIGKILL, f"{failpoint} was never reached: {done.stderr}"
    run_id = run_id_of(repo)
    done = cli("--repo", str(repo), "resume", run_id, "--json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["status"] == "completed"
    assert run_id_of(repo) == run_id  # still the one run: resume started no other
    details = details_of(repo, run_id)
    assert history(details) == reference
    assert_consistent(details)
