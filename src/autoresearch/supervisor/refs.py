"""The refs a run keeps under `refs/autoresearch/<run_id>/` so that its commits survive `git gc`.

A discarded candidate is reset away from the run's branch; `status` still prints its hash, so
`refs/autoresearch/<run>/discarded/<iteration>` keeps it reachable until `autoresearch clean`.
`clean` removes the branch and leaves `refs/autoresearch/<run>/kept` at the last kept commit
(the run's result) until the user drops it.
"""

from __future__ import annotations

from pathlib import Path

from autoresearch import git
from autoresearch.errors import GitError


def prefix(run_id: str) -> str:
    return f"refs/autoresearch/{run_id}/"


def discarded_prefix(run_id: str) -> str:
    return f"{prefix(run_id)}discarded/"


def discarded(run_id: str, iteration: int) -> str:
    return f"{discarded_prefix(run_id)}{iteration}"


def kept(run_id: str) -> str:
    return f"{prefix(run_id)}kept"


def elite_prefix(run_id: str) -> str:
    return f"{prefix(run_id)}elite/"


def elite(run_id: str, iteration: int) -> str:
    """An elite of a frontier run, by the iteration that kept it: its whole lineage (its
    parents are elites, its ancestors in git) stays reachable through it."""
    return f"{elite_prefix(run_id)}{iteration}"


# The run branch's tip as a restore found it, where the restored journal stands further back:
# resuming resets the branch there, and the commits kept after the backup would otherwise be
# held by the branch's reflog only (docs/operations.md).
KEPT_BEFORE_RESTORE = "kept-before-restore"


def kept_before_restore(run_id: str, stamp: str) -> str:
    return f"{prefix(run_id)}{KEPT_BEFORE_RESTORE}-{stamp}"


def kept_before_restore_refs(repo: Path, run_id: str) -> dict[str, str]:
    """Each ref a restore set aside at the run branch's tip, with the commit it names."""
    # for-each-ref matches a bare prefix only up to a slash: the stamp needs a glob
    return git.ref_targets(repo, f"{prefix(run_id)}{KEPT_BEFORE_RESTORE}-*")


def kept_aside_at_head(repo: Path, run_id: str, worktree: Path, base: str) -> str | None:
    """The ref a restore set aside that holds `worktree`'s HEAD (the newest, if several),
    when HEAD is not `base` (the journal's last keep), else None: what a resume then saves
    past `base` are iterations kept after the restored backup, not a session's work."""
    aside = kept_before_restore_refs(repo, run_id)
    if not aside:  # such a ref exists only after a restore: only then is HEAD read
        return None
    try:
        head = git.head(worktree)
    except GitError:  # a session may leave HEAD unborn or the worktree broken
        return None
    if head == base:  # edits on the last keep: a session's
        return None
    for ref in sorted(aside, reverse=True):  # the stamps sort by time: the newest first
        # a lane may stand at an earlier keep of that branch
        if aside[ref] == head or git.is_ancestor(repo, head, aside[ref]):
            return ref
    return None


def keep_elite(repo: Path, run_id: str, iteration: int, commit: str) -> None:
    git.update_ref(repo, elite(run_id, iteration), commit)


def keep_discarded(repo: Path, run_id: str, iteration: int, commit: str) -> None:
    """A loose ref file where the repository allows it: one git process less per discard."""
    git.keep_reachable(repo, discarded(run_id, iteration), commit)


def discarded_refs(repo: Path, run_id: str) -> list[str]:
    return git.refs_under(repo, discarded_prefix(run_id))
