"""Atomic file writes: temp file in the same directory, then os.replace.

A reader sees the old file or the new one, never a torn one, and a kill -9 mid-write leaves
at most a stray `.tmp` file. No fsync: the guarantee is against process crashes, not power loss.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any


def _read_umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


# mkstemp creates 0600 files; views are ordinary files and get the usual permissions.
_FILE_MODE = 0o666 & ~_read_umask()


def atomic_write_bytes(path: Path, data: bytes) -> None:
    """Replace `path` with `data` atomically."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        os.fchmod(fd, _FILE_MODE)
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def atomic_write_text(path: Path, text: str) -> None:
    atomic_write_bytes(path, text.encode("utf-8"))


def dump_json(value: Any) -> str:
    """The one JSON style of every view: 2-space indent, UTF-8, trailing newline."""
    return json.dumps(value, indent=2, ensure_ascii=False) + "\n"


def atomic_write_json(path: Path, value: Any) -> None:
    atomic_write_text(path, dump_json(value))
