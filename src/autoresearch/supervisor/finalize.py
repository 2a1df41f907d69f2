"""Ending a run: the one place that records a terminal status chosen by the driver or an
operator (a failure is recorded with its iteration instead)."""

from __future__ import annotations

import contextlib

from autoresearch import git
from autoresearch.clock import utc_now_iso
from autoresearch.errors import RefusedError
from autoresearch.journal import runs
from autoresearch.states import RunStatus
from autoresearch.supervisor import estimates, sync
from autoresearch.supervisor.handle import RunHandle
from autoresearch.supervisor.recovery import recover


def finalize_run(h: RunHandle, status: RunStatus, reason: str, note: str | None = None) -> None:
    """End a run as stopped or completed; the caller holds the driver lock."""
    with contextlib.suppress(RefusedError):
        recover(h)  # a dirty worktree must not prevent an operator from ending the run
    with h.journal.tx() as conn:
        changes: dict[str, str] = {
            "status": status,
            "stop_reason": reason,
            "completed_at": utc_now_iso(),
        }
        if note is not None:
            changes["stop_note"] = note
        runs.update_run(conn, h.run_id, stop_requested=None, **changes)
    h.refresh()
    if h.run.views_iteration != h.run.iteration:
        sync.rebuild_views(h)  # an iteration whose reset was refused still gets its rows
    estimates.write_manifest(h.journal, h.run, h.repo)
    sync.write_active_pointer(h, driving=False)
    h.journal.backup()
    if h.incumbent_tree.exists():
        # a full checkout per ended run otherwise; re-measuring makes it again on first use
        git.worktree_remove(h.repo.repo_root, h.incumbent_tree)


def honour_stop_request(h: RunHandle) -> bool:
    """Finalize the run when an operator asked it to stop; True when it did.

    Not from a lane's step: the other lanes' sessions in flight still have to be judged (and
    would then find the run ended); the lane driver ends the run once they are."""
    if h.run.status != RunStatus.RUNNING or h.run.stop_requested is None or h.lane:
        return False
    finalize_run(h, RunStatus.STOPPED, h.run.stop_requested)
    return True
