"""What every zero-model tool shares: its workspace (sandboxed roots), receipts and artifacts.

Invariants: every path a tool touches goes through `Workspace.path` (part 1's sandbox: inside
the repository lexically and through realpath); every text a tool returns or stores as an
artifact is redacted first; an artifact is written atomically and privately, named by the
digest of its (redacted) content, so writing the same pack twice is one file.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypedDict, TypeVar, cast

from autoresearch.errors import ContractError, NotFoundError
from autoresearch.fsutil import atomic_write_text
from autoresearch.jsonshape import json_shape
from autoresearch.paths import STATE_DIR
from autoresearch.redact import redact, redact_value
from autoresearch.worker import sandbox

WORKER_DIR = "worker"
ARTIFACTS_DIR = "artifacts"
ARTIFACT_PREFIX = "artifact:"
_ARTIFACT_ID = re.compile(r"[0-9a-f]{16}")
# Files bigger than this are skipped by readers: a tool answers in bounded time and memory.
MAX_FILE_BYTES = 2 * 1024 * 1024
MAX_LINE_CHARS = 300


class ReceiptJson(TypedDict):
    bytes_read: int
    bytes_returned: int
    artifacts: list[str]
    truncated: bool


@dataclass
class Receipt:
    """What a call cost and what it left behind (worker.md: every result carries one)."""

    bytes_read: int = 0
    bytes_returned: int = 0
    artifacts: list[str] = field(default_factory=list)
    truncated: bool = False

    def to_dict(self) -> ReceiptJson:
        return cast(ReceiptJson, json_shape(self))  # its fields: ReceiptJson's keys


@dataclass(frozen=True)
class Workspace:
    """The repository a tool acts on; every path is sandboxed inside it."""

    root: Path

    @property
    def roots(self) -> tuple[sandbox.Root, ...]:
        return (sandbox.Root.of(self.root),)

    @property
    def state(self) -> Path:
        return self.root / STATE_DIR / WORKER_DIR

    def path(self, name: str) -> Path:
        """`name` (relative to the root, or absolute) as an absolute path inside the root."""
        return Path(sandbox.resolve(name, self.roots, str(self.root)))

    def rel(self, path: Path) -> str:
        return os.path.relpath(path, self.root)

    def read_text(self, path: Path, receipt: Receipt) -> str:
        """A file's text (undecodable bytes replaced); counted in the receipt."""
        if not path.is_file():
            raise NotFoundError(f"no such file: {self.rel(path)}")
        size = path.stat().st_size
        if size > MAX_FILE_BYTES:
            raise ContractError(
                f"{self.rel(path)} is {size} bytes; tools read files up to {MAX_FILE_BYTES}"
            )
        data = path.read_bytes()
        receipt.bytes_read += len(data)
        return data.decode("utf-8", "replace")

    def store_artifact(self, text: str, receipt: Receipt) -> str:
        """Keep `text` (redacted) as an artifact; returns its ref, also put in the receipt."""
        clean = redact(text)
        ident = hashlib.sha256(clean.encode()).hexdigest()[:16]
        target = self.state / ARTIFACTS_DIR / f"{ident}.txt"
        if not target.exists():
            atomic_write_text(target, clean)
        ref = ARTIFACT_PREFIX + ident
        receipt.artifacts.append(ref)
        return ref

    def artifact_path(self, ref: str) -> Path:
        ident = ref.removeprefix(ARTIFACT_PREFIX)
        if not _ARTIFACT_ID.fullmatch(ident):
            raise ContractError(f"not an artifact ref: {ref!r} (artifact:<16 hex digits>)")
        path = self.state / ARTIFACTS_DIR / f"{ident}.txt"
        if not path.is_file():
            raise NotFoundError(f"no such artifact: {ref}")
        return path


def cut(line: str, limit: int = MAX_LINE_CHARS) -> tuple[str, bool]:
    """A line cut to `limit` characters, and whether it was cut."""
    return (line, False) if len(line) <= limit else (line[:limit] + "…", True)


def bounded(text: str, limit: int) -> tuple[str, bool]:
    """`text` cut to at most `limit` UTF-8 bytes on a line boundary where possible."""
    data = text.encode()
    if len(data) <= limit:
        return text, False
    head = data[:limit].decode("utf-8", "ignore")
    newline = head.rfind("\n")
    return (head[: newline + 1] if newline > 0 else head), True


Payload = TypeVar("Payload", bound=Mapping[str, object])


def finish(receipt: Receipt, payload: Payload) -> Payload:
    """The tool's structured result: the payload redacted, the receipt's byte count set
    (redaction changes strings only: the result has the payload's shape, and a receipt)."""
    clean: dict[str, object] = redact_value(payload)
    receipt.bytes_returned = len(json.dumps(clean, ensure_ascii=False).encode())
    return cast(Payload, {**clean, "receipt": receipt.to_dict()})
