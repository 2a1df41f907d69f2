"""Diagnoses the front doors show: why a baseline gives the loop nothing to compare against."""

from __future__ import annotations

from typing import Any

from autoresearch.states import EvalStatus


def baseline_warning(manifest: dict[str, Any], baseline: dict[str, Any] | None) -> str | None:
    """The loud warning for a score_improvement run that can never keep anything, or None."""
    if manifest["keep_policy"] != "score_improvement" or manifest["last_kept_score"] is not None:
        return None
    detail = baseline_problem(baseline or {})
    return (
        "WARNING: the baseline has no comparable score "
        f"({detail}; log: {(baseline or {}).get('log_file', 'n/a')}).\n"
        "  Under keep_policy score_improvement nothing can be kept until the evaluator "
        "produces a numeric score.\n"
        "  Fix the evaluator (commit the fix in the worktree "
        f"{manifest['worktree_path']}), then run:\n"
        f"    autoresearch rebaseline {manifest['run_id']}"
    )


def baseline_problem(record: dict[str, Any]) -> str:
    """The most telling reason an evaluation gave no comparable score."""
    if record.get("spawn_error"):
        return str(record["spawn_error"])
    if record.get("timed_out"):
        return "the evaluator timed out"
    if record.get("exit_code") not in (0, None):
        return f"the evaluator exited with code {record['exit_code']}"
    if record.get("parse_error"):
        return str(record["parse_error"])
    if record.get("status") == EvalStatus.FAIL:
        return "the evaluator reported pass=false"
    if record:
        return "the evaluator passed without a numeric score"
    return "the baseline did not run"


def msg_baseline_not_comparable(run_id: str, worktree: str, baseline: dict[str, Any] | None) -> str:
    """Why a loop refuses to start any session: nothing it produced could ever be kept."""
    detail = baseline_problem(baseline or {})
    log = (baseline or {}).get("log_file", "n/a")
    return (
        f"autoresearch_baseline_not_comparable:{run_id} – the baseline has no comparable score "
        f"({detail}; log: {log}), so under keep_policy score_improvement no session could ever "
        "be kept and none was started. Fix the evaluator and commit the fix in the worktree "
        f"{worktree}, then: autoresearch rebaseline {run_id} && autoresearch resume {run_id} "
        f"(or give up: autoresearch stop {run_id})"
    )
