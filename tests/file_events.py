"""What a piece of code did to the files of some folders, as the kernel saw it (Linux inotify):
which names were replaced by a rename, which were written in place. Real events, so a test
counts the view writes of a step without mocking the code that writes them."""

from __future__ import annotations

import ctypes
import os
import struct
from collections import Counter
from pathlib import Path

IN_CLOSE_WRITE = 0x00000008
IN_MOVED_TO = 0x00000080
IN_NONBLOCK = 0o4000
IN_CLOEXEC = 0o2000000
_HEADER = struct.Struct("iIII")  # wd, mask, cookie, len (struct inotify_event)


class FileEvents:
    """Watches folders (not their subfolders) from creation until `close`."""

    def __init__(self, *folders: Path) -> None:
        self._libc = ctypes.CDLL(None, use_errno=True)
        self._fd = self._libc.inotify_init1(IN_NONBLOCK | IN_CLOEXEC)
        assert self._fd >= 0, os.strerror(ctypes.get_errno())
        self._names: dict[int, Path] = {}
        for folder in folders:
            wd = self._libc.inotify_add_watch(
                self._fd, os.fsencode(folder), IN_MOVED_TO | IN_CLOSE_WRITE
            )
            assert wd >= 0, os.strerror(ctypes.get_errno())
            self._names[wd] = folder

    def take(self, temporaries: bool = False) -> tuple[Counter[str], Counter[str]]:
        """The events since the last take: (renamed onto each name, written in place to each
        name), temporary files left out unless asked for."""
        replaced: Counter[str] = Counter()
        written: Counter[str] = Counter()
        for wd, mask, name in self._events():
            if name.endswith(".tmp") and not temporaries:
                continue
            where = self._names[wd] / name
            if mask & IN_MOVED_TO:
                replaced[str(where)] += 1
            elif mask & IN_CLOSE_WRITE:
                written[str(where)] += 1
        return replaced, written

    def _events(self) -> list[tuple[int, int, str]]:
        data = b""
        while True:
            try:
                chunk = os.read(self._fd, 65536)
            except BlockingIOError:
                break
            data += chunk
        found, at = [], 0
        while at < len(data):
            wd, mask, _, size = _HEADER.unpack_from(data, at)
            raw = data[at + _HEADER.size : at + _HEADER.size + size]
            found.append((wd, mask, raw.rstrip(b"\0").decode()))
            at += _HEADER.size + size
        return found

    def close(self) -> None:
        os.close(self._fd)
