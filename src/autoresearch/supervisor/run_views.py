"""What `status` and MCP's run_list/run_get read of runs: read-only views of the journal.

Apart from the engine that drives runs (prepare, step, record, the executor) so that a status
line, a hook and `autoresearch mcp` start without importing it (issue 36:
tests/test_import_graph.py guards this).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from autoresearch.journal import runs, views
from autoresearch.journal.db import Journal, journal_present, open_journal
from autoresearch.journal.runs import RunRecord
from autoresearch.paths import REPORT_FILE, RepoPaths
from autoresearch.redact import Redactor, current
from autoresearch.states import TERMINAL_STATUSES, RunStatus
from autoresearch.supervisor import estimates, honest, improvement
from autoresearch.supervisor.run_read import driver_alive, read_named_run, read_run
from autoresearch.supervisor.run_summary import RunListing, RunSummary

if TYPE_CHECKING:  # one run's records: `status` without RUN lists the runs without them
    from autoresearch.journal.iteration_records import IterationRecord
    from autoresearch.supervisor.summary import LaneRow, RunDetails


def journal_exists(repo_root: Path) -> bool:
    return journal_present(RepoPaths(repo_root).journal)


def list_runs(repo_root: Path, last: int | None = None) -> list[RunListing]:
    """Every run of the repository with its headline numbers, oldest first (the newest `last`
    only, when given: `status --last N`, MCP run_list's `last`)."""
    if not journal_exists(repo_root):
        return []
    repo = RepoPaths(repo_root)
    with open_journal(repo_root, to_read=True) as journal:
        return [
            RunListing(
                summary_of(journal, run),
                run.status == RunStatus.RUNNING and driver_alive(repo, run.run_id),
            )
            for run in runs.list_runs(journal, last)
        ]


def run_details(
    repo_root: Path, run_id: str, last: int | None = None, by_name: bool = False
) -> RunDetails:
    """One run with its iteration history (the `last` iterations only, when given; `by_name`:
    `run_id` may be what a user typed, run_read.read_named_run)."""
    # one run's parts only: `status` without RUN lists the runs without importing them
    from autoresearch.journal import iteration_records
    from autoresearch.supervisor import archive_view, portfolio
    from autoresearch.supervisor.summary import IterationRow, RunDetails

    if by_name:
        journal, run = read_named_run(repo_root, run_id)
    else:
        journal, run = read_run(repo_root, run_id, to_read=True)
    run_id = run.run_id
    with journal:
        its = (
            iteration_records.all_iterations(journal, run_id)
            if last is None
            else iteration_records.recent_iterations(journal, run_id, last)
            if last > 0
            else []
        )
        found = estimates.RunReadings.load(journal, run)
        report = RepoPaths(repo_root).run(run_id).report / REPORT_FILE
        alive = driver_alive(RepoPaths(repo_root), run_id)
        parents = archive_view.parents(journal, run)
        masks = current()  # one look at the environment for every row, not one per row
        return RunDetails(
            summary=summary_of(journal, run),
            manifest=estimates.manifest(journal, run, RepoPaths(repo_root)),
            iterations=[
                IterationRow(
                    it,
                    iteration_evaluation(it, masks),
                    found.estimate(estimates.own_commit(it)),
                    parents.get(it.iteration),
                )
                for it in its
            ],
            iterations_total=run.iteration + 1 if run.baseline_commit else 0,
            driver_alive=alive,
            report_file=str(report) if report.exists() else None,
            lanes=lane_rows(journal, run, alive),
            archive=archive_view.archive_entries(journal, run),
            agents=portfolio.agent_shares(journal, run),
        )


def iteration_evaluation(it: IterationRecord, masks: Redactor | None = None) -> str:
    """What an iteration's evaluation came to, as status shows it (with the reason of a
    discard decided without a reading as its ledger entry shows it: secrets masked, by
    `masks` when the caller renders many rows at one moment)."""
    reason = it.decision_reason and (masks or current()).text(it.decision_reason)
    return views.evaluation_text(it.evaluator, it.decision, reason)


def lane_rows(journal: Journal, run: RunRecord, driver_alive: bool) -> list[LaneRow]:
    """Each lane of a `run --lanes K` (none for a run without lanes): what it is doing, its
    last decision (with its reason and what its evaluation came to), what its sessions
    spent. The decision and the counts are the journal's, read with the row in one snapshot,
    and what the lane is doing never contradicts them (`summary.lane_now`)."""
    from autoresearch.journal import iteration_records
    from autoresearch.journal import lanes as lane_store  # one run's lanes: see run_details
    from autoresearch.supervisor.summary import LaneRow, lane_now

    rows = []
    for lane, spent in lane_store.lanes_judged(journal, run.run_id):
        number = spent.last_iteration
        last = (
            iteration_records.get_iteration(journal, run.run_id, number)
            if number is not None
            else None
        )
        state, detail = lane_now(
            lane.state, lane.detail, lane.last_iteration, number, driver_alive,
            run.status in TERMINAL_STATUSES,
        )  # fmt: skip
        rows.append(
            LaneRow(
                lane=lane.lane,
                state=state,
                detail=detail,
                sessions=lane.session,
                base_commit=lane.base_commit,
                last_iteration=number,
                last_decision=last.decision if last else None,
                last_reason=last.decision_reason if last else None,
                last_evaluation=iteration_evaluation(last) if last else None,
                iterations=spent.iterations,
                keeps=spent.keeps,
                cost_usd=spent.cost_usd,
                tokens=spent.tokens,
                updated_at=lane.updated_at,
            )
        )
    return rows


def summary_of(journal: Journal, run: RunRecord) -> RunSummary:
    found = estimates.headline(journal, run)
    told = honest.facts(journal, run)
    return RunSummary(
        run_id=run.run_id,
        status=run.status,
        stop_reason=run.stop_reason,
        mission_slug=run.mission_slug,
        branch_name=run.branch_name,
        worktree_path=run.worktree_path,
        iteration=run.iteration,
        keep_policy=run.keep_policy,
        direction=run.direction,
        last_kept_commit=run.last_kept_commit,
        last_kept_score=run.last_kept_score,
        best_score=found.best,
        baseline_score=found.baseline,
        counts=runs.decision_counts(journal, run.run_id),
        created_at=run.created_at,
        updated_at=run.updated_at,
        completed_at=run.completed_at,
        stop_requested=run.stop_requested,
        stop_note=run.stop_note,
        cleaned_at=run.cleaned_at,
        resume_command=resume_command(run),
        paused=run.paused if run.status == RunStatus.RUNNING else None,
        best_interval=found.best_interval,
        baseline_interval=found.baseline_interval,
        certified_improvement=told.certified_improvement,
        drift=told.drift,
        best_note=told.best_note,
        improvement=improvement.run_improvement(journal, run, found),
    )


def resume_command(run: RunRecord) -> str | None:
    """How to go on with a running run (a paused one: `continue` lifts its pause)."""
    if run.status != RunStatus.RUNNING:
        return None
    verb = "continue" if run.paused else "resume"
    return f"autoresearch {verb} {run.run_id}"
