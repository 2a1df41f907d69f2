"""Recording an iteration in the journal and applying its git effect, crash-safely.

An iteration moves through `evaluating` → `decided` → `applied`:
* `evaluating` – the artifact was accepted and the evaluator is running. Nothing is decided;
  a crash here is rolled back (the artifact is still in place and is processed again).
* `decided` – the decision and the run's new state are committed in one transaction; the git
  effect (a reset) may not have happened yet. A crash here is finished by applying it.
* `applied` – the worktree agrees with the journal.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, NoReturn

from autoresearch import children, failpoints, git, reset, worktree_repair
from autoresearch.clock import utc_now_iso
from autoresearch.contracts.sandbox import EvaluatorSpec
from autoresearch.contracts.stored_evaluation import StoredEvaluation
from autoresearch.decide import UNCHANGED_CANDIDATE as UNCHANGED
from autoresearch.decide import Decision
from autoresearch.errors import RunInterrupted
from autoresearch.evaluate import EvaluationRecord, check_record, evaluator_env, run_evaluator
from autoresearch.journal import children as registry
from autoresearch.journal import iteration_records, runs
from autoresearch.journal.iteration_records import IterationRecord
from autoresearch.noise import Role
from autoresearch.proc import SupervisedSpec, run_supervised
from autoresearch.settings import kill_grace
from autoresearch.states import (
    REJECTS_CANDIDATE,
    TERMINAL_STATUSES,
    ChildRole,
    EvalPurpose,
    IterationKind,
    IterationState,
)
from autoresearch.supervisor import refs, seal
from autoresearch.supervisor.executor import EvaluationTask
from autoresearch.supervisor.handle import RunContext, RunHandle
from autoresearch.supervisor.safety import check_reset_safety

# One reading to record: its role in the decision, the commit measured, the evaluation.
Reading = tuple[Role, str | None, EvaluationRecord]


@dataclass(frozen=True)
class RunChanges:
    """What a decision changes of its run's record (commit_decision adds the iteration and, when
    the run ends, its status): a commit left None keeps its column; the kept score is written
    only when `rescored`, since None is a score a run may keep (a baseline without one)."""

    latest_candidate_commit: str | None = None
    baseline_commit: str | None = None
    last_kept_commit: str | None = None
    last_kept_score: float | None = None
    rescored: bool = False

    def scored(self, score: float | None) -> RunChanges:
        return replace(self, last_kept_score=score, rescored=True)

    def columns(self) -> dict[str, Any]:
        """The run's columns to write, by their record name (runs.update_run's edge)."""
        commits = {
            "latest_candidate_commit": self.latest_candidate_commit,
            "baseline_commit": self.baseline_commit,
            "last_kept_commit": self.last_kept_commit,
        }
        found: dict[str, Any] = {k: v for k, v in commits.items() if v is not None}
        if self.rescored:
            found["last_kept_score"] = self.last_kept_score
        return found


def new_iteration(
    h: RunContext, iteration: int, kind: IterationKind, **fields: Any
) -> IterationRecord:
    now = utc_now_iso()
    return IterationRecord(
        run_id=h.run_id,
        iteration=iteration,
        kind=kind,
        state=IterationState.EVALUATING,
        keep_policy=h.keep_policy,
        created_at=now,
        updated_at=now,
        lane=h.lane,
        **fields,
    )


def start_evaluation(h: RunContext, it: IterationRecord) -> None:
    """Record that iteration `it` is being evaluated."""
    with h.journal.tx() as conn:
        iteration_records.insert_iteration(conn, it)
    failpoints.hit("step.after_start_evaluation")


def evaluate(
    h: RunHandle,
    iteration: int,
    should_cancel: Callable[[], bool] | None = None,
    tree: Path | None = None,
    commit: str | None = None,
    screen: tuple[EvaluatorSpec, Path] | None = None,
) -> EvaluationRecord:
    """Run the frozen evaluator on the worktree (or on `tree`, a scratch checkout of another
    commit); its process group is registered meanwhile. A run with lanes measures through
    its executor (`DriverState.measure_with`): each reading takes an evaluation slot. `screen`: run
    that evaluator (evaluator.screen) with its log here instead, never through an executor.

    When `should_cancel` fires, the evaluator's group is stopped, the iteration is rolled back
    (its artifact stays in place for `resume`) and RunInterrupted is raised.
    """
    attempt = 1
    while h.paths.evaluator_log(iteration, attempt).exists():
        attempt += 1  # an earlier, interrupted attempt keeps its log

    def register(pgid: int) -> None:
        children.register(h.journal, h.tag, pgid, ChildRole.EVALUATOR)
        failpoints.hit("evaluate.after_spawn")

    cwd, mission_dir = h.worktree, h.mission_dir
    if tree is not None:
        cwd, mission_dir = tree, tree / h.sandbox.relative_dir
    env = measuring_env(h.context, iteration, cwd, mission_dir)
    if h.state.measure_with is not None and screen is None:
        task = evaluation_task(
            h.context, iteration, commit or "", cwd, h.paths.evaluator_log(iteration, attempt)
        )
        record = h.state.measure_with(task, should_cancel)
    else:
        spec, log = screen or (h.evaluator, h.paths.evaluator_log(iteration, attempt))
        record = run_evaluator(
            spec,
            cwd,
            env,
            log,
            on_spawn=register,
            grace_seconds=kill_grace(),
            should_cancel=should_cancel,
            box=h.box(agent=False),
        )
    if record.cancelled:
        _roll_back(h.context, iteration, "evaluation")
    failpoints.hit("step.after_evaluator")
    return record


def evaluation_task(
    h: RunContext, iteration: int, commit: str, tree: Path, log_path: Path
) -> EvaluationTask:
    """One reading of `commit` (checked out at `tree`) for an executor; the sealed copy was
    verified just now (`measuring_env`)."""
    slots = h.sandbox.evaluation
    return EvaluationTask(
        run_id=h.run_id,
        lane=h.lane,
        iteration=iteration,
        commit=commit,
        tree=tree,
        relative_dir=h.sandbox.relative_dir,
        evaluator=h.evaluator,
        log_path=log_path,
        sealed_dir=h.paths.sealed if h.sealed else None,
        resources=dict(slots.resources),
        grace_seconds=kill_grace(),
        box=h.box(agent=False),
    )


def measuring_env(h: RunContext, iteration: int, cwd: Path, mission_dir: Path) -> dict[str, str]:
    """The evaluator's and checks' environment; a sealed copy is verified before each use."""
    if h.sealed:
        seal.verify(h)
    sealed = h.paths.sealed if h.sealed else None
    return evaluator_env(h.run_id, iteration, cwd, mission_dir, sealed)


def _roll_back(h: RunContext, iteration: int, what: str) -> NoReturn:
    """A cancelled iteration is rolled back whole; its artifact stays for `resume`."""
    with h.journal.tx() as conn:
        iteration_records.delete_iteration(conn, h.run_id, iteration)
        registry.clear_children(conn, h.run_id)
    raise RunInterrupted(
        f"{what} of iteration {iteration} interrupted; its artifact is kept for "
        f"`autoresearch resume {h.run_id}`"
    )


def run_checks(
    h: RunContext, iteration: int, should_cancel: Callable[[], bool] | None = None
) -> str | None:
    """Run sandbox.md's checks on the worktree; None when they passed, else what failed.
    Their whole output is kept in the iteration's checks log."""
    spec = h.checks
    if spec is None:
        return None

    def register(pgid: int) -> None:
        children.register(h.journal, h.tag, pgid, ChildRole.CHECKS)

    env = measuring_env(h, iteration, h.worktree, h.mission_dir)
    outcome = run_supervised(
        SupervisedSpec(
            argv=["sh", "-c", spec.command],
            cwd=h.worktree,
            env=env,
            log_path=h.paths.checks_log(iteration),
            timeout=spec.timeout_seconds,
            grace_seconds=kill_grace(),
            on_spawn=register,
            should_cancel=should_cancel,
            box=h.box(agent=False),
        )
    )
    if outcome.cancelled:
        _roll_back(h, iteration, "checks")
    return check_record(outcome).failure(spec.timeout_seconds)


