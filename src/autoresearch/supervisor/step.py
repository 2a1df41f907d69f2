"""step: process the candidate artifact once – validate, evaluate, decide, apply, record.

One call records exactly one iteration (or repairs an interrupted one first). The artifact is
replaced by the placeholder afterwards, so the same artifact is never processed twice.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from autoresearch import failpoints, git, policies
from autoresearch.contracts import candidate as cand
from autoresearch.contracts.candidate import ArtifactError, ArtifactShapeError, CandidateArtifact
from autoresearch.contracts.json_input import load_json
from autoresearch.decide import (
    Decision,
    decide,
    duplicate_of,
    harness_changed,
    touched_sealed,
    unchanged_candidate,
    validation_failure,
)
from autoresearch.errors import RefusedError
from autoresearch.evaluate import EvaluationRecord
from autoresearch.journal import iteration_records, runs
from autoresearch.journal.iteration_records import IterationRecord
from autoresearch.jsonshape import json_field, json_shape
from autoresearch.noise import Interval
from autoresearch.states import ArtifactStatus, DecisionKind, IterationKind, Phase, RunStatus
from autoresearch.supervisor import estimates, measure, record, screen, sync
from autoresearch.supervisor.finalize import honour_stop_request
from autoresearch.supervisor.handle import RunContext, RunHandle
from autoresearch.supervisor.recovery import recover
from autoresearch.supervisor.safety import dirty_entries, reset_error
from autoresearch.supervisor.step_input import FRESH, StepInput

VALIDATION_DESCRIPTION = "candidate validation failed"


@dataclass(frozen=True)
class StepResult:
    """What one step recorded (the `step --json` object)."""

    run_id: str
    iteration: int
    decision: DecisionKind
    decision_reason: str
    keep: bool
    notes: list[str]
    evaluator: EvaluationRecord | None
    run_status: RunStatus
    stop_reason: str | None
    last_kept_commit: str | None
    last_kept_score: float | None
    description: str = ""
    candidate_commit: str | None = None
    repaired: list[str] = field(default_factory=list)
    # the measured commit's estimate as of this decision, and the kept commit's (estimates)
    estimate: Interval | None = None
    last_kept_interval: Interval | None = None
    # the message of a malformed artifact the run survived (a failed session: `step`'s
    # `shape_fails_run` False), which the loop counts toward its failure limit; not in the JSON
    invalid_artifact: str | None = field(default=None, metadata=json_field(hidden=True))

    def to_dict(self) -> dict[str, object]:
        return json_shape(self)


# a decision that measured nothing changes none of the run's kept state
KEEPS_RUN = record.RunChanges()


def way_on_after_end(run_id: str, status: RunStatus) -> str:
    """What a user does with a run that ended: a failed one is looked at and replaced, a
    completed or stopped one can be continued (step's and resume's refusals alike)."""
    if status == RunStatus.FAILED:
        return f"see what happened (autoresearch status {run_id}) and start a new run"
    return f"to give it more iterations: autoresearch continue {run_id} --max-iterations +N"


def msg_terminal(run_id: str, status: RunStatus) -> str:
    # the code first (scripts match on it), then the way on, as every refusal gives one
    code = f"autoresearch_run_terminal:{run_id}:{status}"
    ended = "failed" if status == RunStatus.FAILED else f"is {status}"
    way_on = way_on_after_end(run_id, status)
    return f"{code} – the run {ended} and is not processed again; {way_on}"


def refuse_unwritten(h: RunContext) -> None:
    """`autoresearch step` by hand on the placeholder (no session wrote an artifact since the
    last step) is a mistake, not a noop: refused, unless an iteration waits for its repair.
    The loop's own step on the placeholder stays a noop (a session that wrote nothing)."""
    if sync.read_artifact(h.paths.candidate).from_session:
        return
    if iteration_records.unfinished_iterations(h.journal, h.run_id):
        return
    raise RefusedError(
        f"no session has written {h.paths.candidate} since the last step (it is still the "
        "placeholder): run the agent session first, or write the artifact yourself "
        '(`"status": "noop"` records a noop)'
    )


