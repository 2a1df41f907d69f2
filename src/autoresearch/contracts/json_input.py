"""Reading JSON that untrusted code wrote (candidate.json, evaluator output): pure and bounded.

Limits (documented in docs/supervisor.md): objects and arrays nested at most MAX_DEPTH deep, no
duplicate keys, and no NaN/Infinity or numbers beyond a float's range (not JSON: a strict
parser rejects every view that would carry them). Size limits are the callers' (they differ
per input).
"""

from __future__ import annotations

import json
import math
from typing import Any

MAX_DEPTH = 64


class JsonInputError(ValueError):
    """The text is not acceptable JSON; the message says why in a few words."""


def _pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    data: dict[str, Any] = {}
    for key, value in pairs:
        if key in data:
            raise JsonInputError(f"duplicate key {key[:40]!r}")
        data[key] = value
    return data


def _constant(name: str) -> Any:
    raise JsonInputError(f"{name} is not a JSON number")


def _finite(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):  # 1e999
        raise JsonInputError(f"{text[:40]} is out of range")
    return value


def _null(_: str) -> None:
    return None


def _finite_or_null(text: str) -> float | None:
    value = float(text)
    return value if math.isfinite(value) else None


def depth(value: Any) -> int:
    """How deeply arrays and objects nest in `value` (a scalar is 0); iterative."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, level = stack.pop()
        children = item.values() if isinstance(item, dict) else item
        if isinstance(item, dict | list):
            deepest = max(deepest, level)
            stack.extend((child, level + 1) for child in children)
    return deepest


def load_json(
    text: str | bytes, max_depth: int = MAX_DEPTH, nonfinite_as_null: bool = False
) -> Any:
    """`json.loads` within the limits above; raises JsonInputError (a ValueError) otherwise.

    With `nonfinite_as_null`, NaN, Infinity and out-of-range numbers are read as null instead
    of refused (an evaluator's extra keys: kept, but never written as non-JSON).
    """
    constant, number = (_null, _finite_or_null) if nonfinite_as_null else (_constant, _finite)
    try:
        value = json.loads(
            text, object_pairs_hook=_pairs, parse_constant=constant, parse_float=number
        )
    except RecursionError as exc:
        raise JsonInputError(f"nested deeper than {max_depth} levels") from exc
    except JsonInputError:
        raise
    except ValueError as exc:  # JSONDecodeError, bad UTF-8
        raise JsonInputError("not valid JSON") from exc
    if depth(value) > max_depth:
        raise JsonInputError(f"nested deeper than {max_depth} levels")
    return value
