"""`read_pack`, `diff_digest`, `history`, `get_artifact`: reading for the planner, compactly.

`read_pack` returns keyword and symbol windows from chosen files; the inline payload is at
most INLINE_LIMIT bytes, the whole pack is kept as an artifact when it is larger.
`diff_digest` summarizes the working tree's changes: files, +/- counts, hunk headers and a
per-file risk from a pure rule (`risk`). `history` is `git log` and `git blame`, bounded.
`get_artifact` returns a slice of an artifact.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from enum import StrEnum
from typing import NotRequired, TypedDict

from autoresearch import git
from autoresearch.errors import ContractError
from autoresearch.worker.tools.base import (
    Receipt,
    ReceiptJson,
    Workspace,
    bounded,
    cut,
    finish,
)

INLINE_LIMIT = 16 * 1024
MAX_FILES = 50
MAX_WINDOW = 50
MAX_HISTORY = 200
MAX_BLAME_LINES = 400
MAX_SLICE = 64 * 1024
_SYMBOL_DEF = (
    r"^\s*(?:export\s+)?(?:async\s+)?(?:def|class|function|fn|func|type|struct|interface|enum|"
    r"const|let|var|impl|trait)\s+{name}\b|^\s*{name}\s*[:=]"
)


class PackedFile(TypedDict):
    path: str
    windows: list[list[int]]  # [first, last] line numbers, from 1


class ReadPack(TypedDict):
    files: list[PackedFile]
    pack: str  # the windows' numbered lines (the whole pack an artifact when cut)
    receipt: NotRequired[ReceiptJson]


class DigestFile(TypedDict):
    path: str
    added: int
    deleted: int
    status: str  # added | deleted | modified
    risk: str
    hunks: list[str]


class Digest(TypedDict):
    base: str
    files: list[DigestFile]
    highest_risk: str | None
    receipt: NotRequired[ReceiptJson]


class History(TypedDict):
    path: str | None
    log: list[str]
    blame: NotRequired[list[str]]
    receipt: NotRequired[ReceiptJson]


class ArtifactSlice(TypedDict):
    ref: str
    offset: int
    total_bytes: int
    next_offset: int | None
    text: str
    receipt: NotRequired[ReceiptJson]


def read_pack(
    ws: Workspace,
    files: list[str],
    keywords: list[str],
    symbols: list[str],
    window: int = 3,
) -> ReadPack:
    if not files:
        raise ContractError("read_pack: no files")
    if len(files) > MAX_FILES:
        raise ContractError(f"read_pack: at most {MAX_FILES} files")
    if not 0 <= window <= MAX_WINDOW:
        raise ContractError(f"read_pack: window must be 0..{MAX_WINDOW}")
    receipt = Receipt()
    rxs = [re.compile(re.escape(k), re.IGNORECASE) for k in keywords if k]
    rxs += [re.compile(_SYMBOL_DEF.format(name=re.escape(s))) for s in symbols if s]
    sections: list[str] = []
    summary: list[PackedFile] = []
    for name in files:
        path = ws.path(name)
        lines = ws.read_text(path, receipt).splitlines()
        wanted = _windows(lines, rxs, window) if rxs else [(0, min(len(lines), 2 * MAX_WINDOW))]
        body = []
        for start, end in wanted:
            for number in range(start, end):
                text, was_cut = cut(lines[number])
                receipt.truncated |= was_cut
                body.append(f"{number + 1:>5}: {text}")
            body.append("  ...")
        summary.append({"path": ws.rel(path), "windows": [[s + 1, e] for s, e in wanted]})
        sections.append(f"== {ws.rel(path)} ==\n" + "\n".join(body))
    pack = "\n".join(sections) + "\n"
    inline, cut_pack = bounded(pack, INLINE_LIMIT)
    if cut_pack:
        receipt.truncated = True
        ws.store_artifact(pack, receipt)
    found: ReadPack = {"files": summary, "pack": inline}
    return finish(receipt, found)


def _windows(lines: list[str], rxs: list[re.Pattern[str]], window: int) -> list[tuple[int, int]]:
    """Merged [start, end) line ranges around every matching line (pure)."""
    spans: list[tuple[int, int]] = []
    for number, line in enumerate(lines):
        if any(rx.search(line) for rx in rxs):
            start, end = max(0, number - window), min(len(lines), number + window + 1)
            if spans and start <= spans[-1][1]:
                spans[-1] = (spans[-1][0], max(end, spans[-1][1]))
            else:
                spans.append((start, end))
    return spans


class Risk(StrEnum):
    LOW = "low"
    MEDIUM = "medium"
    HIGH = "high"


_HIGH_PATHS = re.compile(
    r"(^|/)(migrations?|schema|security|auth|\.github|\.ci)(/|\.|$)|(^|/)(setup\.py|"
    r"pyproject\.toml|package\.json|Dockerfile|Makefile)$|\.(sql|lock)$",
    re.IGNORECASE,
)
_LOW_PATHS = re.compile(r"(^|/)(tests?|docs?)/|\.(md|rst|txt)$|(^|/)test_[^/]*$", re.IGNORECASE)


def risk(path: str, added: int, deleted: int, deleted_file: bool) -> Risk:
    """A file change's risk: build, schema and security files or a deletion are high; a big
    change to code is medium; tests and docs are low (pure, table-tested)."""
    if deleted_file or _HIGH_PATHS.search(path):
        return Risk.HIGH
    if _LOW_PATHS.search(path):
        return Risk.LOW
    return Risk.MEDIUM if added + deleted > 40 else Risk.LOW


@dataclass
class FileDiff:
    path: str
    added: int = 0
    deleted: int = 0
    deleted_file: bool = False
    new_file: bool = False
    hunks: list[str] = field(default_factory=list)


def parse_diff(text: str) -> list[FileDiff]:
    """Files of a unified git diff with their counts and hunk headers (pure)."""
    files: list[FileDiff] = []
    for line in text.splitlines():
        if line.startswith("diff --git "):
            files.append(FileDiff(line.split(" b/", 1)[-1]))
        elif not files:
            continue
        elif line.startswith("deleted file mode"):
            files[-1].deleted_file = True
        elif line.startswith("new file mode"):
            files[-1].new_file = True
        elif line.startswith("@@"):
            files[-1].hunks.append(line)
        elif line.startswith("+") and not line.startswith("+++ "):
            files[-1].added += 1
        elif line.startswith("-") and not line.startswith("--- "):
            files[-1].deleted += 1
    return files


def diff_digest(
    ws: Workspace, base: str = "HEAD", paths: list[str] | None = None, max_hunks: int = 20
) -> Digest:
    rels = [ws.rel(ws.path(p)) for p in paths or ()]
    return digest_of(ws, git.working_diff(ws.root, base, rels), base, max_hunks)


def digest_of(ws: Workspace, text: str, base: str, max_hunks: int = 20) -> Digest:
    """The digest of a unified diff's text (the working tree's, or a job's recorded patch)."""
    receipt = Receipt()
    receipt.bytes_read = len(text.encode())
    rows: list[DigestFile] = []
    levels: list[Risk] = []
    for f in parse_diff(text):
        level = risk(f.path, f.added, f.deleted, f.deleted_file)
        hunks = [cut(h, 200)[0] for h in f.hunks[:max_hunks]]
        receipt.truncated |= len(f.hunks) > max_hunks
        levels.append(level)
        rows.append(
            {
                "path": f.path,
                "added": f.added,
                "deleted": f.deleted,
                "status": "deleted" if f.deleted_file else "added" if f.new_file else "modified",
                "risk": level.value,
                "hunks": hunks,
            }
        )
    if text:
        ws.store_artifact(text, receipt)
    digest: Digest = {"base": base, "files": rows, "highest_risk": _highest(levels)}
    return finish(receipt, digest)


