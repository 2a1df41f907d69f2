"""Fault injection: `hit(name)` kills this process with SIGKILL at a named point – and with
it its whole process group when it leads one (a driver started in its own session: the kill
takes its git and the built-in agent down too, as a machine dying would).

Enabled only through AUTORESEARCH_FAILPOINTS (see settings); `name` fires at the first hit,
`name@N` at the N-th. The fault suite uses it to prove that a driver killed at any point of an
iteration leaves a state that `resume` repairs. `name:stall` instead holds the process at that
point (saying so on stderr) until a signal has been handled there, at most STALL_SECONDS, so
that a test can deliver a signal exactly there and see what the process does next.
"""

from __future__ import annotations

import os
import select
import signal
import sys
import threading
import time
from collections import Counter

from autoresearch import settings

_ENABLED = settings.failpoints()
_hits: Counter[str] = Counter()
STALL_SECONDS = 30.0  # bounded: a test that never signals still ends


def hit(name: str) -> None:
    if not _ENABLED:
        return
    _hits[name] += 1
    if f"{name}:stall" in _ENABLED:
        print(f"failpoint {name}: stalled", file=sys.stderr, flush=True)
        _stall()
        return
    if name in _ENABLED or f"{name}@{_hits[name]}" in _ENABLED:
        if os.getpgid(0) == os.getpid():
            os.killpg(0, signal.SIGKILL)
        os.kill(os.getpid(), signal.SIGKILL)


def _stall() -> None:
    """Wait for a signal (its handler runs here; one that raises ends the wait at once too)."""
    if threading.current_thread() is not threading.main_thread():
        time.sleep(STALL_SECONDS)
        return
    # Python writes each signal it catches to the wakeup fd, whichever thread the kernel gave
    # it to: the pipe turns readable, the handler runs in this thread before the wait returns
    # (or right after, at the next bytecode)
    readable, writable = os.pipe()
    os.set_blocking(writable, False)
    previous = signal.set_wakeup_fd(writable, warn_on_full_buffer=False)
    try:
        select.select([readable], [], [], STALL_SECONDS)
    finally:
        signal.set_wakeup_fd(previous)
        os.close(readable)
        os.close(writable)