def step(
    h: RunHandle,
    given: StepInput = FRESH,
    should_cancel: Callable[[], bool] | None = None,
    shape_fails_run: bool = True,
) -> StepResult:
    """Process candidate.json once for a running, prepared run.

    `given`: the session's notes and record, and what was settled before the iteration was
    numbered (a lane's reading of the candidate, a decision forced without evaluation).
    `shape_fails_run` False (the driver of `run`): a malformed artifact is a failed session,
    recorded as §4 says with the run left running; one that disagrees with git still fails it."""
    first, forced = given.reading, given.forced
    if h.run.status != RunStatus.RUNNING:
        raise RefusedError(msg_terminal(h.run_id, h.run.status))
    if h.run.phase != Phase.READY:
        raise RefusedError(
            f"run {h.run_id} is still being prepared; `autoresearch resume {h.run_id}` finishes it"
        )
    repaired = recover(h)
    if h.run.status != RunStatus.RUNNING:
        raise RefusedError(msg_terminal(h.run_id, h.run.status))
    read = sync.read_artifact(h.paths.candidate)
    raw, sha = read.raw, read.sha256
    base: dict[str, Any] = {
        "iteration": h.run.iteration + 1,
        "artifact_sha256": sha,
        "decision_notes": list(given.notes),
        "agent": given.agent,
    }
    try:
        if read.refused is not None:
            raise ArtifactShapeError(read.refused)
        facts = None
        if forced is not None:  # judged without its commits: only the schema is checked
            artifact = cand.parse_artifact((raw or b"").decode("utf-8", "replace"))
        else:
            artifact, facts = _validate(h.context, h.run.last_kept_commit or "", raw)
    except ArtifactError as exc:
        survived = not shape_fails_run and isinstance(exc, ArtifactShapeError)
        it = _invalid_iteration(h.context, raw, base)
        failure = validation_failure(str(exc), fails_run=not survived)
        result = _record(h, it, failure, None, KEEPS_RUN, sha)
        result = replace(result, invalid_artifact=str(exc) if survived else None)
    else:
        it = record.new_iteration(
            h.context,
            base["iteration"],
            IterationKind.ITERATION,
            candidate_status=artifact.status,
            base_commit=artifact.base_commit,
            candidate_commit=artifact.candidate_commit,
            description=artifact.description,
            artifact_notes=list(artifact.notes),
            artifact_sha256=sha,
            decision_notes=base["decision_notes"],
            agent=given.agent,
        )
        if forced is not None:
            checked = _refuse_unsafe_reset(h.context, it)
            result = _record(h, it, forced, None, KEEPS_RUN, sha, safety_checked=checked)
        else:
            result = _process(h, it, artifact, sha, should_cancel, first, facts)
    return replace(result, repaired=repaired)


def _validate(
    h: RunContext, kept: str, raw: bytes | None
) -> tuple[CandidateArtifact, git.CandidateFacts]:
    """Schema checks, then the git integrity checks of §4, in the contract's order; the facts
    one git process gave for them (with the trees `unmeasured_decision` needs next)."""
    if raw is None:
        raise ArtifactShapeError(cand.MSG_MISSING.format(path=h.paths.candidate))
    artifact = cand.parse_artifact(raw.decode("utf-8", "replace"))
    facts = git.candidate_facts(
        h.worktree, artifact.base_commit, artifact.candidate_commit or "", kept
    )
    base_sha, commit_sha, head_sha = facts.base, facts.commit, facts.head
    if base_sha is None:
        raise ArtifactError(cand.MSG_BASE_UNRESOLVED.format(raw=artifact.base_commit))
    if base_sha != kept:
        raise ArtifactError(cand.MSG_BASE_MISMATCH.format(sha=base_sha, kept=kept))
    if artifact.status != ArtifactStatus.CANDIDATE:
        return artifact, facts
    if artifact.candidate_commit is None:
        raise ArtifactShapeError(cand.MSG_COMMIT_REQUIRED)
    if commit_sha is None:
        raise ArtifactError(cand.MSG_COMMIT_UNRESOLVED.format(raw=artifact.candidate_commit))
    if commit_sha != head_sha:
        raise ArtifactError(cand.MSG_COMMIT_NOT_HEAD.format(sha=commit_sha, head=head_sha))
    if git.head_branch(h.worktree) != record.branch_ref(h):
        branch = h.branch_name
        raise ArtifactError(cand.MSG_COMMIT_OFF_BRANCH.format(sha=commit_sha, branch=branch))
    if not git.descends_from(h.worktree, kept, facts):
        raise ArtifactError(cand.MSG_COMMIT_NOT_DESCENDANT.format(sha=commit_sha, kept=kept))
    checked = CandidateArtifact(
        artifact.status,
        commit_sha,
        artifact.base_commit,
        artifact.description,
        artifact.notes,
        artifact.created_at,
    )
    return checked, facts


