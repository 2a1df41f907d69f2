"""Experiment sessions and their runs in the journal (experiments.md "Storage").

The only module that knows the SQL of `sessions` and `session_runs`. Writers take the
connection of an open transaction (`with journal.tx() as conn`); readers take the journal or,
when a check must be race-free, that same connection.

Invariants: a run with no status and no abandoned time is *pending*, and a session has at most
one (a new run abandons the earlier one in the transaction that inserts it). The active session
of a branch is its newest unclosed row.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from autoresearch.clock import utc_now_iso
from autoresearch.journal import records
from autoresearch.journal.db import Reader, read_rows
from autoresearch.journal.records import Codec
from autoresearch.states import Direction, Verdict

if TYPE_CHECKING:
    from autoresearch.contracts.check_record import CheckRecord

LOGGED_STATUSES = tuple(Verdict)


@dataclass(frozen=True)
class SessionRecord:
    """One row of `sessions`, JSON columns decoded."""

    session_id: int
    name: str
    metric: str
    direction: Direction
    command: str
    branch: str
    directory: str
    baseline_commit: str
    kept_commit: str
    created_at: str
    updated_at: str
    goal: str = ""
    unit: str = ""
    own_worktree: bool = False
    segment: int = 1
    max_iterations: int | None = None
    secondary: tuple[str, ...] = ()
    scope: tuple[str, ...] = ()
    off_limits: tuple[str, ...] = ()
    constraints: tuple[str, ...] = ()
    notes: str = ""
    closed_at: str | None = None


@dataclass(frozen=True)
class SessionRunRecord:
    """One row of `session_runs`: a harness run and, once logged, its verdict."""

    run_id: int
    session_id: int
    number: int
    segment: int
    command: str
    base_commit: str
    started_at: str
    completed_at: str | None = None
    duration_ms: int | None = None
    exit_code: int | None = None
    timed_out: bool = False
    error: str | None = None
    pgid: int | None = None
    parsed_primary: float | None = None
    parsed_metrics: dict[str, float] = field(default_factory=dict)
    parsed_asi: dict[str, Any] = field(default_factory=dict)
    checks: CheckRecord | None = None
    log_path: str | None = None
    tail: str = ""
    status: Verdict | None = None
    description: str | None = None
    metric: float | None = None
    metrics: dict[str, float] | None = None
    asi: dict[str, Any] | None = None
    commit_sha: str | None = None
    patch_path: str | None = None
    confidence: float | None = None
    modified_paths: list[str] | None = None
    deviations: list[str] | None = None
    justification: str | None = None
    flagged: bool = False
    flag_reason: str | None = None
    logged_at: str | None = None
    abandoned_at: str | None = None
    readings: list[float] | None = None  # `exp run --repeats`: each reading of the primary
    # `exp run --repeats` after a baseline: the kept commit, read next to each reading above
    reference_commit: str | None = None
    reference_readings: list[float] | None = None

    @property
    def pending(self) -> bool:
        return self.status is None and self.abandoned_at is None

    @property
    def completed(self) -> bool:
        return self.completed_at is not None


def _check_record(data: Any) -> CheckRecord:
    """A run's checks, decoded when first read: a Stop hook without a session, and
    session-start, read session rows without them and their contract."""
    from autoresearch.contracts.check_record import CheckRecord

    return CheckRecord.from_dict(data)


records.decoded_later(SessionRunRecord, "checks", _check_record)


_SESSION_JSON = {
    "secondary": "secondary_json",
    "scope": "scope_json",
    "off_limits": "off_limits_json",
    "constraints": "constraints_json",
}
_RUN_JSON = {
    "parsed_metrics": "parsed_metrics_json",
    "parsed_asi": "parsed_asi_json",
    "checks": "checks_json",
    "metrics": "metrics_json",
    "asi": "asi_json",
    "modified_paths": "modified_paths_json",
    "deviations": "deviations_json",
    "readings": "readings_json",
    "reference_readings": "reference_readings_json",
}
_BOOLS = frozenset({"own_worktree", "timed_out", "flagged"})
_SESSIONS = Codec(
    _SESSION_JSON,
    _BOOLS,
    frozenset(_SESSION_JSON),
    enums={"direction": Direction},
    table="sessions",
    keys=("session_id",),
)
_RUNS = Codec(
    _RUN_JSON,
    _BOOLS,
    enums={"status": Verdict},
    later=frozenset({"checks"}),
    table="session_runs",
    keys=("run_id",),
)


# --- sessions ------------------------------------------------------------------------------


def insert_session(conn: sqlite3.Connection, **values: Any) -> int:
    """Insert a session (columns by record name); returns its id."""
    now = utc_now_iso()
    values.setdefault("created_at", now)
    values.setdefault("updated_at", now)
    return records.insert(conn, "sessions", _SESSIONS.columns(values))


def update_session(conn: sqlite3.Connection, session_id: int, **changes: Any) -> None:
    """Update columns of a session (JSON fields by their record name); stamps updated_at."""
    records.stamped_update(conn, _SESSIONS, (session_id,), changes)


def get_session(src: Reader, session_id: int) -> SessionRecord | None:
    rows = read_rows(src, "SELECT * FROM sessions WHERE session_id = ?", (session_id,))
    return _SESSIONS.record(SessionRecord, rows[0]) if rows else None


def active_session(src: Reader, branch: str) -> SessionRecord | None:
    """The newest unclosed session bound to `branch`."""
    rows = read_rows(
        src,
        "SELECT * FROM sessions WHERE branch = ? AND closed_at IS NULL "
        "ORDER BY session_id DESC LIMIT 1",
        (branch,),
    )
    return _SESSIONS.record(SessionRecord, rows[0]) if rows else None


def open_sessions(src: Reader) -> list[SessionRecord]:
    """Every unclosed session, newest first (one per branch is the active one)."""
    rows = read_rows(src, "SELECT * FROM sessions WHERE closed_at IS NULL ORDER BY session_id DESC")
    return [_SESSIONS.record(SessionRecord, r) for r in rows]


def all_sessions(src: Reader) -> list[SessionRecord]:
    """Every session, open or closed, newest first."""
    rows = read_rows(src, "SELECT * FROM sessions ORDER BY session_id DESC")
    return [_SESSIONS.record(SessionRecord, r) for r in rows]


# --- runs ----------------------------------------------------------------------------------


def insert_run(
    conn: sqlite3.Connection, session: SessionRecord, base_commit: str
) -> SessionRunRecord:
    """Start the session's next run (numbered from 1 across segments)."""
    row = conn.execute(
        "SELECT COALESCE(MAX(number), 0) + 1 FROM session_runs WHERE session_id = ?",
        (session.session_id,),
    ).fetchone()
    number = int(row[0])
    cur = conn.execute(
        "INSERT INTO session_runs (session_id, number, segment, command, base_commit, "
        "started_at) VALUES (?, ?, ?, ?, ?, ?)",
        (session.session_id, number, session.segment, session.command, base_commit, utc_now_iso()),
    )
    found = get_run(conn, int(cur.lastrowid or 0))
    assert found is not None
    return found


