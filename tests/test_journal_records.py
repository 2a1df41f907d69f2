"""journal/records: a row read into its record (Codec.record, by any query's shape), and
stamped_update, the one update of a store's row by its key (runs, sessions, jobs): field values
become column values, and updated_at is stamped unless the caller names it. Real SQLite, a
table of its own."""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass, field

import pytest

from autoresearch.errors import JournalError
from autoresearch.journal import records
from autoresearch.journal.records import Codec
from autoresearch.states import RunStatus

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


@dataclass(frozen=True)
class Item:
    a: str
    b: int
    state: RunStatus | None = None
    done: bool = False
    notes: tuple[str, ...] = ()
    missing: str = "kept"  # a field whose column the query does not select keeps its default


ITEMS = Codec(
    {"notes": "notes_json"},
    bools=frozenset({"done"}),
    tuples=frozenset({"notes"}),
    enums={"state": RunStatus},
    table="items",
    keys=("a", "b"),
)


@pytest.mark.parametrize(
    ("select", "item"),
    [
        ("SELECT * FROM items", Item("x", 1, RunStatus.RUNNING, True, ("n",))),
        ("SELECT b, a FROM items", Item("x", 1)),  # another query's shape: its own positions
        ("SELECT notes_json, done, a, b FROM items", Item("x", 1, None, True, ("n",))),
    ],
)
def test_a_row_is_read_into_its_record_by_any_query_shape(select: str, item: Item) -> None:
    conn = sqlite3.connect(":memory:")
    conn.row_factory = sqlite3.Row
    conn.execute("CREATE TABLE items (a TEXT, b INTEGER, state TEXT, done INTEGER, notes_json)")
    conn.execute("INSERT INTO items VALUES ('x', 1, 'running', 1, '[\"n\"]')")
    for _ in range(2):  # the second read uses the plan the first worked out
        assert ITEMS.record(Item, conn.execute(select).fetchone()) == item
    conn.execute("UPDATE items SET state = 'runing'")  # damaged: named by table, row, column
    with pytest.raises(JournalError, match=r"table items, row a=x, b=1: state is 'runing'"):
        ITEMS.record(Item, conn.execute("SELECT * FROM items").fetchone())


@dataclass(frozen=True)
class Listed:
    a: str
    tags: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Shouted:
    a: str

    def __post_init__(self) -> None:
        object.__setattr__(self, "a", self.a.upper())


@dataclass(frozen=True, init=False)
class Counted:
    a: str

    def __init__(self, a: str) -> None:
        object.__setattr__(self, "a", a * 2)


def test_a_record_is_made_as_its_constructor_makes_it() -> None:
    # made without its __init__ (a long run's status builds thousands): the same fields, each
    # a default factory's own value; a class whose __init__ does more is called
    conn = sqlite3.connect(":memory:")
    conn.row_factory = sqlite3.Row
    conn.execute("CREATE TABLE items (a TEXT)")
    conn.execute("INSERT INTO items VALUES ('x')")
    codec = Codec({})
    first, second = (codec.record(Listed, conn.execute("SELECT a FROM items").fetchone())
                     for _ in range(2))  # fmt: skip
    assert vars(first) == vars(Listed("x")) and first == second
    assert first.tags is not second.tags
    assert codec.record(Shouted, conn.execute("SELECT a FROM items").fetchone()) == Shouted("X")
    assert codec.record(Counted, conn.execute("SELECT a FROM items").fetchone()).a == "xx"
