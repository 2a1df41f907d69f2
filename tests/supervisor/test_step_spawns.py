"""How many processes one `step` starts (issue 36): each is 2–10 ms, the bulk of a step. The
candidate's commits are read from loose objects (git_objects): a keep starts its evaluator alone.

Counted from real execve's: a `git` shim first on PATH appends its arguments to a log before
it runs the real git, and the evaluator appends its own line, so nothing is mocked.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from sup_helpers import submit, submit_and_step

from autoresearch.supervisor.handle import RunHandle, lock_run
from autoresearch.supervisor.prepare import prepare
from autoresearch.supervisor.step import step
from helpers import Repo, cli, git, sandbox_text


def shim_git(folder: Path, log: Path) -> None:
    """A `git` in `folder` that logs each call to `log`, then runs the real one."""
    real = shutil.which("git")
    assert real is not None
    shim = folder / "git"
    shim.write_text(f'#!/bin/sh\necho "git $1 $2" >> "{log}"\nexec "{real}" "$@"\n')
    shim.chmod(0o755)


@pytest.fixture
def spawn_log(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    log, folder = tmp_path / "spawns.log", tmp_path / "bin"
    folder.mkdir()
    shim_git(folder, log)
    monkeypatch.setenv("PATH", f"{folder}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("SPAWN_LOG", str(log))
    return log


def spawns_of_step(h: RunHandle, log: Path, value: str) -> list[str]:
    """What one step spawns on a candidate that sets value.txt (the session's own git calls
    before it are not counted)."""
    submit(h, {"value.txt": value + "\n"})
    log.write_text("")
    step(h)
    return log.read_text().splitlines()


def test_a_keep_spawns_the_evaluator_alone_and_a_discard_three(repo: Repo, spawn_log: Path) -> None:
    command = 'echo evaluator >> "$SPAWN_LOG"; python3 scripts/eval.py'
    mission = repo.mission(sandbox=sandbox_text(command, unboxed=True))
    with prepare(mission, run_tag="T1") as h:
        for value, decision, most in (("5", "keep", 1), ("3", "discard", 3), ("7", "keep", 1)):
            spawned = spawns_of_step(h, spawn_log, value)
            assert h.run.iteration and git(h.worktree, "status", "--porcelain") == ""
            assert len(spawned) <= most, f"{decision}: {spawned}"
            assert spawned.count("evaluator") == 1
        discarded = git(h.worktree, "for-each-ref", "--format=%(refname)", "refs/autoresearch/")
        assert discarded.splitlines() == ["refs/autoresearch/missions-demo-t1/discarded/2"]


def test_a_duplicate_of_a_measured_tree_spawns_at_most_two(repo: Repo, spawn_log: Path) -> None:
    """Novelty: a tree measured before is discarded unmeasured (no evaluator), and reset."""
    command = 'echo evaluator >> "$SPAWN_LOG"; python3 scripts/eval.py'
    mission = repo.mission(sandbox=sandbox_text(command, unboxed=True))
    with prepare(mission, run_tag="T1") as h:
        submit_and_step(h, {"value.txt": "0\n"})  # measured and discarded
        spawned = spawns_of_step(h, spawn_log, "0")
        assert h.run.iteration == 2 and "evaluator" not in spawned
        assert len(spawned) <= 2, spawned


def test_the_step_command_spawns_no_more_than_the_step(repo: Repo, spawn_log: Path) -> None:
    """`autoresearch step` (what hooks call once per iteration) finds the repository, the
    worktree and its git folders from their files: no `rev-parse` of its own."""
    command = 'echo evaluator >> "$SPAWN_LOG"; python3 scripts/eval.py'
    mission = repo.mission(sandbox=sandbox_text(command, unboxed=True))
    with prepare(mission, run_tag="T1") as h:
        run_id = h.run_id
    for value, most in (("5", 1), ("3", 3)):
        with lock_run(repo.root, run_id) as h:  # act as the session between two steps
            submit(h, {"value.txt": value + "\n"})
        spawn_log.write_text("")
        done = cli("step", run_id, cwd=repo.root)
        assert done.returncode == 0, done.stderr
        spawned = spawn_log.read_text().splitlines()
        assert len(spawned) <= most and spawned.count("evaluator") == 1, spawned
