"""Pure stream helpers: bounded tails and line splitting over chunked output."""

from __future__ import annotations

from collections.abc import Callable


class Tail:
    """The last `limit` bytes of a stream, in bounded memory."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.total = 0
        self._buf = bytearray()

    def feed(self, data: bytes) -> None:
        self.total += len(data)
        self._buf += data
        if len(self._buf) > 2 * self.limit:
            del self._buf[: len(self._buf) - self.limit]

    def text(self) -> str:
        return bytes(self._buf[-self.limit :]).decode("utf-8", errors="replace")


class LineSplitter:
    """Feeds complete lines (without newline) to a callback; over-long lines are dropped."""

    def __init__(self, on_line: Callable[[bytes], None], max_line: int = 1 << 20) -> None:
        self._on_line = on_line
        self._max = max_line
        self._pending = bytearray()
        self._overflow = False
        self.dropped = 0  # lines over `max_line`, not fed to the callback

    def feed(self, data: bytes) -> None:
        start = 0
        while True:
            nl = data.find(b"\n", start)
            if nl < 0:
                self._keep(data[start:])
                return
            self._keep(data[start:nl])
            if not self._overflow:
                self._on_line(bytes(self._pending))
            self._pending.clear()
            self._overflow = False
            start = nl + 1

    def close(self) -> None:
        if self._pending and not self._overflow:
            self._on_line(bytes(self._pending))
        self._pending.clear()

    def _keep(self, piece: bytes) -> None:
        if self._overflow:
            return
        if len(self._pending) + len(piece) > self._max:
            self._overflow = True
            self.dropped += 1
            self._pending.clear()
        else:
            self._pending += piece
