"""Mapping between frozen record dataclasses and table rows, shared by the journal's stores.

JSON columns are named `<field>_json`; booleans are stored as 0/1; tuple fields come back as
tuples; typed JSON fields (`typed`: a class with `to_dict` / `from_dict`) come back as
records, or (`later`) as their stored text that the record's `Decoded` field decodes on its
first read (a reader that never looks at it never imports its contract); enum fields
(states.py) are stored as their string and come back as members. The SQL built here only ever
interpolates column and table names from the stores' own constants, never values.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Mapping
from dataclasses import MISSING, fields
from enum import StrEnum
from typing import Any, Generic, TypeVar

from autoresearch.clock import utc_now_iso
from autoresearch.errors import AutoresearchError, JournalError
from autoresearch.journal import domains, integrity

T = TypeVar("T")


# A field a row lacks: its name, and its default or its default factory.
Fill = tuple[str, Any, Callable[[], Any] | None]
_CALL: list[Fill] = []  # the class is built by calling it (`Codec._made`)


def _fills(cls: Any, values: Mapping[str, Any]) -> list[Fill]:
    """The defaults of the fields of `cls` that `values` lacks, or `_CALL`."""
    own_init = not cls.__dataclass_params__.init  # an __init__ of its own
    if own_init or "__post_init__" in dir(cls) or "__slots__" in cls.__dict__:
        return _CALL
    fills: list[Fill] = []
    for f in fields(cls):
        if not f.init:
            return _CALL
        if f.name in values:
            continue
        if f.default is not MISSING:
            fills.append((f.name, f.default, None))
        elif f.default_factory is not MISSING:
            fills.append((f.name, None, f.default_factory))
        else:
            return _CALL
    return fills


class Codec:
    """How one record type maps to its table.

    A plain class, as `Place` below: every reader of the journal (`status`, a hook) imports
    it, and a frozen dataclass compiles its generated methods with exec at import (~0.6 ms).
    Nothing compares, copies or serialises a codec; its settings are set here once."""

    __slots__ = (
        "_fills", "_members", "_plans", "bools", "enums", "json_columns", "keys", "later",
        "table", "tuples", "typed",
    )  # fmt: skip

    def __init__(
        self,
        json_columns: Mapping[str, str],
        bools: frozenset[str] = frozenset(),
        tuples: frozenset[str] = frozenset(),
        enums: Mapping[str, type[StrEnum]] | None = None,
        typed: Mapping[str, Any] | None = None,
        later: frozenset[str] = frozenset(),
        table: str = "",
        keys: tuple[str, ...] = (),
    ) -> None:
        self.json_columns = json_columns
        self.bools = bools
        self.tuples = tuples
        self.enums: Mapping[str, type[StrEnum]] = enums or {}
        self.typed: Mapping[str, Any] = typed or {}
        self.later = later  # typed JSON fields decoded at first read (`Decoded`)
        # The table and its key columns: a damaged value is named as the scan at open names
        # it (domains.py), by table, row and column.
        self.table = table
        self.keys = keys
        # what `_plan`, `_member` and `_made` work out once per record type and query shape
        self._plans: dict[tuple[Any, tuple[str, ...]], list[tuple[str, int, str]]] = {}
        self._members: dict[type[StrEnum], dict[str, StrEnum]] = {}
        self._fills: dict[tuple[Any, tuple[str, ...]], list[Fill]] = {}

    def columns(self, values: Mapping[str, Any]) -> dict[str, Any]:
        """Field values → column values."""
        out: dict[str, Any] = {}
        for key, value in values.items():
            if key in self.json_columns:
                plain = list(value) if isinstance(value, tuple) else value
                if (key in self.typed or key in self.later) and value is not None:
                    plain = value.to_dict()
                out[self.json_columns[key]] = None if value is None else json.dumps(plain)
            elif key in self.bools:
                out[key] = int(bool(value))
            else:
                out[key] = value
        return out

    def record_columns(self, record: Any) -> dict[str, Any]:
        return self.columns({f.name: getattr(record, f.name) for f in fields(record)})

    def record(self, cls: Any, row: sqlite3.Row) -> Any:
        """A row → an instance of the dataclass `cls` (columns it lacks keep defaults)."""
        try:  # every field at once: `status RUN` of a long run decodes thousands of rows
            names = tuple(row.keys())
            values = {name: self._field(name, column, row[at], row) if column else row[at]
                      for name, at, column in self._plan(cls, names)}  # fmt: skip
            return self._made(cls, names, values)
        except (ValueError, TypeError, KeyError, AutoresearchError):
            pass  # a damaged value: the checked reading below names it
        held = row.keys()
        data: dict[str, Any] = {}
        for f in fields(cls):
            if self.json_columns.get(f.name, f.name) in held:
                data[f.name] = self.value(f.name, row)
        return cls(**data)

    def _made(self, cls: Any, names: tuple[str, ...], values: dict[str, Any]) -> Any:
        """`cls(**values)`, as its `__init__` would make it but without it: a frozen
        dataclass's sets each field through `object.__setattr__`, ~7 µs a row of `iterations`
        (`status RUN` of a long run builds thousands). The fields the row lacks get their
        defaults; a class whose `__init__` does more (`__post_init__`, `init=False` fields,
        slots, a field without a default the row lacks) is called."""
        fills = self._fills.get((cls, names))
        if fills is None:
            fills = self._fills[(cls, names)] = _fills(cls, values)
        if fills is _CALL:
            return cls(**values)
        made = object.__new__(cls)
        made.__dict__.update(values)
        for name, default, factory in fills:
            made.__dict__[name] = factory() if factory is not None else default
        return made

    def _plan(self, cls: Any, names: tuple[str, ...]) -> list[tuple[str, int, str]]:
        """Each field of `cls` that a row's columns `names` hold: its name, its column's
        position and the column's name when its value needs decoding ('' when it is used as
        stored).
        Worked out once per record type and query shape: every row of a query has its
        columns, and a position reads a sqlite3.Row faster than a name."""
        plan = self._plans.get((cls, names))
        if plan is None:
            decoded = {*self.json_columns, *self.bools, *self.enums}
            at = {column: i for i, column in enumerate(names)}
            plan = []
            for f in fields(cls):
                column = self.json_columns.get(f.name, f.name)
                if column in at:
                    plan.append((f.name, at[column], column if f.name in decoded else ""))
            self._plans[(cls, names)] = plan
        return plan

    def value(self, name: str, row: sqlite3.Row) -> Any:
        """Field `name` of a row (which holds its column and the table's key columns)."""
        column = self.json_columns.get(name, name)
        try:
            return self._field(name, column, row[column], row)
        except (ValueError, TypeError, KeyError, AutoresearchError) as exc:
            # A value no version of this code wrote: the journal is damaged (never a crash,
            # never a guess); domains.py finds the same at open for enum columns.
            problem = self._damage(name, column, row, exc)
            raise JournalError(integrity.msg_refused(problem)) from exc

    def _field(self, name: str, column: str, value: Any, row: sqlite3.Row) -> Any:
        if name in self.later and value is not None:
            return Stored(value, self._damage_at(column, row))
        if column != name and value is not None:
            # most rows' note lists are empty: what json.loads makes of them, without it
            value = [] if value == "[]" else json.loads(value)
            value = tuple(value) if name in self.tuples else value
            if name in self.typed:
                value = self.typed[name].from_dict(value)
        elif name in self.bools:
            value = bool(value)
        elif name in self.enums and value is not None:
            value = self._member(self.enums[name], value)
        return value

    def _member(self, kind: type[StrEnum], value: str) -> StrEnum:
        """`kind(value)`, looked up: an enum's call costs `status RUN` ~2 µs a value, five a
        row. A value outside the built-ins (a plugin's keep policy, damage) still calls it."""
        members = self._members.get(kind)
        if members is None:
            members = self._members[kind] = {member.value: member for member in kind}
        found = members.get(value)
        return found if found is not None else kind(value)

    def _damage(self, name: str, column: str, row: sqlite3.Row, exc: BaseException) -> str:
        if name in self.enums:
            expected = domains.one_of(self.enums[name])
        elif column != name:
            expected = f"valid JSON of its record ({exc})"
        else:
            expected = f"a valid value ({exc})"
        return self._damage_at(column, row).problem(row[column], expected)

    def _damage_at(self, column: str, row: sqlite3.Row) -> Place:
        names = row.keys()
        keys = [k for k in self.keys if k in names]
        return Place(self.table, domains.row_key(keys, [row[k] for k in keys]), column)


class Place:
    """Where a stored value is: its table, its row's key and its column (what a damaged
    value's message names). A plain class: a run record carries one per lazy field, and a
    dataclass more would cost every reader its creation at import."""

    __slots__ = ("column", "row", "table")

    def __init__(self, table: str, row: str, column: str) -> None:
        self.table, self.row, self.column = table, row, column

    def problem(self, value: object, expected: str) -> str:
        bad = domains.BadValue(self.table, self.row, self.column, value, expected)
        return f"a row of the journal is damaged ({bad.describe()})"


class Stored:
    """A typed JSON field as the journal holds it, not decoded yet, and where it is."""

    __slots__ = ("_parsed", "place", "text")

    def __init__(self, text: str, place: Place) -> None:
        self.text, self.place = text, place
        self._parsed: object = Stored  # not parsed yet (a JSON value is never a class)

    def decoded(self, decode: Callable[[Any], T]) -> T:
        """The record `decode` makes of the JSON (parsed once: a part of it may be asked for
        again and again, `RunRecord.noise`); refused as `Codec.value` refuses a damaged value
        (the same one-line message, naming the table, row and column)."""
        try:
            if self._parsed is Stored:
                self._parsed = json.loads(self.text)
            return decode(self._parsed)
        # AttributeError: JSON of another shape (`[1]` where an object was written)
        except (ValueError, TypeError, KeyError, AttributeError, AutoresearchError) as exc:
            problem = self.place.problem(self.text, f"valid JSON of its record ({exc})")
            raise JournalError(integrity.msg_refused(problem)) from exc


class Decoded(Generic[T]):
    """A frozen record's field whose JSON is decoded at its first read, then kept: a reader
    that never looks at it (`status` listing runs) never imports its contract. Set on the
    class after `@dataclass` made it (`decoded_later`), so the field stays a plain one for the
    constructor, `replace`, equality and mypy; the value lives in the instance's own
    `__dict__` under the field's name (a pickled or copied record carries it as it is)."""

    def __init__(self, name: str, decode: Callable[[Any], T]) -> None:
        self._name, self._decode = name, decode

    def __get__(self, record: object, owner: type | None = None) -> Any:
        if record is None:
            return self
        value = record.__dict__[self._name]
        if isinstance(value, Stored):
            value = record.__dict__[self._name] = value.decoded(self._decode)
        return value

    def __set__(self, record: object, value: object) -> None:
        # reached by the dataclass's own __init__ only: its frozen __setattr__ refuses others
        record.__dict__[self._name] = value


def decoded_later(cls: type, name: str, decode: Callable[[Any], object]) -> None:
    """Make field `name` of the dataclass `cls` a `Decoded` one (its codec's `later`)."""
    setattr(cls, name, Decoded(name, decode))


def insert(conn: sqlite3.Connection, table: str, cols: Mapping[str, Any]) -> int:
    names = ", ".join(cols)
    marks = ", ".join("?" for _ in cols)
    cur = conn.execute(f"INSERT INTO {table} ({names}) VALUES ({marks})", list(cols.values()))
    return int(cur.lastrowid or 0)


def update(
    conn: sqlite3.Connection, table: str, where: Mapping[str, Any], cols: Mapping[str, Any]
) -> None:
    assignments = ", ".join(f"{k} = ?" for k in cols)
    condition = " AND ".join(f"{k} = ?" for k in where)
    conn.execute(
        f"UPDATE {table} SET {assignments} WHERE {condition}",
        [*cols.values(), *where.values()],
    )


def stamped_update(
    conn: sqlite3.Connection, codec: Codec, key: tuple[Any, ...], changes: Mapping[str, Any]
) -> None:
    """Update one row of `codec.table`, found by its key columns, with field values (JSON
    fields by their record name), stamping updated_at now unless `changes` names it (a write
    that must leave the stamp as it was, supervisor/sync.py's)."""
    values = {**changes}
    values.setdefault("updated_at", utc_now_iso())
    where = dict(zip(codec.keys, key, strict=True))
    update(conn, codec.table, where, codec.columns(values))
