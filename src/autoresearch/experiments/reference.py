"""Where and in which order `exp run --repeats N` reads the kept commit next to the candidate
(#34, pairing.py says why).

The kept commit is read in a scratch checkout under the session's folder (`reference/`), out
of the session directory: the candidate's work is never touched. It is checked out afresh for
every run, untracked leftovers of an earlier reading removed, so a reading sees that commit
alone. Files the harness needs that git does not track (ignored data, builds) are not there:
the reference reading then fails, and the run goes on unpaired and says so.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

from autoresearch import git
from autoresearch.paths import SessionPaths

REFERENCE_DIR = "reference"


class Side(StrEnum):
    CANDIDATE = "candidate"
    REFERENCE = "reference"


def round_order(round_index: int) -> tuple[Side, Side]:
    """Which side is read first in round `round_index` (0-based): the reference in even
    rounds, the candidate in odd ones, so that a steady trend (a machine warming up, a load
    ending) favours neither side over the run (ABBA)."""
    if round_index % 2 == 0:
        return Side.REFERENCE, Side.CANDIDATE
    return Side.CANDIDATE, Side.REFERENCE


@dataclass(frozen=True)
class PairingPlan:
    """Whether a run pairs its readings with the kept commit's, and why not when it does not."""

    paired: bool
    reason: str | None = None


def plan_pairing(repeats: int, has_baseline: bool) -> PairingPlan:
    """Pairs need repeated readings, and a kept baseline to compare with (before it, the run
    reads the kept code itself)."""
    if repeats < 2:
        return PairingPlan(False, "a single reading")
    if not has_baseline:
        return PairingPlan(False, "no baseline yet: this run is the segment's reference")
    return PairingPlan(True)


def reference_tree(paths: SessionPaths) -> Path:
    return paths.root / REFERENCE_DIR


def reference_log(paths: SessionPaths, number: int, round_index: int) -> Path:
    """The log of the kept commit's reading in round `round_index` (0-based) of run `number`."""
    return paths.root / f"run-{number:04d}-reference-{round_index + 1}.log"


def reference_checkout(repo: Path, tree: Path, commit: str) -> Path:
    """`tree` with `commit` checked out on no branch, created on first use (GitError: git
    could not)."""
    if not git.is_worktree_of(tree, repo):
        git.worktree_remove(repo, tree)
        tree.parent.mkdir(parents=True, exist_ok=True)
        git.worktree_add_detached(repo, tree, commit)
        return tree
    git.clear_stale_locks(tree)  # a reading killed mid-checkout left its lock
    git.checkout_detached(tree, commit)
    git.clean_untracked(tree)
    return tree
