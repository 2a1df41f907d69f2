"""The prompt of the next session (supervisor.md §8): a pure rendering of the run's state."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from autoresearch.contracts.sandbox import EvaluatorSpec
from autoresearch.decide import previous_outcome
from autoresearch.journal.iteration_records import IterationRecord, TriedCandidate
from autoresearch.journal.runs import RunRecord
from autoresearch.journal.views import format_score
from autoresearch.states import Direction, EvalFormat, IterationKind

MISSION_CAP = 4000
SANDBOX_CAP = 4000
REASON_CAP = 160
DESCRIPTION_CAP = 120
# Novelty (issue 33): how many measured iterations the instructions list, newest first, so
# that a session does not retry what the run already measured; each line is capped, so the
# section stays under ~6 kB however long the run.
TRIED_CAP = 20
TRIED_REASON_CAP = 80


def _cap(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    return text[: limit - 1] + "…"


def _fence(text: str, limit: int, lang: str = "") -> str:
    body = _cap(text.strip("\n"), limit)
    # A body that itself contains a fence must not close ours early.
    fence = "````" if "```" in body else "```"
    return f"{fence}{lang}\n{body}\n{fence}"


def ledger_summary(recent: Sequence[IterationRecord]) -> list[dict[str, Any]]:
    """The last three ledger entries in the compact form of the snapshot."""
    out = []
    for it in list(recent)[-3:]:
        ev = it.evaluator
        out.append(
            {
                "iteration": it.iteration,
                "decision": it.decision,
                "reason": _cap(it.decision_reason or "", REASON_CAP),
                "kept_commit": it.kept_commit,
                "candidate_commit": it.candidate_commit,
                "evaluator_status": ev.status if ev else None,
                "evaluator_score": ev.score if ev else None,
                "description": _cap(it.description or "", DESCRIPTION_CAP),
            }
        )
    return out


def snapshot(run: RunRecord, recent: Sequence[IterationRecord]) -> dict[str, Any]:
    last = recent[-1] if recent and recent[-1].kind == IterationKind.ITERATION else None
    return {
        "iteration": run.iteration + 1,
        "baseline_commit": run.baseline_commit,
        "last_kept_commit": run.last_kept_commit,
        "last_kept_score": run.last_kept_score,
        "previous_iteration_outcome": previous_outcome(
            last.decision if last else None, last.decision_reason if last else None
        ),
        "recent_ledger_summary": ledger_summary(recent),
        "keep_policy": run.keep_policy,
    }


def tried_lines(tried: Sequence[TriedCandidate]) -> list[str]:
    """The section listing what the run already measured (`tried`: newest first)."""
    if not tried:
        return []
    lines = [
        f"Already tried (the last {len(tried)} measured candidates, newest first; a candidate "
        "whose tree equals one already measured is discarded unmeasured as `duplicate of "
        "iteration N`):"
    ]
    for it in tried:
        score = format_score(it.score) or "n/a"
        reason = _cap(it.reason, TRIED_REASON_CAP)
        what = _cap(" ".join(it.description.split()), DESCRIPTION_CAP)
        lines.append(f"- iteration {it.iteration}: {it.decision} ({reason}; score {score}): {what}")
    return [*lines, ""]


def _evaluator_lines(evaluator: EvaluatorSpec) -> list[str]:
    lines = [f"- command: {evaluator.command}", f"- format: {evaluator.format}"]
    if evaluator.format == EvalFormat.METRIC:
        lines += [
            f"- required output line: METRIC {evaluator.metric}=<number> "
            "(stdout or stderr; exit code 0)",
            "- the primary metric is the score; other METRIC lines are recorded",
        ]
    else:
        lines += [
            "- required output field: pass (boolean)",
            "- optional output field: score (number)",
        ]
    lower = evaluator.direction == Direction.LOWER
    better = Direction.LOWER if lower else Direction.HIGHER
    lines.append(f"- direction: {better} scores are better")
    return lines


def render(
    run: RunRecord,
    recent: Sequence[IterationRecord],
    mission_text: str,
    sandbox_body: str,
    results_file: str,
    candidate_file: str,
    tried: Sequence[TriedCandidate] = (),
    earlier: Sequence[str] = (),
    plateau: Sequence[str] = (),
) -> str:
    """instructions.md for the next session (`tried`: measured iterations, newest first;
    `earlier`: the digest of the mission's earlier runs, `memory.digest_lines`; `plateau`:
    the note of a run that explores after a plateau, `plateau.EXPLORE_LINES`)."""
    kept = run.last_kept_commit or ""
    score = format_score(run.last_kept_score) or "n/a"
    lines = [
        "# autoresearch experiment session",
        "",
        f"Run ID: {run.run_id}",
        f"Mission directory: {run.mission_dir}",
        f"Mission file: {run.mission_file}",
        f"Sandbox file: {run.sandbox_file}",
        f"Mission slug: {run.mission_slug}",
        f"Iteration: {run.iteration + 1}",
        f"Baseline commit: {run.baseline_commit or ''}",
        f"Last kept commit: {kept}",
        f"Last kept score: {score}",
        f"Results file: {results_file}",
        f"Candidate artifact: {candidate_file}",
        f"Keep policy: {run.keep_policy}",
        "",
        "Iteration state snapshot:",
        "```json",
        json.dumps(snapshot(run, recent), indent=2, ensure_ascii=False),
        "```",
        "",
        "Operate as a thin autoresearch experiment worker for exactly one experiment cycle.",
        "Do not loop forever inside this session. Make at most one candidate commit, then "
        "write the candidate artifact JSON and exit.",
        "",
        f"Candidate artifact contract (write one JSON object to {candidate_file}):",
        '- status: "candidate" | "noop" | "abort" | "interrupted"',
        "- candidate_commit: the full SHA of your one new commit (must equal the worktree "
        "HEAD), or null when you made no commit",
        f'- base_commit: "{kept}" (the last kept commit this session started from)',
        "- description: one line saying what you changed and why",
        "- notes: an array of short strings (observations, what to try next)",
        "- created_at: an ISO-8601 timestamp",
        "",
        "Supervisor semantics:",
        "- candidate: the supervisor runs the evaluator on your commit; it keeps the commit "
        "when the keep policy accepts the result, otherwise it resets the worktree to the "
        "last kept commit",
        "- noop: you found nothing worth trying; the iteration is recorded, nothing is evaluated",
        "- abort: the whole run stops (use only when the mission cannot go on)",
        "- interrupted: you could not finish; leave the worktree clean (uncommitted changes "
        "fail the run and need an operator)",
        "- anything uncommitted when you exit is not evaluated; commit your change",
        "",
        "Evaluator contract:",
        *_evaluator_lines(run.evaluator),
        "",
        "Mission content:",
        _fence(mission_text, MISSION_CAP, "markdown"),
        "",
        "Sandbox policy:",
        _fence(sandbox_body, SANDBOX_CAP, "markdown"),
        "",
        *plateau,
        *earlier,
        *tried_lines(tried),
    ]
    return "\n".join(lines)
