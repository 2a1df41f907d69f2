"""The contracts' and the worker's records pinned byte for byte: the JSON their to_dicts printed
while each was written by hand (key order, keys left out, renamed, flattened or computed), so
deriving a shape from the dataclass (`jsonshape.json_shape`) cannot change what the journal's
JSON columns (jobs.spec_json, executor_json, checks_json, evidence_json, iterations.agent_json,
runs.loop_json), the mission's tune block or a job's `outcome.v1` answer hold."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import pytest

from autoresearch.agents.base import AgentResult
from autoresearch.contracts.agent_record import AgentRecord, Usage
from autoresearch.contracts.check_record import CheckRecord
from autoresearch.contracts.job import (
    BlockingPolicy,
    CheckSpec,
    JobSpec,
    ReliabilityTier,
    ScopeSpec,
    SemanticGate,
    StageSpec,
)
from autoresearch.contracts.job_result import (
    Artifact,
    CheckRun,
    Executor,
    ExecutorRecord,
    GatewaySpend,
    JobChecks,
    JobEvidence,
    SemanticReview,
    SemanticStatus,
    Snapshot,
    StageRecord,
    Workspace,
)
from autoresearch.contracts.loop import LoopSettings
from autoresearch.contracts.stored_evaluation import StoredEvaluation
from autoresearch.contracts.tune import ParamSpec, TuneSpec
from autoresearch.journal.jobs import JobRecord
from autoresearch.sandbox_modes import SandboxMode
from autoresearch.states import Isolation, JobState, ProcessState, ResultState, TaskKind
from autoresearch.worker import view
from autoresearch.worker.outcome import Facts, resolve

_CHECK = CheckSpec("pytest -q", name="tests", timeout_seconds=30.0)
_ARTIFACT = Artifact("check-1.log", "/j/check-1.log", 6, "ff")
_PASSED = CheckRun("tests", "pytest -q", CheckRecord(ProcessState.PASS, 0, 15, "l", "ok"), None)
_TIMED_OUT = CheckRun(
    "slow", "sleep 9", CheckRecord(ProcessState.TIMEOUT, None, 9000, "/j/c.log", ""), _ARTIFACT
)
_ERRORED = CheckRun("gone", "nope", CheckRecord(ProcessState.ERROR, None, 1, "", "x"), None)
_USAGE = Usage(
    input_tokens=1200,
    output_tokens=300,
    cached_tokens=50,
    cost_usd=0.0123,
    turns=3,
    session_id="s-1",
    model="m",
    success=False,
    error="boom",
    denials=["Bash(rm)"],
)
_AGENT = AgentRecord(
    agent="claude",
    exit_code=1,
    duration_ms=4200,
    timed_out=False,
    cancelled=False,
    usage=_USAGE,
    log_file="/l/agent.log",
    lane=2,
    failure="agent exited with code 1",
)
_WORKSPACE = Workspace(
    changed_files=("src/a.py", "src/b.py"),
    preexisting_files=("notes.txt",),
    unattributed_files=(),
    out_of_scope_files=("src/b.py",),
    allowed_outside_repo=True,
    complete=False,
    note="too many files",
    diff_bytes=120,
    patch=Artifact("changes.patch", "/j/changes.patch", 120, "ee"),
)
_SNAPSHOT = Snapshot("/r", "a" * 8, {"x.py": "d1"})
_SPEC = JobSpec(
    prompt="Set VALUE to 2.\nThen stop.",
    repo_root="/r",
    allowed_dirs=("/r", "/r/docs"),
    task_kind=TaskKind.MODIFYING,
    agent="claude",
    model="m1",
    scope=ScopeSpec(("/r/src",), 4096),
    checks=(_CHECK,),
    isolation=Isolation.WORKTREE,
    max_turns=5,
    timeout_seconds=60.0,
    include_diff=True,
    semantic_gate=SemanticGate.WARN,
    revise_passes=2,
    escalate_model="m2",
    stages=(StageSpec("first", (_CHECK,)), StageSpec("second")),
    reliability_tier=ReliabilityTier.STRICT,
    blocking_policy=BlockingPolicy.WARN,
    sandbox=SandboxMode.BWRAP,
)
_BARE_SPEC = JobSpec(
    prompt="p",
    repo_root="/r",
    allowed_dirs=("/r",),
    task_kind=None,
    agent="codex",
    model=None,
    scope=None,
    checks=(),
    isolation=Isolation.IN_PLACE,
    max_turns=None,
    timeout_seconds=1800.0,
    include_diff=False,
)


def _job(**changes: object) -> JobRecord:
    values: dict[str, object] = {
        "job_id": "j1",
        "seq": 1,
        "state": JobState.COMPLETED,
        "spec": _SPEC,
        "marker": "m",
        "workdir": "/r",
        "created_at": "t0",
        "updated_at": "t1",
        "executor": ExecutorRecord(Executor.PASSED, AgentRecord(agent="claude", exit_code=0)),
        "checks": JobChecks((_PASSED,)),
        "evidence": JobEvidence(_SNAPSHOT, workspace=_WORKSPACE, revisions=1),
        "result_state": ResultState.PENDING,
        "result_commit": "c" * 12,
        "branch": "autoresearch/job-j1",
        "started_at": "t0",
        "finished_at": "t1",
    }
    values.update(changes)
    return JobRecord(**values)  # type: ignore[arg-type]


# (name, the record, its JSON as the hand-written to_dict printed it)
PINS: list[tuple[str, Callable[[], object], str]] = [
    (
        "check_spec",
        lambda: _CHECK,
        '{"name": "tests", "command": "pytest -q", "timeout_seconds": 30.0}',
    ),
    (
        "check_spec_unnamed",
        lambda: CheckSpec("true"),
        '{"name": "", "command": "true", "timeout_seconds": 600.0}',
    ),
    (
        "job_spec",
        lambda: _SPEC,
        '{"prompt": "Set VALUE to 2.\\nThen stop.", "repo_root": "/r", '
        '"allowed_dirs": ["/r", "/r/docs"], "verification_policy": {"task_kind": "modifying"}, '
        '"agent": "claude", "model": "m1", '
        '"scoped_patch": {"paths": ["/r/src"], "max_diff_bytes": 4096}, '
        '"checks": [{"name": "tests", "command": "pytest -q", "timeout_seconds": 30.0}], '
        '"isolation": "worktree", "max_turns": 5, "timeout_seconds": 60.0, '
        '"include_diff": true, "semantic_gate": "warn", "revise_passes": 2, '
        '"escalate_model": "m2", "stages": [{"prompt": "first", "checks": [{"name": "tests", '
        '"command": "pytest -q", "timeout_seconds": 30.0}]}, {"prompt": "second", '
        '"checks": []}], "reliability_tier": "strict", "blocking_policy": "warn", '
        '"sandbox": "bwrap"}',
    ),
    (
        "job_spec_bare",
        lambda: _BARE_SPEC,
        '{"prompt": "p", "repo_root": "/r", "allowed_dirs": ["/r"], '
        '"verification_policy": null, "agent": "codex", "model": null, "scoped_patch": null, '
        '"checks": [], "isolation": "in_place", "max_turns": null, "timeout_seconds": 1800.0, '
        '"include_diff": false, "semantic_gate": "off", "revise_passes": 0, '
        '"escalate_model": null, "stages": [], "reliability_tier": "standard", '
        '"blocking_policy": "observe", "sandbox": "none"}',
    ),
    (
        "job_spec_scope_unlimited",
        lambda: replace(
            _BARE_SPEC,
            task_kind=TaskKind.READ_ONLY,
            agent="claude",
            scope=ScopeSpec(()),
            timeout_seconds=9.0,
        ),
        '{"prompt": "p", "repo_root": "/r", "allowed_dirs": ["/r"], '
        '"verification_policy": {"task_kind": "read_only"}, "agent": "claude", "model": null, '
        '"scoped_patch": {"paths": [], "max_diff_bytes": null}, "checks": [], '
        '"isolation": "in_place", "max_turns": null, "timeout_seconds": 9.0, '
        '"include_diff": false, "semantic_gate": "off", "revise_passes": 0, '
        '"escalate_model": null, "stages": [], "reliability_tier": "standard", '
        '"blocking_policy": "observe", "sandbox": "none"}',
    ),
    (
        "executor",
        lambda: ExecutorRecord(Executor.FAILED, _AGENT),
        '{"agent": "claude", "exit_code": 1, "duration_ms": 4200, "timed_out": false, '
        '"cancelled": false, "success": false, "input_tokens": 1200, "output_tokens": 300, '
        '"cached_tokens": 50, "cost_usd": 0.0123, "turns": 3, "session_id": "s-1", '
        '"model": "m", "error": "boom", "log_file": "/l/agent.log", "denials": ["Bash(rm)"], '
        '"lane": 2, "failure": "agent exited with code 1", "status": "failed"}',
    ),
    (
        "executor_gateway",
        lambda: ExecutorRecord(Executor.PASSED, _AGENT, GatewaySpend(0.5, 3)),
        '{"agent": "claude", "exit_code": 1, "duration_ms": 4200, "timed_out": false, '
        '"cancelled": false, "success": false, "input_tokens": 1200, "output_tokens": 300, '
        '"cached_tokens": 50, "cost_usd": 0.5, "turns": 3, "session_id": "s-1", '
        '"model": "m", "error": "boom", "log_file": "/l/agent.log", "denials": ["Bash(rm)"], '
        '"lane": 2, "failure": "agent exited with code 1", "status": "passed", '
        '"agent_cost_usd": 0.0123, "gateway_requests": 3}',
    ),
    (
        "executor_gateway_no_agent_cost",
        lambda: ExecutorRecord(
            Executor.PENDING, AgentRecord(agent="codex", extra={"x": 1}), GatewaySpend(None, 0)
        ),
        '{"agent": "codex", "x": 1, "status": "pending", "cost_usd": null, '
        '"agent_cost_usd": null, "gateway_requests": 0}',
    ),
    (
        "executor_empty",
        lambda: ExecutorRecord(Executor.NOT_RUN, AgentRecord()),
        '{"status": "not_run"}',
    ),
    (
        "check_run_passed",
        lambda: _PASSED,
        '{"name": "tests", "command": "pytest -q", "status": "passed", "exit_code": 0, '
        '"duration_ms": 15, "timed_out": false, "output": null, "tail": "ok"}',
    ),
    (
        "check_run_timed_out",
        lambda: _TIMED_OUT,
        '{"name": "slow", "command": "sleep 9", "status": "timed_out", "exit_code": null, '
        '"duration_ms": 9000, "timed_out": true, "output": {"name": "check-1.log", '
        '"path": "/j/check-1.log", "bytes": 6, "sha256": "ff"}, "tail": ""}',
    ),
    (
        "check_run_error",
        lambda: _ERRORED,
        '{"name": "gone", "command": "nope", "status": "failed", "exit_code": null, '
        '"duration_ms": 1, "timed_out": false, "output": null, "tail": "x"}',
    ),
    ("job_checks_none", lambda: JobChecks(), "[]"),
    (
        "job_checks",
        lambda: JobChecks((_PASSED, _ERRORED)),
        '[{"name": "tests", "command": "pytest -q", "status": "passed", "exit_code": 0, '
        '"duration_ms": 15, "timed_out": false, "output": null, "tail": "ok"}, '
        '{"name": "gone", "command": "nope", "status": "failed", "exit_code": null, '
        '"duration_ms": 1, "timed_out": false, "output": null, "tail": "x"}]',
    ),
    (
        "stage_complete",
        lambda: StageRecord(1, Executor.PASSED, (_PASSED,)),
        '{"stage": 1, "executor": "passed", "complete": true, "checks": [{"name": "tests", '
        '"command": "pytest -q", "status": "passed", "exit_code": 0, "duration_ms": 15, '
        '"timed_out": false, "output": null, "tail": "ok"}]}',
    ),
    (
        "stage_incomplete",
        lambda: StageRecord(2, Executor.FAILED),
        '{"stage": 2, "executor": "failed", "complete": false, "checks": []}',
    ),
    (
        "evidence_snapshot_only",
        lambda: JobEvidence(Snapshot(None, None, error="not a git repository")),
        '{"snapshot": {"repo": null, "base_commit": null, "preexisting": {}, '
        '"error": "not a git repository"}}',
    ),
    (
        "evidence_full",
        lambda: JobEvidence(
            _SNAPSHOT,
            workspace=_WORKSPACE,
            semantic=SemanticReview(SemanticStatus.PASSED, "fine", "m", "m@1"),
            revisions=2,
            stages=(StageRecord(1, Executor.PASSED), StageRecord(2, Executor.FAILED, (_ERRORED,))),
        ),
        '{"snapshot": {"repo": "/r", "base_commit": "aaaaaaaa", "preexisting": {"x.py": "d1"}, '
        '"error": null}, "semantic": {"status": "passed", "reason": "fine", "model": "m", '
        '"answered_by": "m@1"}, "revisions": 2, "stages": [{"stage": 1, "executor": "passed", '
        '"complete": true, "checks": []}, {"stage": 2, "executor": "failed", "complete": false, '
        '"checks": [{"name": "gone", "command": "nope", "status": "failed", "exit_code": null, '
        '"duration_ms": 1, "timed_out": false, "output": null, "tail": "x"}]}], '
        '"out_of_scope_files": ["src/b.py"], "allowed_outside_repo": true, '
        '"changed_files": ["src/a.py", "src/b.py"], "preexisting_files": ["notes.txt"], '
        '"unattributed_files": [], "workspace_complete": false, '
        '"workspace_note": "too many files", "diff_bytes": 120, "patch": {"name": '
        '"changes.patch", "path": "/j/changes.patch", "bytes": 120, "sha256": "ee"}}',
    ),
    (
        "evidence_workspace_bare",
        lambda: JobEvidence(
            Snapshot("/r", "b"),
            workspace=view.NOT_GATHERED,
            semantic=SemanticReview(SemanticStatus.MISSING, ""),
        ),
        '{"snapshot": {"repo": "/r", "base_commit": "b", "preexisting": {}, "error": null}, '
        '"semantic": {"status": "missing", "reason": "", "model": null, "answered_by": null}, '
        '"out_of_scope_files": [], "allowed_outside_repo": false, "changed_files": [], '
        '"preexisting_files": [], "unattributed_files": [], "workspace_complete": false, '
        '"workspace_note": null, "diff_bytes": null, "patch": null}',
    ),
    ("agent_record_empty", lambda: AgentRecord(), "{}"),
    (
        "agent_record_full",
        lambda: _AGENT,
        '{"agent": "claude", "exit_code": 1, "duration_ms": 4200, "timed_out": false, '
        '"cancelled": false, "success": false, "input_tokens": 1200, "output_tokens": 300, '
        '"cached_tokens": 50, "cost_usd": 0.0123, "turns": 3, "session_id": "s-1", '
        '"model": "m", "error": "boom", "log_file": "/l/agent.log", "denials": ["Bash(rm)"], '
        '"lane": 2, "failure": "agent exited with code 1"}',
    ),
    (
        "agent_record_extras",
        lambda: AgentRecord.from_dict(
            {
                "future": 1,
                "agent": "a",
                "lane": None,
                "denials": [],
                "reasoning_tokens": 7,
                "cache_write_tokens": 3,
            }
        ),
        '{"agent": "a", "cache_write_tokens": 3, "reasoning_tokens": 7, "future": 1, '
        '"lane": null, "denials": []}',
    ),
    (
        "agent_record_extra_clash",
        lambda: AgentRecord(agent="a", extra={"agent": "shadow", "z": None}),
        '{"agent": "a", "z": null}',
    ),
    (
        "agent_result",
        lambda: AgentResult(
            "codex", None, 1500, spawn_error="no such file", log_file="/l"
        ).record(),
        '{"agent": "codex", "duration_ms": 1500, "timed_out": false, "cancelled": false, '
        '"error": "no such file", "log_file": "/l"}',
    ),
    (
        "tune",
        lambda: TuneSpec(
            parameters=(
                ParamSpec("LR", 0.0001, 1.0, False, True, "train.py"),
                ParamSpec("BATCH", 8.0, 512.0, True, False, "conf/b.py"),
            ),
            seed=7,
            split_lanes=True,
        ),
        '{"seed": 7, "split_lanes": true, "parameters": {"LR": {"min": 0.0001, "max": 1.0, '
        '"type": "float", "scale": "log", "file": "train.py"}, "BATCH": {"min": 8.0, '
        '"max": 512.0, "type": "int", "scale": "linear", "file": "conf/b.py"}}}',
    ),
    (
        "loop_empty",
        lambda: LoopSettings(),
        '{"agent": null, "model": null, "agent_args": [], "max_turns": null, "seed": null, '
        '"max_iterations": null, "max_noops": null, "max_agent_failures": null, '
        '"agent_timeout": null, "budget_usd": null, "budget_tokens": null, '
        '"budget_hours": null, "lanes": null}',
    ),
    (
        "loop_placed_local",
        lambda: LoopSettings(agent="cmd:true", agent_args=("-v",), lanes=0, executor="local"),
        '{"agent": "cmd:true", "model": null, "agent_args": ["-v"], "max_turns": null, '
        '"seed": null, "max_iterations": null, "max_noops": null, "max_agent_failures": null, '
        '"agent_timeout": null, "budget_usd": null, "budget_tokens": null, '
        '"budget_hours": null, "lanes": 0, "executor": "local", "address": null}',
    ),
    (
        "loop_address_without_executor",
        lambda: LoopSettings(agent="a", address="ray://h:10001"),
        '{"agent": "a", "model": null, "agent_args": [], "max_turns": null, "seed": null, '
        '"max_iterations": null, "max_noops": null, "max_agent_failures": null, '
        '"agent_timeout": null, "budget_usd": null, "budget_tokens": null, '
        '"budget_hours": null, "lanes": null}',
    ),
    (
        "loop_everything",
        lambda: LoopSettings(
            agent="cmd:a",
            model="m",
            agent_args=(),
            max_turns=3,
            seed=1,
            max_iterations=10,
            max_noops=2,
            max_agent_failures=4,
            agent_timeout=60.0,
            budget_usd=1.5,
            budget_tokens=1000,
            budget_hours=2.0,
            lanes=2,
            executor="ray",
            address="ray://h:10001",
            counts_from=5,
            sandbox="bwrap",
            certify=False,
            plateau=4,
            on_plateau="ask",
            plateau_from=6,
            paused="paused at 9",
            trackers=("mlflow",),
            tracker_uri="file:/t",
            strategy="frontier",
            archive_size=8,
            agents=("cmd:a", "cmd:b"),
            models=("m", "n"),
            extra={"future": [1], "agent": "shadowed"},
        ),
        '{"future": [1], "agent": "cmd:a", "model": "m", "agent_args": [], "max_turns": 3, '
        '"seed": 1, "max_iterations": 10, "max_noops": 2, "max_agent_failures": 4, '
        '"agent_timeout": 60.0, "budget_usd": 1.5, "budget_tokens": 1000, '
        '"budget_hours": 2.0, "lanes": 2, "executor": "ray", "address": "ray://h:10001", '
        '"counts_from": 5, "sandbox": "bwrap", "certify": false, "plateau": 4, '
        '"on_plateau": "ask", "plateau_from": 6, "paused": "paused at 9", '
        '"trackers": ["mlflow"], "tracker_uri": "file:/t", "strategy": "frontier", '
        '"archive_size": 8, "agents": ["cmd:a", "cmd:b"], "models": ["m", "n"]}',
    ),
    (
        "stored_evaluation",
        lambda: StoredEvaluation.from_dict({"status": "ok", "score": 1.5, "z": [1]}),
        '{"status": "ok", "score": 1.5, "z": [1]}',
    ),
]


def _json(record: object) -> str:
    to_dict = getattr(record, "to_dict")  # noqa: B009 - every pinned record has one
    return json.dumps(to_dict(), sort_keys=False)


@pytest.mark.parametrize(("make", "pinned"), [p[1:] for p in PINS], ids=[p[0] for p in PINS])
def test_a_records_json_is_pinned(make: Callable[[], object], pinned: str) -> None:
    assert _json(make()) == pinned


# --- the verdict: `outcome.v1` around the evidence it is given, and a job's whole answer -------


def test_the_outcome_envelope_is_pinned() -> None:
    facts = Facts(JobState.COMPLETED, task_kind=TaskKind.READ_ONLY, executor=Executor.PASSED)
    pinned = (
        '{"contract_version": "outcome.v1", "outcome": {"status": "accepted", '
        '"reason_codes": ["verification_passed"], "retryable": false, "policy": '
        '{"task_kind": "read_only", "requires_scope": false, "requires_checks": false, '
        '"checks_declared": 0}, "verification": {"executor": "passed", "scope": '
        '"not_declared", "checks": "missing", "workspace": "complete"}, '
        '"evidence": {"given": [1]}}}'
    )
    assert json.dumps(resolve(facts).on({"given": [1]}).to_dict()) == pinned


def test_a_job_views_answer_is_pinned(tmp_path: Path) -> None:
    """The job's own keys, its result, then the verdict (the evidence under it is pinned by
    tests/worker/test_job_view.py's golden file)."""
    job = _job(spec=_BARE_SPEC, evidence=None, executor=None, checks=None)
    answer = view.build(job, now=1.0).to_dict()
    answer["outcome"] = {"evidence": "…"}
    pinned = (
        '{"job_id": "j1", "state": "completed", "agent": "codex", "isolation": "in_place", '
        '"task_kind": null, "prompt": "p", "workdir": "/r", "created_at": "t0", '
        '"started_at": "t0", "finished_at": "t1", "cancel_requested": false, "error": null, '
        '"result": {"state": "pending", "branch": "autoresearch/job-j1", "worktree": null, '
        '"commit": "cccccccccccc", "patch": null}, "contract_version": "outcome.v1", '
        '"outcome": {"evidence": "\\u2026"}}'
    )
    assert json.dumps(answer) == pinned
