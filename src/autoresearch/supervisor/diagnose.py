"""Diagnoses the front doors show: why a baseline gives the loop nothing to compare against."""

from __future__ import annotations

from autoresearch.contracts.stored_evaluation import StoredEvaluation
from autoresearch.journal.runs import RunRecord
from autoresearch.states import EvalStatus, KeepPolicy


def baseline_warning(run: RunRecord, baseline: StoredEvaluation | None) -> str | None:
    """The loud warning for a score_improvement run that can never keep anything, or None."""
    if run.keep_policy != KeepPolicy.SCORE_IMPROVEMENT or run.last_kept_score is not None:
        return None
    detail = baseline_problem(baseline)
    log = baseline.log_file if baseline and baseline.log_file is not None else "n/a"
    return (
        "WARNING: the baseline has no comparable score "
        f"({detail}; log: {log}).\n"
        "  Under keep_policy score_improvement nothing can be kept until the evaluator "
        "produces a numeric score.\n"
        "  Fix the evaluator (commit the fix in the worktree "
        f"{run.worktree_path}), then run:\n"
        f"    autoresearch rebaseline {run.run_id}"
    )


def baseline_problem(record: StoredEvaluation | None) -> str:
    """The most telling reason an evaluation gave no comparable score."""
    if not record:
        return "the baseline did not run"
    if record.spawn_error:
        return record.spawn_error
    if record.timed_out:
        return "the evaluator timed out"
    if record.exit_code not in (0, None):
        return f"the evaluator exited with code {record.exit_code}"
    if record.parse_error:
        return record.parse_error
    if record.status == EvalStatus.FAIL:
        return "the evaluator reported pass=false"
    return "the evaluator passed without a numeric score"


def msg_baseline_not_comparable(
    run_id: str, worktree: str, baseline: StoredEvaluation | None
) -> str:
    """Why a loop refuses to start any session: nothing it produced could ever be kept."""
    detail = baseline_problem(baseline)
    log = baseline.log_file if baseline and baseline.log_file is not None else "n/a"
    return (
        f"autoresearch_baseline_not_comparable:{run_id} – the baseline has no comparable score "
        f"({detail}; log: {log}), so under keep_policy score_improvement no session could ever "
        "be kept and none was started. Fix the evaluator and commit the fix in the worktree "
        f"{worktree}, then: autoresearch rebaseline {run_id} && autoresearch resume {run_id} "
        f"(or give up: autoresearch stop {run_id})"
    )
