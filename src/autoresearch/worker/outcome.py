"""The verdict `outcome.v1` (worker.md): a pure function from a job's facts to its status.

The order of the rules is the contract: deadline → running → cancelled → read-only job that
changed files → scope violation → a stage without complete evidence (`needs_evidence`, the later
stages never ran) → executor failed → check failed → semantic reviewer says no
(`semantic_gate: required`) → missing evidence (a required gate's verdict too) → accepted (with
`semantic_warning` when a `warn` gate did not pass; with `reliability_gates_missing` when
`blocking_policy: warn` and the request lacks gates its tier asks for). The first rule that
matches decides the status; the missing-evidence rule lists every piece that is missing. A
modifying job is accepted only with a scope and at least one passing check. Nothing here reads
a clock, a file or the journal.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import NotRequired, TypedDict, cast

from autoresearch.contracts.job import BlockingPolicy, ReliabilityTier, SemanticGate
from autoresearch.contracts.job_result import CheckResult, Executor, SemanticStatus
from autoresearch.jsonshape import json_field, json_shape
from autoresearch.states import JobState, TaskKind

__all__ = [  # the executor's and a check's results are the job's records' (contracts/)
    "CONTRACT_VERSION",
    "CheckResult",
    "Executor",
    "Facts",
    "Outcome",
    "Reason",
    "Status",
    "Verdict",
    "resolve",
]

CONTRACT_VERSION = "outcome.v1"


class Status(StrEnum):
    RUNNING = "running"
    ACCEPTED = "accepted"
    NEEDS_EVIDENCE = "needs_evidence"
    FAILED = "failed"
    REJECTED = "rejected"
    CANCELLED = "cancelled"
    TIMED_OUT = "timed_out"

    @property
    def retryable(self) -> bool:
        return self in (Status.NEEDS_EVIDENCE, Status.FAILED, Status.TIMED_OUT)


class Reason(StrEnum):
    # The spec's codes (exact strings).
    READ_ONLY_MODIFIED = "read_only_modified"
    SCOPE_VIOLATION = "scope_violation"
    EXECUTOR_FAILED = "executor_failed"
    CHECK_FAILED = "check_failed"
    VERIFICATION_POLICY_MISSING = "verification_policy_missing"
    EXPECTED_CHANGE_MISSING = "expected_change_missing"
    CHECKS_MISSING = "checks_missing"
    SCOPE_MISSING = "scope_missing"
    EVIDENCE_TRUNCATED = "evidence_truncated"
    PREEXISTING_CHANGES_UNATTRIBUTED = "preexisting_changes_unattributed"
    WORKSPACE_EVIDENCE_INCOMPLETE = "workspace_evidence_incomplete"
    VERIFICATION_PASSED = "verification_passed"
    # semantic_gate (part 3): the reviewer's no, its missing verdict, a warn gate's doubt
    SEMANTIC_FAILED = "semantic_failed"
    SEMANTIC_EVIDENCE_MISSING = "semantic_evidence_missing"
    SEMANTIC_WARNING = "semantic_warning"
    # stages: an earlier stage ended without complete evidence, so the later ones never ran
    STAGE_EVIDENCE_INCOMPLETE = "stage_evidence_incomplete"
    # blocking_policy warn: the request lacks gates its reliability_tier asks for
    RELIABILITY_GATES_MISSING = "reliability_gates_missing"
    # The states the spec names without a code.
    DEADLINE_EXCEEDED = "deadline_exceeded"
    JOB_QUEUED = "job_queued"
    JOB_RUNNING = "job_running"
    JOB_CANCELLED = "job_cancelled"


@dataclass(frozen=True)
class Reliability:
    """The job's reliability_tier, its blocking_policy and the gates of its tier the request
    lacks (`worker/reliability.missing_gates`)."""

    tier: ReliabilityTier = ReliabilityTier.STANDARD
    policy: BlockingPolicy = field(
        default=BlockingPolicy.OBSERVE, metadata=json_field(key="blocking_policy")
    )
    missing: tuple[str, ...] = ()

    @property
    def declared(self) -> bool:
        """Whether the caller chose a tier or policy (a default job's verdict stays as it was)."""
        return self != Reliability(missing=self.missing)

    def to_dict(self) -> ReliabilityJson:
        return cast(ReliabilityJson, json_shape(self))


DEFAULT_RELIABILITY = Reliability()


class ReliabilityJson(TypedDict):
    tier: str
    blocking_policy: str
    missing: list[str]


class PolicyJson(TypedDict):
    """The verdict's `policy`: what the job's task kind asked of it."""

    task_kind: str | None
    requires_scope: bool
    requires_checks: bool
    checks_declared: int
    stages_declared: NotRequired[int]  # a staged job only
    reliability: NotRequired[ReliabilityJson]  # a declared tier or policy only


@dataclass(frozen=True)
class Facts:
    """Everything the verdict depends on, gathered by the engine."""

    state: JobState
    deadline_passed: bool = False
    task_kind: TaskKind | None = None
    executor: Executor = Executor.PENDING
    changed_files: int = 0  # files the job changed (pre-existing changes excluded)
    out_of_scope: int = 0  # of those, outside the scope or the allowed dirs
    diff_too_large: bool = False
    scope_declared: bool = False
    checks: tuple[CheckResult, ...] = ()
    checks_declared: int = 0
    evidence_truncated: bool = False
    preexisting_unattributed: bool = False
    workspace_complete: bool = True
    semantic_gate: SemanticGate = SemanticGate.OFF
    semantic: SemanticStatus | None = None  # None: the reviewer did not run
    stages_declared: int = 0
    stages_complete: int = 0  # the stages that ran, in order, each with complete evidence
    reliability: Reliability = DEFAULT_RELIABILITY


@dataclass(frozen=True)
class Outcome:
    """The verdict on a job (`outcome.v1`'s `outcome`) and the evidence it was reached on: none
    as `resolve` gives it, a job view's compact evidence once the view attaches it (`on`)."""

    status: Status
    reason_codes: tuple[Reason, ...]
    # a field (derived from the status) so that the contract's JSON has it where it stands
    retryable: bool = field(init=False)
    policy: PolicyJson
    verification: dict[str, str]
    evidence: Mapping[str, object] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "retryable", self.status.retryable)

    def to_dict(self) -> dict[str, object]:
        return json_shape(self)

    def on(self, evidence: Mapping[str, object]) -> Verdict:
        """The contract's answer: this verdict with the evidence it was reached on."""
        return Verdict(replace(self, evidence=evidence))


