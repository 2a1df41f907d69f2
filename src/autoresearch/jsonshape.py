"""A record's JSON shape: the one way a dataclass becomes the plain data of a `to_dict`.

Its fields in their order; a nested record as its own `to_dict` (a record without one as its
fields), at any depth inside lists, tuples and dicts; tuples as lists. The run summaries
(supervisor/summary.py) and the session records (experiments/) both answer with it, so
`--json`, the MCP tools' structured output and the ledger agree on how a record looks.
"""

from __future__ import annotations

import dataclasses
from typing import Any


def json_shape(record: Any) -> dict[str, Any]:
    """`record`'s fields in their order, their values as plain data."""
    return {f.name: _plain(getattr(record, f.name)) for f in dataclasses.fields(record)}


def _plain(value: Any) -> Any:
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
