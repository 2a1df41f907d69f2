"""The host hooks' counters in the journal (`session_hooks`, one row per session segment).

The only module that knows their SQL. A missing row reads as all-zero counters.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass

from autoresearch.clock import utc_now_iso
from autoresearch.journal.db import Reader, read_rows


@dataclass(frozen=True)
class HookCounters:
    """What the Stop hook remembers across host restarts."""

    resumed_turns: int = 0
    last_logged_run: int = 0
    last_pending_run: int | None = None
    notice: str | None = None


def counters(src: Reader, session_id: int, segment: int) -> HookCounters:
    rows = read_rows(
        src,
        "SELECT resumed_turns, last_logged_run, last_pending_run, notice FROM session_hooks "
        "WHERE session_id = ? AND segment = ?",
        (session_id, segment),
    )
    if not rows:
        return HookCounters()
    row = rows[0]
    return HookCounters(int(row[0]), int(row[1]), row[2], row[3])


def save_counters(
    conn: sqlite3.Connection, session_id: int, segment: int, value: HookCounters
) -> None:
    conn.execute(
        "INSERT INTO session_hooks (session_id, segment, resumed_turns, last_logged_run, "
        "last_pending_run, notice, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?) "
        "ON CONFLICT (session_id, segment) DO UPDATE SET resumed_turns = excluded.resumed_turns, "
        "last_logged_run = excluded.last_logged_run, "
        "last_pending_run = excluded.last_pending_run, notice = excluded.notice, "
        "updated_at = excluded.updated_at",
        (
            session_id,
            segment,
            value.resumed_turns,
            value.last_logged_run,
            value.last_pending_run,
            value.notice,
            utc_now_iso(),
        ),
    )


def newest_logged_number(src: Reader, session_id: int) -> int:
    """The highest run number logged in the session (0: none)."""
    rows = read_rows(
        src,
        "SELECT COALESCE(MAX(number), 0) FROM session_runs "
        "WHERE session_id = ? AND status IS NOT NULL",
        (session_id,),
    )
    return int(rows[0][0])