@dataclass(frozen=True)
class Verdict:
    """`outcome.v1` as a job's answer carries it: the contract's version, then the outcome."""

    contract_version: str = field(default=CONTRACT_VERSION, init=False)
    outcome: Outcome

    def to_dict(self) -> dict[str, object]:
        return json_shape(self)


def resolve(facts: Facts) -> Outcome:
    """The verdict on a job, by the contract's ordered rules."""
    status, reasons = _rule(facts)
    r = facts.reliability
    if status is Status.ACCEPTED and r.missing and r.policy is BlockingPolicy.WARN:
        reasons = (*reasons, Reason.RELIABILITY_GATES_MISSING)
    return Outcome(status, reasons, _policy(facts), _verification(facts))


def _rule(f: Facts) -> tuple[Status, tuple[Reason, ...]]:
    if f.deadline_passed or f.state is JobState.TIMED_OUT:
        return Status.TIMED_OUT, (Reason.DEADLINE_EXCEEDED,)
    if f.state is JobState.QUEUED:
        return Status.RUNNING, (Reason.JOB_QUEUED,)
    if not f.state.terminal:
        return Status.RUNNING, (Reason.JOB_RUNNING,)
    if f.state is JobState.CANCELLED:
        return Status.CANCELLED, (Reason.JOB_CANCELLED,)
    if f.task_kind is TaskKind.READ_ONLY and f.changed_files > 0:
        return Status.REJECTED, (Reason.READ_ONLY_MODIFIED,)
    if f.out_of_scope > 0 or f.diff_too_large:
        return Status.REJECTED, (Reason.SCOPE_VIOLATION,)
    if f.stages_complete < f.stages_declared:
        return Status.NEEDS_EVIDENCE, (Reason.STAGE_EVIDENCE_INCOMPLETE,)
    if f.executor is not Executor.PASSED:
        return Status.FAILED, (Reason.EXECUTOR_FAILED,)
    if any(c.bad for c in f.checks):
        return Status.FAILED, (Reason.CHECK_FAILED,)
    required = f.semantic_gate is SemanticGate.REQUIRED
    if required and f.semantic is SemanticStatus.FAILED:
        return Status.FAILED, (Reason.SEMANTIC_FAILED,)
    missing = _missing(f)
    if missing:
        return Status.NEEDS_EVIDENCE, missing
    if f.semantic_gate is SemanticGate.WARN and f.semantic is not SemanticStatus.PASSED:
        return Status.ACCEPTED, (Reason.VERIFICATION_PASSED, Reason.SEMANTIC_WARNING)
    return Status.ACCEPTED, (Reason.VERIFICATION_PASSED,)


