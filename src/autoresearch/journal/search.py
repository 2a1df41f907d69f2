"""The frontier's archive (`search_elites`) and each session's parent (`search_parents`).

Written only by a run's driver (supervisor/frontier.py); read by anyone. An evicted elite
keeps its row (with the iteration that evicted it): the lineage stays readable, and its ref
reachable, after it leaves the archive. `search_progress.through` is the last iteration the
archive has taken in, so that bringing it up to date reads only the iterations since.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable
from dataclasses import dataclass

from autoresearch.journal.db import Journal


@dataclass(frozen=True)
class EliteRow:
    commit: str
    score: float | None
    parent: str | None
    lineage: str
    entered: int
    evicted: int | None = None


def elites(journal: Journal, run_id: str, current: bool = True) -> list[EliteRow]:
    """The run's elites in the order they entered (`current`: only those still in it)."""
    where = " AND evicted IS NULL" if current else ""
    rows = journal.rows(
        "SELECT commit_sha, score, parent, lineage, entered, evicted FROM search_elites "
        f"WHERE run_id = ?{where} ORDER BY entered, commit_sha",
        (run_id,),
    )
    return [EliteRow(*tuple(r)) for r in rows]


def through(journal: Journal, run_id: str) -> int | None:
    """The last iteration the archive took in (None: the archive was never started)."""
    row = journal.row("SELECT through FROM search_progress WHERE run_id = ?", (run_id,))
    return None if row is None else int(row[0])


def save(conn: sqlite3.Connection, run_id: str, rows: Iterable[EliteRow], upto: int) -> None:
    """Write the elites `rows` (new or changed) and how far the archive has read."""
    for e in rows:
        conn.execute(
            "INSERT OR REPLACE INTO search_elites "
            "(run_id, commit_sha, score, parent, lineage, entered, evicted) "
            "VALUES (?, ?, ?, ?, ?, ?, ?)",
            (run_id, e.commit, e.score, e.parent, e.lineage, e.entered, e.evicted),
        )
    conn.execute(
        "INSERT OR REPLACE INTO search_progress (run_id, through) VALUES (?, ?)", (run_id, upto)
    )


def record_parent(
    conn: sqlite3.Connection, run_id: str, iteration: int, lane: int, parent: str
) -> None:
    """The parent the session that becomes `iteration` starts from (kept when recorded: a
    resumed run starts that session from the same parent)."""
    conn.execute(
        "INSERT OR IGNORE INTO search_parents (run_id, iteration, lane, parent) "
        "VALUES (?, ?, ?, ?)",
        (run_id, iteration, lane, parent),
    )


def set_parent(
    conn: sqlite3.Connection, run_id: str, iteration: int, lane: int, parent: str
) -> None:
    """The parent a lane's candidate, about to be judged as `iteration`, is judged against:
    recorded just before its step, so a judgement a kill cut short is recorded anew by the
    candidate that next gets that number (lanes number an iteration when it is judged)."""
    conn.execute(
        "INSERT OR REPLACE INTO search_parents (run_id, iteration, lane, parent) "
        "VALUES (?, ?, ?, ?)",
        (run_id, iteration, lane, parent),
    )


def parent_of(journal: Journal, run_id: str, iteration: int) -> str | None:
    row = journal.row(
        "SELECT parent FROM search_parents WHERE run_id = ? AND iteration = ?",
        (run_id, iteration),
    )
    return None if row is None else str(row[0])


def parents(journal: Journal, run_id: str) -> dict[int, str]:
    """Each session's parent, by the iteration it became."""
    rows = journal.rows(
        "SELECT iteration, parent FROM search_parents WHERE run_id = ? ORDER BY iteration",
        (run_id,),
    )
    return {int(r[0]): str(r[1]) for r in rows}


def tries(journal: Journal, run_id: str) -> dict[str, int]:
    """How many sessions started from each parent."""
    rows = journal.rows(
        "SELECT parent, COUNT(*) FROM search_parents WHERE run_id = ? GROUP BY parent",
        (run_id,),
    )
    return {str(r[0]): int(r[1]) for r in rows}
