"""The error tree: every expected failure is an AutoresearchError with a one-line message.

The CLI maps these to exit code 2 ("nothing was done") and prints `autoresearch: <message>`.
A step that was recorded but failed the run is not an exception; it is a result with exit 1.
"""

from __future__ import annotations

import errno


class AutoresearchError(Exception):
    """Base of every user-facing error; `message` is shown as is, on one line."""

    exit_code = 2

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def __str__(self) -> str:
        return self.message


class ContractError(AutoresearchError):
    """A mission directory, sandbox.md or option is invalid."""


class RefusedError(AutoresearchError):
    """A valid request that the current state forbids (active run, terminal run, dirty tree)."""


class GitError(AutoresearchError):
    """A git command failed; the message carries the command, exit code and output."""


class JournalError(AutoresearchError):
    """The journal is corrupt, locked or from a newer version."""


class ProcessError(AutoresearchError):
    """A helper process could not be started."""


class NotFoundError(AutoresearchError):
    """A run, session or file that the request names does not exist."""


class RunInterrupted(AutoresearchError):
    """The driver was asked to stop mid-iteration; the iteration was rolled back, the run is
    resumable."""

    exit_code = 130


class DiskFullError(AutoresearchError):
    """No space left on the device (or the quota is used up): the write that failed was
    atomic or in a transaction, so what was recorded before is intact."""


DISK_FULL_ERRNOS = (errno.ENOSPC, errno.EDQUOT)
# How SQLite and git say it (their errors carry no errno).
DISK_FULL_TEXTS = ("database or disk is full", "No space left on device", "Disk quota exceeded")


def disk_full_detail(exc: BaseException) -> str | None:
    """What ran out of space, when `exc` (or what caused it) is a full disk; else None."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, OSError) and current.errno in DISK_FULL_ERRNOS:
            where = current.filename
            return f"{current.strerror or 'no space left'}" + (f": {where}" if where else "")
        text = str(current)
        if any(t.lower() in text.lower() for t in DISK_FULL_TEXTS):
            return " ".join(text.splitlines())
        current = current.__cause__ or current.__context__
    return None