def _missing(f: Facts) -> tuple[Reason, ...]:
    found: list[Reason] = []
    if f.task_kind is None:
        found.append(Reason.VERIFICATION_POLICY_MISSING)
    elif f.task_kind is TaskKind.MODIFYING:
        if f.changed_files == 0:
            found.append(Reason.EXPECTED_CHANGE_MISSING)
        if not any(c is CheckResult.PASSED for c in f.checks):
            found.append(Reason.CHECKS_MISSING)
        if not f.scope_declared:
            found.append(Reason.SCOPE_MISSING)
    if f.evidence_truncated:
        found.append(Reason.EVIDENCE_TRUNCATED)
    if f.preexisting_unattributed:
        found.append(Reason.PREEXISTING_CHANGES_UNATTRIBUTED)
    if not f.workspace_complete:
        found.append(Reason.WORKSPACE_EVIDENCE_INCOMPLETE)
    if f.semantic_gate is SemanticGate.REQUIRED and f.semantic is not SemanticStatus.PASSED:
        found.append(Reason.SEMANTIC_EVIDENCE_MISSING)
    return tuple(found)


def _policy(f: Facts) -> PolicyJson:
    modifying = f.task_kind is TaskKind.MODIFYING
    found: PolicyJson = {
        "task_kind": None if f.task_kind is None else f.task_kind.value,
        "requires_scope": modifying,
        "requires_checks": modifying,
        "checks_declared": f.checks_declared,
    }
    if f.stages_declared:
        found["stages_declared"] = f.stages_declared
    if f.reliability.declared:
        found["reliability"] = f.reliability.to_dict()
    return found


def _verification(f: Facts) -> dict[str, str]:
    found = {
        "executor": f.executor.value,
        "scope": _scope_state(f),
        "checks": _checks_state(f),
        "workspace": "complete" if f.workspace_complete else "incomplete",
    }
    if f.semantic_gate is not SemanticGate.OFF:
        found["semantic"] = _semantic_state(f)
    return found


def _semantic_state(f: Facts) -> str:
    if f.semantic is not None:
        return f.semantic.value
    return "pending" if not f.state.terminal else "not_run"


def _scope_state(f: Facts) -> str:
    if not f.state.terminal:
        return "pending"
    if f.out_of_scope > 0 or f.diff_too_large:
        return "failed"
    if not f.scope_declared:
        return "missing" if f.task_kind is TaskKind.MODIFYING else "not_declared"
    return "passed"


def _checks_state(f: Facts) -> str:
    if any(c.bad for c in f.checks):
        return "failed"
    if not f.state.terminal:
        return "pending"
    if not f.checks:
        return "missing" if f.checks_declared == 0 else "skipped"
    if all(c is CheckResult.PASSED for c in f.checks):
        return "passed"
    return "skipped"
