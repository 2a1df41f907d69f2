"""Recording an iteration in the journal and applying its git effect, crash-safely.

An iteration moves through `evaluating` → `decided` → `applied`:
* `evaluating` – the artifact was accepted and the evaluator is running. Nothing is decided;
  a crash here is rolled back (the artifact is still in place and is processed again).
* `decided` – the decision and the run's new state are committed in one transaction; the git
  effect (a reset) may not have happened yet. A crash here is finished by applying it.
* `applied` – the worktree agrees with the journal.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

from autoresearch import failpoints, git, reset
from autoresearch.clock import utc_now_iso
from autoresearch.decide import Decision
from autoresearch.errors import RunInterrupted
from autoresearch.evaluate import EvaluationRecord, evaluator_env, run_evaluator
from autoresearch.journal import runs
from autoresearch.journal.runs import IterationRecord
from autoresearch.proc import kill_marked, kill_stale_group
from autoresearch.settings import kill_grace
from autoresearch.states import (
    TERMINAL_STATUSES,
    DecisionKind,
    IterationKind,
    IterationState,
)
from autoresearch.supervisor.handle import RunHandle
from autoresearch.supervisor.safety import check_reset_safety


def new_iteration(
    h: RunHandle, iteration: int, kind: IterationKind, **fields: Any
) -> IterationRecord:
    now = utc_now_iso()
    return IterationRecord(
        run_id=h.run_id,
        iteration=iteration,
        kind=kind,
        state=IterationState.EVALUATING,
        keep_policy=h.run.keep_policy,
        created_at=now,
        updated_at=now,
        **fields,
    )


def start_evaluation(h: RunHandle, it: IterationRecord) -> None:
    """Record that iteration `it` is being evaluated."""
    with h.journal.tx() as conn:
        runs.insert_iteration(conn, it)
    failpoints.hit("step.after_start_evaluation")


def evaluate(
    h: RunHandle, iteration: int, should_cancel: Callable[[], bool] | None = None
) -> EvaluationRecord:
    """Run the frozen evaluator on the worktree; its process group is registered meanwhile.

    When `should_cancel` fires, the evaluator's group is stopped, the iteration is rolled back
    (its artifact stays in place for `resume`) and RunInterrupted is raised.
    """
    attempt = 1
    while h.paths.evaluator_log(iteration, attempt).exists():
        attempt += 1  # an earlier, interrupted attempt keeps its log

    def register(pgid: int) -> None:
        with h.journal.tx() as conn:
            runs.add_child(conn, h.run_id, pgid, "evaluator", h.marker)
        failpoints.hit("evaluate.after_spawn")

    record = run_evaluator(
        h.evaluator,
        h.worktree,
        evaluator_env(h.run_id, iteration, h.worktree, Path(h.run.mission_dir)),
        h.paths.evaluator_log(iteration, attempt),
        on_spawn=register,
        grace_seconds=kill_grace(),
        should_cancel=should_cancel,
    )
    if record.cancelled:
        with h.journal.tx() as conn:
            runs.delete_iteration(conn, h.run_id, iteration)
            runs.clear_children(conn, h.run_id)
        raise RunInterrupted(
            f"evaluation of iteration {iteration} interrupted; its artifact is kept for "
            f"`autoresearch resume {h.run_id}`"
        )
    failpoints.hit("step.after_evaluator")
    return record


def commit_decision(
    h: RunHandle,
    it: IterationRecord,
    decision: Decision,
    evaluation: EvaluationRecord | None,
    run_changes: dict[str, Any],
    exists: bool,
) -> IterationRecord:
    """One transaction: the decision, the evaluation row and the run's new state."""
    needs_effect = decision.needs_git_effect
    record = evaluation.to_dict() if evaluation else None
    decided = replace(
        it,
        state=IterationState.DECIDED if needs_effect else IterationState.APPLIED,
        decision=decision.decision,
        decision_reason=decision.reason,
        decision_notes=[*it.decision_notes, *decision.notes],
        kept_commit=run_changes.get("last_kept_commit", h.run.last_kept_commit),
        evaluator=evaluation.compact() if evaluation else None,
        updated_at=utc_now_iso(),
    )
    changes = dict(run_changes)
    changes.update(iteration=it.iteration, updated_at=utc_now_iso())
    if decision.run_status in TERMINAL_STATUSES:
        changes.update(
            status=decision.run_status,
            stop_reason=decision.stop_reason,
            completed_at=changes["updated_at"],
        )
    with h.journal.tx() as conn:
        if exists:
            runs.update_iteration(conn, decided)
        else:
            runs.insert_iteration(conn, decided)
        if record is not None:
            runs.insert_evaluation(conn, h.run_id, it.iteration, it.kind, record)
        runs.clear_children(conn, h.run_id)
        runs.update_run(conn, h.run_id, **changes)
    h.run = replace(h.run, **changes)  # exactly what was written: no need to read it back
    failpoints.hit("step.after_decided")
    return decided


