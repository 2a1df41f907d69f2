"""A record's JSON shape: the one way a dataclass becomes the plain data of a `to_dict`.

Its fields in their order; a nested record as its own `to_dict` (a record without one as its
fields), at any depth inside lists, tuples and dicts; tuples as lists. The run summaries
(supervisor/summary.py) and the session records (experiments/) both answer with it, so
`--json`, the MCP tools' structured output and the ledger agree on how a record looks.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from _typeshed import DataclassInstance


def json_shape(record: DataclassInstance) -> dict[str, object]:
    """`record`'s fields in their order, their values as plain data."""
    return {f.name: _plain(getattr(record, f.name)) for f in dataclasses.fields(record)}


def _plain(value: object) -> object:
    to_dict = getattr(value, "to_dict", None)
    if callable(to_dict):
        return _plain(to_dict())
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return json_shape(value)
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
