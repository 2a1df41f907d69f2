"""Unexpected errors (a bug, a broken environment): one line for the user, a crash log for us.

Every front door reports them the same way: exit code 3 on the command line, a tool error from
the MCP server, both with the line `internal error (<type>: <text>) (details in <log>)`. The
log holds the version, the command and the traceback, secrets masked (redact.py: a crash log is
what a user attaches to a bug report). It is written in the repository's `.autoresearch/crash/`,
else in a folder of this user's own under the temp folder (0700; a symlink or another user's
folder planted there is never used). Writing it never raises: a crash while reporting a crash
must still leave the user with the one line.

A reader that left (`autoresearch status | head -1`) is no crash: the command stops quietly with
141, the code a shell reports for a writer SIGPIPE ended (`output_closed`, `quiet_closed_output`).
"""

from __future__ import annotations

import contextlib
import json
import os
import platform
import select
import stat
import sys
import tempfile
import traceback
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path

from autoresearch import __version__
from autoresearch.errors import DiskFullError, disk_full_detail
from autoresearch.fsutil import (
    FileRefused,
    atomic_write_text,
    make_private,
    private_dir,
    read_regular,
)
from autoresearch.paths import ACTIVE_RUN_FILE, CRASH_DIR, RUNS_DIR, STATE_DIR
from autoresearch.redact import redact

EXIT_INTERNAL_ERROR = 3
# 128 + SIGPIPE: what a shell shows for `yes | head -1`'s writer, so `set -o pipefail` scripts
# see a cut-short output as they do for any other tool. Not 0: the output was not all read
# (`status --json | head -c 10` leaves broken JSON); not 1-3, which are results and crashes.
EXIT_CLOSED_PIPE = 141
_OUTPUT_FDS = (1, 2)


def crash_dir(start: Path) -> Path:
    """`.autoresearch/crash/` of the repository around `start`, else a temp folder.

    Found by walking up, not by asking git: git may be what is broken.
    """
    for folder in (start, *start.parents):
        if (folder / STATE_DIR).is_dir():
            return folder / STATE_DIR / CRASH_DIR
    return _temp_folder()


def _temp_folder() -> Path:
    # Per user: the temp folder is shared, and a log names paths and commands.
    return Path(tempfile.gettempdir()) / f"autoresearch-{CRASH_DIR}-{os.getuid()}"


def _own_folder(folder: Path) -> Path:
    """`folder`, created or tightened to 0700, when it is a real folder of this user's; else a
    fresh private one (a symlink or someone else's folder planted in the shared temp folder
    is never written into). In a sticky temp folder nobody else can swap ours afterwards."""
    try:
        st = folder.lstat()
    except FileNotFoundError:
        private_dir(folder)
        st = folder.lstat()
    if stat.S_ISDIR(st.st_mode) and st.st_uid == os.getuid():
        make_private(folder)
        return folder
    return Path(tempfile.mkdtemp(prefix=f"autoresearch-{CRASH_DIR}-"))


def _redacted(text: str) -> str:
    """`text` with secrets masked; never the raw text (a bad pattern must not leak it)."""
    try:
        return redact(text)
    except Exception as exc:  # noqa: BLE001 - reporting a crash never raises
        return f"(log withheld: masking its secrets failed: {type(exc).__name__})\n"


def write_crash_log(exc: BaseException, command: Sequence[str], start: Path | None = None) -> Path:
    """Write the crash log of `exc`; returns its path (or where it should have gone)."""
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S.%fZ")
    try:
        folder = crash_dir(start or Path.cwd())
    except OSError:
        folder = _temp_folder()
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
        path = _own_folder(folder) / path.name
        atomic_write_text(path, _redacted(text))
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


def output_closed(exc: BaseException, fds: Sequence[int] = _OUTPUT_FDS) -> bool:
    """True when `exc` is a broken pipe and one of our own outputs (`fds`) has lost its reader.

    A broken pipe to anything else (a child's stdin) is still a crash: only ours is checked, by
    polling the descriptor (a pipe without a reader polls as an error, a live one as writable).
    An exception group counts when all it holds are broken pipes: the MCP server's stdio
    transport raises the one its writer task met as a group, when the host stops reading.
    """
    return _broken_pipes(exc) and any(_reader_gone(fd) for fd in fds)


def _broken_pipes(exc: BaseException) -> bool:
    if isinstance(exc, BaseExceptionGroup):
        return all(_broken_pipes(inner) for inner in exc.exceptions)
    return isinstance(exc, BrokenPipeError)


def _reader_gone(fd: int) -> bool:
    poller = select.poll()
    try:
        poller.register(fd, select.POLLOUT)
        events = poller.poll(0)
    except (OSError, ValueError):  # closed or not a descriptor: nothing to quiet
        return False
    return any(mask & (select.POLLERR | select.POLLHUP) for _, mask in events)


def quiet_closed_output(fds: Sequence[int] = _OUTPUT_FDS) -> None:
    """Point each output whose reader left at /dev/null, so that the interpreter's last flush
    of what is still buffered does not fail once more ("Exception ignored … BrokenPipeError")."""
    with contextlib.suppress(OSError):
        null = os.open(os.devnull, os.O_WRONLY)
        try:
            for fd in fds:
                if _reader_gone(fd):
                    os.dup2(null, fd)
        finally:
            os.close(null)


def disk_full_line(exc: BaseException, start: Path | None = None) -> str | None:
    """The one line for a full disk (None when `exc` is something else): what ran out, that
    nothing recorded was lost, and how to go on – `resume` for the unfinished run."""
    detail = disk_full_detail(exc)
    if detail is None:
        return None
    run_id = _unfinished_run(start or Path.cwd())
    then = (
        f"then resume the run: autoresearch resume {run_id}"
        if run_id
        else "then run the command again"
    )
    what = exc.message if isinstance(exc, DiskFullError) else f"no space left on device ({detail})"
    return f"{what}; nothing recorded was lost: free some space, {then}"


def _unfinished_run(start: Path) -> str | None:
    """The run the active-run pointer names while it is unfinished (best effort: reading
    must never fail the line)."""
    for folder in (start, *start.parents):
        pointer = folder / STATE_DIR / ACTIVE_RUN_FILE
        if (folder / STATE_DIR).is_dir():
            try:
                data = json.loads(read_regular(pointer, 64 * 1024))
            except (OSError, FileRefused, ValueError):
                return None
            if not isinstance(data, dict) or not data.get("active"):
                return None
            run_id = str(data.get("run_id") or "")
            # a prepare that failed removed its run: the pointer may outlive it
            alive = run_id and (folder / STATE_DIR / RUNS_DIR / run_id).is_dir()
            return run_id if alive else None
    return None
