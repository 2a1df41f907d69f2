"""OS file locks (flock). The kernel releases them when the holder dies, so a crashed driver
never blocks the next one."""

from __future__ import annotations

import fcntl
import os
import time
from pathlib import Path

from autoresearch.errors import RefusedError
from autoresearch.fsutil import private_fd

# Long enough to outlast a `status` or `stop` probing a lock, short enough not to be felt.
PROBE_PATIENCE = 0.5


class FileLock:
    """An exclusive flock on one file; one instance per holder."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._fd: int | None = None

    def try_acquire(self, patience: float = 0.0) -> bool:
        """Take the lock, retrying for up to `patience` seconds; False when another holder
        keeps it (a probe of `held_elsewhere` holds it only for an instant)."""
        deadline = time.monotonic() + patience
        while not self._take(fcntl.LOCK_EX | fcntl.LOCK_NB):
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.02)
        return True

    def acquire(self) -> None:
        """Wait for the lock."""
        self._take(fcntl.LOCK_EX)

    def _take(self, flags: int) -> bool:
        if self._fd is not None:
            return True
        fd = private_fd(self.path, os.O_RDWR)
        try:
            fcntl.flock(fd, flags)
        except BlockingIOError:
            os.close(fd)
            return False
        self._fd = fd
        return True

    def held_elsewhere(self) -> bool:
        """True when another holder has the lock right now.

        The probe takes a shared lock for an instant: probes never conflict with each other,
        and a driver taking the exclusive lock meanwhile only waits (see `try_acquire`).
        """
        if self._fd is not None:
            return False
        return _held(private_fd(self.path, os.O_RDWR))

    def release(self) -> None:
        if self._fd is not None:
            fcntl.flock(self._fd, fcntl.LOCK_UN)
            os.close(self._fd)
            self._fd = None

    def __enter__(self) -> FileLock:
        self.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


def take_or_refuse(path: Path, refusal: str) -> FileLock:
    """The one lock pattern of a mutating call: take `path`'s lock, waiting out a probe, or
    raise RefusedError(`refusal`). The caller releases it (or dies, and the kernel does)."""
    lock = FileLock(path)
    if not lock.try_acquire(patience=PROBE_PATIENCE):
        raise RefusedError(refusal)
    return lock


def holder_gone(path: Path) -> bool | None:
    """For a lock file a holder took: True once nobody holds it (the holder died or let go),
    False while someone does, None when the file is gone. Never creates the file (a watcher
    must not leave one behind in a folder being removed)."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except FileNotFoundError:
        return None
    return not _held(fd)


def _held(fd: int) -> bool:
    """The one probe: whether someone holds the lock on `fd`'s file. It takes a shared lock
    for an instant and closes `fd` (closing releases it)."""
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)
    return False
