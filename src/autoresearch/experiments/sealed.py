"""Sealed harness for experiment sessions (trust.md), over the shared autoresearch.sealing.

`exp init --seal` copies `autoresearch.sh` and `autoresearch.checks.sh` (those present) into
the session's folder and digests them. From then on `exp run` measures nothing in a tree whose
harness differs from what was sealed (`harness changed: <path>`, no run recorded), verifies the
copy too, and runs the copy: the default command runs the sealed `autoresearch.sh`, the checks
the sealed `autoresearch.checks.sh`, and any command finds the copy in AUTORESEARCH_SEALED_DIR.
A re-init with `--seal` seals the harness as it is then (a deliberate harness change).
"""

from __future__ import annotations

from pathlib import Path

from autoresearch import sealing
from autoresearch.decide import REASON_HARNESS_CHANGED
from autoresearch.errors import RefusedError
from autoresearch.experiments.verbs import Verbs
from autoresearch.paths import HARNESS_FILES, SessionPaths


def seal_harness(directory: Path, paths: SessionPaths) -> list[str]:
    """Seal the harness files present in the session directory; the paths sealed."""
    present = [rel for rel in HARNESS_FILES if (directory / rel).is_file()]
    sealing.seal_copy(directory, present, paths.sealed, paths.sealed_digests)
    return present


def is_sealed(paths: SessionPaths) -> bool:
    return paths.sealed_digests.is_file()


def harness_change(directory: Path, digests: dict[str, str]) -> str | None:
    """The first harness file that differs from the seal: changed, removed, or added since
    (a checks file written after sealing changes the harness too)."""
    changed = sealing.changed_in(directory, digests)
    if changed is not None:
        return changed
    added = (rel for rel in HARNESS_FILES if rel not in digests and (directory / rel).exists())
    return next(added, None)


def verified(directory: Path, paths: SessionPaths, say: Verbs) -> Path | None:
    """The sealed copy to run from (None: the session is not sealed), after checking that the
    tree's harness and the copy are both what was sealed; else nothing is measured. `say`:
    the calling door's verbs, so the way out names what the caller can type or call."""
    if not is_sealed(paths):
        return None
    digests = sealing.read_digests(paths.sealed_digests)
    changed = harness_change(directory, digests)
    if changed is not None:
        raise RefusedError(
            f"{REASON_HARNESS_CHANGED}: {changed} (sealed at init); nothing was measured – "
            f"restore it (git checkout -- {changed}) or seal the new harness on purpose "
            f"({say.seal})"
        )
    copy = sealing.changed_copy(paths.sealed, digests)
    if copy is not None:
        raise RefusedError(
            f"sealed harness copy changed since init: {copy}; nothing was measured – "
            f"seal the harness again ({say.seal})"
        )
    return paths.sealed
