"""A job as callers see it, pinned: the `outcome.v1` JSON and the text of `job_status` for jobs
whose journal rows hold what a runner stores (executor, checks and evidence JSON, written here
with sqlite3 as any version of the runner wrote them), compared byte for byte with a golden
file. Regenerate it only for a deliberate change of the contract:
`AUTORESEARCH_WRITE_GOLDEN=1 pytest tests/worker/test_job_view.py`.

Then the records those columns hold (contracts/job_result.py): read back and written key for
key, a damaged one refused as the journal refuses damage, and the verdict's inputs
(`view.facts_of`) as a pure function of the typed record."""

from __future__ import annotations

import json
import os
import sqlite3
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from autoresearch.agents.base import AgentResult, Usage
from autoresearch.contracts.agent_record import AgentRecord
from autoresearch.contracts.check_record import CheckRecord
from autoresearch.contracts.job import CheckSpec, JobSpec, ScopeSpec
from autoresearch.contracts.job_result import (
    Artifact,
    CheckResult,
    CheckRun,
    Executor,
    ExecutorRecord,
    JobChecks,
    JobEvidence,
    Snapshot,
    Workspace,
)
from autoresearch.errors import JournalError
from autoresearch.journal import jobs as store
from autoresearch.journal.db import Journal
from autoresearch.journal.jobs import JobRecord
from autoresearch.paths import RepoPaths, job_paths
from autoresearch.states import Isolation, JobState, ProcessState, TaskKind
from autoresearch.worker import bridge, view
from autoresearch.worker.outcome import Facts, Status, resolve

GOLDEN = Path(__file__).resolve().parent / "golden" / "job_views.json"
NOW = 1_700_000_000.0
SHA = "0" * 64


def _scope(root: Path, max_diff_bytes: int | None = None) -> ScopeSpec:
    return ScopeSpec((str(root / "src"),), max_diff_bytes)


def _spec(root: Path, **changes: Any) -> JobSpec:
    values: dict[str, Any] = {
        "prompt": "Set VALUE to 2 in src/app.py.\nThen stop.",
        "repo_root": str(root),
        "allowed_dirs": (str(root),),
        "task_kind": TaskKind.MODIFYING,
        "agent": "claude",
        "model": None,
        "scope": _scope(root),
        "checks": (
            CheckSpec("grep -q 'VALUE = 2' src/app.py", name="value set", timeout_seconds=30.0),
        ),
        "isolation": Isolation.IN_PLACE,
        "max_turns": None,
        "timeout_seconds": 1800.0,
        "include_diff": False,
    }
    values.update(changes)
    return JobSpec(**values)


def _snapshot(root: Path) -> dict[str, Any]:
    return {"repo": str(root), "base_commit": "a" * 40, "preexisting": {}, "error": None}


def _agent(status: str = "passed", **more: Any) -> dict[str, Any]:
    """An executor as the runner stores it: the agent's record, then the status."""
    return {
        "agent": "claude",
        "exit_code": 0,
        "duration_ms": 4200,
        "timed_out": False,
        "cancelled": False,
        "success": True,
        "input_tokens": 1200,
        "output_tokens": 300,
        "cached_tokens": 50,
        "cost_usd": 0.0123,
        "turns": 3,
        "session_id": "s-1",
        "model": "claude-x",
        "log_file": "/logs/agent.log",
        **more,
        "status": status,
    }


def _check(root: Path, job_id: str, index: int, status: str, exit_code: int | None) -> Any:
    log = job_paths(root, job_id).check_log(index)
    return {
        "name": "value set",
        "command": "grep -q 'VALUE = 2' src/app.py",
        "status": status,
        "exit_code": exit_code,
        "duration_ms": 15,
        "timed_out": status == "timed_out",
        "output": {"name": log.name, "path": str(log), "bytes": 6, "sha256": SHA},
        "tail": "tail 1\ntail 2",
    }