def commit_decision(
    h: RunHandle,
    it: IterationRecord,
    decision: Decision,
    evaluation: EvaluationRecord | None,
    run_changes: RunChanges,
    exists: bool,
    readings: Sequence[Reading] = (),
) -> IterationRecord:
    """One transaction: the decision, its evaluation rows (`readings`: every reading of the
    iteration with its role and commit; else the one `evaluation`) and the run's new state."""
    # a baseline is recorded where it stands (an operator may commit a fix, then rebaseline)
    needs_effect = decision.needs_git_effect and it.kind != IterationKind.BASELINE
    purpose = EvalPurpose(it.kind)  # an evaluation row says which kind of iteration took it
    decided = replace(
        it,
        state=IterationState.DECIDED if needs_effect else IterationState.APPLIED,
        decision=decision.decision,
        decision_reason=decision.reason,
        decision_notes=[*it.decision_notes, *decision.notes],
        kept_commit=run_changes.last_kept_commit or h.run.last_kept_commit,
        evaluator=_compact(evaluation, readings),
        updated_at=utc_now_iso(),
    )
    changes = run_changes.columns()
    changes.update(iteration=it.iteration, updated_at=utc_now_iso())
    if decision.run_status in TERMINAL_STATUSES:
        changes.update(
            status=decision.run_status,
            stop_reason=decision.stop_reason,
            completed_at=changes["updated_at"],
        )
    with h.journal.tx() as conn:
        if exists:
            iteration_records.update_iteration(conn, decided)
        else:
            iteration_records.insert_iteration(conn, decided)
        if readings:
            for role, commit, reading in readings:
                runs.insert_evaluation(conn, h.run_id, it.iteration, purpose, reading, role, commit)
        elif evaluation is not None:
            runs.insert_evaluation(conn, h.run_id, it.iteration, purpose, evaluation)
        registry.clear_children(conn, h.run_id)
        runs.update_run(conn, h.run_id, **changes)
    h.state.saw(replace(h.run, **changes))  # exactly what was written: no need to read it back
    failpoints.hit("step.after_decided")
    return decided


