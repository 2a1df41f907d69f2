"""The one signal policy of a long call (`run`, `resume`, `demo`, `exp run`).

The first Ctrl-C or SIGTERM asks the work to stop cleanly: `on_stop` is called, the work notices
at its next poll, stops its children and records what happened. A second one, Ctrl-C or
SIGTERM alike, interrupts at once: it raises KeyboardInterrupt in the main thread, so the work's
abort path runs (it kills the children it started, which live in process groups of their own
and would outlive a driver killed by SIGTERM's default action) and the CLI prints
`autoresearch: interrupted`, exit 130. The previous handlers are restored when the block ends.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)


@contextmanager
def first_signal_stops(on_stop: Callable[[str], None]) -> Iterator[None]:
    """Install the policy for the duration of the block (main thread only: elsewhere Python
    cannot install handlers, and the caller's own stop mechanism applies)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {sig: signal.getsignal(sig) for sig in STOP_SIGNALS}

    def restore() -> None:
        for sig, handler in previous.items():
            signal.signal(sig, handler if handler is not None else signal.SIG_DFL)

    def again(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    def handler(signum: int, frame: object) -> None:
        for sig in STOP_SIGNALS:
            signal.signal(sig, again)
        on_stop(signal.Signals(signum).name)

    for sig in STOP_SIGNALS:
        signal.signal(sig, handler)
    try:
        yield
    finally:
        restore()
