"""Pure decision functions: the table of supervisor.md §3, the baseline, validation failures.

Nothing here touches git, files or the journal; every row of the table is a test case.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from autoresearch.errors import ContractError
from autoresearch.noise import Action
from autoresearch.states import DEFAULT_PLATEAU as DEFAULT_PLATEAU  # the loop's, a session's too
from autoresearch.states import (
    REJECTS_CANDIDATE,
    ArtifactStatus,
    DecisionKind,
    Direction,
    EvalStatus,
    KeepPolicy,
    RunStatus,
    is_better,
)

STOPPED, FAILED = RunStatus.STOPPED, RunStatus.FAILED

# Decision reasons of the sequential test (trust.md; contract strings).
REASON_SIGNIFICANT = "score improved significantly over the incumbent"
REASON_NOT_BETTER = "score not significantly better than the incumbent"
REASON_UNDECIDED = "undecided within max_evals"
REASON_INCUMBENT_FAILED = "incumbent re-measurement failed"
REASON_HARNESS_CHANGED = "harness changed"
# trust.md's code for that refusal (`harness_changed`), noted as `harness_changed:<path>` the
# way an invalid artifact is noted `validation_error:<message>`: what a script matches on, the
# reason above being the words for people.
CODE_HARNESS_CHANGED = "harness_changed"
REASON_CHECKS_FAILED = "checks failed"
# A lane's candidate that cannot be replayed onto the incumbent another lane just moved.
REASON_REPLAY_CONFLICT = "replay conflict"
NOTE_REPLAY_CONFLICT = (
    "candidate discarded without evaluation because it conflicts with the commit another lane "
    "kept meanwhile"
)
# Novelty (issue 33): a candidate whose tree an earlier iteration's evaluator measured already.
REASON_DUPLICATE = "duplicate of iteration {iteration}"
NOTE_DUPLICATE = (
    "candidate discarded without evaluation because an earlier iteration measured the same tree"
)
NOTE_HARNESS_CHANGED = "candidate discarded without evaluation because it changed a sealed path"
NOTE_CHECKS_FAILED = "candidate discarded because its checks failed"
NOTE_SIGNIFICANT = "candidate kept because the sequential test accepted an improvement"
NOTE_NOT_BETTER = "candidate discarded because the sequential test rejected an improvement"
NOTE_UNDECIDED = "candidate discarded because max_evals was reached before the test decided"
NOTE_INCUMBENT_FAILED = (
    "candidate discarded because the kept commit's evaluation failed when it was re-measured"
)

# Loop limits (supervisor.md §9): trailing noops, and trailing failed sessions that produced
# nothing, before a run stops on its own.
DEFAULT_MAX_NOOPS = 3
DEFAULT_MAX_AGENT_FAILURES = 3

STOP_ABORT = "candidate abort"
STOP_OPERATOR = "operator stop"
STOP_INTERRUPTED_DIRTY = "interrupted dirty worktree requires operator intervention"


@dataclass(frozen=True)
class IterationLimit:
    """`--max-iterations` of resume/continue: `N` is the run's total, `+N` is N more."""

    count: int
    relative: bool = False

    @classmethod
    def parse(cls, text: str) -> IterationLimit:
        raw = text.strip()
        relative = raw.startswith("+")
        digits = raw[1:] if relative else raw
        if not digits.isdigit():
            raise ContractError(
                f"--max-iterations must be N (the run's total) or +N (N more): {text!r}"
            )
        return cls(int(digits), relative)

    def total(self, done: int) -> int:
        return done + self.count if self.relative else self.count


def stop_noop_limit(n: int) -> str:
    return f"repeated noop limit reached ({n})"


def stop_plateau(n: int) -> str:
    """The pinned stop reason of a plateau (spec search.md)."""
    return f"plateau (no significant improvement in {n} iterations)"


def stop_max_iterations(n: int) -> str:
    return f"max iterations reached ({n})"


def stop_agent_failures(n: int) -> str:
    return f"repeated agent failure limit reached ({n})"


BUDGETS = ("usd", "tokens", "hours")


def stop_budget(which: str) -> str:
    return f"budget exhausted ({which})"


@dataclass(frozen=True)
class Budget:
    """Spending limits over a run's sessions, all lanes together (None: no limit)."""

    usd: float | None = None
    tokens: int | None = None
    hours: float | None = None

    @property
    def limited(self) -> bool:
        return any(v is not None for v in (self.usd, self.tokens, self.hours))


@dataclass(frozen=True)
class Spend:
    """What a run has spent: agent cost and tokens as recorded, wall-clock hours."""

    usd: float = 0.0
    tokens: int = 0
    hours: float = 0.0


