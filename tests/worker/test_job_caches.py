"""A job's caches are not its changes (the one runtime-dirt rule, reset.CACHE_DIRT, issue #9):
a read-only job that only leaves `__pycache__`/`.pyc` files is accepted with no changed files,
one that writes a real file still fails `read_only_modified`, and a worktree job's commit
holds its real files only."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from worker_helpers import agent, job_repo

from autoresearch import git
from helpers import Repo, cli, killed_add

CACHES = ("src/__pycache__/app.cpython-311.pyc", "bytes", "tools/gen.pyc", "compiled")


@pytest.fixture
def repo(tmp_path: Path) -> Repo:
    return job_repo(tmp_path / "repo")


def _job(repo: Repo, *args: str) -> dict[str, object]:
    done = cli("job", "start", "Look around.", "--json", *args, cwd=repo.root)
    assert done.returncode == 0, done.stderr
    job_id = json.loads(done.stdout)["job_id"]
    waited = cli("job", "wait", job_id, "--json", cwd=repo.root)
    data: dict[str, object] = json.loads(waited.stdout)
    data["exit"] = waited.returncode
    return data


def test_a_read_only_job_leaving_only_caches_changed_nothing(repo: Repo) -> None:
    data = _job(repo, "--task-kind", "read_only", "--agent", agent("edit", *CACHES))
    outcome = data["outcome"]
    assert isinstance(outcome, dict)
    assert outcome["status"] == "accepted" and data["exit"] == 0, outcome
    assert outcome["reason_codes"] == ["verification_passed"]
    assert outcome["evidence"]["changed_files"] == []


def test_a_read_only_job_writing_a_real_file_beside_caches_is_refused(repo: Repo) -> None:
    data = _job(
        repo, "--task-kind", "read_only", "--agent", agent("edit", *CACHES, "notes.txt", "x")
    )
    outcome = data["outcome"]
    assert isinstance(outcome, dict)
    assert outcome["reason_codes"] == ["read_only_modified"] and data["exit"] == 1
    assert outcome["evidence"]["changed_files"] == ["notes.txt"]


def test_a_worktree_job_commits_its_real_files_only(repo: Repo) -> None:
    edit = agent("edit", *CACHES, "src/app.py", "VALUE = 2")
    data = _job(repo, "--task-kind", "modifying", "--isolation", "worktree", "--agent", edit)
    outcome = data["outcome"]
    assert isinstance(outcome, dict)
    assert outcome["evidence"]["changed_files"] == ["src/app.py"], outcome
    result = data["result"]
    assert isinstance(result, dict) and isinstance(result["commit"], str), data
    commit = result["commit"]
    files = repo.git("show", "--name-only", "--format=", commit).split()
    assert files == ["src/app.py"], files


def test_a_worktree_job_heals_the_tools_half_built_trees_first(repo: Repo) -> None:
    # a kill inside `git worktree add` left a lane's tree half-built: every `git fetch` of
    # the repository fails until the tool's next writing command removes it
    admin = killed_add(repo.root, repo.root / ".autoresearch/worktrees/lanes/missions-x-1/0")
    data = _job(repo, "--task-kind", "modifying", "--isolation", "worktree", "--agent",
                agent("edit", "src/app.py", "VALUE = 2"))  # fmt: skip
    assert isinstance(data["outcome"], dict), data
    assert data["outcome"]["evidence"]["changed_files"] == ["src/app.py"], data
    assert not admin.exists() and git.half_built_worktrees(repo.root) == []
