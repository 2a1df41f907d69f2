"""git.worktree_problem: the states a killed `git worktree add` or reset leaves, each named
(real git repositories; the damage is what git itself leaves at that instant)."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from autoresearch import git as gitlib
from helpers import Repo, git

BRANCH = "autoresearch/demo/t1"


def _zero_head(wt: Path) -> None:
    # what `git worktree add` writes first, before it points HEAD at the branch
    own = Path(git(wt, "rev-parse", "--path-format=absolute", "--git-dir"))
    (own / "HEAD").write_text("0" * 40 + "\n")


def _no_index(wt: Path) -> None:
    own = Path(git(wt, "rev-parse", "--path-format=absolute", "--git-dir"))
    (own / "index").unlink()


def _missing_file(wt: Path) -> None:
    (wt / "value.txt").unlink()


def _detached(wt: Path) -> None:
    git(wt, "checkout", "-q", "--detach")


def _staged(wt: Path) -> None:
    (wt / "value.txt").write_text("9\n")
    git(wt, "add", "value.txt")


@pytest.mark.parametrize(
    ("damage", "problem"),
    [
        (None, None),
        (_zero_head, "HEAD is not on"),
        (_detached, "HEAD is not on"),
        (_no_index, "the index is missing"),
        (_staged, "the index differs from HEAD"),
        (_missing_file, "files of HEAD are missing"),
    ],
)
def test_worktree_problem_names_each_damage(
    repo: Repo, tmp_path: Path, damage: Callable[[Path], None] | None, problem: str | None
) -> None:
    wt = tmp_path / "wt"
    git(repo.root, "worktree", "add", "-q", "-b", BRANCH, str(wt))
    if damage is not None:
        damage(wt)
    found = gitlib.worktree_problem(wt, BRANCH)
    if problem is None:
        assert found is None
    else:
        assert found is not None and found.startswith(problem), found
    shutil.rmtree(wt)


@pytest.mark.parametrize(
    ("damage", "half_built"),
    [
        (None, False),
        (_zero_head, True),
        (_no_index, True),
        # what a session may leave is its work, never taken for a half-built tree
        (_detached, False),
        (_staged, False),
        (_missing_file, False),
    ],
)
def test_unfinished_add_is_only_what_a_killed_worktree_add_leaves(
    repo: Repo, tmp_path: Path, damage: Callable[[Path], None] | None, half_built: bool
) -> None:
    wt = tmp_path / "wt"
    git(repo.root, "worktree", "add", "-q", "-b", BRANCH, str(wt))
    if damage is not None:
        damage(wt)
    assert (gitlib.unfinished_add(wt, BRANCH) is not None) == half_built
    shutil.rmtree(wt)