def _invalid_iteration(h: RunContext, raw: bytes | None, base: dict[str, Any]) -> IterationRecord:
    """Best-effort fields of an artifact that failed validation, for the ledger."""
    data: dict[str, Any] = {}
    if raw is not None:
        try:
            loaded = load_json(raw)
            data = loaded if isinstance(loaded, dict) else {}
        except ValueError:
            data = {}

    def text(key: str) -> str | None:
        value = data.get(key)
        return _clip(value) if isinstance(value, str) else None

    notes = data.get("notes")
    notes = [_clip(n) for n in notes[:20] if isinstance(n, str)] if isinstance(notes, list) else []
    return record.new_iteration(
        h,
        base["iteration"],
        IterationKind.ITERATION,
        candidate_status=text("status"),
        base_commit=text("base_commit"),
        candidate_commit=text("candidate_commit"),
        description=text("description") or VALIDATION_DESCRIPTION,
        artifact_notes=notes,
        artifact_sha256=base["artifact_sha256"],
        decision_notes=base["decision_notes"],
        agent=base["agent"],
    )


def _clip(text: str, limit: int = 200) -> str:
    """A field of an invalid artifact, kept short: the artifact is untrusted, the ledger is not."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _process(
    h: RunHandle,
    it: IterationRecord,
    artifact: CandidateArtifact,
    sha: str | None,
    should_cancel: Callable[[], bool] | None,
    first: EvaluationRecord | None = None,
    facts: git.CandidateFacts | None = None,
) -> StepResult:
    run = h.run
    spec = h.evaluator
    if artifact.status != ArtifactStatus.CANDIDATE:
        dirty = artifact.status == ArtifactStatus.INTERRUPTED and bool(
            dirty_entries(h.worktree, h.dirt)
        )
        decision = decide(
            run.keep_policy, spec.direction, run.last_kept_score, artifact.status, None, dirty
        )
        return _record(h, it, decision, None, KEEPS_RUN, sha)
    commit = str(artifact.candidate_commit)  # validated: a candidate names its commit
    found = unmeasured_decision(h.context, run.last_kept_commit or "", commit, facts)
    it = replace(it, candidate_tree=found.tree)
    if found.decision is not None:
        checked = _refuse_unsafe_reset(h.context, it)
        # the validated candidate is the worktree HEAD: the reset needs not ask git for it
        return _record(h, it, found.decision, None, KEEPS_RUN, sha, head=commit,
                       safety_checked=checked)  # fmt: skip
    return _measured(h, it, commit, sha, should_cancel, first)


@dataclass(frozen=True)
class Unmeasured:
    """What step decides of a candidate commit before any evaluation, and its tree."""

    tree: str | None  # None: the commit is the kept one, or does not resolve
    decision: Decision | None  # None: the candidate is to be measured


def unmeasured_decision(
    h: RunContext, kept: str, commit: str, facts: git.CandidateFacts | None = None
) -> Unmeasured:
    """The decisions taken before any evaluation, in order: a candidate that changed nothing,
    one whose tree an earlier iteration measured (novelty), one that touched a sealed path.
    The trees come from validation's `facts`, else from one git call. A lane asks this before
    it spends a reading (step decides the same again when it judges). `kept`: the run's kept
    commit, the candidate's parent."""
    tree, kept_tree = _trees(h, commit, kept, facts)
    if commit == kept or (tree is not None and tree == kept_tree):
        return Unmeasured(tree, unchanged_candidate())
    earlier = _measured_before(h, tree, {commit: tree, kept: kept_tree})
    if earlier is not None:
        return Unmeasured(tree, duplicate_of(earlier))
    touched = h.sealed and touched_sealed(git.changed_paths(h.worktree, kept), h.sealed)
    return Unmeasured(tree, harness_changed(touched) if touched else None)


def _trees(
    h: RunContext, commit: str, kept: str, facts: git.CandidateFacts | None
) -> tuple[str | None, str | None]:
    """The trees of the candidate and of the kept commit (None, None: they are one commit)."""
    if commit == kept:
        return None, None
    if facts is not None and facts.commit == commit:
        return facts.tree, facts.kept_tree
    tree, kept_tree = git.trees(h.worktree, [commit, kept])
    return tree, kept_tree


# How many older iterations' trees one git process looks up (a run recorded before the
# journal kept trees is filled in once, a batch at a time).
TREE_BATCH = 1000


def _measured_before(h: RunContext, tree: str | None, known: dict[str, str | None]) -> int | None:
    """The earliest iteration whose evaluator measured `tree` (novelty: measuring it again
    would spend the evaluator on an outcome already recorded), or None."""
    if not tree:
        return None
    _fill_unknown_trees(h, known)
    return runs.first_measured_tree(h.journal, h.run_id, tree)


