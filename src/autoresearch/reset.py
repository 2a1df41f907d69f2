"""Save-then-reset and the one runtime-dirt rule, shared by the supervisor and the sessions.

Invariants: nothing is reset before it is saved. Every change past the base – commits, tracked
edits, staged files (also new ones that were never committed) and untracked files – goes into
one binary patch first; only then is the tree reset and its untracked work removed. What the
rule calls runtime dirt (caches, the tool's state folder, the door's own runtime names) is
neither saved nor removed nor, for the supervisor's reset safety, blocking.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from fnmatch import fnmatch
from pathlib import Path

from autoresearch import failpoints, git
from autoresearch.fsutil import atomic_write_bytes
from autoresearch.paths import RUNTIME_DIR_NAMES, RUNTIME_FILES, STATE_DIR

CACHE_SUFFIXES = (".pyc", ".pyo")


def is_cache(path: str) -> bool:
    """A path inside a `__pycache__` folder, or a compiled Python file: output, never work."""
    parts = path.rstrip("/").split("/")
    return any(p in RUNTIME_DIR_NAMES for p in parts[:-1]) or parts[-1].endswith(CACHE_SUFFIXES)


@dataclass(frozen=True)
class RuntimeRule:
    """Which untracked paths of a tree are runtime dirt rather than work.

    `rooted`: names at the tree's root (the supervisor's results.tsv and run.log, a session's
    harness files); `links`: the shared-path links; `globs`: a sandbox's `worktree.runtime`.
    Caches and `.autoresearch/` are runtime dirt for every door.
    """

    rooted: tuple[str, ...] = ()
    links: tuple[str, ...] = ()
    globs: tuple[str, ...] = ()

    def spares(self, path: str) -> bool:
        """True for an untracked path that a reset keeps and a saved patch leaves out."""
        clean = path.rstrip("/")
        parts = clean.split("/")
        if clean in self.rooted or parts[0] == STATE_DIR or is_cache(clean):
            return True
        if self._torn_view(clean):  # an atomic write that a crash interrupted
            return True
        if any(clean == link or clean.startswith(link + "/") for link in self.links):
            return True
        return any(fnmatch(clean, pattern) for pattern in self.globs)

    def _torn_view(self, path: str) -> bool:
        # the temp file of fsutil's atomic write: ".<name>.<random>.tmp"
        names = "|".join(re.escape(name) for name in self.rooted)
        return bool(names) and re.match(rf"^\.(?:{names})\..+\.tmp$", path) is not None

    def rooted_patterns(self) -> list[str]:
        """Anchored git patterns of the names at the root and their torn atomic writes (what
        info/exclude keeps out of a worktree's status)."""
        return [*(f"/{name}" for name in self.rooted), *(f"/.{name}.*.tmp" for name in self.rooted)]

    def clean_patterns(self) -> list[str]:
        """`git clean -e` patterns that spare exactly what `spares` allows."""
        return [
            *self.rooted_patterns(),
            *(f"/{name}" for name in (STATE_DIR, *self.links)),
            *RUNTIME_DIR_NAMES,
            *(f"*{suffix}" for suffix in CACHE_SUFFIXES),
            *self.globs,
        ]


# A tree with no runtime names of its own: only caches and `.autoresearch/` are dirt. A session's
# commits (its harness files are committed by the setup commit like any work), the files a new
# session worktree carries over, a delegation job's patch.
CACHE_DIRT = RuntimeRule()


def run_dirt(links: Iterable[str], runtime: Iterable[str]) -> RuntimeRule:
    """A supervised run's rule (its worktree, or a remote node's copy of it): the results files
    at the root, its shared links and its sandbox's `worktree.runtime` globs."""
    return RuntimeRule(RUNTIME_FILES, tuple(links), tuple(runtime))


def work_patch(cwd: Path, base: str, rule: RuntimeRule) -> bytes:
    """Every change of `cwd` past `base` as one binary patch (commits, tracked edits, staged and
    untracked files), what `rule` spares left out."""
    return git.diff_patch(cwd, base, keep_untracked=lambda p: not rule.spares(p))


def save_patch(cwd: Path, base: str, rule: RuntimeRule, target: Path, keep_empty: bool) -> bool:
    """Write every change of `cwd` past `base` to `target`; True when there was any.

    An empty patch is written only with `keep_empty`, and never over an existing one (a
    repeated save after a crash must not erase the first).
    """
    patch = work_patch(cwd, base, rule)
    if patch or (keep_empty and not target.exists()):
        atomic_write_bytes(target, patch)
    return bool(patch)


def reset_tree(
    cwd: Path, target: str, rule: RuntimeRule, branch: str | None = None, clean: bool = True
) -> None:
    """Reset to `target` and remove untracked work, sparing runtime dirt. With `branch`, that
    branch is pointed at `target` and checked out, wherever HEAD was (detached, another ref).
    `clean=False` leaves untracked files in place (applying a decision: they are the next
    session's clean-up, or its caller saved them first)."""
    if branch is None:
        git.reset_hard(cwd, target)
    else:
        git.checkout_branch_at(cwd, branch, target)
    if clean:
        git.clean_untracked(cwd, keep=rule.clean_patterns())


def save_then_reset(
    cwd: Path,
    base: str,
    reset_to: str,
    rule: RuntimeRule,
    patch_path: Path,
    keep_empty: bool = False,
    *,
    branch: str | None = None,
    clean: bool = True,
    once: bool = False,
    failpoint: str | None = None,
) -> bool:
    """Save what is past `base` as a patch, then reset to `reset_to` (`reset_tree`'s `branch`
    and `clean`); True when it saved.

    `once`: a patch already at `patch_path` is kept as it is and nothing is saved (the first
    save, taken before a kill, held all the work; the tree it would see now may be half-reset).
    `failpoint` is hit between the save and the reset, for the fault suite."""
    kept_first = once and patch_path.exists()
    saved = False if kept_first else save_patch(cwd, base, rule, patch_path, keep_empty)
    if failpoint is not None:
        failpoints.hit(failpoint)
    reset_tree(cwd, reset_to, rule, branch, clean)
    return saved


def blocking(entries: Iterable[git.StatusEntry], rule: RuntimeRule) -> list[git.StatusEntry]:
    """The status entries that are work: anything tracked, and untracked non-runtime paths."""
    return [e for e in entries if not (e.untracked and rule.spares(e.path))]
