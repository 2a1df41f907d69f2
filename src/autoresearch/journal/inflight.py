"""Agent sessions in flight (`session_inflight` table): one row per run while its session runs;
with lanes (`lane_inflight`), one row per lane.

Written before the agent starts and deleted, with the children registry, once it returned. A
row that a later driver finds is a session that never finished: whatever it left in
candidate.json (half written, or a verdict nobody saw it reach) is not a verdict.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass

from autoresearch.clock import utc_now_iso
from autoresearch.journal.db import Journal


@dataclass(frozen=True)
class InflightSession:
    iteration: int
    base_commit: str


def start(conn: sqlite3.Connection, run_id: str, iteration: int, base_commit: str) -> None:
    conn.execute(
        "INSERT OR REPLACE INTO session_inflight (run_id, iteration, base_commit, started_at) "
        "VALUES (?, ?, ?, ?)",
        (run_id, iteration, base_commit, utc_now_iso()),
    )


def finish(conn: sqlite3.Connection, run_id: str, lane: int = 0) -> None:
    """The session ended (lane 0: the single loop's; else that lane's)."""
    if lane:
        finish_lane(conn, run_id, lane)
        return
    conn.execute("DELETE FROM session_inflight WHERE run_id = ?", (run_id,))


def get(journal: Journal, run_id: str, lane: int = 0) -> InflightSession | None:
    """The session a crash cut off (lane 0: the single loop's; else that lane's), or None."""
    if lane:
        return get_lane(journal, run_id, lane)
    row = journal.row(
        "SELECT iteration, base_commit FROM session_inflight WHERE run_id = ?", (run_id,)
    )
    return InflightSession(int(row[0]), str(row[1])) if row else None


def start_lane(
    conn: sqlite3.Connection, run_id: str, lane: int, session: int, base_commit: str
) -> None:
    conn.execute(
        "INSERT OR REPLACE INTO lane_inflight (run_id, lane, session, base_commit, started_at) "
        "VALUES (?, ?, ?, ?, ?)",
        (run_id, lane, session, base_commit, utc_now_iso()),
    )


def finish_lane(conn: sqlite3.Connection, run_id: str, lane: int) -> None:
    conn.execute("DELETE FROM lane_inflight WHERE run_id = ? AND lane = ?", (run_id, lane))


def get_lane(journal: Journal, run_id: str, lane: int) -> InflightSession | None:
    """The lane's session a crash cut off (its number is `iteration`), or None."""
    row = journal.row(
        "SELECT session, base_commit FROM lane_inflight WHERE run_id = ? AND lane = ?",
        (run_id, lane),
    )
    return InflightSession(int(row[0]), str(row[1])) if row else None


def lanes_in_flight(journal: Journal, run_id: str) -> list[int]:
    """The lanes whose session a crash cut off, whatever lane count their driver had."""
    rows = journal.rows("SELECT lane FROM lane_inflight WHERE run_id = ? ORDER BY lane", (run_id,))
    return [int(row[0]) for row in rows]
