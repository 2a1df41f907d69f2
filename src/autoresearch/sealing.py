"""Sealed harness files (trust.md), the one mechanism behind the supervisor's `sealed:` paths
and an experiment session's `--seal`: copy listed paths out of a tree, digest them, and verify
later that neither the copy nor the tree's paths changed.

A digest is sha256 over a file, or over a folder's relative names and contents in sorted
order. The digests are a JSON file beside the copy, written atomically.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from collections.abc import Iterable
from pathlib import Path

from autoresearch.errors import ContractError
from autoresearch.fsutil import atomic_write_bytes, private_dir


def digest(path: Path) -> str:
    """sha256 over a file, or over a folder's relative names and contents in sorted order."""
    h = hashlib.sha256()
    files = [path] if path.is_file() else sorted(p for p in path.rglob("*") if p.is_file())
    for file in files:
        if file != path:
            h.update(str(file.relative_to(path)).encode() + b"\0")
        with file.open("rb") as f:
            for block in iter(lambda: f.read(1 << 20), b""):
                h.update(block)
        h.update(b"\0")
    return h.hexdigest()


class MissingPath(ContractError):
    """A path to seal does not exist (each door words it for its own contract)."""

    def __init__(self, rel: str) -> None:
        super().__init__(f"sealed path is missing: {rel}")
        self.rel = rel


def seal_copy(
    source: Path, rels: Iterable[str], target: Path, digests_file: Path
) -> dict[str, str]:
    """Copy each of `rels` from `source` into `target` (replacing an earlier copy) and write
    their digests; idempotent. A missing path raises MissingPath."""
    shutil.rmtree(target, ignore_errors=True)
    private_dir(target)
    digests: dict[str, str] = {}
    for rel in rels:
        path = source / rel
        if not path.exists():
            raise MissingPath(rel)
        dest = target / rel
        dest.parent.mkdir(parents=True, exist_ok=True)
        if path.is_dir():
            shutil.copytree(path, dest, symlinks=False)
        else:
            shutil.copy2(path, dest)
        digests[rel] = digest(path)
    atomic_write_bytes(digests_file, json.dumps(digests, indent=2).encode())
    return digests


def read_digests(digests_file: Path) -> dict[str, str]:
    try:
        data = json.loads(digests_file.read_text())
    except (OSError, ValueError) as exc:
        raise ContractError(f"sealed harness digests unreadable: {exc}") from exc
    if not isinstance(data, dict):
        raise ContractError("sealed harness digests unreadable: not a mapping")
    return {str(k): str(v) for k, v in data.items()}


def changed_copy(target: Path, digests: dict[str, str]) -> str | None:
    """The first sealed path whose copy is not byte for byte what was sealed (None: intact)."""
    for rel, expected in digests.items():
        copy = target / rel
        if not copy.exists() or digest(copy) != expected:
            return rel
    return None


def changed_in(tree: Path, digests: dict[str, str]) -> str | None:
    """The first sealed path that `tree` no longer has as sealed (None: the harness intact):
    the same comparison as for the copy, over the tree a candidate lives in."""
    return changed_copy(tree, digests)
