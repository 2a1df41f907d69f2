"""The outcome.v1 verdict: one row per rule, in the contract's order, and rules that compete."""

from __future__ import annotations

from dataclasses import replace

import pytest

from autoresearch.states import JobState
from autoresearch.worker.model import TaskKind
from autoresearch.worker.outcome import CheckResult, Executor, Facts, Status, resolve

P, F, T, S = CheckResult.PASSED, CheckResult.FAILED, CheckResult.TIMED_OUT, CheckResult.SKIPPED
# A modifying job that did everything right: the base every row below changes.
GOOD = Facts(
    state=JobState.COMPLETED,
    task_kind=TaskKind.MODIFYING,
    executor=Executor.PASSED,
    changed_files=2,
    scope_declared=True,
    checks=(P,),
    checks_declared=1,
)
RO = replace(GOOD, task_kind=TaskKind.READ_ONLY, changed_files=0, scope_declared=False)

CASES: list[tuple[str, Facts, str, list[str]]] = [
    ("accepted modifying", GOOD, "accepted", ["verification_passed"]),
    ("accepted read-only", RO, "accepted", ["verification_passed"]),
    (
        "read-only without checks",
        replace(RO, checks=(), checks_declared=0),
        "accepted",
        ["verification_passed"],
    ),
    # 1. the deadline wins over everything, even a live state
    (
        "deadline while running",
        replace(GOOD, state=JobState.RUNNING, deadline_passed=True),
        "timed_out",
        ["deadline_exceeded"],
    ),
    (
        "timed out state",
        replace(GOOD, state=JobState.TIMED_OUT, out_of_scope=1),
        "timed_out",
        ["deadline_exceeded"],
    ),
    # 2. still running
    (
        "queued",
        replace(GOOD, state=JobState.QUEUED, executor=Executor.PENDING),
        "running",
        ["job_queued"],
    ),
    ("running", replace(GOOD, state=JobState.RUNNING, changed_files=0), "running", ["job_running"]),
    (
        "checking with a failed check",
        replace(GOOD, state=JobState.CHECKING, checks=(F,)),
        "running",
        ["job_running"],
    ),
    # 3. cancelled, even with a scope violation
    (
        "cancelled",
        replace(GOOD, state=JobState.CANCELLED, out_of_scope=3),
        "cancelled",
        ["job_cancelled"],
    ),
    # 4. read-only job that changed files, before the scope rule
    (
        "read-only modified",
        replace(RO, changed_files=1, out_of_scope=1),
        "rejected",
        ["read_only_modified"],
    ),
    # 5. scope violation, before a failed executor
    (
        "out of scope",
        replace(GOOD, out_of_scope=1, executor=Executor.FAILED),
        "rejected",
        ["scope_violation"],
    ),
    ("diff too large", replace(GOOD, diff_too_large=True), "rejected", ["scope_violation"]),
    # 6. executor failed, before failed checks
    (
        "executor failed",
        replace(GOOD, executor=Executor.FAILED, checks=(F,)),
        "failed",
        ["executor_failed"],
    ),
    (
        "runner lost",
        replace(GOOD, state=JobState.LOST, executor=Executor.LOST, checks=()),
        "failed",
        ["executor_failed"],
    ),
    (
        "runner failed",
        replace(GOOD, state=JobState.FAILED, executor=Executor.FAILED),
        "failed",
        ["executor_failed"],
    ),
    # 7. a check failed or timed out, before missing evidence
    (
        "check failed",
        replace(GOOD, checks=(P, F), checks_declared=2, scope_declared=False),
        "failed",
        ["check_failed"],
    ),
    ("check timed out", replace(GOOD, checks=(T,)), "failed", ["check_failed"]),
    # 8. missing evidence: every missing piece is named
    ("no policy", replace(GOOD, task_kind=None), "needs_evidence", ["verification_policy_missing"]),
    ("no change", replace(GOOD, changed_files=0), "needs_evidence", ["expected_change_missing"]),
    (
        "no checks",
        replace(GOOD, checks=(), checks_declared=0),
        "needs_evidence",
        ["checks_missing"],
    ),
    ("checks skipped", replace(GOOD, checks=(S,)), "needs_evidence", ["checks_missing"]),
    ("no scope", replace(GOOD, scope_declared=False), "needs_evidence", ["scope_missing"]),
    ("truncated", replace(GOOD, evidence_truncated=True), "needs_evidence", ["evidence_truncated"]),
    (
        "unattributed",
        replace(GOOD, preexisting_unattributed=True),
        "needs_evidence",
        ["preexisting_changes_unattributed"],
    ),
    (
        "workspace",
        replace(RO, workspace_complete=False),
        "needs_evidence",
        ["workspace_evidence_incomplete"],
    ),
    (
        "all missing at once",
        replace(
            GOOD,
            changed_files=0,
            checks=(),
            checks_declared=0,
            scope_declared=False,
            evidence_truncated=True,
            preexisting_unattributed=True,
            workspace_complete=False,
        ),
        "needs_evidence",
        [
            "expected_change_missing",
            "checks_missing",
            "scope_missing",
            "evidence_truncated",
            "preexisting_changes_unattributed",
            "workspace_evidence_incomplete",
        ],
    ),
]


@pytest.mark.parametrize(("name", "facts", "status", "reasons"), CASES, ids=[c[0] for c in CASES])
def test_verdict_table(name: str, facts: Facts, status: str, reasons: list[str]) -> None:
    outcome = resolve(facts)
    assert outcome.status.value == status
    assert [r.value for r in outcome.reason_codes] == reasons


@pytest.mark.parametrize("status", list(Status))
def test_retryable_statuses(status: Status) -> None:
    assert status.retryable is (status.value in {"needs_evidence", "failed", "timed_out"})


def test_contract_shape() -> None:
    data = resolve(GOOD).on({"changed_files": ["a"]}).to_dict()
    assert data["contract_version"] == "outcome.v1"
    assert list(data["outcome"]) == [
        "status",
        "reason_codes",
        "retryable",
        "policy",
        "verification",
        "evidence",
    ]
    assert data["outcome"]["verification"] == {
        "executor": "passed",
        "scope": "passed",
        "checks": "passed",
        "workspace": "complete",
    }
    assert (
        data["outcome"]["policy"]["requires_scope"] and data["outcome"]["policy"]["requires_checks"]
    )
    failed = resolve(replace(GOOD, checks=(F,), out_of_scope=0)).on({}).to_dict()["outcome"]
    assert failed["retryable"] is True and failed["verification"]["checks"] == "failed"
