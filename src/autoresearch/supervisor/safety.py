"""Reset safety (supervisor.md §6): nothing is reset while the worktree holds unsaved work.

Only untracked runtime files may be present: results.tsv, run.log, the shared-path links,
anything under `.autoresearch/`, `__pycache__` folders, and the sandbox's `worktree.runtime`
globs. Tracked modifications always block.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from fnmatch import fnmatch
from pathlib import Path

from autoresearch import git
from autoresearch.errors import RefusedError
from autoresearch.paths import RUNTIME_DIR_NAMES, RUNTIME_FILES, STATE_DIR

MAX_LINES_SHOWN = 20
# the temp file of an atomic write of a runtime file (fsutil: ".<name>.<random>.tmp")
_TORN_VIEW = re.compile(
    r"^\.(?:" + "|".join(re.escape(name) for name in RUNTIME_FILES) + r")\..+\.tmp$"
)


def runtime_exclude_patterns() -> list[str]:
    """info/exclude entries that keep a worktree's runtime files out of git."""
    return [*(f"/{name}" for name in RUNTIME_FILES), *(f"/.{name}.*.tmp" for name in RUNTIME_FILES)]


def runtime_clean_patterns(links: Iterable[str], runtime: Iterable[str]) -> list[str]:
    """`git clean -e` patterns that spare exactly what `is_runtime_path` allows."""
    rooted = [*RUNTIME_FILES, STATE_DIR, *links]
    return [
        *(f"/{name}" for name in rooted),
        *(f"/.{name}.*.tmp" for name in RUNTIME_FILES),
        *RUNTIME_DIR_NAMES,
        *runtime,
    ]


def is_runtime_path(path: str, links: Iterable[str], runtime: Iterable[str]) -> bool:
    """True for an untracked path that may be present without blocking a reset."""
    clean = path.rstrip("/")
    parts = clean.split("/")
    if clean in RUNTIME_FILES or parts[0] == STATE_DIR:
        return True
    if _TORN_VIEW.match(clean):  # an atomic write that a crash interrupted
        return True
    if any(part in RUNTIME_DIR_NAMES for part in parts[:-1]):
        return True
    if any(clean == link or clean.startswith(link + "/") for link in links):
        return True
    return any(fnmatch(clean, pattern) for pattern in runtime)


def blocking_entries(
    entries: Sequence[git.StatusEntry], links: Iterable[str] = (), runtime: Iterable[str] = ()
) -> list[git.StatusEntry]:
    """The status entries that forbid a reset."""
    links, runtime = tuple(links), tuple(runtime)
    return [e for e in entries if not (e.untracked and is_runtime_path(e.path, links, runtime))]


def reset_error(worktree: Path, blocking: Sequence[git.StatusEntry]) -> RefusedError:
    lines = [e.line() for e in blocking[:MAX_LINES_SHOWN]]
    if len(blocking) > MAX_LINES_SHOWN:
        lines.append(f"… (+{len(blocking) - MAX_LINES_SHOWN} more)")
    return RefusedError(
        f"autoresearch_reset_requires_clean_worktree:{worktree}:{' | '.join(lines)}"
    )


def dirty_entries(
    worktree: Path, links: Iterable[str] = (), runtime: Iterable[str] = ()
) -> list[git.StatusEntry]:
    return blocking_entries(git.status(worktree), links, runtime)


def check_reset_safety(
    worktree: Path, links: Iterable[str] = (), runtime: Iterable[str] = ()
) -> None:
    """Raise `autoresearch_reset_requires_clean_worktree:…` when a reset would lose work."""
    blocking = dirty_entries(worktree, links, runtime)
    if blocking:
        raise reset_error(worktree, blocking)
