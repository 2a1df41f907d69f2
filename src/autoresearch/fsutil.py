"""The one place files and folders are created: atomic writes, and private state.

Atomic: temp file in the same directory, then os.replace. A reader sees the old file or the new
one, never a torn one, and a kill -9 mid-write leaves at most a stray `.tmp` file. No fsync:
the guarantee is against process crashes, not power loss. The run's views (`atomic_write_view`:
the placeholder, instructions, manifest and latest evaluation a step rewrites, all made anew
from the journal at the next step or resume) are swapped in by an atomic exchange where the OS
has one (Linux renameat2): ext4 writes a file renamed over another out to disk first
(auto_da_alloc), which made each view's replace cost milliseconds on a loaded disk (issue 36).
The old view is then kept as the view's spare (`spare_of`, a hidden `.tmp` beside it) and
filled in place by the next write once nobody has it open: freeing its blocks cost as much.
Everything else – the user's files, keys, seals, backups – keeps that guard: a plain rename.

Private: the state under `.autoresearch/` (journal, logs, patches, views, tokens) holds the
commands a benchmark runs and whatever the agents and evaluators printed, secrets included.
It is the user's alone whatever the umask: folders 0700, files 0600, children that work in it
run with umask 077. The modes are set explicitly (a umask only removes bits, and a umask of
0700 would remove the owner's own).
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import signal
import stat
import threading
from pathlib import Path
from typing import IO, Any

from autoresearch.paths import STATE_DIR

PRIVATE_DIR_MODE = 0o700
PRIVATE_FILE_MODE = 0o600
PRIVATE_UMASK = 0o077


def private_dir(path: Path) -> Path:
    """Create `path` and its missing parents as 0700 folders; existing ones are left as they
    are (a parent may be the user's repository). Returns `path`."""
    missing: list[Path] = []
    current = path
    while not current.is_dir():
        missing.append(current)
        if current.parent == current:
            break
        current = current.parent
    for folder in reversed(missing):
        try:
            folder.mkdir(mode=PRIVATE_DIR_MODE)
        except FileExistsError:
            if not folder.is_dir():
                raise
            continue  # a concurrent creator won; it used the same mode
        os.chmod(folder, PRIVATE_DIR_MODE)
    return path


def make_private(path: Path) -> None:
    """Tighten an existing state folder or file (made by an older version) to user-only."""
    os.chmod(path, PRIVATE_DIR_MODE if path.is_dir() else PRIVATE_FILE_MODE)


def private_fd(path: Path, flags: int) -> int:
    """os.open with O_CREAT: a new file is 0600; an existing one is tightened to 0600."""
    private_dir(path.parent)
    fd = os.open(path, flags | os.O_CREAT, PRIVATE_FILE_MODE)
    try:
        os.fchmod(fd, PRIVATE_FILE_MODE)
    except BaseException:
        os.close(fd)
        raise
    return fd


def private_open(path: Path, mode: str = "wb", buffering: int = -1) -> IO[bytes]:
    """A binary file handle on a 0600 file: "wb" truncates, "ab" appends, "r+b" updates."""
    flags = {
        "wb": os.O_WRONLY | os.O_TRUNC,
        "ab": os.O_WRONLY | os.O_APPEND,
        "r+b": os.O_RDWR,
    }[mode]
    return os.fdopen(private_fd(path, flags), mode, buffering=buffering)


def is_private_path(path: Path | str | None) -> bool:
    """Whether `path` lies under a `.autoresearch` state folder."""
    return path is not None and STATE_DIR in Path(path).parts


def child_umask(cwd: Path | str | None) -> int:
    """The umask for a child process working in `cwd` (-1: inherit ours)."""
    return PRIVATE_UMASK if is_private_path(cwd) else -1


def atomic_write_bytes(
    path: Path, data: bytes, *, keep_mode: bool = False, exchange: bool = False
) -> None:
    """Replace `path` with `data` atomically; the file is 0600 (private state), or keeps the
    mode of the file it replaces with `keep_mode` (a file of the user's, such as
    info/exclude). `exchange`: a view the journal can make again (`atomic_write_view`)."""
    private_dir(path.parent)
    mode = PRIVATE_FILE_MODE
    if keep_mode:
        with contextlib.suppress(FileNotFoundError):
            mode = stat.S_IMODE(path.stat().st_mode)
    import tempfile  # a writer's only: it brings random and shutil to every reader's start

    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        os.fchmod(fd, mode)
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        if exchange and _exchange(tmp, path):
            Path(tmp).unlink()  # the temporary name holds the old content now
        else:
            os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


_AT_FDCWD = -100
_RENAME_EXCHANGE = 2
_renameat2: list[Any] = []  # the C function, looked up once; empty list: not looked up yet


def _exchange(tmp: str, path: Path) -> bool:
    """Swap the new file `tmp` with the regular file at `path` in one atomic rename, so that
    a reader of `path` sees the old file or the new one; False (nothing done) where there is
    no such file or the OS or file system has no exchange: the caller renames instead."""
    try:
        if not stat.S_ISREG(os.lstat(path).st_mode):
            return False
    except OSError:
        return False
    call = _renameat2_call()
    if call is None:
        return False
    done = call(_AT_FDCWD, os.fsencode(tmp), _AT_FDCWD, os.fsencode(path), _RENAME_EXCHANGE)
    return bool(done == 0)


def _renameat2_call() -> Any:
    """libc's renameat2 (glibc >= 2.28), or None: an older libc, another OS."""
    if not _renameat2:
        import ctypes  # here: a light command (`--help`) that writes nothing never loads it

        try:
            found: Any = ctypes.CDLL(None, use_errno=True).renameat2
        except (AttributeError, OSError):
            found = None
        _renameat2.append(found)
    return _renameat2[0]


def atomic_write_text(path: Path, text: str, *, keep_mode: bool = False) -> None:
    atomic_write_bytes(path, text.encode("utf-8"), keep_mode=keep_mode)


def atomic_write_view(path: Path, text: str) -> None:
    """A view a step rewrites and the next step or resume makes again from the journal: as
    atomic for a reader, without ext4's flush of a file renamed over another, and without
    freeing the old file's blocks: the old bytes go to the view's spare, which the next write
    fills again in place once nobody has it open."""
    data = text.encode("utf-8")
    spare = spare_of(path)
    with _SPARE_LOCK:  # one spare per view: two threads must not fill it at once
        if _refill(spare, data):
            if not _exchange(str(spare), path):
                os.replace(spare, path)  # no old view to swap with: the spare is made anew
            return
    atomic_write_bytes(path, data, exchange=True)


def spare_of(view: Path) -> Path:
    """The hidden file beside a view that holds its previous bytes until the next write
    fills it (named as a temporary: the runtime-dirt rule and file watchers skip it)."""
    return view.with_name(f".{view.name}.spare.tmp")


_SPARE_LOCK = threading.Lock()


def _refill(spare: Path, data: bytes) -> bool:
    """Overwrite the spare with `data` in place, its blocks reused (unlinking a file written
    moments ago, such as the session's candidate.json, took milliseconds on a loaded disk,
    issue 36); False, with nothing written, where it is no plain file of ours alone (a
    symbolic or hard link planted there is never written through) or someone still has it
    open (a reader of the view it was keeps reading it whole)."""
    flags = os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
    try:
        fd = os.open(spare, flags, PRIVATE_FILE_MODE)
    except OSError:
        return False
    try:
        info = os.fstat(fd)
        mine = stat.S_ISREG(info.st_mode) and info.st_nlink == 1 and info.st_uid == os.getuid()
        if not mine or not _nobody_else_has(fd):
            return False
        os.fchmod(fd, PRIVATE_FILE_MODE)
        _write_all(fd, data)
        if info.st_size != len(data):
            os.ftruncate(fd, len(data))
    finally:
        os.close(fd)
    return True


def _nobody_else_has(fd: int) -> bool:
    """Whether `fd` is the only open descriptor of its file: Linux grants a write lease only
    then (taken and given back at once: no reader can open the spare by the view's name).
    Its break signal is one ignored by default, never SIGIO's kill."""
    import fcntl  # Linux's leases; elsewhere no spare is ever reused

    setlease = getattr(fcntl, "F_SETLEASE", None)
    setsig = getattr(fcntl, "F_SETSIG", None)
    if setlease is None or setsig is None:
        return False
    try:
        fcntl.fcntl(fd, setsig, signal.SIGURG)
        fcntl.fcntl(fd, setlease, fcntl.F_WRLCK)
    except OSError:  # someone has it open, or the file system has no leases
        return False
    fcntl.fcntl(fd, setlease, fcntl.F_UNLCK)
    return True


def _write_all(fd: int, data: bytes) -> None:
    written = 0
    while written < len(data):
        written += os.pwrite(fd, data[written:], written)


def dump_json(value: Any) -> str:
    """The one JSON style of every view: 2-space indent, UTF-8, trailing newline."""
    return json.dumps(value, indent=2, ensure_ascii=False) + "\n"


def atomic_write_json(path: Path, value: Any) -> None:
    atomic_write_text(path, dump_json(value))


class FileRefused(ValueError):
    """A file that is read as input but is not a plain, bounded regular file; the message says
    why (a symbolic link, a FIFO or other special file, too large)."""


def read_regular(path: Path, limit: int) -> bytes:
    """The bytes of `path`, read only when it is a regular file of at most `limit` bytes.

    The input may come from untrusted code: a symbolic link (to /dev/zero, to another file) is
    refused without being followed, a FIFO is never waited on, and no more than `limit` bytes
    are ever read. FileNotFoundError when it does not exist.
    """
    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise FileRefused("is a symbolic link") from exc
        if exc.errno in (errno.EISDIR, errno.ENXIO):
            raise FileRefused("is not a regular file") from exc
        raise
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise FileRefused("is not a regular file")
        if info.st_size > limit:
            raise FileRefused(f"is larger than {_size(limit)}")
        chunks, size = [], 0
        while size <= limit:
            chunk = os.read(fd, limit + 1 - size)
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
    finally:
        os.close(fd)
    data = b"".join(chunks)
    if len(data) > limit:  # grew while we read it
        raise FileRefused(f"is larger than {_size(limit)}")
    return data


def _size(limit: int) -> str:
    for unit, size in (("MiB", 1 << 20), ("KiB", 1 << 10)):
        if limit % size == 0:
            return f"{limit // size} {unit}"
    return f"{limit} bytes"