def _fill_unknown_trees(h: RunContext, known: dict[str, str | None]) -> None:
    """Record the trees of measured iterations the journal lacks: a baseline (usually the
    kept commit, whose tree `known` holds: no git) and rows older than the column."""
    while missing := runs.measured_without_tree(h.journal, h.run_id, TREE_BATCH):
        ask = sorted({commit for _, commit in missing if not known.get(commit)})
        looked = dict(zip(ask, git.trees(h.worktree, ask), strict=True))
        found = {i: known.get(c) or looked.get(c) or "" for i, c in missing}
        with h.journal.tx() as conn:
            runs.set_trees(conn, h.run_id, found)


def _measured(
    h: RunHandle,
    it: IterationRecord,
    commit: str,
    sha: str | None,
    should_cancel: Callable[[], bool] | None,
    first: EvaluationRecord | None,
) -> StepResult:
    """A candidate judged by the run's keep policy: the readings and checks it asks for are
    taken (supervisor/measure.judge), then recorded with its decision in one transaction."""
    rule = policies.policy(h.run.keep_policy)  # a plugin that fails to load records nothing
    record.start_evaluation(h.context, it)
    changes = record.RunChanges(latest_candidate_commit=commit)
    screened = screen.screen(h, it.iteration, commit, first, should_cancel)
    if screened.discard is not None:  # checks or screen: no full evaluation
        checked = _refuse_unsafe_reset(h.context, it)
        return _record(h, it, screened.discard, None, changes, sha, exists=True, head=commit,
                       safety_checked=checked)  # fmt: skip
    judged = measure.judge(h, rule, it.iteration, commit, first, should_cancel, screened.checks)
    decision = judged.final.decision
    if screened.note:
        decision = replace(decision, notes=(*decision.notes, screened.note))
    if judged.final.rescore:
        changes = changes.scored(judged.final.kept_score)
    checked = decision.reset and _refuse_unsafe_reset(h.context, it)
    if decision.keep:
        changes = replace(changes, last_kept_commit=commit)
    # the validated candidate is the worktree HEAD: the reset needs not ask git for it
    return _record(
        h, it, decision, judged.evaluation, changes, sha, exists=True,
        head=commit, safety_checked=checked, readings=judged.readings,
    )  # fmt: skip


def _refuse_unsafe_reset(h: RunContext, it: IterationRecord) -> bool:
    """Check reset safety before the decision is committed, so that a refusal records nothing:
    the evaluation is rolled back and the artifact stays for the next step or resume.
    True when the check passed (the reset needs not repeat it)."""
    blocking = dirty_entries(h.worktree, h.dirt)
    if not blocking:
        return True
    with h.journal.tx() as conn:
        iteration_records.delete_iteration(conn, h.run_id, it.iteration)
    raise reset_error(h.worktree, blocking, h.run_id)


def _record(
    h: RunHandle,
    it: IterationRecord,
    decision: Decision,
    evaluation: EvaluationRecord | None,
    changes: record.RunChanges,
    sha: str | None,
    exists: bool = False,
    head: str | None = None,
    safety_checked: bool = False,
    readings: list[record.Reading] | None = None,
) -> StepResult:
    decided = record.commit_decision(
        h, it, decision, evaluation, changes, exists, readings=readings or ()
    )
    applied = record.apply_effect(
        h.context, h.run, decided, known_head=head, safety_checked=safety_checked
    )
    sync.sync_after_iteration(h, applied, evaluation, sha)
    # a safe point: the iteration is recorded, applied and in the views
    h.journal.backup(throttled=True)
    failpoints.hit("step.after_views")
    honour_stop_request(h)
    run = h.run
    found = estimates.RunReadings.load(h.journal, run)
    return StepResult(
        run_id=run.run_id,
        iteration=applied.iteration,
        decision=decision.decision,
        decision_reason=decision.reason,
        keep=decision.keep,
        notes=[*applied.artifact_notes, *applied.decision_notes],
        evaluator=evaluation,
        run_status=run.status,
        stop_reason=run.stop_reason,
        last_kept_commit=run.last_kept_commit,
        last_kept_score=run.last_kept_score,
        description=applied.description,
        candidate_commit=applied.candidate_commit,
        estimate=found.estimate(estimates.own_commit(applied)),
        last_kept_interval=found.estimate(run.last_kept_commit),
    )
