"""A session's command (and `status`) finds its repository from git's files when it starts at a worktree's top
folder (no git process: issue 36), and the answer is git's own wherever it starts."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from autoresearch import git
from autoresearch.experiments.checkout import locate
from autoresearch.paths import RepoPaths
from autoresearch.repo_state import ensure_state_dir, main_root
from helpers import make_repo


def gits_answer(start: Path) -> tuple[Path | None, Path | None, str | None]:
    cwd = git.toplevel(start)
    return cwd, git.main_root(start), git.current_branch(cwd) if cwd else None


def on_branch(root: Path) -> Path:
    return root


def detached(root: Path) -> Path:
    git.checkout_detached(root, git.head(root))
    return root


def subfolder(root: Path) -> Path:
    return root / "scripts"


def linked_worktree(root: Path) -> Path:
    git.worktree_add(root, root.parent / "wt", "feature/x", "HEAD")
    return root.parent / "wt"


def linked_subfolder(root: Path) -> Path:
    return linked_worktree(root) / "scripts"


@pytest.mark.parametrize(
    "place", [on_branch, detached, subfolder, linked_worktree, linked_subfolder]
)
def test_locate_answers_as_git_does(tmp_path: Path, place: Callable[[Path], Path]) -> None:
    start = place(make_repo(tmp_path / "repo").root)
    assert locate(start) == gits_answer(start)
    assert main_root(start) == git.main_root(start)  # what a hook's log and `status` find


def test_the_exclude_block_lands_where_git_reads_it(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "repo").root
    worktree = linked_worktree(root)
    ensure_state_dir(RepoPaths(root))
    (root / ".autoresearch" / "x").write_text("state\n")
    (worktree / ".autoresearch").mkdir()
    (worktree / ".autoresearch" / "y").write_text("state\n")
    # the block is in the shared info/exclude: neither tree lists the state folder
    assert git.status(root) == [] and git.status(worktree) == []