def update_run(conn: sqlite3.Connection, run_id: int, **changes: Any) -> None:
    """Update columns of a run (JSON fields by their record name)."""
    records.update(conn, "session_runs", {"run_id": run_id}, _RUNS.columns(changes))


def get_run(src: Reader, run_id: int) -> SessionRunRecord | None:
    rows = read_rows(src, "SELECT * FROM session_runs WHERE run_id = ?", (run_id,))
    return _RUNS.record(SessionRunRecord, rows[0]) if rows else None


def run_by_number(src: Reader, session_id: int, number: int) -> SessionRunRecord | None:
    rows = read_rows(
        src,
        "SELECT * FROM session_runs WHERE session_id = ? AND number = ?",
        (session_id, number),
    )
    return _RUNS.record(SessionRunRecord, rows[0]) if rows else None


def pending_runs(src: Reader, session_id: int) -> list[SessionRunRecord]:
    rows = read_rows(
        src,
        "SELECT * FROM session_runs WHERE session_id = ? AND status IS NULL "
        "AND abandoned_at IS NULL ORDER BY number",
        (session_id,),
    )
    return [_RUNS.record(SessionRunRecord, r) for r in rows]


def pending_run(src: Reader, session_id: int) -> SessionRunRecord | None:
    found = pending_runs(src, session_id)
    return found[-1] if found else None


def abandon_pending(conn: sqlite3.Connection, session_id: int) -> list[SessionRunRecord]:
    """Mark every pending run of the session abandoned; returns them as they were."""
    found = pending_runs(conn, session_id)
    now = utc_now_iso()
    for run in found:
        update_run(conn, run.run_id, abandoned_at=now, pgid=None)
    return found


def logged_runs(src: Reader, session_id: int, segment: int) -> list[SessionRunRecord]:
    """The segment's logged runs, in order."""
    rows = read_rows(
        src,
        "SELECT * FROM session_runs WHERE session_id = ? AND segment = ? "
        "AND status IS NOT NULL ORDER BY number",
        (session_id, segment),
    )
    return [_RUNS.record(SessionRunRecord, r) for r in rows]


def logged_count(src: Reader, session_id: int, segment: int) -> int:
    rows = read_rows(
        src,
        "SELECT COUNT(*) FROM session_runs WHERE session_id = ? AND segment = ? "
        "AND status IS NOT NULL",
        (session_id, segment),
    )
    return int(rows[0][0])


def latest_statuses(src: Reader, session_id: int, segment: int, limit: int) -> tuple[Verdict, ...]:
    """The verdicts of the segment's latest `limit` logged runs, newest first."""
    rows = read_rows(
        src,
        "SELECT run_id, status FROM session_runs WHERE session_id = ? AND segment = ? "
        "AND status IS NOT NULL ORDER BY number DESC LIMIT ?",
        (session_id, segment, limit),
    )
    return tuple(_RUNS.value("status", r) for r in rows)


def recent_runs(src: Reader, session_id: int, limit: int) -> list[SessionRunRecord]:
    """The last `limit` logged runs of every segment, oldest first."""
    rows = read_rows(
        src,
        "SELECT * FROM session_runs WHERE session_id = ? AND status IS NOT NULL "
        "ORDER BY number DESC LIMIT ?",
        (session_id, limit),
    )
    return [_RUNS.record(SessionRunRecord, r) for r in reversed(rows)]


def unjustified_keeps(src: Reader, session_id: int) -> list[SessionRunRecord]:
    """Kept runs with scope deviations, no justification and no flag (shown until settled)."""
    rows = read_rows(
        src,
        "SELECT * FROM session_runs WHERE session_id = ? AND status = ? AND flagged = 0 "
        "AND (justification IS NULL OR justification = '') "
        "AND deviations_json IS NOT NULL AND deviations_json != '[]' ORDER BY number",
        (session_id, Verdict.KEEP),
    )
    return [_RUNS.record(SessionRunRecord, r) for r in rows]
