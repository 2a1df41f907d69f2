"""Sealed evaluation (trust.md): the harness paths sandbox.md lists are copied out of the
worktree and digested at prepare.

The copy lives in the run's scratch folder, outside the worktree and outside the run folder
that agent back-ends may write, and is verified against its digests before every evaluation.
The evaluator finds it through AUTORESEARCH_SEALED_DIR
(`command: python3 $AUTORESEARCH_SEALED_DIR/scripts/eval.py`), so a session cannot change what
measures it. A candidate that changes a sealed path in the worktree is discarded before any
evaluation (decide.harness_changed).
"""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

from autoresearch.errors import ContractError
from autoresearch.fsutil import atomic_write_bytes, private_dir
from autoresearch.supervisor.handle import RunHandle

DIGESTS_FILE = "sealed.json"


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


def seal(h: RunHandle) -> dict[str, str]:
    """Copy and digest the sealed paths of the worktree; idempotent (a resumed prepare redoes
    it from the same baseline tree)."""
    if not h.sealed:
        return {}
    target = h.paths.sealed
    shutil.rmtree(target, ignore_errors=True)
    private_dir(target)
    digests = {}
    for rel in h.sealed:
        source = h.worktree / rel
        if not source.exists():
            raise ContractError(f"sandbox.md frontmatter sealed lists a missing path: {rel}")
        dest = target / rel
        dest.parent.mkdir(parents=True, exist_ok=True)
        if source.is_dir():
            shutil.copytree(source, dest, symlinks=False)
        else:
            shutil.copy2(source, dest)
        digests[rel] = digest(source)
    atomic_write_bytes(h.paths.scratch / DIGESTS_FILE, json.dumps(digests, indent=2).encode())
    return digests


def verify(h: RunHandle) -> None:
    """Refuse to evaluate with a sealed copy that is not byte for byte what prepare sealed:
    an agent without a sandbox (`cmd:`, aider) can reach any file the user can."""
    if not h.sealed:
        return
    try:
        digests = json.loads((h.paths.scratch / DIGESTS_FILE).read_text())
    except (OSError, ValueError) as exc:
        raise ContractError(f"sealed harness digests unreadable: {exc}") from exc
    for rel in h.sealed:
        copy = h.paths.sealed / rel
        if not copy.exists() or digest(copy) != digests.get(rel):
            raise ContractError(
                f"sealed harness copy changed since prepare: {rel}; nothing was measured – "
                f"stop the run (autoresearch stop {h.run_id}) and start a new one"
            )