def _compact(
    evaluation: EvaluationRecord | None, readings: Sequence[Reading]
) -> StoredEvaluation | None:
    """The iteration's first evaluation, and a line per reading when there were several."""
    if evaluation is None:
        return None
    data = evaluation.compact()
    if len(readings) > 1:
        data["readings"] = [
            {"role": role, "commit": commit, "status": r.status, "score": r.score}
            for role, commit, r in readings
        ]
    return StoredEvaluation(data)


def apply_effect(
    h: RunContext,
    run: runs.RunRecord,
    it: IterationRecord,
    known_head: str | None = None,
    safety_checked: bool = False,
) -> IterationRecord:
    """Make the worktree agree with a decided iteration; idempotent.

    `known_head` and `safety_checked` spare git calls the caller has just made (a validated
    candidate is the run branch's checked-out HEAD).
    """
    if it.state != IterationState.DECIDED:
        return it
    kept = it.kept_commit or run.last_kept_commit
    notes = list(it.decision_notes)
    commit = it.candidate_commit
    if it.decision in REJECTS_CANDIDATE and commit and commit != kept:
        # status prints the discarded hash: keep it reachable (past `git gc`) until `clean`
        refs.keep_discarded(h.repo.repo_root, h.run_id, it.iteration, commit)
    if kept:
        # a judged candidate is recorded by its SHA (and the tree was checked clean); anything
        # else a session left is saved as a patch
        by_sha = it.decision in REJECTS_CANDIDATE or it.decision_reason == UNCHANGED
        if by_sha and not safety_checked:
            check_reset_safety(h.worktree, h.dirt, h.run_id)
        label = None if by_sha else it.decision or "reset"
        notes += restore_branch(h, run, it.iteration, label, kept, known_head=known_head)
    applied = replace(it, state=IterationState.APPLIED, decision_notes=notes)
    with h.journal.tx() as conn:
        iteration_records.update_iteration(conn, applied)
    failpoints.hit("step.after_applied")
    return applied


