"""The error tree: every expected failure is an AutoresearchError with a one-line message.

The CLI maps these to exit code 2 ("nothing was done") and prints `autoresearch: <message>`.
A step that was recorded but failed the run is not an exception; it is a result with exit 1.
"""

from __future__ import annotations


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
