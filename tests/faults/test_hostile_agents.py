"""Hostile sessions against the run's history: whatever a session does to HEAD, branches or
refs, only a commit that descends from the last kept commit on the run's own branch is kept,
and the branch is back at the last kept commit (the session's work saved as a patch) after
every iteration that is not a keep."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from autoresearch.contracts import candidate as cand
from helpers import GIT_ENV, Repo, git

HOSTILE = f"cmd:{sys.executable} {Path(__file__).parent / 'fakes/hostile_agent.py'}"
RUN_ID = "missions-demo-t1"
BRANCH = "autoresearch/missions-demo/t1"


def run_loop(repo: Repo, plan: str, *extra: str) -> tuple[int, dict, str]:
    env = {**os.environ, **GIT_ENV, "HOSTILE_PLAN": plan}
    done = subprocess.run(
        [sys.executable, "-m", "autoresearch", "run", "missions/demo", "--agent", HOSTILE,
         "--run-tag", "T1", "--json", *extra],
        cwd=repo.root, env=env, capture_output=True, text=True, timeout=180,
    )  # fmt: skip
    return done.returncode, json.loads(done.stdout or "{}"), done.stderr


def ledger(repo: Repo) -> list[dict]:
    path = repo.root / ".autoresearch/runs" / RUN_ID / "iteration-ledger.json"
    return json.loads(path.read_text())["entries"]


def worktree(repo: Repo) -> Path:
    return repo.root / ".autoresearch/worktrees" / RUN_ID


def assert_branch_owned(repo: Repo, kept: str) -> None:
    """The run branch is at the last kept commit, checked out, every kept commit its ancestor."""
    wt = worktree(repo)
    assert git(repo.root, "rev-parse", f"refs/heads/{BRANCH}") == kept
    assert git(wt, "symbolic-ref", "HEAD") == f"refs/heads/{BRANCH}"
    assert git(wt, "rev-parse", "HEAD") == kept
    assert git(wt, "status", "--porcelain", "--untracked-files=no") == ""
    for entry in ledger(repo):
        ancestor = ["merge-base", "--is-ancestor", entry["kept_commit"], kept]
        done = subprocess.run(["git", *ancestor], cwd=wt, capture_output=True)
        assert done.returncode == 0, entry


@pytest.mark.parametrize(
    ("action", "message"),
    [
        ("foreign", cand.MSG_COMMIT_OFF_BRANCH),
        ("detach", cand.MSG_COMMIT_OFF_BRANCH),
        ("rewrite", cand.MSG_COMMIT_NOT_DESCENDANT),
        ("invalid", cand.MSG_NOT_JSON),
    ],
)
def test_a_session_that_takes_the_history_is_refused_and_the_branch_restored(
    repo: Repo, mission_dir: Path, action: str, message: str
) -> None:
    code, summary, err = run_loop(repo, f"improve,{action},noop", "--max-iterations", "3")
    entries = ledger(repo)
    prefix = message.split("{")[0]
    if action == "invalid":  # a malformed artifact is a failed session: the run goes on
        assert (code, summary["status"]) == (0, "completed"), err
        assert [e["decision"] for e in entries] == ["baseline", "keep", "error", "noop"]
        assert entries[2]["decision_reason"].startswith(prefix)
    else:  # one that disagrees with git may be tampering: the run ends
        assert (code, summary["status"]) == (1, "failed"), err
        assert summary["stop_reason"].startswith(prefix), summary["stop_reason"]
        assert [e["decision"] for e in entries] == ["baseline", "keep", "error"]
    kept = entries[1]["candidate_commit"]
    assert summary["last_kept_commit"] == kept
    assert_branch_owned(repo, kept)
    # the refused session's work is not lost: its patch holds the better value
    notes = " ".join(entries[2]["notes"])
    patch = Path(notes.split("saved to ")[1].split()[0])
    assert re.search(r"^\+(21|10)$", patch.read_text(), re.M), patch.read_text()


def test_an_honest_run_ends_on_its_best_commit(repo: Repo, mission_dir: Path) -> None:
    code, summary, err = run_loop(repo, "improve,improve,noop", "--max-iterations", "3")
    assert code == 0, err
    assert summary["status"] == "completed"
    assert_branch_owned(repo, summary["last_kept_commit"])
    assert summary["counts"]["keep"] == 2