def apply_effect(
    h: RunHandle,
    it: IterationRecord,
    known_head: str | None = None,
    safety_checked: bool = False,
) -> IterationRecord:
    """Make the worktree agree with a decided iteration; idempotent.

    `known_head` and `safety_checked` spare git calls the caller has just made.
    """
    if it.state != IterationState.DECIDED:
        return it
    kept = it.kept_commit or h.run.last_kept_commit
    notes = list(it.decision_notes)
    if kept and (known_head or git.head(h.worktree)) != kept:
        if not safety_checked:
            check_reset_safety(h.worktree, h.links, h.runtime)
        if it.decision == DecisionKind.INTERRUPTED:
            notes.append(save_patch(h, it.iteration, "interrupted", kept))
        failpoints.hit("apply.before_reset")
        git.reset_hard(h.worktree, kept)  # checked safe: only runtime dirt is left to spare
    applied = replace(it, state=IterationState.APPLIED, decision_notes=notes)
    with h.journal.tx() as conn:
        runs.update_iteration(conn, applied)
    failpoints.hit("step.after_applied")
    return applied


def save_patch(h: RunHandle, iteration: int, label: str, base: str) -> str:
    """Save everything in the worktree past `base` (commits, edits, staged and new files) as a
    patch; the note that says where."""
    path = h.paths.patch(iteration, label)
    reset.save_patch(h.worktree, base, h.dirt, path, keep_empty=True)
    return f"changes past {base[:12]} saved to {path}"


def save_and_reset(
    h: RunHandle, iteration: int, label: str, base: str, reset_to: str | None = None
) -> str:
    """`save_patch`, then reset to `reset_to` (default `base`) sparing runtime dirt."""
    note = save_patch(h, iteration, label, base)
    reset.reset_tree(h.worktree, reset_to or base, h.dirt)
    return note


def reap_stale_children(h: RunHandle) -> list[str]:
    """Stop process groups that a crashed driver of this run left running.

    Done once per handle: while this process holds the driver lock, no other driver can leave
    children behind.
    """
    if h.reaped:
        return []
    h.reaped = True
    notes = []
    stale = runs.children(h.journal, h.run_id)
    for pgid, role, marker in stale:
        if kill_stale_group(pgid, marker):
            notes.append(f"stopped a stale {role} process group ({pgid}) left by a crashed driver")
    if stale:
        with h.journal.tx() as conn:
            runs.clear_children(conn, h.run_id)
    # A child spawned just before its driver died was never registered; its environment
    # (this run's id and worktree) still identifies it.
    unregistered = kill_marked([h.marker, f"AUTORESEARCH_WORKTREE={h.worktree}"])
    notes += [
        f"stopped an unregistered process group ({pgid}) of this run" for pgid in unregistered
    ]
    return notes