def _evidence(root: Path, job_id: str, **changes: Any) -> dict[str, Any]:
    patch = job_paths(root, job_id).changes_patch
    data: dict[str, Any] = {
        "snapshot": _snapshot(root),
        "out_of_scope_files": [],
        "allowed_outside_repo": False,
        "changed_files": ["src/app.py"],
        "preexisting_files": [],
        "unattributed_files": [],
        "workspace_complete": True,
        "workspace_note": None,
        "diff_bytes": 120,
        "patch": {"name": "changes.patch", "path": str(patch), "bytes": 120, "sha256": SHA},
    }
    data.update(changes)
    return data


def _cases(root: Path) -> list[dict[str, Any]]:
    """(job_id, spec, state, columns): the jobs of the golden file, one verdict rule each."""
    ok = "accepted"
    return [
        {"id": ok, "spec": _spec(root, include_diff=True), "state": JobState.COMPLETED,
         "executor": _agent(), "checks": [_check(root, ok, 1, "passed", 0)],
         "evidence": _evidence(root, ok)},
        {"id": "queued", "spec": _spec(root), "state": JobState.QUEUED},
        {"id": "running", "spec": _spec(root), "state": JobState.RUNNING, "deadline": NOW + 60,
         "evidence": {"snapshot": _snapshot(root)}},
        {"id": "late", "spec": _spec(root), "state": JobState.CHECKING, "deadline": NOW - 31,
         "executor": _agent(), "evidence": {"snapshot": _snapshot(root)}},
        {"id": "gateway", "spec": _spec(root, isolation=Isolation.WORKTREE, scope=_scope(root, 100)),
         "state": JobState.COMPLETED,
         "executor": {**_agent(cost_usd=0.5), "agent_cost_usd": 0.0123, "gateway_requests": 4},
         "checks": [_check(root, "gateway", 1, "timed_out", None)],
         "evidence": _evidence(root, "gateway"),
         "result": ("pending", "autoresearch-job/gateway", "b" * 40)},
        {"id": "gateway-no-cost", "spec": _spec(root), "state": JobState.COMPLETED,
         "executor": {**{k: v for k, v in _agent().items() if k != "cost_usd"},
                      "cost_usd": None, "agent_cost_usd": None, "gateway_requests": 0},
         "checks": [_check(root, "gateway-no-cost", 1, "failed", 1)],
         "evidence": _evidence(root, "gateway-no-cost")},
        {"id": "spawn", "spec": _spec(root, task_kind=None, scope=None, checks=()),
         "state": JobState.COMPLETED,
         "executor": {"agent": "nope", "duration_ms": 0, "timed_out": False, "cancelled": False,
                      "error": "unknown agent 'nope'", "status": "failed"},
         "evidence": _evidence(root, "spawn", changed_files=[], diff_bytes=0,
                               allowed_outside_repo=True)},
        {"id": "read-only", "spec": _spec(root, task_kind=TaskKind.READ_ONLY, checks=()),
         "state": JobState.COMPLETED, "executor": _agent(denials=["Bash(rm -rf /)"]),
         "evidence": _evidence(root, "read-only", preexisting_files=["notes.txt"],
                               unattributed_files=["src/app.py"])},
        {"id": "scope", "spec": _spec(root), "state": JobState.COMPLETED, "executor": _agent(),
         "checks": [_check(root, "scope", 1, "passed", 0)],
         "evidence": _evidence(root, "scope", changed_files=["docs/readme.md", "src/app.py"],
                               out_of_scope_files=["docs/readme.md"])},
        {"id": "incomplete", "spec": _spec(root, task_kind=TaskKind.READ_ONLY, checks=()),
         "state": JobState.COMPLETED, "executor": _agent(),
         "evidence": _evidence(root, "incomplete", changed_files=[], workspace_complete=False,
                               workspace_note="not a git repository", diff_bytes=None,
                               patch=None)},
        {"id": "truncated", "spec": _spec(root), "state": JobState.COMPLETED,
         "executor": _agent(), "checks": [_check(root, "truncated", 1, "passed", 0)],
         "evidence": _evidence(root, "truncated",
                               changed_files=[f"src/f{i:04d}.py" for i in range(502)])},
        {"id": "outside", "spec": _spec(root), "state": JobState.COMPLETED,
         "executor": _agent(), "checks": [_check(root, "outside", 1, "passed", 0)],
         "evidence": _evidence(root, "outside", allowed_outside_repo=True)},
        {"id": "lost", "spec": _spec(root), "state": JobState.LOST, "executor": _agent(),
         "error": "its runner died"},
        {"id": "failed", "spec": _spec(root), "state": JobState.FAILED,
         "error": "git failed: token=sk-abcdefghijklmnopqrstuvwxyz0123456789"},
        {"id": "cancelled", "spec": _spec(root), "state": JobState.CANCELLED,
         "executor": _agent(status="not_run", cancelled=True), "cancel": True,
         "checks": [], "evidence": _evidence(root, "cancelled", changed_files=[])},
    ]  # fmt: skip


