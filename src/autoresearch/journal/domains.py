"""The values a journal may hold, and where it holds others: a damaged journal is found, not
read as if it were whole.

An enum-valued column (a run's status, an iteration's decision, …) holding a value outside its
enum is damage a page check cannot see: a hand edit with `sqlite3`, a bad restore, a bug of a
past version. Read as is, it miscounts silently (the run list's `kept` is a SQL count of
`decision = 'keep'`) or fails deep inside a command. So every journal is scanned for such
values when it is opened (`Journal.open`, before anything is written) and every backup before
it may be restored; the codec that turns a row into a record (journal/records.py) refuses a
value it cannot decode the same way, in the same words; `autoresearch doctor` also parses
every JSON column (`json_problems`), which is too slow for every command on a long run.

One registry, `DOMAINS`: a column whose record field is an enum is listed here (a test checks
the stores' codecs against it).
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from enum import StrEnum
from typing import NamedTuple

from autoresearch.states import (
    ChildRole,
    DecisionKind,
    Direction,
    EvalPurpose,
    EvalStatus,
    IterationKind,
    IterationState,
    JobState,
    KeepPolicy,
    LaneState,
    Phase,
    ResultState,
    Role,
    RunStatus,
    Verdict,
)

# How many bad values a message names (the rest are counted).
SHOWN = 3
MAX_SHOWN_VALUE = 60


class Domain(NamedTuple):
    """The values column `column` of table `table` may hold (NULL aside: the schema says
    where NULL is allowed). A NamedTuple: every opening of the journal imports this module,
    and a frozen dataclass's generated methods cost ~0.3 ms more to build."""

    table: str
    column: str
    values: type[StrEnum]


DOMAINS: tuple[Domain, ...] = (
    Domain("runs", "status", RunStatus),
    Domain("runs", "phase", Phase),
    Domain("runs", "keep_policy", KeepPolicy),
    Domain("iterations", "kind", IterationKind),
    Domain("iterations", "state", IterationState),
    Domain("iterations", "decision", DecisionKind),
    Domain("iterations", "keep_policy", KeepPolicy),
    Domain("evaluations", "status", EvalStatus),
    Domain("evaluations", "role", Role),
    Domain("evaluations", "purpose", EvalPurpose),
    Domain("sessions", "direction", Direction),
    Domain("session_runs", "status", Verdict),
    Domain("jobs", "state", JobState),
    Domain("jobs", "result_state", ResultState),
    Domain("run_lanes", "state", LaneState),
    Domain("run_lanes", "last_decision", DecisionKind),
    Domain("children", "role", ChildRole),
)


# a NamedTuple: status imports it, and a frozen dataclass compiles its methods at import
class BadValue(NamedTuple):
    """One value the journal holds where it may not: which table, row and column, what is
    there and what was expected."""

    table: str
    row: str  # the row's key, e.g. "run_id=r1, iteration=3"
    column: str
    value: object
    expected: str  # e.g. "one of keep, discard" or "valid JSON"

    def describe(self) -> str:
        shown = repr(self.value)
        if len(shown) > MAX_SHOWN_VALUE:
            shown = shown[: MAX_SHOWN_VALUE - 3] + "..."
        where = [f"table {self.table}"] if self.table else []
        where += [f"row {self.row}"] if self.row else []
        prefix = ", ".join(where) + ": " if where else ""
        return f"{prefix}{self.column} is {shown}, expected {self.expected}"


def one_of(values: type[StrEnum]) -> str:
    return "one of " + ", ".join(member.value for member in values)


def describe_all(found: list[BadValue], total: int | None = None) -> str:
    """The first few bad values in one line, with how many more there are."""
    total = len(found) if total is None else total
    text = "; ".join(bad.describe() for bad in found[:SHOWN])
    more = total - min(len(found), SHOWN)
    return text + (f" (and {more} more)" if more > 0 else "")


def _quoted(name: str) -> str:
    """An SQL identifier, quoted: json_problems reads table names from the file itself."""
    return '"' + name.replace('"', '""') + '"'


def _columns(conn: sqlite3.Connection, table: str) -> tuple[set[str], list[str]]:
    """The table's columns (none when it does not exist yet) and its key columns (rowid for a
    table without a declared primary key)."""
    info = conn.execute(f"PRAGMA table_info({_quoted(table)})").fetchall()
    keys = [str(r[1]) for r in sorted((r for r in info if r[5]), key=lambda r: r[5])]
    return {str(r[1]) for r in info}, keys or ["rowid"]


