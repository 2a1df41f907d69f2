"""The session's own commits: every changed path of the session directory, except caches.

Untracked `__pycache__/` folders and `*.pyc` / `*.pyo` files that the project does not ignore
are runtime output, never work (the rule `reset.CACHE_DIRT`): a keep (or the setup commit of init)
leaves them out, the scope audit does not count them and a discarded diff does not save them.
Tracked files are always the project's choice and are committed like any other.
"""

from __future__ import annotations

from pathlib import Path

from autoresearch import git
from autoresearch.reset import CACHE_DIRT

STAGED_DELETION = "D "


def untracked_caches(cwd: Path) -> frozenset[str]:
    return frozenset(e.path for e in git.status(cwd) if _cache(e))


def work_paths(cwd: Path) -> list[str]:
    """The paths `commit_work` would commit now (deletions included, caches left out)."""
    return [e.path for e in git.status(cwd) if not _cache(e)]


def commit_work(cwd: Path, message: str) -> str | None:
    """Commit every change of `cwd` but untracked caches; the new SHA, or None (nothing)."""
    entries = git.status(cwd)
    if not any(_cache(e) for e in entries):
        return git.commit_all(cwd, message)
    # The commit takes the whole index: a staged deletion (or the old side of a staged rename)
    # is in it already, and naming a path that is in neither the index nor the tree fails.
    paths = [e.path for e in entries if not _cache(e) and e.code != STAGED_DELETION]
    if not paths and any(e.code == STAGED_DELETION for e in entries):
        return git.commit_all(cwd, message)  # nothing to name: never lose the deletions
    return git.commit_all(cwd, message, pathspec=paths) if paths else None


def _cache(entry: git.StatusEntry) -> bool:
    return entry.untracked and CACHE_DIRT.spares(entry.path)