def _store(root: Path, case: dict[str, Any]) -> None:
    """The case's row: queued through the store, then its columns as a runner left them."""
    job_id = case["id"]
    journal = Journal.open(RepoPaths(root).journal)
    try:
        with journal.tx() as conn:
            store.insert_job(conn, job_id=job_id, spec=case["spec"], marker="m", workdir=str(root))
    finally:
        journal.close()
    columns: dict[str, Any] = {"state": case["state"].value, "deadline": case.get("deadline")}
    for name in ("executor", "checks", "evidence"):
        if name in case:
            columns[f"{name}_json"] = json.dumps(case[name])
    if "result" in case:
        state, branch, commit = case["result"]
        columns.update(result_state=state, branch=branch, result_commit=commit)
    columns.update(error=case.get("error"), cancel_requested_at="t" if case.get("cancel") else None)
    columns.update(created_at="2024-01-01T00:00:00Z", started_at="2024-01-01T00:00:01Z")
    if case["state"].terminal:
        columns["finished_at"] = "2024-01-01T00:01:00Z"
    sets = ", ".join(f"{k} = ?" for k in columns)
    conn = sqlite3.connect(RepoPaths(root).journal, isolation_level=None)
    try:
        conn.execute(f"UPDATE jobs SET {sets} WHERE job_id = ?", [*columns.values(), job_id])
    finally:
        conn.close()


def _artifacts(root: Path, job_id: str) -> None:
    """The files a job leaves: its agent log, its patch and one check log."""
    paths = job_paths(root, job_id)
    paths.root.mkdir(parents=True, exist_ok=True)
    paths.agent_log.write_text("agent said\n")
    paths.changes_patch.write_text("--- a/src/app.py\n+++ b/src/app.py\n-VALUE = 1\n+VALUE = 2\n")
    paths.check_log(1).write_text("ok\n")


def _views(root: Path) -> dict[str, Any]:
    out: dict[str, Any] = {}
    views = []
    for case in _cases(root):
        _store(root, case)
        _artifacts(root, case["id"])
        with Journal.open(RepoPaths(root).journal) as journal:
            job = store.get_job(journal, case["id"])
        assert job is not None
        v = view.build(job, now=NOW)
        views.append(v)
        out[case["id"]] = {"json": v.to_dict(), "text": view.render_job(v)}
    out["list"] = view.render_list(list(reversed(views)))
    return out


def _normal(text: str, root: Path) -> str:
    return text.replace(str(root), "<repo>")