def budget_exhausted(budget: Budget, spend: Spend) -> str | None:
    """The stop reason of the first budget `spend` has reached, in BUDGETS order (pure)."""
    for which, limit, spent in (
        ("usd", budget.usd, spend.usd),
        ("tokens", budget.tokens, spend.tokens),
        ("hours", budget.hours, spend.hours),
    ):
        if limit is not None and spent >= limit:
            return stop_budget(which)
    return None


@dataclass(frozen=True)
class EvalSummary:
    """The part of an evaluation record a decision depends on."""

    status: EvalStatus
    passed: bool | None
    score: float | None


@dataclass(frozen=True)
class Decision:
    """One decision and what it implies for the run and the worktree.

    `keep` follows from the decision; `reset` (the tree goes back to the kept commit before
    the decision is recorded as applied) holds for every rejected candidate
    (states.REJECTS_CANDIDATE) and for a decision that asks for it, such as an unchanged
    candidate's noop.
    """

    decision: DecisionKind
    reason: str
    notes: tuple[str, ...] = ()
    keep: bool = False
    reset: bool = False
    run_status: RunStatus = RunStatus.RUNNING
    stop_reason: str | None = None

    def __post_init__(self) -> None:
        kind = DecisionKind(self.decision)
        object.__setattr__(self, "decision", kind)
        object.__setattr__(self, "keep", kind is DecisionKind.KEEP)
        object.__setattr__(self, "reset", self.reset or kind in REJECTS_CANDIDATE)

    @property
    def needs_git_effect(self) -> bool:
        """The git effect follows the journal write (supervisor/record.apply_effect).

        Every decision but a keep has one: whatever the session reported, it may have
        committed, moved or detached refs, and the run branch goes back to the kept commit. An
        interrupted session that left a dirty tree is the exception: the run fails and the tree
        is left to the operator as it is (§3).
        """
        if self.keep or self.decision == DecisionKind.BASELINE:
            return False
        return self.reason != STOP_INTERRUPTED_DIRTY


def decide(
    policy: KeepPolicy,
    direction: Direction,
    last_kept_score: float | None,
    artifact_status: ArtifactStatus,
    evaluation: EvalSummary | None,
    worktree_dirty: bool = False,
) -> Decision:
    """The decision table of §3."""
    if artifact_status == ArtifactStatus.ABORT:
        return Decision(
            DecisionKind.ABORT,
            "candidate requested abort",
            run_status=STOPPED,
            stop_reason=STOP_ABORT,
        )
    if artifact_status == ArtifactStatus.NOOP:
        return Decision(DecisionKind.NOOP, "candidate reported noop")
    if artifact_status == ArtifactStatus.INTERRUPTED:
        if worktree_dirty:
            return Decision(
                DecisionKind.ERROR,
                STOP_INTERRUPTED_DIRTY,
                run_status=FAILED,
                stop_reason=STOP_INTERRUPTED_DIRTY,
            )
        return Decision(DecisionKind.INTERRUPTED, "candidate session interrupted cleanly")
    if evaluation is None:
        raise ValueError("a candidate needs an evaluation")
    return _decide_candidate(policy, direction, last_kept_score, evaluation)


UNCHANGED_CANDIDATE = "candidate made no change"


def unchanged_candidate() -> Decision:
    """A candidate whose tree is its base's: nothing to evaluate (the tree is reset)."""
    return Decision(DecisionKind.NOOP, UNCHANGED_CANDIDATE, reset=True)


def _decide_candidate(
    policy: KeepPolicy,
    direction: Direction,
    last_kept_score: float | None,
    evaluation: EvalSummary,
) -> Decision:
    if evaluation.status == EvalStatus.ERROR:
        return _discard(
            "evaluator error", "candidate discarded because evaluator errored or crashed"
        )
    if not evaluation.passed:
        return _discard(
            "evaluator reported failure", "candidate discarded because evaluator pass=false"
        )
    if policy == KeepPolicy.PASS_ONLY:
        return Decision(
            DecisionKind.KEEP,
            "pass_only keep policy accepted evaluator pass=true",
            ("candidate kept because sandbox opted into pass_only policy",),
        )
    if evaluation.score is None or last_kept_score is None:
        return Decision(
            DecisionKind.AMBIGUOUS,
            "evaluator pass without comparable score",
            (
                "candidate discarded because score_improvement policy requires comparable "
                "numeric scores",
            ),
        )
    if is_better(direction, evaluation.score, last_kept_score):
        return Decision(
            DecisionKind.KEEP,
            "score improved over last kept score",
            ("candidate kept because evaluator score increased",),
        )
    return _discard(
        "score did not improve",
        "candidate discarded because evaluator score was not better than the kept baseline",
    )


