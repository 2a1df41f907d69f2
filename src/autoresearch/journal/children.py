"""The one registry of live child process groups (`children` table), for every front door.

A driver records a group right after spawning it and forgets it once the child has ended, in
the same transactions as its other writes; what a crashed driver left here is stopped by the
next driver of the same owner (children.reap). Owners are a run id, `session:<id>:<n>` for a
session's harness run, or `job:<id>` for a delegation job (children.ChildTag.owner).
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass

from autoresearch.clock import utc_now_iso
from autoresearch.journal.db import Reader, read_rows
from autoresearch.journal.records import Codec
from autoresearch.states import ChildRole


@dataclass(frozen=True)
class Child:
    """One registered process group."""

    pgid: int
    role: ChildRole
    marker: str


_CHILDREN = Codec({}, enums={"role": ChildRole})


def add_child(
    conn: sqlite3.Connection, owner: str, pgid: int, role: ChildRole, marker: str
) -> None:
    conn.execute(
        "INSERT OR REPLACE INTO children (pgid, owner, role, marker, started_at) "
        "VALUES (?, ?, ?, ?, ?)",
        (pgid, owner, role, marker, utc_now_iso()),
    )


def clear_children(conn: sqlite3.Connection, owner: str) -> None:
    conn.execute("DELETE FROM children WHERE owner = ?", (owner,))


def children(journal: Reader, owner: str) -> list[Child]:
    sql = "SELECT pgid, role, marker FROM children WHERE owner = ? ORDER BY started_at, pgid"
    rows = read_rows(journal, sql, (owner,))
    return [_CHILDREN.record(Child, r) for r in rows]