def row_key(keys: Sequence[str], values: Sequence[object]) -> str:
    """`run_id=r1, iteration=3`: how a message names a row."""
    return ", ".join(f"{k}={v}" for k, v in zip(keys, values, strict=True))


def _outside(domain: Domain, plugins_too: bool = False) -> tuple[str, list[str]]:
    """The SQL condition "this row's value is outside the domain", and its parameters. With
    `plugins_too`, a keep policy may also be one a plugin registered (asked only once a value
    is outside the built-ins: reading the installed metadata costs more than the scan)."""
    allowed = [member.value for member in domain.values]
    if plugins_too and domain.values is KeepPolicy:
        allowed = list(KeepPolicy.registered())
    column = _quoted(domain.column)
    # `typeof` too: an integer 1 is not the text '1' of a member
    marks = ", ".join("?" for _ in allowed)
    condition = (
        f"({column} IS NOT NULL AND (typeof({column}) != 'text' OR {column} NOT IN ({marks})))"
    )
    return condition, allowed


def enum_problems(conn: sqlite3.Connection, limit: int = SHOWN) -> tuple[list[BadValue], int]:
    """Up to `limit` values outside their column's domain, and how many there are. A table or
    column a journal does not have yet (it is migrated after this check) is skipped. A whole
    journal costs one scan per table (every open pays it); a damaged one a few more."""
    found: list[BadValue] = []
    total = 0
    for table in dict.fromkeys(d.table for d in DOMAINS):
        columns, keys = _columns(conn, table)
        here = [d for d in DOMAINS if d.table == table and d.column in columns]
        if not here:
            continue
        tests = [_outside(d) for d in here]
        anywhere = " OR ".join(condition for condition, _ in tests)
        params = [p for _, allowed in tests for p in allowed]
        if not conn.execute(
            f"SELECT 1 FROM {_quoted(table)} WHERE {anywhere} LIMIT 1", params
        ).fetchone():
            continue
        tests = [_outside(d, plugins_too=True) for d in here]
        picked = ", ".join(_quoted(k) for k in keys)
        for domain, (condition, allowed) in zip(here, tests, strict=True):
            sql = f"FROM {_quoted(table)} WHERE {condition}"
            total += int(conn.execute(f"SELECT COUNT(*) {sql}", allowed).fetchone()[0])
            rows = conn.execute(
                f"SELECT {picked}, {_quoted(domain.column)} {sql} LIMIT ?",
                [*allowed, max(limit - len(found), 0)],
            ).fetchall()
            for row in rows:
                found.append(
                    BadValue(
                        table,
                        row_key(keys, tuple(row)[:-1]),
                        domain.column,
                        row[-1],
                        one_of(domain.values),
                    )
                )
    return found, total


def enum_problem(conn: sqlite3.Connection) -> str | None:
    """The enum values a journal holds where it may not, in one line; None when there are
    none."""
    found, total = enum_problems(conn)
    return describe_all(found, total) if total else None


def json_problems(conn: sqlite3.Connection, limit: int = SHOWN) -> tuple[list[BadValue], int]:
    """Up to `limit` values of `*_json` columns that do not parse, and how many there are (the
    deep check of `autoresearch doctor`: every JSON value of every table is read)."""
    found: list[BadValue] = []
    total = 0
    names = conn.execute("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
    for (table,) in names.fetchall():
        columns, keys = _columns(conn, str(table))
        for column in sorted(c for c in columns if c.endswith("_json")):
            picked = ", ".join(_quoted(c) for c in [*keys, column])
            rows = conn.execute(
                f"SELECT {picked} FROM {_quoted(table)} WHERE {_quoted(column)} IS NOT NULL"
            )
            for row in rows:
                problem = _json_error(row[-1])
                if problem is None:
                    continue
                total += 1
                if len(found) < limit:
                    found.append(
                        BadValue(
                            str(table),
                            row_key(keys, tuple(row)[:-1]),
                            column,
                            row[-1],
                            f"valid JSON ({problem})",
                        )
                    )
    return found, total


def _json_error(value: object) -> str | None:
    if not isinstance(value, str):
        return f"a {type(value).__name__}, not JSON text"
    try:
        json.loads(value)
    except ValueError as exc:
        return str(exc)
    return None
