"""A record's JSON shape: the one way a dataclass (or a NamedTuple: a record that a light
command imports) becomes the plain data of a `to_dict`.

Its fields in their order; a nested record as its own `to_dict` (a record without one as its
fields), at any depth inside lists, tuples and dicts; tuples as lists, paths as strings; an enum
stays the member it is (a StrEnum: its value in JSON, and callers may compare it). A field whose
JSON differs says so in its metadata (`field(metadata=json_field(...))`; a NamedTuple, whose
fields have none, in its static `json_fields()`: {name: json_field(...)}): another key, a
converter, hidden, left out when its value says so (`omit_when=is_none`), written in place as
its own keys (`inline`: a nested record or mapping whose keys sit among the record's), after
the other fields (`trails`: a JSON older than the field's place), or a mapping whose keys lead
the record's (the unknown keys a record keeps as read). What a record
adds that is no field (a property, a sentence) comes from its `json_extra()`, after the fields.
The run summaries (supervisor/summary.py), the session records (experiments/), the contracts
and the worker's records all answer with it, so `--json`, the MCP tools' structured output and
the ledger agree on how a record looks.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable, Mapping
from pathlib import PurePath
from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

    # a record json_shape writes: a dataclass, or a NamedTuple (whose fields carry no metadata)
    Record = DataclassInstance | tuple[object, ...]

_METADATA_KEY = "autoresearch.json"


class FieldShape(NamedTuple):
    """How one field appears in its record's JSON, where not as itself under its own name (a
    NamedTuple, as _Layout: every command that reads a record imports this module, and a frozen
    dataclass compiles its generated methods at import, ~0.5 ms each here)."""

    key: str | None = None  # the JSON key, where the field's name is not it
    convert: Callable[[object], object] | None = None  # the value written, from the field's
    hidden: bool = False  # never written: what the record holds but its JSON never carried
    leads: bool = False  # a mapping whose keys come first, then the fields' (which win a clash)
    omit_when: Callable[[object], bool] | None = None  # not written when this says so
    inline: bool = False  # a nested record's or mapping's keys written in this field's place
    trails: bool = False  # written after the other fields (in their order), before json_extra


_AS_IS = FieldShape()
_SCALARS = (str, int, float)  # bool is an int
_PLAIN_TYPES = frozenset({str, int, float, bool, type(None)})


def json_field(
    *,
    key: str | None = None,
    convert: Callable[[object], object] | None = None,
    hidden: bool = False,
    leads: bool = False,
    omit_when: Callable[[object], bool] | None = None,
    inline: bool = False,
    trails: bool = False,
) -> Mapping[str, FieldShape]:
    """A field's metadata for `json_shape`: `field(metadata=json_field(key="status"))`."""
    return {_METADATA_KEY: FieldShape(key, convert, hidden, leads, omit_when, inline, trails)}


def is_none(value: object) -> bool:
    """`omit_when` for a field written only when it has a value."""
    return value is None


def is_empty(value: object) -> bool:
    """`omit_when` for a field written only when it holds something (None, "", [], {} do not)."""
    return value is None or (isinstance(value, str | list | tuple | dict) and not value)


def json_shape(record: Record) -> dict[str, object]:
    """`record`'s fields in their order, their values as plain data, then its `json_extra()`."""
    layout = _layout(type(record))
    data: dict[str, object] = {}
    for name in layout.leading:
        data.update(mapping(_plain(getattr(record, name))))
    for name, key, shape in layout.written:
        value = getattr(record, name)
        if shape is None:
            # a plain value as it is, without a call: a status writes thousands of these
            data[key] = value if type(value) in _PLAIN_TYPES else _plain(value)
            continue
        if shape.omit_when is not None and shape.omit_when(value):
            continue
        if shape.convert is not None:
            value = shape.convert(value)
        if shape.inline:
            data.update(mapping(_plain(value)))
        else:
            data[key] = value if type(value) in _PLAIN_TYPES else _plain(value)
    if layout.extra:
        data.update(mapping(_plain(record.json_extra())))  # type: ignore[union-attr]
    return data


class _Layout(NamedTuple):
    """A record class's JSON, read once from its fields (a status shows thousands of rows)."""

    leading: tuple[str, ...]  # the fields whose keys come first
    # name, key, and the field's shape where it is more than its value under a key, in the
    # order they are written
    written: tuple[tuple[str, str, FieldShape | None], ...]
    in_field_order: tuple[tuple[str, str, FieldShape | None], ...]  # the same, as declared
    extra: bool  # whether the class has a json_extra()


