"""Evidence of what a job did: the workspace before and after, checks, artifacts, a diff.

Changes are attributed: a file already changed before the job started is the user's, not the
job's, as long as its content is what it was then; a file changed before *and* touched by the
job cannot be attributed and says so (`preexisting_changes_unattributed`). Paths are relative
to the repository of the job's directory, as git prints them. Anything large (logs, patches)
stays in an artifact under `.autoresearch/jobs/<job_id>/`, referenced by path, size and digest.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from autoresearch import git
from autoresearch.contracts.job_result import Artifact, Snapshot
from autoresearch.errors import GitError
from autoresearch.reset import CACHE_DIRT

MAX_LISTED_FILES = 500
TAIL_LINES = 20
TAIL_CHARS = 2000
DIFF_INLINE_MAX = 20_000
_ABSENT = "absent"


@dataclass(frozen=True)
class Changes:
    """What the job changed, attributed against its snapshot."""

    files: tuple[str, ...] = ()  # changed by the job (unattributed ones included)
    preexisting: tuple[str, ...] = ()  # changed before the job and left as they were
    unattributed: tuple[str, ...] = ()  # changed before the job and touched again by it
    complete: bool = True
    note: str | None = None


def take_snapshot(cwd: Path) -> Snapshot:
    """Record the repository, HEAD and the content of every already-changed file."""
    top = git.toplevel(cwd)
    if top is None:
        return Snapshot(None, None, error=f"{cwd} is not inside a git repository")
    try:
        base = git.head(top)
        dirty = _dirty_paths(top)
    except GitError as exc:
        return Snapshot(str(top), None, error=exc.message)
    return Snapshot(str(top), base, {p: digest_file(top / p) for p in dirty})


def _dirty_paths(top: Path) -> list[str]:
    paths: list[str] = []
    for entry in git.status(top):
        if _cache(entry):
            continue
        paths.append(entry.path)
        if entry.orig_path:
            paths.append(entry.orig_path)
    return sorted(set(paths))


def _cache(entry: git.StatusEntry) -> bool:
    """An untracked cache (`reset.CACHE_DIRT`, the one runtime-dirt rule): a job's output,
    never its change, as for every other door."""
    return entry.untracked and CACHE_DIRT.spares(entry.path)


def _caches(top: Path) -> set[str]:
    return {e.path for e in git.status(top) if _cache(e)}


def changes_since(snap: Snapshot) -> Changes:
    """Attribute the workspace's changes since `snap` to the job or to what was there."""
    if snap.repo is None or snap.base_commit is None:
        return Changes(complete=False, note=snap.error)
    top = Path(snap.repo)
    try:
        now = set(git.changed_paths(top, snap.base_commit)) - _caches(top)
    except GitError as exc:
        return Changes(complete=False, note=exc.message)
    files, kept, mixed = [], [], []
    for path in sorted(now | set(snap.preexisting)):
        if path not in snap.preexisting:
            files.append(path)
        elif digest_file(top / path) == snap.preexisting[path]:
            kept.append(path)
        else:
            files.append(path)
            mixed.append(path)
    return Changes(tuple(files), tuple(kept), tuple(mixed))


def digest_file(path: Path) -> str:
    """sha256 of a file's bytes (a symlink's target text; `absent` when it does not exist)."""
    try:
        if path.is_symlink():
            data = os.readlink(path).encode("utf-8", "surrogateescape")
            return "link:" + hashlib.sha256(data).hexdigest()
        if path.is_dir():
            return "dir"
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except FileNotFoundError:
        return _ABSENT
    except OSError as exc:
        return f"unreadable:{exc.errno}"


def out_of_scope(
    files: Sequence[str], allowed: Sequence[str], scope: Sequence[str] | None
) -> list[str]:
    """Files (repo-relative) outside every allowed prefix, or outside the scope when declared."""
    bounds = [allowed] if scope is None else [allowed, scope]
    return [f for f in files if not all(_under(f, prefixes) for prefixes in bounds)]


def _under(path: str, prefixes: Sequence[str]) -> bool:
    return any(
        p in ("", ".") or path == p or path.startswith(p.rstrip("/") + "/") for p in prefixes
    )


def relative_prefixes(paths: Sequence[str], repo: str) -> list[str] | None:
    """`paths` (absolute) as prefixes relative to `repo`, or None when one lies outside it."""
    real_repo = os.path.realpath(repo)
    found = []
    for path in paths:
        rel = os.path.relpath(os.path.realpath(path), real_repo)
        if rel == ".." or rel.startswith("../"):
            return None
        found.append("" if rel == "." else rel)
    return found


def artifact(path: Path, name: str | None = None) -> Artifact | None:
    """A reference to a file the job left: name, path, size and sha256 (None if missing)."""
    try:
        data = path.read_bytes()
    except OSError:
        return None
    return Artifact(name or path.name, str(path), len(data), hashlib.sha256(data).hexdigest())


def log_tail(path: Path, lines: int = TAIL_LINES, chars: int = TAIL_CHARS) -> str:
    """The last `lines` lines of a log, at most `chars` characters (read from the end)."""
    try:
        with path.open("rb") as handle:
            handle.seek(0, os.SEEK_END)
            size = handle.tell()
            handle.seek(max(0, size - max(chars * 4, 65536)))
            data = handle.read()
    except OSError:
        return ""
    text = data.decode("utf-8", "replace")
    kept = "\n".join(text.splitlines()[-lines:]) if lines > 0 else ""
    return kept[-chars:]


def trimmed_diff(patch: bytes, limit: int = DIFF_INLINE_MAX) -> tuple[str, bool]:
    """The patch as text, cut at `limit` bytes on a line boundary; and whether it was cut."""
    if len(patch) <= limit:
        return patch.decode("utf-8", "replace"), False
    cut = patch[:limit]
    end = cut.rfind(b"\n")
    return cut[: end + 1 if end > 0 else limit].decode("utf-8", "replace"), True


def listed(files: Sequence[str]) -> tuple[list[str], bool]:
    """At most MAX_LISTED_FILES of `files`, and whether some were left off."""
    return list(files[:MAX_LISTED_FILES]), len(files) > MAX_LISTED_FILES
