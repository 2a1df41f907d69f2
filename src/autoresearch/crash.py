"""Unexpected errors (a bug, a broken environment): one line for the user, a crash log for us.

Every front door reports them the same way: exit code 3 on the command line, a tool error from
the MCP server, both with the line `internal error (<type>: <text>) (details in <log>)`. The
log holds the version, the command and the traceback. Writing it never raises: a crash while
reporting a crash must still leave the user with the one line.
"""

from __future__ import annotations

import contextlib
import os
import platform
import sys
import tempfile
import traceback
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path

from autoresearch import __version__
from autoresearch.fsutil import atomic_write_text
from autoresearch.paths import CRASH_DIR, STATE_DIR

EXIT_INTERNAL_ERROR = 3


def crash_dir(start: Path) -> Path:
    """`.autoresearch/crash/` of the repository around `start`, else a temp folder.

    Found by walking up, not by asking git: git may be what is broken.
    """
    for folder in (start, *start.parents):
        if (folder / STATE_DIR).is_dir():
            return folder / STATE_DIR / CRASH_DIR
    return Path(tempfile.gettempdir()) / f"autoresearch-{CRASH_DIR}"


def write_crash_log(exc: BaseException, command: Sequence[str], start: Path | None = None) -> Path:
    """Write the crash log of `exc`; returns its path (or where it should have gone)."""
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S.%fZ")
    try:
        folder = crash_dir(start or Path.cwd())
    except OSError:
        folder = Path(tempfile.gettempdir())
    path = folder / f"crash-{stamp}-{os.getpid()}.log"
    text = "".join(
        [
            f"autoresearch {__version__} (python {platform.python_version()}, {sys.platform})\n",
            f"time: {stamp}\n",
            f"command: {' '.join(command)}\n",
            f"cwd: {_cwd()}\n\n",
            *traceback.format_exception(exc),
        ]
    )
    # On failure the line still names the intended path: the traceback is lost, the line not.
    with contextlib.suppress(OSError):
        atomic_write_text(path, text)
    return path


def _cwd() -> str:
    try:
        return os.getcwd()
    except OSError:
        return "(unavailable)"


def internal_error_line(exc: BaseException, log: Path) -> str:
    """The one line every front door shows for an unexpected error."""
    text = " ".join(str(exc).splitlines()) or "no message"
    return f"internal error ({type(exc).__name__}: {text}) (details in {log})"