def branch_ref(h: RunContext) -> str:
    return f"refs/heads/{h.branch_name}"


_BEFORE_RESET = "apply.before_reset"  # the fault suite kills a decision's effect here


def restore_branch(
    h: RunContext,
    run: runs.RunRecord,
    iteration: int,
    label: str | None,
    target: str,
    known_head: str | None = None,
) -> list[str]:
    """Check the run's own branch out at `target` with a clean index and tracked files,
    whatever the session did to HEAD or refs.

    What lies past `target` (commits on any ref, edits, new files) is saved as a patch first,
    unless `label` is None (a discarded candidate, recorded by its SHA). Untracked files stay
    for the next session's clean-up. Idempotent; returns notes for the ledger.
    """
    check_sealed(h, run)
    on_branch = known_head is not None or git.head_branch(h.worktree) == branch_ref(h)
    head = known_head or git.head(h.worktree)
    dirty = head == target and dirty_tracked(h)
    if on_branch and head == target and not dirty:
        return []
    notes = []
    if label is None:  # recorded by its SHA: nothing to save
        failpoints.hit(_BEFORE_RESET)
        branch = None if on_branch else h.branch_name
        reset.reset_tree(h.worktree, target, h.dirt, branch=branch, clean=False)
    else:
        path, reset_to = h.paths.patch(iteration, label), target if on_branch else None
        notes.append(
            save_and_reset(h, run, path, target, reset_to, clean=False, failpoint=_BEFORE_RESET)
        )
    if not on_branch:
        notes.append(
            f"the session left HEAD off the run branch; {h.branch_name} was checked out "
            f"again at {target[:12]}"
        )
    return notes


def advance_run_branch(h: RunContext, record: runs.RunRecord) -> list[str]:
    """With lanes, a keep is a commit of a lane branch: the run branch (checked out in the run
    worktree, where no session works) follows it. Idempotent; edits someone made in the run
    worktree are saved as a patch first."""
    run = h.for_lane(0)  # the run's own worktree, whichever lane asks
    check_sealed(run, record)
    kept = record.last_kept_commit
    if not kept or not run.worktree.is_dir():
        return []
    head = git.head(run.worktree)
    if head == kept and git.head_branch(run.worktree) == branch_ref(run):
        return []
    notes = []
    # untracked files stay where they are, unsaved: no session's work
    if dirty_tracked(run):
        path = run.paths.patch(record.iteration, "run-worktree")
        notes.append(save_and_reset(run, record, path, head, at=kept, clean=False))
    else:
        reset.reset_tree(run.worktree, kept, run.dirt, branch=run.branch_name, clean=False)
    notes.append(f"run branch {run.branch_name} now at the kept commit {kept[:12]}")
    return notes


def check_sealed(h: RunContext, run: runs.RunRecord) -> None:
    """No git effect follows from a kept state (`run`'s, as this driver wrote it) that someone
    rewrote in the journal under the driver (journal/seals.py): the run stops with one line
    that names the restore."""
    h.journal.check_kept(h.run_id, run.last_kept_commit, run.baseline_commit)


def dirty_tracked(h: RunContext) -> bool:
    return any(not e.untracked for e in git.status(h.worktree))


def save_patch(h: RunContext, iteration: int, label: str, base: str) -> str:
    """Save everything in the worktree past `base` (commits, edits, staged and new files) as a
    patch; the note that says where (or that there was nothing to save)."""
    path = h.paths.patch(iteration, label)
    changed = reset.save_patch(h.worktree, base, h.dirt, path, keep_empty=False)
    return patch_note(changed, base, path)


def patch_note(changed: bool, base: str, path: Path) -> str:
    """The note of a save past `base` into `path`. Nothing changed: no empty patch is written
    and the note says so; a patch an earlier attempt wrote (a save repeated after a crash that
    came after the reset) is still named, never reported as nothing."""
    if changed or path.exists():
        return f"changes past {base[:12]} saved to {path}"
    return f"no changes past {base[:12]} to save"


