"""Opening, resuming, stopping and listing runs (supervisor.md §7).

Resume errors come in the contract's order: unknown run, terminal run, (another live driver),
missing worktree, then reset safety.
"""

from __future__ import annotations

import contextlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from autoresearch import git
from autoresearch.clock import utc_now_iso
from autoresearch.contracts.candidate import is_placeholder
from autoresearch.decide import STOP_OPERATOR, STOPPED, TERMINAL_STATUSES
from autoresearch.errors import NotFoundError, RefusedError
from autoresearch.journal import runs, views
from autoresearch.journal.db import Journal
from autoresearch.journal.runs import PREPARING, RunRecord
from autoresearch.paths import RepoPaths
from autoresearch.settings import journal_timeout
from autoresearch.supervisor import prepare, record, sync
from autoresearch.supervisor.handle import RunHandle, driver_alive, driver_lock, open_journal
from autoresearch.supervisor.recovery import recover
from autoresearch.supervisor.safety import check_reset_safety, dirty_entries
from autoresearch.supervisor.step import msg_terminal


def msg_manifest_missing(run_id: str) -> str:
    return f"autoresearch_resume_manifest_missing:{run_id}"


def msg_resume_terminal(run_id: str) -> str:
    return f"autoresearch_resume_terminal_run:{run_id}"


def msg_missing_worktree(path: str) -> str:
    return f"autoresearch_resume_missing_worktree:{path}"


def open_run(repo_root: Path, run_id: str) -> RunHandle:
    """Lock a running run for one driver action (step)."""
    journal = open_journal(repo_root, journal_timeout())
    try:
        run = runs.get_run(journal, run_id)
        if run is None:
            raise NotFoundError(f"unknown run: {run_id}")
        if run.status != "running":
            raise RefusedError(msg_terminal(run_id, run.status))
        repo = RepoPaths(repo_root)
        lock = driver_lock(repo, run_id)
    except BaseException:
        journal.close()
        raise
    handle = RunHandle(journal, repo, run, lock)
    handle.refresh()  # another driver may have changed the run before we took the lock
    return handle


@dataclass
class ResumeOutcome:
    handle: RunHandle
    notes: list[str] = field(default_factory=list)
    pending_artifact: bool = False


def resume(repo_root: Path, run_id: str, save_dirty: bool = False) -> ResumeOutcome:
    """Re-check and re-arm a run; the returned handle holds the driver lock."""
    journal = open_journal(repo_root, journal_timeout())
    try:
        handle = _lock_for_resume(journal, RepoPaths(repo_root), run_id)
    except BaseException:
        journal.close()
        raise
    try:
        return _rearm(handle, save_dirty)
    except BaseException:
        handle.close()
        raise


def _lock_for_resume(journal: Journal, repo: RepoPaths, run_id: str) -> RunHandle:
    run = runs.get_run(journal, run_id)
    if run is None:
        raise RefusedError(msg_manifest_missing(run_id))
    if run.status != "running":
        raise RefusedError(msg_resume_terminal(run_id))
    lock = driver_lock(repo, run_id)
    handle = RunHandle(journal, repo, run, lock)
    handle.refresh()
    if handle.run.status != "running":
        lock.release()
        raise RefusedError(msg_resume_terminal(run_id))
    if handle.run.phase != PREPARING and not git.is_worktree_of(handle.worktree, repo.repo_root):
        lock.release()
        raise RefusedError(msg_missing_worktree(handle.run.worktree_path))
    return handle


def _rearm(h: RunHandle, save_dirty: bool) -> ResumeOutcome:
    notes = recover(h)
    if h.run.phase == PREPARING:
        prepare.finish_prepare(h)
        notes.append("finished the interrupted prepare (worktree, mission, baseline)")
    if save_dirty and dirty_entries(h.worktree, h.links, h.runtime):
        kept = h.run.last_kept_commit or "HEAD"
        notes.append(record.save_patch(h, h.run.iteration + 1, "dirty", kept))
        git.reset_hard(h.worktree, "HEAD")
        git.clean_untracked(h.worktree, keep=_runtime_patterns(h))
    check_reset_safety(h.worktree, h.links, h.runtime)
    pending = has_pending_artifact(h)
    if not pending:
        kept = h.run.last_kept_commit or ""
        if kept and git.head(h.worktree) != kept:
            notes.append(record.save_patch(h, h.run.iteration + 1, "unfinished-session", kept))
            git.reset_hard(h.worktree, kept)
        sync.write_placeholder(h)
    sync.write_instructions(h)
    views.write_manifest(h.run, h.repo)
    sync.write_active_pointer(h)
    return ResumeOutcome(h, notes, pending)


def _runtime_patterns(h: RunHandle) -> list[str]:
    return ["results.tsv", "run.log", ".autoresearch", "__pycache__", *h.links, *h.runtime]


def has_pending_artifact(h: RunHandle) -> bool:
    """True when candidate.json holds a session's artifact that no step has processed yet."""
    current = sync.file_sha256(h.paths.candidate)
    if current is None:
        return False
    last = runs.get_iteration(h.journal, h.run_id, h.run.iteration)
    if last is not None and last.artifact_sha256 == current:
        return False
    try:
        data = json.loads(h.paths.candidate.read_bytes())
    except (OSError, ValueError):
        return True
    return not is_placeholder(data)


