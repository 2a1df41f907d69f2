"""Delegation jobs in the journal (worker.md): the only module that knows the SQL of `jobs`.

Writers take the connection of an open transaction; readers take the journal or that same
connection. Invariant: a slot is claimed (queued → running) inside one `BEGIN IMMEDIATE`
transaction that counts the running jobs first, so no more than the limit ever run at once,
and only the oldest queued job may claim one.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from typing import Any

from autoresearch.clock import utc_now_iso
from autoresearch.contracts.job import JobSpec
from autoresearch.contracts.job_result import CheckRun, ExecutorRecord, JobChecks, JobEvidence
from autoresearch.journal import records
from autoresearch.journal.db import Reader, read_rows
from autoresearch.journal.records import Codec
from autoresearch.states import ACTIVE_JOB_STATES, LIVE_JOB_STATES, JobState, ResultState

ACTIVE_STATES = tuple(s.value for s in ACTIVE_JOB_STATES)
LIVE_STATES = tuple(s.value for s in LIVE_JOB_STATES)


@dataclass(frozen=True)
class JobRecord:
    """One row of `jobs`, JSON columns decoded."""

    job_id: str
    seq: int
    state: JobState
    spec: JobSpec  # JSON only in jobs.spec_json
    marker: str
    workdir: str
    created_at: str
    updated_at: str
    worktree_path: str | None = None
    branch: str | None = None
    base_commit: str | None = None
    # The runner's process id; the groups it starts are in the one child registry
    # (journal/children.py, owner `job:<id>`), not in the unused `agent_pgid` column.
    runner_pid: int | None = None
    deadline: float | None = None
    cancel_requested_at: str | None = None
    # what the runner recorded (contracts/job_result.py), JSON only in executor_json,
    # checks_json and evidence_json; None: not recorded yet
    executor: ExecutorRecord | None = None
    checks: JobChecks | None = None
    evidence: JobEvidence | None = None
    result_state: ResultState = ResultState.NONE
    result_commit: str | None = None
    patch_path: str | None = None
    error: str | None = None
    started_at: str | None = None
    finished_at: str | None = None

    @property
    def check_runs(self) -> tuple[CheckRun, ...]:
        """The checks that ran, in order (none recorded: none ran)."""
        return () if self.checks is None else self.checks.runs


_JSON = {
    "spec": "spec_json",
    "executor": "executor_json",
    "checks": "checks_json",
    "evidence": "evidence_json",
}
_CODEC = Codec(
    _JSON,
    enums={"state": JobState, "result_state": ResultState},
    typed={
        "spec": JobSpec,
        "executor": ExecutorRecord,
        "checks": JobChecks,
        "evidence": JobEvidence,
    },
    table="jobs",
    keys=("job_id",),
)


def insert_job(conn: sqlite3.Connection, **values: Any) -> JobRecord:
    """Queue a job (columns by record name) behind every earlier one."""
    row = conn.execute("SELECT COALESCE(MAX(seq), 0) + 1 FROM jobs").fetchone()
    now = utc_now_iso()
    values.update(seq=int(row[0]), state=JobState.QUEUED, created_at=now, updated_at=now)
    records.insert(conn, "jobs", _CODEC.columns(values))
    found = get_job(conn, str(values["job_id"]))
    assert found is not None
    return found


def update_job(conn: sqlite3.Connection, job_id: str, **changes: Any) -> None:
    """Update columns of a job (JSON fields by their record name); stamps updated_at."""
    records.stamped_update(conn, _CODEC, (job_id,), changes)


def get_job(src: Reader, job_id: str) -> JobRecord | None:
    rows = read_rows(src, "SELECT * FROM jobs WHERE job_id = ?", (job_id,))
    return _CODEC.record(JobRecord, rows[0]) if rows else None


def list_jobs(src: Reader, limit: int, live_only: bool = False) -> list[JobRecord]:
    """The newest `limit` jobs, newest first."""
    where = f"WHERE state IN {LIVE_STATES!r}" if live_only else ""
    rows = read_rows(src, f"SELECT * FROM jobs {where} ORDER BY seq DESC LIMIT ?", (limit,))
    return [_CODEC.record(JobRecord, r) for r in rows]


def claim_slot(conn: sqlite3.Connection, job_id: str, limit: int, deadline: float) -> bool:
    """Move `job_id` from queued to running if a slot is free and it is next in line."""
    active = conn.execute(f"SELECT COUNT(*) FROM jobs WHERE state IN {ACTIVE_STATES!r}").fetchone()[
        0
    ]
    if int(active) >= limit:
        return False
    first = conn.execute(
        "SELECT job_id FROM jobs WHERE state = ? AND cancel_requested_at IS NULL "
        "ORDER BY seq LIMIT 1",
        (JobState.QUEUED.value,),
    ).fetchone()
    if first is None or first[0] != job_id:
        return False
    update_job(conn, job_id, state=JobState.RUNNING, started_at=utc_now_iso(), deadline=deadline)
    return True
