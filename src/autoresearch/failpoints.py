"""Fault injection: `hit(name)` kills this process with SIGKILL at a named point – and with
it its whole process group when it leads one (a driver started in its own session: the kill
takes its git and the built-in agent down too, as a machine dying would).

Enabled only through AUTORESEARCH_FAILPOINTS (see settings); `name` fires at the first hit,
`name@N` at the N-th. The fault suite uses it to prove that a driver killed at any point of an
iteration leaves a state that `resume` repairs.
"""

from __future__ import annotations

import os
import signal
from collections import Counter

from autoresearch import settings

_ENABLED = settings.failpoints()
_hits: Counter[str] = Counter()


def hit(name: str) -> None:
    if not _ENABLED:
        return
    _hits[name] += 1
    if name in _ENABLED or f"{name}@{_hits[name]}" in _ENABLED:
        if os.getpgid(0) == os.getpid():
            os.killpg(0, signal.SIGKILL)
        os.kill(os.getpid(), signal.SIGKILL)
