"""Sealed evaluation (trust.md): the harness paths sandbox.md lists are copied out of the
worktree and digested at prepare (the mechanism: autoresearch.sealing).

The copy lives in the run's scratch folder, outside the worktree and outside the run folder
that agent back-ends may write, and is verified against its digests before every evaluation.
The evaluator finds it through AUTORESEARCH_SEALED_DIR
(`command: python3 $AUTORESEARCH_SEALED_DIR/scripts/eval.py`), so a session cannot change what
measures it. A candidate that changes a sealed path in the worktree is discarded before any
evaluation (decide.harness_changed).
"""

from __future__ import annotations

from autoresearch import sealing
from autoresearch.errors import ContractError
from autoresearch.sealing import digest
from autoresearch.supervisor.handle import RunContext

__all__ = ["DIGESTS_FILE", "digest", "seal", "verify"]  # digest: the remote side checks with it

DIGESTS_FILE = "sealed.json"


def seal(h: RunContext) -> dict[str, str]:
    """Copy and digest the sealed paths of the worktree; idempotent (a resumed prepare redoes
    it from the same baseline tree)."""
    if not h.sealed:
        return {}
    try:
        return sealing.seal_copy(
            h.worktree, h.sealed, h.paths.sealed, h.paths.scratch / DIGESTS_FILE
        )
    except sealing.MissingPath as exc:
        raise ContractError(
            f"sandbox.md frontmatter sealed lists a missing path: {exc.rel}"
        ) from exc


def verify(h: RunContext) -> None:
    """Refuse to evaluate with a sealed copy that is not byte for byte what prepare sealed:
    an agent without a sandbox (`cmd:`, aider) can reach any file the user can."""
    if not h.sealed:
        return
    digests = sealing.read_digests(h.paths.scratch / DIGESTS_FILE)
    changed = sealing.changed_copy(h.paths.sealed, {rel: digests.get(rel, "") for rel in h.sealed})
    if changed is not None:
        raise ContractError(
            f"sealed harness copy changed since prepare: {changed}; nothing was measured – "
            f"stop the run (autoresearch stop {h.run_id}) and start a new one"
        )
