"""A job as callers see it, pinned: the `outcome.v1` JSON and the text of `job_status` for jobs
whose journal rows hold what a runner stores (executor, checks and evidence JSON, written here
with sqlite3 as any version of the runner wrote them), compared byte for byte with a golden
file. Regenerate it only for a deliberate change of the contract:
`AUTORESEARCH_WRITE_GOLDEN=1 pytest tests/worker/test_job_view.py`."""

from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path
from typing import Any

from autoresearch.contracts.job import CheckSpec, JobSpec
from autoresearch.journal import jobs as store
from autoresearch.journal.db import Journal
from autoresearch.paths import RepoPaths, job_paths
from autoresearch.states import Isolation, JobState, TaskKind
from autoresearch.worker import view

GOLDEN = Path(__file__).resolve().parent / "golden" / "job_views.json"
NOW = 1_700_000_000.0
SHA = "0" * 64


def _spec(root: Path, **changes: Any) -> JobSpec:
    values: dict[str, Any] = {
        "prompt": "Set VALUE to 2 in src/app.py.\nThen stop.",
        "repo_root": str(root),
        "allowed_dirs": (str(root),),
        "task_kind": TaskKind.MODIFYING,
        "agent": "claude",
        "model": None,
        "scope_paths": (str(root / "src"),),
        "max_diff_bytes": None,
        "checks": (CheckSpec("grep -q 'VALUE = 2' src/app.py", "value set", 30.0),),
        "isolation": Isolation.IN_PLACE,
        "max_turns": None,
        "timeout_seconds": 1800.0,
        "include_diff": False,
    }
    values.update(changes)
    return JobSpec(**values)


def _snapshot(root: Path) -> dict[str, Any]:
    return {"repo": str(root), "base_commit": "a" * 40, "preexisting": {}, "error": None}


def _agent(**more: Any) -> dict[str, Any]:
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
        "status": "passed",
        **more,
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
        {"id": "gateway", "spec": _spec(root, isolation=Isolation.WORKTREE, max_diff_bytes=100),
         "state": JobState.COMPLETED,
         "executor": _agent(cost_usd=0.5, agent_cost_usd=0.0123, gateway_requests=4),
         "checks": [_check(root, "gateway", 1, "timed_out", None)],
         "evidence": _evidence(root, "gateway"),
         "result": ("pending", "autoresearch-job/gateway", "b" * 40)},
        {"id": "gateway-no-cost", "spec": _spec(root), "state": JobState.COMPLETED,
         "executor": {**{k: v for k, v in _agent().items() if k != "cost_usd"},
                      "cost_usd": None, "agent_cost_usd": None, "gateway_requests": 0},
         "checks": [_check(root, "gateway-no-cost", 1, "failed", 1)],
         "evidence": _evidence(root, "gateway-no-cost")},
        {"id": "spawn", "spec": _spec(root, task_kind=None, scope_paths=None, checks=()),
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
        out[case["id"]] = {"json": v.to_dict(), "text": view.render(v)}
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
