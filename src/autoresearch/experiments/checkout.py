"""Where a session's call starts: the worktree around a path, the repository's main working
tree and the branch checked out there, read from git's own files when they are plain (no git
process, no journal: a Stop hook asks this before it knows whether any session is there).
"""

from __future__ import annotations

import os
from pathlib import Path

from autoresearch import git_files
from autoresearch.errors import ContractError


def locate(start: Path) -> tuple[Path, Path, str | None]:
    """The top folder of the worktree around `start`, the repository's main working tree and
    the branch checked out there (None on a detached HEAD)."""
    found = located_by_files(start)
    if found is not None:
        return found
    from autoresearch import git  # a subfolder or an unusual layout: git decides

    cwd, root = git.toplevel(start), git.main_root(start)
    if cwd is None or root is None:
        raise ContractError(f"not inside a git repository: {start}")
    return cwd, root, git.current_branch(cwd)


def located_by_files(start: Path) -> tuple[Path, Path, str | None] | None:
    """`locate` from git's own files when `start` is a worktree's top folder, without a git
    process or git.py (a hook's start-up: issue 36); None when unsure."""
    root, head = git_files.main_root(start), git_files.head_ref(start)
    if root is None or not head.known:
        return None
    if head.ref is None:  # detached
        return Path(os.path.realpath(start)), root, None
    if not head.ref.startswith("refs/heads/"):  # what `--short` makes of it is git's to say
        return None
    return Path(os.path.realpath(start)), root, head.ref.removeprefix("refs/heads/")
