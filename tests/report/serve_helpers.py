"""`autoresearch serve` as a real subprocess: started, its URL read, stopped by a signal."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from helpers import GIT_ENV

URL_LINE = re.compile(r"at (http://127\.0\.0\.1:\d+/) \(Ctrl-C to stop\)$")


@dataclass
class Served:
    """What the server said: its first line and URL; once stopped, its exit and output."""

    first_line: str
    url: str
    returncode: int | None = None
    out: str = ""
    err: str = ""


@contextmanager
def serve_cli(cwd: Path, *args: str, stop: signal.Signals = signal.SIGINT) -> Iterator[Served]:
    """Run `autoresearch serve ARGS` until the block ends, then send it `stop` (killed if it
    has not exited 15 s later: the test never leaves it behind)."""
    server = subprocess.Popen(
        [sys.executable, "-m", "autoresearch", "serve", *args],
        cwd=cwd,
        env={**os.environ, **GIT_ENV},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert server.stdout is not None
        first = server.stdout.readline().strip()
        found = URL_LINE.search(first)
        assert found, f"{first!r} {server.stderr.read() if server.stderr else ''}"
        served = Served(first, found[1])
        yield served
        server.send_signal(stop)
        served.out, served.err = server.communicate(timeout=15)
        served.returncode = server.returncode
    finally:
        if server.poll() is None:
            server.kill()
            server.wait(timeout=10)
