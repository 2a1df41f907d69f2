"""`apply_edits`: literal or regex replacements with expected counts, whole or not at all.

Order, so that a batch applies whole or not at all even through a kill -9:
1. every path is sandboxed, every file read and every edit applied in memory; each edit's
   match count must equal its `count` (default 1) – any mismatch refuses the batch and
   nothing is written;
2. a manifest naming each target and its staged sibling is written atomically (`staging`);
3. each new content is written to its staged sibling (`.<name>.<batch>.edit`);
4. the manifest is flipped to `commit`, then each staged file replaces its target (os.replace:
   a file is old or new, never torn), then the manifest goes.
`recover()` (run before every batch) finishes what a killed batch left: a `staging` manifest
is rolled back (staged files removed, targets untouched), a `commit` one rolled forward.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import secrets
import stat
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import NotRequired, TypedDict

from autoresearch import failpoints
from autoresearch.errors import ContractError, RefusedError
from autoresearch.fsutil import atomic_write_json, private_dir
from autoresearch.worker.tools.base import Receipt, ReceiptJson, Workspace, finish

EDITS_DIR = "edits"
MAX_EDITS = 200
CODE_COUNT = "autoresearch_edit_count_mismatch"


class BatchState(StrEnum):
    """A batch's manifest `state` (the order above): what `recover` does with its files."""

    STAGING = "staging"  # rolled back: the staged files go, the targets are untouched
    COMMIT = "commit"  # rolled forward: every staged file replaces its target


@dataclass(frozen=True)
class Edit:
    path: str
    old: str
    new: str
    regex: bool = False
    count: int = 1


def count_and_apply(text: str, edit: Edit) -> tuple[str, int]:
    """`text` with `edit` applied, and how many matches it had (pure)."""
    if edit.regex:
        try:
            rx = re.compile(edit.old, re.MULTILINE)
        except re.error as exc:
            raise ContractError(f"apply_edits: invalid regular expression ({exc.msg})") from None
        return rx.subn(edit.new, text)
    if not edit.old:
        raise ContractError("apply_edits: an edit's old text is empty")
    found = text.count(edit.old)
    return text.replace(edit.old, edit.new), found


class EditCount(TypedDict):
    index: int
    path: str
    expected: int
    found: int


class EditsAnswer(TypedDict):
    applied: bool  # False: a dry run, nothing written
    files_changed: list[str]
    edits: list[EditCount]
    receipt: NotRequired[ReceiptJson]


def apply_edits(ws: Workspace, edits: list[Edit], dry_run: bool = False) -> EditsAnswer:
    if not edits:
        raise ContractError("apply_edits: no edits")
    if len(edits) > MAX_EDITS:
        raise ContractError(f"apply_edits: at most {MAX_EDITS} edits per batch")
    recover(ws)
    receipt = Receipt()
    contents: dict[Path, str] = {}
    originals: dict[Path, str] = {}
    problems: list[str] = []
    results: list[EditCount] = []
    for index, edit in enumerate(edits):
        # Write the file itself, not a symlink to it (the sandbox checked where it leads).
        path = Path(os.path.realpath(ws.path(edit.path)))
        if path not in contents:
            contents[path] = originals[path] = ws.read_text(path, receipt)
        contents[path], found = count_and_apply(contents[path], edit)
        results.append(
            {"index": index, "path": ws.rel(path), "expected": edit.count, "found": found}
        )
        if found != edit.count:
            problems.append(f"edit {index} ({ws.rel(path)}): expected {edit.count}, found {found}")
    if problems:
        raise RefusedError(f"{CODE_COUNT}: nothing written; " + "; ".join(problems))
    changed = [p for p in contents if contents[p] != originals[p]]
    if not dry_run and changed:
        _commit(ws, {p: contents[p] for p in changed})
    answer: EditsAnswer = {
        "applied": not dry_run,
        "files_changed": sorted(ws.rel(p) for p in changed),
        "edits": results,
    }
    return finish(receipt, answer)


def _manifest_dir(ws: Workspace) -> Path:
    return ws.state / EDITS_DIR


def _commit(ws: Workspace, new: dict[Path, str]) -> None:
    batch = secrets.token_hex(6)
    manifest = private_dir(_manifest_dir(ws)) / f"{batch}.json"
    entries = [
        {"target": str(p), "staged": str(p.with_name(f".{p.name}.{batch}.edit"))} for p in new
    ]
    atomic_write_json(manifest, {"state": BatchState.STAGING, "entries": entries})
    for path, entry in zip(new, entries, strict=True):
        _stage(Path(entry["staged"]), new[path], path)
        failpoints.hit("apply_edits.staged")
    atomic_write_json(manifest, {"state": BatchState.COMMIT, "entries": entries})
    for entry in entries:
        os.replace(entry["staged"], entry["target"])
        failpoints.hit("apply_edits.replaced")
    manifest.unlink()


def _stage(staged: Path, text: str, target: Path) -> None:
    mode = stat.S_IMODE(target.stat().st_mode)
    fd = os.open(staged, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
    with os.fdopen(fd, "wb") as handle:
        handle.write(text.encode("utf-8"))
    os.chmod(staged, mode)


def recover(ws: Workspace) -> list[str]:
    """Finish batches a killed process left; returns what was done, one line per batch."""
    folder = _manifest_dir(ws)
    if not folder.is_dir():
        return []
    done: list[str] = []
    for manifest in sorted(folder.glob("*.json")):
        try:
            data = json.loads(manifest.read_text())
            state, entries = data["state"], data["entries"]
        except (OSError, ValueError, KeyError, TypeError):
            continue  # not ours or torn (atomic writes make that unlikely): leave it for a human
        for entry in entries:
            staged = Path(entry["staged"])
            if not staged.exists():
                continue
            if state == BatchState.COMMIT:
                os.replace(staged, entry["target"])
            else:
                with contextlib.suppress(FileNotFoundError):
                    staged.unlink()
        manifest.unlink()
        forward = state == BatchState.COMMIT
        done.append(f"{manifest.stem}: {'rolled forward' if forward else 'rolled back'}")
    return done
