"""`clean`: remove the worktrees and branches of finished runs, losing nothing.

What goes: the run's worktree (uncommitted changes in it are first saved as a patch under the
run's logs), its branch, and the refs that kept its discarded candidates reachable. What stays:
the journal, the run's files and logs (patches included), and `refs/autoresearch/<run>/kept` at
the last kept commit, so the run's result survives `git gc` until the user drops it
(`--drop-kept`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from autoresearch import git, worktree_repair
from autoresearch.clock import utc_now_iso
from autoresearch.errors import NotFoundError, RefusedError
from autoresearch.journal import lanes as lane_store
from autoresearch.journal import runs
from autoresearch.journal.db import journal_present, open_journal
from autoresearch.journal.runs import RunRecord
from autoresearch.jsonshape import json_shape
from autoresearch.paths import RepoPaths
from autoresearch.states import TERMINAL_STATUSES, RunStatus
from autoresearch.supervisor import record, refs
from autoresearch.supervisor.handle import RunContext, RunHandle, driver_lock
from autoresearch.supervisor.safety import dirty_entries


@dataclass(frozen=True)
class CleanResult:
    """What `clean` did (or, with dry_run, would do) for one run."""

    run_id: str
    status: RunStatus
    dry_run: bool
    worktree: str | None = None  # the worktree removed
    branch: str | None = None  # the branch deleted
    discarded_refs: int = 0  # refs of discarded candidates deleted
    kept_ref: str | None = None  # where the last kept commit stays reachable
    saved_patch: str | None = None  # uncommitted worktree changes, saved before removal
    skipped: str | None = None  # why nothing was done

    def to_dict(self) -> dict[str, Any]:
        return json_shape(self)


def msg_clean_running(run_id: str) -> str:
    return (
        f"run {run_id} is still running: stop it first (autoresearch stop {run_id}), then clean it"
    )


def clean(
    repo_root: Path, run_ids: Sequence[str] = (), dry_run: bool = False, drop_kept: bool = False
) -> list[CleanResult]:
    """Clean the named finished runs, or every finished run when none is named.

    A named run that is unknown or still running refuses the whole request before anything
    is touched.
    """
    repo = RepoPaths(repo_root)
    if not journal_present(repo.journal):
        if run_ids:
            raise NotFoundError(f"unknown run: {run_ids[0]}")
        return []
    with open_journal(repo_root) as journal:
        targets = _targets(journal, list(run_ids))
        if not dry_run:
            # a half-built worktree (a kill inside `git worktree add`) breaks every `git
            # fetch` of the repository, and `git status` in it: removed first (an unfinished
            # run's own worktree checked out again: `resume` needs it)
            removed = worktree_repair.heal(repo)
            worktree_repair.check_out_again(repo, runs.list_runs(journal), removed)
        results = []
        for run in targets:
            if run.status not in TERMINAL_STATUSES:
                results.append(CleanResult(run.run_id, run.status, dry_run, skipped="running"))
                continue
            results.append(_clean_one(journal, repo, run, dry_run, drop_kept))
        return results


def _targets(journal: Any, run_ids: list[str]) -> list[RunRecord]:
    if not run_ids:  # the ones it cleans decoded whole: a damaged one refuses the request
        listed = runs.list_runs(journal)
        return [runs.decoded_whole(r) if r.status in TERMINAL_STATUSES else r for r in listed]
    found = []
    for run_id in dict.fromkeys(run_ids):
        run = runs.get_run(journal, run_id)
        if run is None:
            raise NotFoundError(f"unknown run: {run_id}")
        if run.status not in TERMINAL_STATUSES:
            raise RefusedError(msg_clean_running(run_id))
        found.append(runs.decoded_whole(run))
    return found


def _clean_one(
    journal: Any, repo: RepoPaths, run: RunRecord, dry_run: bool, drop_kept: bool
) -> CleanResult:
    root = repo.repo_root
    worktree = Path(run.worktree_path)
    has_worktree = git.is_worktree_of(worktree, root)
    has_branch = git.branch_exists(root, run.branch_name)
    discarded = refs.discarded_refs(root, run.run_id)
    kept_ref = refs.kept(run.run_id)
    keep_result = run.last_kept_commit is not None and not drop_kept
    leftover = drop_kept and bool(git.refs_under(root, refs.prefix(run.run_id)))
    if not (has_worktree or has_branch or discarded or leftover):
        return CleanResult(run.run_id, run.status, dry_run, skipped="already clean")
    plan = CleanResult(
        run.run_id,
        run.status,
        dry_run,
        worktree=str(worktree) if has_worktree else None,
        branch=run.branch_name if has_branch else None,
        discarded_refs=len(discarded),
        kept_ref=kept_ref if keep_result else None,
    )
    if dry_run:
        return plan
    lock = driver_lock(repo, run.run_id)  # a `continue` racing with us must not lose its tree
    try:
        h = RunHandle.of(journal, repo, run, lock)
        h.refresh()
        if h.run.status not in TERMINAL_STATUSES:
            raise RefusedError(msg_clean_running(run.run_id))
        saved = None
        if has_worktree and dirty_entries(worktree, h.dirt):
            saved = record.save_patch(h.context, h.run.iteration + 1, "clean", "HEAD")
        if keep_result and h.run.last_kept_commit:
            git.update_ref(root, kept_ref, h.run.last_kept_commit)
        lane_patches = _clean_lanes(h.context, h.run)
        if has_worktree:
            git.worktree_remove(root, worktree)
        if has_branch:
            git.delete_branch(root, run.branch_name)
        dropped = [r for r in git.refs_under(root, refs.prefix(run.run_id)) if r != kept_ref]
        if drop_kept:
            dropped = git.refs_under(root, refs.prefix(run.run_id))
        git.delete_refs(root, dropped)
        with journal.tx() as conn:
            runs.update_run(conn, run.run_id, cleaned_at=utc_now_iso())
    finally:
        lock.release()
    saved = saved or (lane_patches[0] if lane_patches else None)
    if git.branch_exists(root, run.branch_name):  # checked out in another worktree
        note = f"branch {run.branch_name} is checked out elsewhere and was kept"
        return replace(plan, saved_patch=saved, branch=None, skipped=note)
    return replace(plan, saved_patch=saved)


def _clean_lanes(h: RunContext, run: RunRecord) -> list[str]:
    """A run with lanes: each lane's worktree and branch go too; what a lane holds past the
    kept commit (commits not judged yet, edits) is saved as a patch under its logs first."""
    root, kept = h.repo.repo_root, run.last_kept_commit or "HEAD"
    notes = []
    for lane in lane_store.lanes_of(h.journal, h.run_id):
        lh = h.for_lane(lane.lane)
        if git.is_worktree_of(lh.worktree, root):
            if git.head(lh.worktree) != kept or dirty_entries(lh.worktree, lh.dirt):
                notes.append(record.save_patch(lh, run.iteration + 1, "clean", kept))
            git.worktree_remove(root, lh.worktree)
        if git.branch_exists(root, lh.branch_name):
            git.delete_branch(root, lh.branch_name)
    return notes
