"""Opening, resuming, stopping and listing runs (supervisor.md §7).

Resume errors come in the contract's order: unknown run, terminal run, (another live driver),
missing worktree, then reset safety.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from autoresearch import failpoints, git
from autoresearch.contracts.loop import LoopSettings
from autoresearch.contracts.stored_evaluation import StoredEvaluation
from autoresearch.decide import STOP_OPERATOR, IterationLimit
from autoresearch.errors import NotFoundError, RefusedError
from autoresearch.journal import iteration_records, runs, totals
from autoresearch.journal.db import Journal, journal_present, open_journal
from autoresearch.journal.runs import RunRecord
from autoresearch.paths import REPORT_FILE, RepoPaths
from autoresearch.states import TERMINAL_STATUSES, Phase, RunStatus
from autoresearch.supervisor import (
    archive_view,
    estimates,
    portfolio,
    prepare,
    record,
    refs,
    sync,
)
from autoresearch.supervisor.finalize import finalize_run
from autoresearch.supervisor.handle import (
    MeasureWith,
    RunContext,
    RunHandle,
    driver_lock,
    lock_run,
    msg_active_run,
)
from autoresearch.supervisor.plateau import MSG_PAUSE_LIFTED, lift_pause
from autoresearch.supervisor.recovery import finish_interrupted_session, recover
from autoresearch.supervisor.run_read import driver_alive, load_run, read_run
from autoresearch.supervisor.run_views import (
    journal_exists,
    lane_rows,
    summary_of,
)
from autoresearch.supervisor.run_views import list_runs as list_runs  # where callers look
from autoresearch.supervisor.run_views import run_details as run_details
from autoresearch.supervisor.safety import check_reset_safety, dirty_entries
from autoresearch.supervisor.step import msg_terminal, way_on_after_end
from autoresearch.supervisor.summary import LoopSummary, StopOutcome

NO_ACTIVE_RUN = "no active run to stop"


def _require_journal(repo: RepoPaths) -> None:
    """Read paths never create a journal: a repository without one has no runs."""
    if not journal_present(repo.journal):
        raise NotFoundError(NO_ACTIVE_RUN)


def msg_manifest_missing(run_id: str) -> str:
    return (
        f"autoresearch_resume_manifest_missing:{run_id} – unknown run: {run_id} "
        "(autoresearch status lists the runs)"
    )


def msg_resume_terminal(run: RunRecord) -> str:
    code = f"autoresearch_resume_terminal_run:{run.run_id}"
    way_on = way_on_after_end(run.run_id, run.status)
    if run.status == RunStatus.FAILED:
        return (
            f"{code} – the run failed ({run.stop_reason}) and cannot be resumed or continued; "
            f"{way_on}"
        )
    return f"{code} – the run is {run.status} ({run.stop_reason}); {way_on}"


def msg_missing_worktree(run: RunRecord) -> str:
    return (
        f"autoresearch_resume_missing_worktree:{run.worktree_path} – the run's worktree is "
        f"gone (its commits are on branch {run.branch_name}); end the run with "
        f"autoresearch stop {run.run_id}, then start a new one"
    )


def open_run(repo_root: Path, run_id: str) -> RunHandle:
    """Lock a running run for one driver action (step)."""
    return lock_run(repo_root, run_id, admit=_running)


def _running(run: RunRecord) -> None:
    if run.status != RunStatus.RUNNING:
        raise RefusedError(msg_terminal(run.run_id, run.status))


@dataclass
class ResumeOutcome:
    handle: RunHandle
    notes: list[str] = field(default_factory=list)
    pending_artifact: bool = False


# Called once a run is known resumable and before anything about it changes (the driver
# plans its loop and connects its executor there: a refusal leaves the run as it was); it
# returns how the run takes its readings (`DriverState.measure_with`; None: right here).
Ready = Callable[[RunRecord], MeasureWith | None]


def resume(
    repo_root: Path,
    run_id: str,
    save_dirty: bool = False,
    runtime: Sequence[str] = (),
    ready: Ready | None = None,
) -> ResumeOutcome:
    """Re-check and re-arm a run; the returned handle holds the driver lock.

    `runtime` adds untracked-file patterns this run may leave in its worktree (files an
    evaluator writes), recorded with the run; the frozen evaluator contract is unchanged.
    """
    if not journal_exists(repo_root):
        raise RefusedError(msg_manifest_missing(run_id))
    journal = open_journal(repo_root)
    try:
        handle = _lock_for_resume(journal, RepoPaths(repo_root), run_id)
    except BaseException:
        journal.close()
        raise
    try:
        if ready is not None:
            handle.state.measure_with = ready(handle.run)
        notes = _allow_runtime(handle, runtime)
        handle = handle.renewed()  # its facts with the runtime globs just allowed
        outcome = _rearm(handle, save_dirty)
        outcome.notes[:0] = notes
        return outcome
    except BaseException:
        handle.close()
        raise


def msg_continue_limit(run_id: str, done: int) -> str:
    return (
        f"run {run_id} has recorded {done} iterations already and --max-iterations counts the "
        f"run's total: give a higher total, or use --max-iterations +N for N more"
    )


def continue_run(
    repo_root: Path,
    run_id: str,
    limit: IterationLimit | None,
    save_dirty: bool = False,
    runtime: Sequence[str] = (),
    ready: Ready | None = None,
) -> ResumeOutcome:
    """Reopen a stopped or completed run (same branch, worktree, history and frozen contract)
    and re-arm it like `resume`; a run that is still running is simply resumed.

    `limit` sets the run's new total (None: the recorded limit); it must leave room for at
    least one more iteration. Loop limits that count trailing outcomes (noops, agent
    failures) start counting afresh from here.
    """
    journal, run = read_run(repo_root, run_id)
    with journal:
        if run.status != RunStatus.RUNNING:
            total = limit.total(run.iteration) if limit else None
            _reopen(journal, RepoPaths(repo_root), run, total, ready)
    outcome = resume(repo_root, run_id, save_dirty=save_dirty, runtime=runtime, ready=ready)
    if lift_pause(outcome.handle.journal, run_id):
        outcome.handle.refresh()
        outcome.notes.insert(0, MSG_PAUSE_LIFTED.format(run_id=run_id))
    if run.status != RunStatus.RUNNING:
        outcome.notes.insert(0, f"continued the {run.status} run (it ended: {run.stop_reason})")
    return outcome


def _reopen(
    journal: Journal, repo: RepoPaths, run: RunRecord, total: int | None, ready: Ready | None
) -> None:
    run_id = run.run_id
    if run.cleaned_at:
        raise RefusedError(
            f"run {run_id} was cleaned (its worktree and branch are gone) and cannot be "
            "continued; start a new run (autoresearch run MISSION_DIR --agent …)"
        )
    if run.status == RunStatus.FAILED:
        raise RefusedError(
            f"run {run_id} failed ({run.stop_reason}) and cannot be continued; look at its "
            f"iterations (autoresearch status {run_id}) and start a new run"
        )
    limit = total if total is not None else run.loop_settings.max_iterations
    if limit is not None and int(limit) <= run.iteration:
        raise RefusedError(msg_continue_limit(run_id, run.iteration))
    if not git.is_worktree_of(Path(run.worktree_path), repo.repo_root):
        raise RefusedError(msg_missing_worktree(run))
    if ready is not None:
        ready(run)  # asked again by `resume` below: the same answer
    lock = driver_lock(repo, run_id)
    try:
        with journal.tx() as conn:
            active = [r for r in runs.active_run_ids(conn) if r != run_id]
            if active:
                raise RefusedError(msg_active_run(active[0], driver_alive(repo, active[0])))
            current = runs.get_run_in(conn, run_id)
            if current is None or current.status != run.status:
                raise RefusedError(f"run {run_id} changed meanwhile; try again")
            loop = replace(current.loop_settings, counts_from=current.iteration)
            runs.update_run(
                conn, run_id, status=RunStatus.RUNNING, stop_reason=None, stop_note=None,
                stop_requested=None, completed_at=None, loop=loop,
            )  # fmt: skip
    finally:
        lock.release()


def _allow_runtime(h: RunHandle, patterns: Sequence[str]) -> list[str]:
    added = [p for p in dict.fromkeys(patterns) if p.strip() and p not in h.runtime]
    if not added:
        return []
    sandbox = replace(h.run.sandbox, runtime=(*h.runtime, *added))
    with h.journal.tx() as conn:
        runs.update_run(conn, h.run_id, sandbox=sandbox)
    h.refresh()
    return [f"untracked files matching {', '.join(added)} are now allowed in this run's worktree"]


def _lock_for_resume(journal: Journal, repo: RepoPaths, run_id: str) -> RunHandle:
    run = runs.get_run(journal, run_id)
    if run is None:
        raise RefusedError(msg_manifest_missing(run_id))
    if run.status != RunStatus.RUNNING:
        raise RefusedError(msg_resume_terminal(run))
    lock = driver_lock(repo, run_id)
    # another driver may have changed the run before we took the lock: its facts as read now
    handle = RunHandle.of(journal, repo, load_run(journal, run_id), lock)
    if handle.run.status != RunStatus.RUNNING:
        lock.release()
        raise RefusedError(msg_resume_terminal(handle.run))
    if handle.run.phase != Phase.PREPARING and not git.is_worktree_of(
        handle.worktree, repo.repo_root
    ):
        lock.release()
        raise RefusedError(msg_missing_worktree(handle.run))
    return handle


def _rearm(h: RunHandle, save_dirty: bool) -> ResumeOutcome:
    # A crashed driver's agent may still be editing: stop it before looking at the tree.
    notes = record.reap_stale_children(h)
    notes += finish_interrupted_session(h.context, h.run)
    if save_dirty and h.run.phase != Phase.PREPARING and dirty_entries(h.worktree, h.dirt):
        kept = h.run.last_kept_commit or "HEAD"
        path = h.paths.patch(h.run.iteration + 1, "dirty")
        notes.append(record.save_and_reset(h.context, h.run, path, kept, "HEAD"))
    notes += recover(h)
    if h.run.phase == Phase.PREPARING:
        prepare.finish_prepare(h)
        notes.append("finished the interrupted prepare (worktree, mission, baseline)")
    check_reset_safety(h.worktree, h.dirt, h.run_id)
    pending = has_pending_artifact(h.context, h.run)
    if not pending:
        kept = h.run.last_kept_commit or ""
        if kept:
            # the work past the last keep: an unfinished session's, or iterations kept
            # after the backup a restore put back (it set the branch's tip aside)
            kept_aside = refs.kept_aside_at_head(h.repo.repo_root, h.run_id, h.worktree, kept)
            label = refs.KEPT_BEFORE_RESTORE if kept_aside else "unfinished-session"
            notes += record.restore_branch(h.context, h.run, h.run.iteration + 1, label, kept)
            if kept_aside:
                notes.append(
                    f"the commits {h.branch_name} kept past {kept[:12]} before the journal "
                    f"was restored stay reachable as {kept_aside}"
                )
        if h.run.stop_requested:
            notes.append(f"an earlier stop request ({h.run.stop_requested}) was withdrawn")
            with h.journal.tx() as conn:
                runs.update_run(conn, h.run_id, stop_requested=None)
            h.refresh()
        sync.write_placeholder(h.context, h.run.last_kept_commit)
    sync.write_instructions(h.context, h.run)
    estimates.write_manifest(h.journal, h.run, h.repo)
    sync.write_active_pointer(h)
    return ResumeOutcome(h, notes, pending)


def has_pending_artifact(h: RunContext, run: RunRecord) -> bool:
    """True when candidate.json holds a session's artifact that no step of `run` (as last
    read) has processed yet."""
    read = sync.read_artifact(h.paths.candidate)
    if read.sha256 is None:
        return False
    last = iteration_records.get_iteration(h.journal, h.run_id, run.iteration)
    if last is not None and last.artifact_sha256 == read.sha256:
        return False
    return read.from_session


def stop(repo_root: Path, run_id: str | None, reason: str | None = None) -> StopOutcome:
    """Finalize a run as stopped (`operator stop`), or ask its live driver to stop it.

    The operator's reason is kept as the run's stop_note; stop_reason stays the exact string.
    """
    repo = RepoPaths(repo_root)
    if run_id is not None and not journal_present(repo.journal):
        raise NotFoundError(f"unknown run: {run_id}")
    _require_journal(repo)
    with open_journal(repo_root) as journal:
        run = _stop_target(journal, run_id)
        if driver_alive(repo, run.run_id):
            with journal.tx() as conn:
                runs.update_run(conn, run.run_id, stop_requested=STOP_OPERATOR, stop_note=reason)
            return StopOutcome(run.run_id, run.status, STOP_OPERATOR, reason, requested=True)
        lock = driver_lock(repo, run.run_id)
    with RunHandle.of(open_journal(repo_root), repo, run, lock) as h:
        h.refresh()
        finalize_run(h, RunStatus.STOPPED, STOP_OPERATOR, note=reason)
        return StopOutcome(h.run_id, h.run.status, STOP_OPERATOR, reason, requested=False)


def _stop_target(journal: Journal, run_id: str | None) -> RunRecord:
    if run_id is None:
        active = [r for r in runs.list_runs(journal) if r.status == RunStatus.RUNNING]
        if not active:
            raise NotFoundError(NO_ACTIVE_RUN)
        return runs.decoded_whole(active[-1])
    run = runs.get_run(journal, run_id)
    if run is None:
        raise NotFoundError(f"unknown run: {run_id}")
    if run.status in TERMINAL_STATUSES:
        raise RefusedError(f"run {run_id} is already {run.status} ({run.stop_reason})")
    return runs.decoded_whole(run)  # refused before the driver lock is taken


def baseline_and_best(h: RunContext, run: RunRecord) -> estimates.Headline:
    """The run's baseline and its reported best, with their intervals: a resumed run's header
    names both, never the best as the baseline."""
    return estimates.headline(h.journal, run)


def run_summary(h: RunHandle, sessions: int, interrupted: bool) -> LoopSummary:
    """What a finished (or interrupted) loop reports: numbers and where the files are."""
    failpoints.hit("summary.start")
    h.refresh()
    run = h.run
    return LoopSummary(
        summary=summary_of(h.journal, run),
        repo_root=str(h.repo.repo_root),
        sessions=sessions,
        interrupted=interrupted,
        ledger_file=str(h.paths.ledger),
        results_file=str(h.results_file),
        manifest_file=str(h.paths.manifest),
        logs_dir=str(h.paths.logs),
        report_file=str(h.paths.report / REPORT_FILE),
        totals=totals.run_totals(h.journal, run),
        lanes=lane_rows(h.journal, run, True),  # this process drives it
        archive=archive_view.archive_entries(h.journal, run),
        agents=portfolio.agent_shares(h.journal, run),
    )


def baseline_evaluation(h: RunContext) -> StoredEvaluation | None:
    """The compact evaluation record of iteration 0, if the baseline ran."""
    it = iteration_records.get_iteration(h.journal, h.run_id, 0)
    return it.evaluator if it else None


def record_loop_options(h: RunHandle, loop: LoopSettings) -> None:
    """Remember the agent and limits a loop runs with, for a later `resume`."""
    with h.journal.tx() as conn:
        runs.update_run(conn, h.run_id, loop=loop)
    h.refresh()
