"""Fault injection: `hit(name)` kills this process with SIGKILL at a named point – and with
it its whole process group when it leads one (a driver started in its own session: the kill
takes its git and the built-in agent down too, as a machine dying would).

Enabled only through AUTORESEARCH_FAILPOINTS (see settings); `name` fires at the first hit,
`name@N` at the N-th. The fault suite uses it to prove that a driver killed at any point of an
iteration leaves a state that `resume` repairs. `name:stall` instead holds the process at that
point for a while (saying so on stderr), so that a test can deliver a signal exactly there.
"""

from __future__ import annotations

import os
import signal
import sys
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
        time.sleep(STALL_SECONDS)  # a signal handler that raises ends the sleep at once
        return
    if name in _ENABLED or f"{name}@{_hits[name]}" in _ENABLED:
        if os.getpgid(0) == os.getpid():
            os.killpg(0, signal.SIGKILL)
        os.kill(os.getpid(), signal.SIGKILL)
