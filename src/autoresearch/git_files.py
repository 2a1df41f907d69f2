"""Git's own files read (and one kind written) without a git process: each spared process is
2–10 ms of a step (issue 36).

Only the parts of git's on-disk layout that have been stable for years are touched: a
worktree's `.git` (a folder, or a `gitdir:` file), a symbolic HEAD (`ref: <name>`), and a new
loose ref created under git's own lock protocol (`<ref>.lock` made exclusively, then renamed).
Whenever anything looks other than plain – a reftable repository, a repository-local hook or
hooks path, a shared repository, a `core.fsync` setting, a lock held, an unexpected file – the
answer is "unsure" and the caller asks git (git.py), so no check and no guarantee depends on
this module being right.
Inputs come from a session's worktree: files are read only when regular and small.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import NamedTuple

from autoresearch.fsutil import FileRefused, read_regular

_SMALL = 4096  # a HEAD, a `.git` file or a ref is one short line
_OBJECT_ID = re.compile(r"[0-9a-f]{40}([0-9a-f]{24})?")
# what reftable repositories leave in HEAD for older gits: a name git never resolves
_REFTABLE_HEAD = "refs/heads/.invalid"
# repository settings under which git does more than rename a lock file into place (a hook,
# another ref store, group permissions, `core.fsync` asking refs to be synced)
_UNPLAIN_CONFIG = ("hookspath", "refstorage", "sharedrepository", "fsync")


# a NamedTuple: status imports it, and a frozen dataclass compiles its methods at import
class HeadRead(NamedTuple):
    """What a worktree's HEAD file says: `known` False when it could not be read plainly (ask
    git); else `ref` is the full ref name HEAD points at, or None for a detached HEAD."""

    known: bool
    ref: str | None = None


UNSURE = HeadRead(known=False)


def git_dir(worktree: Path) -> Path | None:
    """The git directory of the worktree whose top folder is `worktree` (its `.git` folder,
    or the folder a linked worktree's `.git` file names); None when unsure."""
    dot = worktree / ".git"
    if dot.is_dir():
        return dot
    text = _read(dot)
    if text is None or not text.startswith("gitdir: ") or text.count("\n") > 1:
        return None
    target = Path(text.removeprefix("gitdir: ").strip())
    return target if target.is_absolute() else worktree / target


def dirs(worktree: Path) -> tuple[Path, Path] | None:
    """The worktree's own git directory and the common one (equal outside a linked worktree),
    real paths, for the worktree whose top folder is `worktree`; None when unsure."""
    own = git_dir(worktree)
    if own is None or not (own / "HEAD").is_file():
        return None
    common = own
    if (own / "commondir").exists():  # a linked worktree's folder names the shared one
        text = _read(own / "commondir")
        if text is None or text.count("\n") > 1 or not text.strip():
            return None
        common = own / text.strip()  # relative to `own`, or absolute
    if not (common / "objects").is_dir() or not (common / "refs").is_dir():
        return None
    return Path(os.path.realpath(own)), Path(os.path.realpath(common))


def main_root(worktree: Path) -> Path | None:
    """The main working tree of the repository whose worktree's top folder is `worktree` (its
    own or a linked one), when the shared git directory is that tree's `.git`; None when unsure."""
    found = dirs(worktree)
    return found[1].parent if found is not None and found[1].name == ".git" else None


def head_ref(worktree: Path) -> HeadRead:
    """The ref HEAD points at in `worktree` (its top folder), read from the HEAD file."""
    own = git_dir(worktree)
    text = _read(own / "HEAD") if own is not None else None
    if text is None or text.count("\n") != 1 or not text.endswith("\n"):
        return UNSURE
    line = text.strip()
    if line.startswith("ref: refs/") and line != f"ref: {_REFTABLE_HEAD}":
        return HeadRead(known=True, ref=line.removeprefix("ref: "))
    return HeadRead(known=True) if _OBJECT_ID.fullmatch(line) else UNSURE


def create_ref(repo: Path, ref: str, object_id: str) -> bool:
    """Point the new or existing loose ref `ref` (e.g. `refs/autoresearch/…`) at `object_id` in
    the repository whose main worktree is `repo`, as `git update-ref` would: True when written,
    False when unsure (nothing was written: use git)."""
    common = _plain_common_dir(repo)
    if common is None or not _OBJECT_ID.fullmatch(object_id) or not ref.startswith("refs/"):
        return False
    path = common / ref
    lock = path.with_name(path.name + ".lock")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(lock, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o666)
    except OSError:  # a lock held (git will say by whom), a folder where a ref is, …
        return False
    return _write_locked(fd, lock, path, f"{object_id}\n".encode())


def _write_locked(fd: int, lock: Path, path: Path, data: bytes) -> bool:
    """Write the lock file we made, then rename it over the ref (the commit of git's lock
    protocol); the lock is removed when anything fails. Not synced, as git's own ref updates
    are not by default (`core.fsync` leaves references out): a killed process loses nothing,
    and a sync was ~10 ms of a loaded step."""
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(lock, path)
    except OSError:
        lock.unlink(missing_ok=True)
        return False
    return True


def _plain_common_dir(repo: Path) -> Path | None:
    """The `.git` folder of a main worktree whose refs are plain loose files, with no setting
    that makes git do more on a ref update; else None."""
    common = repo / ".git"
    if not (common / "refs").is_dir() or (common / "commondir").exists():
        return None
    if (common / "reftable").exists() or (common / "hooks" / "reference-transaction").exists():
        return None
    config = _read(common / "config", limit=1 << 20)
    if config is None or any(word in config.lower() for word in _UNPLAIN_CONFIG):
        return None
    return common


def _read(path: Path, limit: int = _SMALL) -> str | None:
    try:
        return read_regular(path, limit).decode("utf-8")
    except (OSError, FileRefused, UnicodeDecodeError):
        return None