def test_job_views_match_the_golden_file(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    (root / ".autoresearch").mkdir(parents=True)
    got = _normal(json.dumps(_views(root), indent=1, ensure_ascii=False), root) + "\n"
    if os.environ.get("AUTORESEARCH_WRITE_GOLDEN"):
        GOLDEN.parent.mkdir(exist_ok=True)
        GOLDEN.write_text(got)
    assert got == GOLDEN.read_text()


# --- the stored records: read once, typed, written back key for key ---------------------------


def test_what_a_runner_stored_reads_back_and_is_rewritten_key_for_key(tmp_path: Path) -> None:
    """Every stored shape of the golden jobs goes through its record and comes out as the same
    JSON text (keys, order, null and integer values), so a row written by any version of the
    runner and one written now are the same bytes."""
    records: dict[str, type[ExecutorRecord | JobChecks | JobEvidence]] = {
        "executor": ExecutorRecord,
        "checks": JobChecks,
        "evidence": JobEvidence,
    }
    seen = 0
    for case in _cases(tmp_path / "repo"):
        for name, cls in records.items():
            if name in case:
                stored = json.dumps(case[name])
                assert json.dumps(cls.from_dict(json.loads(stored)).to_dict()) == stored, (
                    case["id"],
                    name,
                )
                seen += 1
    assert seen == 31


def _agent_result(cost: float | None) -> AgentResult:
    usage = Usage(input_tokens=1200, output_tokens=300, cost_usd=cost, turns=3, success=True)
    return AgentResult("claude", 0, 4200, usage=usage, log_file="/logs/agent.log")


@pytest.mark.parametrize("cost", [0.0123, None])
def test_an_executor_is_stored_as_the_runner_built_it(cost: float | None) -> None:
    """The record the runner builds now is the dict it used to build: the agent's record and
    its status, then on a gateway the bridge's cost in place of the agent's own figure."""
    result = _agent_result(cost)
    before = {**result.record().to_dict(), "status": "passed"}
    record = ExecutorRecord(Executor.PASSED, result.record())
    assert json.dumps(record.to_dict()) == json.dumps(before)
    spend = bridge.Spend(requests=4, cost_usd=0.5)
    before.update(
        {"cost_usd": 0.5, "agent_cost_usd": before.get("cost_usd"), "gateway_requests": 4}
    )
    bridged = ExecutorRecord(Executor.PASSED, result.record(), spend.gateway())
    assert json.dumps(bridged.to_dict()) == json.dumps(before)
    assert ExecutorRecord.from_dict(json.loads(json.dumps(before))) == bridged


@pytest.mark.parametrize(
    ("state", "exit_code", "status"),
    [
        (ProcessState.PASS, 0, CheckResult.PASSED),
        (ProcessState.FAIL, 1, CheckResult.FAILED),
        (ProcessState.TIMEOUT, None, CheckResult.TIMED_OUT),
        (ProcessState.ERROR, None, CheckResult.FAILED),
        (ProcessState.CANCELLED, -15, CheckResult.FAILED),
    ],
)
def test_a_check_reads_back_with_its_status(
    state: ProcessState, exit_code: int | None, status: CheckResult
) -> None:
    """However its process ended, a stored check reads back with the status the verdict read
    (the stored shape names no process state) and is written back the same."""
    run = CheckRecord(state, exit_code, 15, "/j/check-01.log", "tail")
    check = CheckRun("c", "true", run, Artifact("check-01.log", "/j/check-01.log", 3, SHA))
    again = CheckRun.from_dict(json.loads(json.dumps(check.to_dict())))
    assert again.status is check.status is status
    assert again.to_dict() == check.to_dict()


CHECK_OK = {
    "name": "c", "command": "true", "status": "passed", "exit_code": 0, "duration_ms": 1,
    "timed_out": False, "output": None, "tail": "",
}  # fmt: skip
EVIDENCE_OK = {
    "snapshot": {"repo": "/r", "base_commit": "a", "preexisting": {}, "error": None},
    "out_of_scope_files": [], "allowed_outside_repo": False, "changed_files": ["src/app.py"],
    "preexisting_files": [], "unattributed_files": [], "workspace_complete": True,
    "workspace_note": None, "diff_bytes": 1, "patch": None,
}  # fmt: skip


def _without(data: dict[str, Any], key: str, **changes: Any) -> str:
    return json.dumps({**{k: v for k, v in data.items() if k != key}, **changes})


@pytest.mark.parametrize(
    ("column", "value", "expected"),
    [
        ("executor_json", '{"agent": "claude", "status": "passd"}', "'passd' is not a valid Executor"),
        ("executor_json", '{"agent": "claude", "exit_code": 0}', "'status'"),
        ("executor_json", '["passed"]', "an executor is an object, not list"),
        ("checks_json", json.dumps(CHECK_OK), "a job's checks are a list, not dict"),
        ("checks_json", json.dumps([_without(CHECK_OK, "status")]), "a check is an object"),
        ("checks_json", "[" + _without(CHECK_OK, "status", statsu="passed") + "]", "'status'"),
        ("checks_json", "[" + _without(CHECK_OK, "status", status="skipped") + "]",
         "a check that ran is passed, failed or timed_out, not skipped"),
        ("checks_json", "[" + _without(CHECK_OK, "timed_out", timed_out=True) + "]",
         "a check passed with timed_out True"),
        ("checks_json", "[" + _without(CHECK_OK, "exit_code", exit_code="0") + "]",
         "exit_code is an integer, not str"),
        ("evidence_json", _without(EVIDENCE_OK, "changed_files", changed_files="src/app.py"),
         "changed_files is a list of strings"),
        ("evidence_json", _without(EVIDENCE_OK, "workspace_complete", workspace_complet=True),
         "'workspace_complete'"),
        ("evidence_json", _without(EVIDENCE_OK, "allowed_outside_repo", allowed_outside_repo=0),
         "allowed_outside_repo is true or false, not int"),
        ("evidence_json", _without(EVIDENCE_OK, "diff_bytes", diff_bytes="12"),
         "diff_bytes is an integer, not str"),
        ("evidence_json", _without(EVIDENCE_OK, "snapshot"), "'snapshot'"),
    ],
)  # fmt: skip
def test_a_damaged_record_of_a_job_is_refused_naming_its_row(
    tmp_path: Path, column: str, value: str, expected: str
) -> None:
    """A stored value no version wrote – a misspelt key, a wrong type, a status no check ends
    with – is the journal's one-line damage refusal (table, row, column), never a verdict read
    from a default (`changed_files` as a string counted its characters as files)."""
    root = tmp_path / "repo"
    (root / ".autoresearch").mkdir(parents=True)
    _store(root, {"id": "j", "spec": _spec(root), "state": JobState.COMPLETED})
    conn = sqlite3.connect(RepoPaths(root).journal, isolation_level=None)
    try:
        conn.execute(f"UPDATE jobs SET {column} = ?", (value,))
    finally:
        conn.close()
    with Journal.open(RepoPaths(root).journal) as journal, pytest.raises(JournalError) as refused:
        store.get_job(journal, "j")
    message = refused.value.message
    start = f"a row of the journal is damaged (table jobs, row job_id=j: {column} is "
    assert message.startswith(start), message
    assert expected in message and "\n" not in message, message


# --- the verdict's inputs, as a pure function of the typed record -------------------------------

ROOT = Path("/r")
PASSED_CHECK = CheckRun("c", "true", CheckRecord(ProcessState.PASS, 0, 1, ""), None)
TIMED_OUT_CHECK = CheckRun("c", "true", CheckRecord(ProcessState.TIMEOUT, None, 1, ""), None)
WORKSPACE = Workspace(
    changed_files=("src/app.py",),
    preexisting_files=(),
    unattributed_files=(),
    out_of_scope_files=(),
    allowed_outside_repo=False,
    complete=True,
    note=None,
    diff_bytes=120,
    patch=None,
)
SNAP = Snapshot("/r", "a" * 40)


def _job(workspace: Workspace | None = WORKSPACE, **changes: Any) -> JobRecord:
    values: dict[str, Any] = {
        "job_id": "j", "seq": 1, "state": JobState.COMPLETED, "spec": _spec(ROOT),
        "marker": "m", "workdir": "/r", "created_at": "t", "updated_at": "t",
        "executor": ExecutorRecord(Executor.PASSED, AgentRecord(agent="claude")),
        "checks": JobChecks((PASSED_CHECK,)), "evidence": JobEvidence(SNAP, workspace=workspace),
    }  # fmt: skip
    values.update(changes)
    return JobRecord(**values)


GOOD = Facts(
    state=JobState.COMPLETED,
    task_kind=TaskKind.MODIFYING,
    executor=Executor.PASSED,
    changed_files=1,
    scope_declared=True,
    checks=(CheckResult.PASSED,),
    checks_declared=1,
    workspace_complete=True,
)


def _ws(**changes: Any) -> Workspace:
    return replace(WORKSPACE, **changes)


@pytest.mark.parametrize(
    ("name", "job", "facts", "status"),
    [
        ("accepted", _job(), GOOD, Status.ACCEPTED),
        ("nothing changed", _job(_ws(changed_files=())), replace(GOOD, changed_files=0),
         Status.NEEDS_EVIDENCE),
        ("incomplete", _job(_ws(complete=False, note="no git")),
         replace(GOOD, workspace_complete=False), Status.NEEDS_EVIDENCE),
        ("allowed dir outside the repository", _job(_ws(allowed_outside_repo=True)),
         replace(GOOD, workspace_complete=False), Status.NEEDS_EVIDENCE),
        ("diff over the limit", _job(spec=_spec(ROOT, scope=_scope(ROOT, 100))),
         replace(GOOD, diff_too_large=True), Status.REJECTED),
        ("diff at the limit", _job(spec=_spec(ROOT, scope=_scope(ROOT, 120))), GOOD, Status.ACCEPTED),
        ("no diff measured", _job(_ws(diff_bytes=None), spec=_spec(ROOT, scope=_scope(ROOT, 1))),
         GOOD, Status.ACCEPTED),
        ("out of scope", _job(_ws(out_of_scope_files=("docs/x",))),
         replace(GOOD, out_of_scope=1), Status.REJECTED),
        ("unattributed", _job(_ws(unattributed_files=("src/app.py",))),
         replace(GOOD, preexisting_unattributed=True), Status.NEEDS_EVIDENCE),
        ("truncated", _job(_ws(changed_files=tuple(f"f{i}" for i in range(501)))),
         replace(GOOD, changed_files=501, evidence_truncated=True), Status.NEEDS_EVIDENCE),
        ("check timed out", _job(checks=JobChecks((TIMED_OUT_CHECK,))),
         replace(GOOD, checks=(CheckResult.TIMED_OUT,)), Status.FAILED),
        ("no checks recorded", _job(checks=None), replace(GOOD, checks=()), Status.NEEDS_EVIDENCE),
        ("read-only edit", _job(spec=_spec(ROOT, task_kind=TaskKind.READ_ONLY)),
         replace(GOOD, task_kind=TaskKind.READ_ONLY), Status.REJECTED),
        ("executor failed",
         _job(executor=ExecutorRecord(Executor.FAILED, AgentRecord(usage=Usage(error="boom")))),
         replace(GOOD, executor=Executor.FAILED), Status.FAILED),
        ("no executor recorded", _job(executor=None), replace(GOOD, executor=Executor.NOT_RUN),
         Status.FAILED),
        ("runner lost", _job(state=JobState.LOST), replace(GOOD, state=JobState.LOST,
         executor=Executor.LOST), Status.FAILED),
        ("running, late", _job(None, state=JobState.RUNNING, executor=None, checks=None,
                               deadline=NOW - 31),
         replace(GOOD, state=JobState.RUNNING, deadline_passed=True, executor=Executor.PENDING,
                 changed_files=0, checks=(), workspace_complete=False), Status.TIMED_OUT),
        ("running, in time", _job(None, state=JobState.RUNNING, executor=None, checks=None,
                                  deadline=NOW - 30),
         replace(GOOD, state=JobState.RUNNING, executor=Executor.PENDING, changed_files=0,
                 checks=(), workspace_complete=False), Status.RUNNING),
        ("ended, nothing gathered", _job(None),
         replace(GOOD, changed_files=0, workspace_complete=False), Status.NEEDS_EVIDENCE),
    ],
)  # fmt: skip
def test_facts_of_a_job(name: str, job: JobRecord, facts: Facts, status: Status) -> None:
    assert view.facts_of(job, job.spec, NOW) == facts, name
    assert resolve(facts).status is status, name
