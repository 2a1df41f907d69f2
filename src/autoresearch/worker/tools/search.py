"""`search`: ripgrep over the repository, falling back to `git grep`, then a Python walker.

Modes: `lines` (path, line number, the line cut to MAX_LINE_CHARS and redacted), `files`
(matching paths), `count` (matching lines per file, exact). In lines and files modes
`total_matches` counts each file's matching lines up to max_results + 1 (enough to know the
answer was cut, without reading huge files to the end). Results are bounded by
`max_results`; a search that found more says `truncated`. The pattern is a regular expression
unless `literal`. Paths to search must lie inside the repository; `.git` and `.autoresearch`
are never searched.
"""

from __future__ import annotations

import os
import re
import shutil
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import NotRequired, TypedDict

from autoresearch import git
from autoresearch.errors import ContractError, GitError, ProcessError
from autoresearch.paths import STATE_DIR
from autoresearch.proc import run_capture
from autoresearch.worker.tools.base import (
    MAX_FILE_BYTES,
    Receipt,
    ReceiptJson,
    Workspace,
    cut,
    finish,
)

DEFAULT_MAX_RESULTS = 200
MAX_RESULTS = 5000
SEARCH_TIMEOUT_SECONDS = 60.0
_NUMBERED = re.compile(r"(\d+)[:\0](.*)", re.DOTALL)
_SKIP_DIRS = {".git", STATE_DIR}


class Mode(StrEnum):
    LINES = "lines"
    FILES = "files"
    COUNT = "count"


class Engine(StrEnum):
    RIPGREP = "ripgrep"
    GIT_GREP = "git_grep"
    PYTHON = "python"


@dataclass(frozen=True)
class Query:
    pattern: str
    mode: Mode = Mode.LINES
    paths: tuple[str, ...] = ()
    literal: bool = False
    ignore_case: bool = False
    glob: str | None = None
    max_results: int = DEFAULT_MAX_RESULTS


@dataclass(frozen=True)
class Hit:
    path: str
    line: int
    text: str


def ripgrep() -> str | None:
    """The `rg` binary: the ripgrep wheel's (next to this Python) or one on PATH."""
    beside = Path(sys.executable).parent / "rg"
    return str(beside) if beside.is_file() else shutil.which("rg")


class MatchJson(TypedDict):
    path: str
    line: int
    text: str


class CountJson(TypedDict):
    path: str
    count: int


class SearchAnswer(TypedDict):
    """One of matches (lines mode), files (files mode) or counts (count mode)."""

    mode: str
    engine: str
    matches: NotRequired[list[MatchJson]]
    files: NotRequired[list[str]]
    counts: NotRequired[list[CountJson]]
    total_matches: int
    total_files: int
    receipt: NotRequired[ReceiptJson]


def search(ws: Workspace, query: Query, engine: Engine | None = None) -> SearchAnswer:
    """Run `query` with the best engine available (or the one named, for tests)."""
    if not query.pattern:
        raise ContractError("search: empty pattern")
    if not query.literal:
        try:
            re.compile(query.pattern)
        except re.error as exc:
            raise ContractError(f"search: invalid regular expression ({exc.msg})") from None
    targets = [ws.rel(ws.path(p)) for p in query.paths] or ["."]
    receipt = Receipt()
    chosen = engine or (Engine.RIPGREP if ripgrep() else Engine.GIT_GREP)
    found: Found | None = None
    if chosen is Engine.RIPGREP:
        found = _ripgrep(ws, query, targets)
    if found is None and chosen in (Engine.RIPGREP, Engine.GIT_GREP):
        found, chosen = _git_grep(ws, query, targets), Engine.GIT_GREP
    if found is None:
        found = _capped(query, list(_walk(ws, query, targets, receipt)))
        chosen = Engine.PYTHON
    return finish(receipt, _shape(ws.root, query, found, chosen, receipt))


@dataclass(frozen=True)
class Found:
    """An engine's answer: the matching lines (lines mode) and the matching lines per file."""

    hits: list[Hit]
    counts: dict[str, int]


def _capped(query: Query, hits: list[Hit]) -> Found:
    """Every engine counts the same way: in lines and files modes a file's matches are counted
    up to max_results + 1 (ripgrep stops reading a file there), in count mode all of them."""
    files: dict[str, int] = {}
    kept: list[Hit] = []
    for hit in hits:
        files[hit.path] = files.get(hit.path, 0) + 1
        if query.mode is Mode.COUNT or files[hit.path] <= query.max_results + 1:
            kept.append(hit)
        else:
            files[hit.path] -= 1
    return Found(kept, files)


def _counted(query: Query, counts: dict[str, int]) -> Found:
    """Counts straight from an engine's count output (files and count modes: no line is
    parsed, which is most of the cost of a common pattern), capped as `_capped` does."""
    if query.mode is not Mode.COUNT:
        counts = {p: min(n, query.max_results + 1) for p, n in counts.items()}
    return Found([], {p: n for p, n in counts.items() if n > 0})


def _shape(
    root: Path, query: Query, found: Found, engine: Engine, receipt: Receipt
) -> SearchAnswer:
    files = found.counts
    if not receipt.bytes_read:
        # External engines do not report what they read: the files they matched in are a
        # lower bound that stays honest.
        receipt.bytes_read = sum(_size(root / p) for p in files)
    out: SearchAnswer = {  # the door's SearchOutput orders the keys
        "mode": query.mode.value,
        "engine": engine.value,
        "total_matches": sum(files.values()),
        "total_files": len(files),
    }
    _add_listing(out, query, found, receipt)
    return out