def _highest(levels: list[Risk]) -> str | None:
    order = [Risk.LOW, Risk.MEDIUM, Risk.HIGH]
    return max(levels, key=order.index).value if levels else None


def history(
    ws: Workspace, path: str | None, limit: int = 20, lines: tuple[int, int] | None = None
) -> History:
    if not 1 <= limit <= MAX_HISTORY:
        raise ContractError(f"history: limit must be 1..{MAX_HISTORY}")
    receipt = Receipt()
    rel = ws.rel(ws.path(path)) if path else None
    log = git.log_lines(ws.root, rel, limit)
    out: History = {"path": rel, "log": log.splitlines()}
    if lines is not None:
        if rel is None:
            raise ContractError("history: blame needs a path")
        start, end = lines
        if not 1 <= start <= end:
            raise ContractError("history: lines must be start <= end, from 1")
        if end - start + 1 > MAX_BLAME_LINES:
            end, receipt.truncated = start + MAX_BLAME_LINES - 1, True
        blame = git.blame_lines(ws.root, rel, start, end)
        out["blame"] = [cut(b)[0] for b in blame.splitlines()]
        receipt.bytes_read += len(blame.encode())
    receipt.bytes_read += len(log.encode())
    return finish(receipt, out)


def get_artifact(
    ws: Workspace, ref: str, offset: int = 0, length: int = 16 * 1024
) -> ArtifactSlice:
    if offset < 0 or not 1 <= length <= MAX_SLICE:
        raise ContractError(f"get_artifact: offset >= 0 and length 1..{MAX_SLICE}")
    receipt = Receipt()
    data = ws.artifact_path(ref).read_bytes()
    piece = data[offset : offset + length]
    receipt.bytes_read = len(piece)
    receipt.truncated = offset + length < len(data)
    found: ArtifactSlice = {
        "ref": ref,
        "offset": offset,
        "total_bytes": len(data),
        "next_offset": offset + len(piece) if receipt.truncated else None,
        "text": piece.decode("utf-8", "replace"),
    }
    return finish(receipt, found)
