"""journal/records.stamped_update, the one update of a store's row by its key (runs, sessions,
jobs): field values become column values, and updated_at is stamped unless the caller names
it. Real SQLite, a table of its own."""

from __future__ import annotations

import sqlite3

import pytest

from autoresearch.journal import records
from autoresearch.journal.records import Codec

CODEC = Codec({"notes": "notes_json"}, bools=frozenset({"done"}), table="items", keys=("a", "b"))


@pytest.fixture
def conn() -> sqlite3.Connection:
    conn = sqlite3.connect(":memory:")
    conn.execute(
        "CREATE TABLE items (a TEXT, b INTEGER, state TEXT, done INTEGER, notes_json TEXT, "
        "updated_at TEXT)"
    )
    conn.executemany(
        "INSERT INTO items VALUES (?, ?, 'old', 0, NULL, 'then')", [("x", 1), ("x", 2)]
    )
    return conn


@pytest.mark.parametrize(
    ("changes", "state", "done", "notes", "stamped"),
    [
        ({"state": "new"}, "new", 0, None, True),
        ({"done": True, "notes": ("one", "two")}, "old", 1, '["one", "two"]', True),
        ({"state": "new", "updated_at": "then"}, "new", 0, None, False),  # the stamp left
    ],
)
def test_a_stamped_update_changes_one_row_and_stamps_it(
    conn: sqlite3.Connection,
    changes: dict[str, object],
    state: str,
    done: int,
    notes: str | None,
    stamped: bool,
) -> None:
    records.stamped_update(conn, CODEC, ("x", 2), changes)
    rows = conn.execute("SELECT b, state, done, notes_json, updated_at FROM items ORDER BY b")
    untouched, changed = rows.fetchall()
    assert untouched == (1, "old", 0, None, "then")
    assert changed[:4] == (2, state, done, notes)
    assert (changed[4] != "then") is stamped


def test_a_key_of_the_wrong_length_is_refused(conn: sqlite3.Connection) -> None:
    with pytest.raises(ValueError):
        records.stamped_update(conn, CODEC, ("x",), {"state": "new"})