@functools.cache
def _layout(record_type: type[Record]) -> _Layout:
    shaped = _shaped_fields(record_type)
    written = [
        (name, shape.key or name, None if _only_renamed(shape) else shape, shape.trails)
        for name, shape in shaped
        if not (shape.hidden or shape.leads)
    ]
    return _Layout(
        leading=tuple(name for name, shape in shaped if shape.leads),
        written=tuple(w[:3] for w in sorted(written, key=lambda w: w[3])),  # a stable sort
        in_field_order=tuple(w[:3] for w in written),
        extra=callable(getattr(record_type, "json_extra", None)),
    )


def _shaped_fields(record_type: type[Record]) -> list[tuple[str, FieldShape]]:
    """Each field's name and shape, in order. A NamedTuple's fields carry no metadata: its
    static `json_fields()`, when it has one, maps a field's name to its `json_field(...)`."""
    named: tuple[str, ...] | None = getattr(record_type, "_fields", None)
    if named is not None and issubclass(record_type, tuple):
        said = getattr(record_type, "json_fields", None)
        shapes: Mapping[str, Mapping[str, FieldShape]] = said() if callable(said) else {}
        unknown = sorted(set(shapes) - set(named))
        if unknown:  # a misspelt or renamed field would drop its JSON key silently
            raise TypeError(f"{record_type.__name__}.json_fields names no field {unknown}")
        return [(name, shapes.get(name, {}).get(_METADATA_KEY, _AS_IS)) for name in named]
    return [
        (f.name, f.metadata.get(_METADATA_KEY, _AS_IS))
        for f in dataclasses.fields(record_type)  # type: ignore[arg-type]
    ]


def _only_renamed(shape: FieldShape) -> bool:
    return shape.convert is None and shape.omit_when is None and not shape.inline


def json_keys(record_type: type[Record]) -> tuple[tuple[str, str, bool], ...]:
    """Each written field's name, its JSON key and whether a converter writes it, in order: what
    a schema mirrored from the record names (mcp/schemas.mirrors), in the fields' order (a
    trailing field's JSON key comes later). A record with keys that no field gives (leading or
    inline ones, a json_extra) has no such schema: TypeError."""
    layout = _layout(record_type)
    if layout.leading or layout.extra or any(s and s.inline for _, _, s in layout.written):
        raise TypeError(f"{record_type.__name__}'s JSON has keys that are none of its fields")
    return tuple(
        (name, key, shape is not None and shape.convert is not None)
        for name, key, shape in layout.in_field_order
    )


def _plain(value: object) -> object:
    if value is None or isinstance(value, _SCALARS):
        return value  # the common case first; an enum stays the member it is
    to_dict = getattr(value, "to_dict", None)
    if callable(to_dict):
        return _plain(to_dict())
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return json_shape(value)
    if isinstance(value, PurePath):
        return str(value)
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value


# --- Reading plain data back: every value checked, so a record's fields have their types ------
# (a stored record's JSON, a YAML block). A value of the wrong type is a ValueError that names
# it: the data was not written by this code, or was changed by hand.


def number(value: object) -> float:
    """`value` as a float if it is a JSON number (a bool is not one)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError(f"expected a number, got {value!r}")
    return float(value)


def whole(value: object) -> int:
    """`value` if it is a JSON whole number (a bool is not one)."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"expected a whole number, got {value!r}")
    return value


def text(value: object) -> str:
    """`value` if it is a string."""
    if not isinstance(value, str):
        raise ValueError(f"expected a string, got {value!r}")
    return value


def optional_text(value: object) -> str | None:
    """`value` if it is a string or null."""
    return None if value is None else text(value)


def mapping(value: object) -> Mapping[str, object]:
    """`value` if it is a JSON object (null: an empty one)."""
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise ValueError(f"expected an object, got {value!r}")
    return value


def items(value: object) -> list[object]:
    """`value` if it is a JSON array (null: an empty one)."""
    if value is None:
        return []
    if not isinstance(value, list):
        raise ValueError(f"expected an array, got {value!r}")
    return value


def optional_number(value: object) -> float | None:
    """`value` as a float if it is a JSON number, or null."""
    return None if value is None else number(value)