def _add_listing(out: SearchAnswer, query: Query, found: Found, receipt: Receipt) -> None:
    """The mode's list, at most max_results long (the receipt says when it was cut)."""
    files, hits, limit = found.counts, found.hits, query.max_results
    if query.mode is Mode.LINES:
        rows: list[MatchJson] = []
        for hit in hits[:limit]:
            text, was_cut = cut(hit.text)
            receipt.truncated |= was_cut
            rows.append({"path": hit.path, "line": hit.line, "text": text})
        out["matches"] = rows
        receipt.truncated |= len(hits) > limit
        return
    receipt.truncated |= len(files) > limit
    if query.mode is Mode.FILES:
        out["files"] = sorted(files)[:limit]
    else:
        out["counts"] = [{"path": p, "count": n} for p, n in sorted(files.items())[:limit]]


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


def _ripgrep(ws: Workspace, query: Query, targets: list[str]) -> Found | None:
    rg = ripgrep()
    if rg is None:
        return None
    args = [rg, "--line-number", "--no-heading", "--with-filename", "--color=never", "-0"]
    args += ["--max-filesize", str(MAX_FILE_BYTES), "--glob", f"!{STATE_DIR}"]
    if query.literal:
        args.append("--fixed-strings")
    if query.ignore_case:
        args.append("--ignore-case")
    if query.glob:
        args += ["--glob", query.glob]
    if query.mode is not Mode.COUNT:
        # One match more than asked per file is enough to know the answer was cut.
        args += ["--max-count", str(query.max_results + 1)]
    if query.mode is not Mode.LINES:
        args.append("--count")
    args += ["-e", query.pattern, "--", *targets]
    try:
        done = run_capture(args, cwd=ws.root, timeout=SEARCH_TIMEOUT_SECONDS)
    except ProcessError:
        return None
    if done.returncode not in (0, 1):
        return None
    if query.mode is not Mode.LINES:
        return _counted(query, _parse_counts(done.stdout))
    return _capped(query, _parse_nul(done.stdout))


def _git_grep(ws: Workspace, query: Query, targets: list[str]) -> Found | None:
    args = ["--no-color", "-n", "-z", "-I", "--untracked", "--exclude-standard", "-E"]
    if query.literal:
        args[-1] = "-F"
    if query.ignore_case:
        args.append("-i")
    if query.mode is not Mode.LINES:
        args.append("--count")
    args += ["-e", query.pattern, "--", *targets]
    try:
        done = git.grep(ws.root, args)
    except GitError:
        return None
    if done.returncode not in (0, 1):
        return None

    # git.py passes literal pathspecs, so the glob is applied here, as the walker does.
    def wanted(path: str) -> bool:
        return not _skipped(path) and (query.glob is None or Path(path).match(query.glob))

    if query.mode is not Mode.LINES:
        counts = _parse_counts(done.stdout)
        return _counted(query, {p: n for p, n in counts.items() if wanted(p)})
    return _capped(query, [h for h in _parse_nul(done.stdout) if wanted(h.path)])


def _skipped(rel: str) -> bool:
    return any(part in _SKIP_DIRS for part in Path(rel).parts)


def _parse_nul(raw: bytes) -> list[Hit]:
    """`path\\0line:text` (rg -0) or `path\\0line\\0text` (git grep -z) rows (pure)."""
    hits: list[Hit] = []
    for row in raw.decode("utf-8", "replace").splitlines():
        path, _, rest = row.partition("\0")
        found = _NUMBERED.match(rest)
        if found is None:
            continue
        hits.append(Hit(os.path.normpath(path), int(found[1]), found[2]))
    return hits


def _parse_counts(raw: bytes) -> dict[str, int]:
    """`path\0count` rows (rg -0 --count, git grep -z --count) as counts per path (pure)."""
    counts: dict[str, int] = {}
    for row in raw.decode("utf-8", "replace").splitlines():
        path, _, count = row.rpartition("\0")
        if path and count.strip().isdigit():
            key = os.path.normpath(path)
            counts[key] = counts.get(key, 0) + int(count)
    return counts


def _walk(ws: Workspace, query: Query, targets: list[str], receipt: Receipt) -> Iterator[Hit]:
    flags = re.IGNORECASE if query.ignore_case else 0
    rx = re.compile(re.escape(query.pattern) if query.literal else query.pattern, flags)
    for target in targets:
        for path in _files(ws.root / target):
            rel = ws.rel(path)
            if query.glob and not Path(rel).match(query.glob):
                continue
            try:
                if path.stat().st_size > MAX_FILE_BYTES:
                    continue
                data = path.read_bytes()
            except OSError:
                continue
            if b"\0" in data[:8192]:
                continue  # binary, as rg and git grep -I skip it
            receipt.bytes_read += len(data)
            for number, line in enumerate(data.decode("utf-8", "replace").splitlines(), 1):
                if rx.search(line):
                    yield Hit(rel, number, line)


def _files(start: Path) -> Iterator[Path]:
    if start.is_file():
        yield start
        return
    for folder, dirs, names in os.walk(start):
        dirs[:] = sorted(d for d in dirs if d not in _SKIP_DIRS)
        for name in sorted(names):
            path = Path(folder) / name
            if path.is_file() and not path.is_symlink():
                yield path