def save_and_reset(
    h: RunContext,
    run: runs.RunRecord,
    path: Path,
    base: str,
    reset_to: str | None = None,
    *,
    at: str | None = None,
    clean: bool = True,
    once: bool = False,
    failpoint: str | None = None,
) -> str:
    """Save everything in the worktree past `base` into `path` (as `save_patch`), then reset
    sparing runtime dirt: to `reset_to` on whatever HEAD is on, or by default with the run's
    own branch checked out again at `at` (default `base`), wherever the session left HEAD.
    `clean`, `once` and `failpoint` are `reset.save_then_reset`'s. The note that says where
    it saved (`patch_note`); `run` as this driver wrote it, for the seal check."""
    check_sealed(h, run)
    branch = h.branch_name if reset_to is None else None
    target = reset_to or at or base
    changed = reset.save_then_reset(
        h.worktree,
        base,
        target,
        h.dirt,
        path,
        branch=branch,
        clean=clean,
        once=once,
        failpoint=failpoint,
    )
    return patch_note(changed, base, path)


def reap_stale_children(h: RunHandle) -> list[str]:
    """Stop process groups that a crashed driver of this run left running (`reap_strays`:
    the run's own, and any in its scratch trees).

    Done once per handle: while this process holds the driver lock, no other driver can leave
    children behind.
    """
    if h.state.reaped:
        return []
    h.state.reaped = True
    scratch = [children.run_tag(h.run_id, tree) for tree in scratch_trees(h.context)]
    return reap_strays(h.context, h.tag, *scratch) + heal_worktrees(h)


def heal_worktrees(h: RunHandle) -> list[str]:
    """Remove the half-built worktrees a kill inside `git worktree add` left (this run's, and
    those of runs no one drives: each breaks every `git fetch` of the repository), a note for
    each; an unfinished run's own worktree among them is checked out again on its branch at
    once. No git process unless one is found (worktree_repair.heal reads git's files)."""
    removed = worktree_repair.heal(h.repo, h.run_id)
    if not removed:
        return []
    known = runs.list_runs(h.journal)
    rebuilt = worktree_repair.check_out_again(h.repo, known, removed)
    notes = [worktree_repair.repaired_note(r) for r in removed]
    return notes + [worktree_repair.rebuilt_note(path) for path in rebuilt]


def reap_strays(h: RunContext, *tags: children.ChildTag) -> list[str]:
    """Stop the process groups a crashed driver left carrying `tags` (registered or not), then
    remove the locks of a git killed with it (`clear_stale_git_locks`); a note for each. A
    lanes driver reaps each lane with its lane's tag when it arms it."""
    notes = [_reaped_note(r) for tag in tags for r in children.reap(h.journal, tag)]
    return notes + clear_stale_git_locks(h)


def scratch_trees(h: RunContext) -> list[Path]:
    """The run's scratch checkouts (the incumbent's, the lanes' further readings' under
    `ahead/`, certify's): an evaluator in one carries that tree in its tag, not the run's
    worktree, and a lanes driver registers none of its children, so each tree's tag is
    reaped too. Else an evaluator a killed driver left running there goes on beside the
    next driver's readings: more evaluations at once than sandbox.md's `slots`."""
    folder = h.paths.scratch
    if not folder.is_dir():
        return []
    found = [p.parent for p in folder.glob("*/.git")] + [p.parent for p in folder.glob("*/*/.git")]
    return sorted(found)


def clear_stale_git_locks(h: RunContext) -> list[str]:
    """Remove the lock files a killed git left in the run's worktree or the shared refs (a
    whole-tree kill takes git down with the driver); none while any git process runs."""
    root = h.repo.repo_root
    ours = git.is_worktree_of(h.worktree, root)  # else only the shared refs are the run's
    return [
        f"removed the stale git lock {lock} (no git process was running)"
        for lock in git.clear_stale_locks(h.worktree if ours else root, own_dir=ours)
    ]


def _reaped_note(reaped: children.Reaped) -> str:
    if reaped.role is None:
        return f"stopped an unregistered process group ({reaped.pgid}) of this run"
    return f"stopped a stale {reaped.role} process group ({reaped.pgid}) left by a crashed driver"