def touched_sealed(changed: Iterable[str], sealed: Sequence[str]) -> str | None:
    """The first changed path that is, or lies under, a sealed path (None: harness intact)."""
    for path in sorted(changed):
        clean = path.rstrip("/")
        for root in sealed:
            if clean == root or clean.startswith(root + "/") or root.startswith(clean + "/"):
                return clean
    return None


def harness_changed(path: str) -> Decision:
    """A candidate that changed a sealed path: discarded, never evaluated (trust.md)."""
    return _discard(
        f"{REASON_HARNESS_CHANGED}: {path}",
        NOTE_HARNESS_CHANGED,
        (f"{CODE_HARNESS_CHANGED}:{path}",),
    )


def duplicate_of(iteration: int) -> Decision:
    """A candidate whose tree iteration `iteration` measured: discarded, never evaluated (the
    earlier outcome stands; measuring it again would only spend the evaluator)."""
    return _discard(REASON_DUPLICATE.format(iteration=iteration), NOTE_DUPLICATE)


def replay_conflict(onto: str, detail: str) -> Decision:
    """A lane's candidate whose commits do not apply onto the new incumbent: discarded, never
    evaluated (what it was built on no longer is the run's)."""
    note = f"replaying onto {onto[:12]} failed: {detail}"
    return _discard(REASON_REPLAY_CONFLICT, NOTE_REPLAY_CONFLICT, (note,))


def checks_failed(detail: str, log: str) -> Decision:
    """A candidate the evaluation would keep but whose checks failed: never kept."""
    return _discard(REASON_CHECKS_FAILED, NOTE_CHECKS_FAILED, (f"checks {detail}; log: {log}",))


def sequential_decision(
    action: Action,
    notes: tuple[str, ...],
    failed: EvalSummary | None = None,
    on_incumbent: bool = False,
) -> Decision:
    """The decision the sequential test (noise.next_action) reached, or the one a failed
    reading forces: a candidate whose later reading errs or fails is discarded as if its
    first had; a failed re-measurement of the incumbent leaves nothing to compare with."""
    if failed is not None and on_incumbent:
        return _discard(REASON_INCUMBENT_FAILED, NOTE_INCUMBENT_FAILED, notes)
    if failed is not None:
        first = _decide_candidate(KeepPolicy.SCORE_IMPROVEMENT, Direction.HIGHER, 0.0, failed)
        return Decision(first.decision, first.reason, (*first.notes, *notes))
    if action is Action.KEEP:
        return Decision(DecisionKind.KEEP, REASON_SIGNIFICANT, (NOTE_SIGNIFICANT, *notes))
    if action is Action.UNDECIDED:
        return _discard(REASON_UNDECIDED, NOTE_UNDECIDED, notes)
    if action is Action.DISCARD:
        return _discard(REASON_NOT_BETTER, NOTE_NOT_BETTER, notes)
    raise ValueError(f"not a final action: {action}")


def _discard(reason: str, note: str, notes: tuple[str, ...] = ()) -> Decision:
    return Decision(DecisionKind.DISCARD, reason, (note, *notes))


def kept_score_after(
    decision: Decision, evaluation: EvalSummary | None, last_kept_score: float | None
) -> float | None:
    """last_kept_score after a decision: a keep with a numeric score replaces it."""
    if decision.keep and evaluation is not None and evaluation.score is not None:
        return evaluation.score
    return last_kept_score


def validation_failure(message: str, fails_run: bool = True) -> Decision:
    """An invalid artifact fails the run; the message is the stop reason (§4). One the run
    survives (`fails_run` False: a malformed artifact under `run`, a failed session) is the
    same `error` row and note with the run still running."""
    if not fails_run:
        return Decision(DecisionKind.ERROR, message, (f"validation_error:{message}",))
    return Decision(
        DecisionKind.ERROR,
        message,
        (f"validation_error:{message}",),
        run_status=FAILED,
        stop_reason=message,
    )


def baseline_decision(evaluation: EvalSummary) -> tuple[Decision, float | None]:
    """Ledger entry 0 and the first last_kept_score (§3 Baseline)."""
    if evaluation.status == EvalStatus.ERROR:
        return Decision(DecisionKind.ERROR, "baseline evaluator error"), None
    score = evaluation.score if evaluation.passed else None
    return Decision(DecisionKind.BASELINE, "baseline established"), score


def previous_outcome(decision: DecisionKind | None, reason: str | None) -> str:
    """`<decision>:<reason>` for the instructions snapshot, or `none yet`."""
    if decision is None:
        return "none yet"
    return f"{decision}:{reason or ''}"