@dataclass(frozen=True)
class StopOutcome:
    run_id: str
    status: str
    stop_reason: str
    requested: bool  # True when a live driver was asked to stop instead


def stop_reason_for(reason: str | None) -> str:
    return STOP_OPERATOR if not reason else f"{STOP_OPERATOR}: {reason}"


def stop(repo_root: Path, run_id: str | None, reason: str | None = None) -> StopOutcome:
    """Finalize a run as stopped, or ask its live driver to stop it."""
    repo = RepoPaths(repo_root)
    with open_journal(repo_root, journal_timeout()) as journal:
        run = _stop_target(journal, run_id)
        text = stop_reason_for(reason)
        if driver_alive(repo, run.run_id):
            with journal.tx() as conn:
                runs.update_run(conn, run.run_id, stop_requested=text)
            return StopOutcome(run.run_id, run.status, text, requested=True)
        lock = driver_lock(repo, run.run_id)
    with RunHandle(open_journal(repo_root, journal_timeout()), repo, run, lock) as h:
        h.refresh()
        finalize_stop(h, text)
        return StopOutcome(h.run_id, h.run.status, text, requested=False)


def _stop_target(journal: Journal, run_id: str | None) -> RunRecord:
    if run_id is None:
        active = [r for r in runs.list_runs(journal) if r.status == "running"]
        if not active:
            raise NotFoundError("no active run to stop")
        return active[-1]
    run = runs.get_run(journal, run_id)
    if run is None:
        raise NotFoundError(f"unknown run: {run_id}")
    if run.status in TERMINAL_STATUSES:
        raise RefusedError(f"run {run_id} is already {run.status} ({run.stop_reason})")
    return run


def finalize_stop(h: RunHandle, reason: str) -> None:
    """Record the run as stopped (the caller holds the driver lock)."""
    finalize_run(h, STOPPED, reason)


def finalize_run(h: RunHandle, status: str, reason: str) -> None:
    """End a run with a terminal status (stopped or completed); the caller drives it."""
    with contextlib.suppress(RefusedError):
        recover(h)  # a dirty worktree must not prevent an operator from ending the run
    now = utc_now_iso()
    with h.journal.tx() as conn:
        runs.update_run(
            conn, h.run_id, status=status, stop_reason=reason, completed_at=now,
            stop_requested=None,
        )  # fmt: skip
    h.refresh()
    views.write_manifest(h.run, h.repo)
    sync.write_active_pointer(h, driving=False)


def list_runs(repo_root: Path) -> list[dict[str, Any]]:
    """Every run of the repository with its headline numbers."""
    with open_journal(repo_root, journal_timeout()) as journal:
        out = []
        for run in runs.list_runs(journal):
            counts = runs.decision_counts(journal, run.run_id)
            direction = str(run.evaluator.get("direction", "higher"))
            best = runs.best_score(journal, run.run_id, direction)
            out.append(_summary(run, counts, best, runs.baseline_score(journal, run.run_id)))
        return out


def run_details(repo_root: Path, run_id: str) -> dict[str, Any]:
    """One run with its iteration history."""
    with open_journal(repo_root, journal_timeout()) as journal:
        run = runs.get_run(journal, run_id)
        if run is None:
            raise NotFoundError(f"unknown run: {run_id}")
        counts = runs.decision_counts(journal, run_id)
        direction = str(run.evaluator.get("direction", "higher"))
        best = runs.best_score(journal, run_id, direction)
        data = _summary(run, counts, best, runs.baseline_score(journal, run_id))
        data["manifest"] = views.manifest(run, RepoPaths(repo_root))
        data["iterations"] = [views.ledger_entry(it) for it in runs.all_iterations(journal, run_id)]
        data["driver_alive"] = driver_alive(RepoPaths(repo_root), run_id)
        return data


def _summary(
    run: RunRecord, counts: dict[str, int], best: float | None, baseline: float | None
) -> dict[str, Any]:
    return {
        "run_id": run.run_id,
        "status": run.status,
        "stop_reason": run.stop_reason,
        "mission_slug": run.mission_slug,
        "branch_name": run.branch_name,
        "worktree_path": run.worktree_path,
        "iteration": run.iteration,
        "keep_policy": run.keep_policy,
        "direction": run.evaluator.get("direction", "higher"),
        "last_kept_commit": run.last_kept_commit,
        "last_kept_score": run.last_kept_score,
        "best_score": best,
        "baseline_score": baseline,
        "counts": counts,
        "created_at": run.created_at,
        "updated_at": run.updated_at,
        "completed_at": run.completed_at,
        "stop_requested": run.stop_requested,
    }


def run_summary(h: RunHandle, sessions: int, interrupted: bool) -> dict[str, Any]:
    """What a finished (or interrupted) loop reports: numbers and where the files are."""
    h.refresh()
    run = h.run
    direction = str(run.evaluator.get("direction", "higher"))
    data = _summary(
        run,
        runs.decision_counts(h.journal, run.run_id),
        runs.best_score(h.journal, run.run_id, direction),
        runs.baseline_score(h.journal, run.run_id),
    )
    data.update(
        repo_root=str(h.repo.repo_root),
        sessions=sessions,
        interrupted=interrupted,
        ledger_file=str(h.paths.ledger),
        results_file=str(h.results_file),
        manifest_file=str(h.paths.manifest),
        logs_dir=str(h.paths.logs),
        resume_command=f"autoresearch resume {run.run_id}" if run.status == "running" else None,
    )
    return data
