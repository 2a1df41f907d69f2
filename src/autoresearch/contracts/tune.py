"""Pure parsing of the optional `tune:` block of sandbox.md (the offline agent's search space).

```yaml
tune:
  file: train.py            # where `NAME = <number>` assignments live (per parameter: `file`)
  seed: 7                   # optional; proposals are a pure function of (seed, iteration, history)
  split_lanes: true         # optional; with --lanes K, lane k tunes only its share of the
                            # parameters (the k-th, the k+K-th, …), so lanes edit different lines
  parameters:
    LEARNING_RATE: {min: 0.0001, max: 1.0, scale: log}
    BATCH_SIZE: {min: 8, max: 512, type: int}
```
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import cast

from autoresearch.errors import ContractError
from autoresearch.jsonshape import json_field, json_shape

_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
MSG_TUNE = "sandbox.md frontmatter tune{what}"
TUNE_KEYS = ("file", "seed", "split_lanes", "parameters")
# The artifact note that says which values of the tune block a candidate tried (the offline
# agent writes it; a run's history hands it back decoded, `PastIteration.tried`).
TRIED_PREFIX = "offline-agent: "


def _kind_word(integer: object) -> str:
    return "int" if integer else "float"


def _scale_word(log: object) -> str:
    return "log" if log else "linear"


@dataclass(frozen=True)
class ParamSpec:
    """One tunable numeric parameter; its JSON in sandbox.md's words (`min`, `type: int`, …),
    under its name in its tune block's `parameters`."""

    name: str = field(metadata=json_field(hidden=True))
    low: float = field(metadata=json_field(key="min"))
    high: float = field(metadata=json_field(key="max"))
    integer: bool = field(metadata=json_field(key="type", convert=_kind_word))
    log: bool = field(metadata=json_field(key="scale", convert=_scale_word))
    file: str


def _by_name(parameters: object) -> dict[str, object]:
    return {p.name: p for p in cast("tuple[ParamSpec, ...]", parameters)}


@dataclass(frozen=True, kw_only=True)
class TuneSpec:
    """The offline agent's search space; its JSON a tune block, each parameter with its file."""

    seed: int = 0
    split_lanes: bool = False
    parameters: tuple[ParamSpec, ...] = field(metadata=json_field(convert=_by_name))

    def to_dict(self) -> dict[str, object]:
        return json_shape(self)


# The assignment a parameter names in its file: `NAME = <number>` or `NAME: <number>`, read by
# `check` (mission.py) and edited by the offline agent.
_NUMBER = r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?"


def _assignment(name: str) -> re.Pattern[str]:
    return re.compile(
        rf"^(?P<head>[ \t]*(?:export[ \t]+)?{re.escape(name)}[ \t]*[:=][ \t]*)"
        rf"(?P<value>{_NUMBER})",
        re.M,
    )


def read_value(text: str, name: str) -> float | None:
    """The first `NAME = <number>` (or `NAME: <number>`) in a file, else None."""
    match = _assignment(name).search(text)
    return float(match["value"]) if match else None


def format_value(value: float, integer: bool) -> str:
    if integer:
        return str(round(value))
    text = format(value, ".6g")
    return text if any(c in text for c in ".e") else text + ".0"


def write_value(text: str, name: str, value: float, integer: bool) -> str:
    """Replace the first assignment of `name`; the rest of the file is untouched."""
    pattern = _assignment(name)
    return pattern.sub(lambda m: m["head"] + format_value(value, integer), text, count=1)


def _fail(what: str) -> ContractError:
    return ContractError(MSG_TUNE.format(what=what))


def parse_tune(block: object) -> TuneSpec | None:
    """Validate a `tune:` block; None when absent."""
    if block is None:
        return None
    if not isinstance(block, dict):
        raise _fail(" must be a mapping with file and parameters.")
    default_file = block.get("file")
    if default_file is not None and not is_relative_path(default_file):
        raise _fail(".file must be a relative path inside the repository.")
    seed = block.get("seed", 0)
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise _fail(".seed must be an integer.")
    split = block.get("split_lanes", False)
    if not isinstance(split, bool):
        raise _fail(".split_lanes must be true or false.")
    params = block.get("parameters")
    if not isinstance(params, dict) or not params:
        raise _fail(".parameters must map parameter names to {min, max}.")
    specs = tuple(_param(str(n), v, default_file) for n, v in params.items())
    return TuneSpec(parameters=specs, seed=seed, split_lanes=split)


def _param(name: str, value: object, default_file: object) -> ParamSpec:
    if not _NAME.match(name):
        raise _fail(f".parameters.{name} is not a valid identifier.")
    if not isinstance(value, dict):
        raise _fail(f".parameters.{name} must be a mapping with min and max.")
    low, high = _number(value.get("min")), _number(value.get("max"))
    if low is None or high is None or not low < high:
        raise _fail(f".parameters.{name} needs numeric min < max.")
    if not math.isfinite(high - low):  # ±1e308: the search would step to inf
        raise _fail(f".parameters.{name} range max - min must be a finite number.")
    kind = value.get("type", "float")
    scale = value.get("scale", "linear")
    if kind not in ("int", "float") or scale not in ("linear", "log"):
        raise _fail(f".parameters.{name} type must be int|float and scale linear|log.")
    if scale == "log" and low <= 0:
        raise _fail(f".parameters.{name} with scale log needs min > 0.")
    file = value.get("file", default_file)
    if not is_relative_path(file):
        raise _fail(f".parameters.{name} needs a file (tune.file or its own file).")
    return ParamSpec(name, low, high, kind == "int", scale == "log", str(file))


def _number(value: object) -> float | None:
    # numeric strings are accepted too (a quoted "1e-4")
    if isinstance(value, bool):
        return None
    try:
        number = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError, OverflowError):
        return None
    return number if math.isfinite(number) else None


def is_relative_path(value: object) -> bool:
    """A non-empty path inside the repository: not absolute, no `..` part."""
    return (
        isinstance(value, str)
        and bool(value.strip())
        and not value.startswith("/")
        and ".." not in value.split("/")
    )


def tried_note(values: Mapping[str, float]) -> str:
    """The note of the values a candidate tried (what `tried_values` reads back)."""
    return TRIED_PREFIX + json.dumps(dict(values), sort_keys=True)


def tried_values(notes: Sequence[str]) -> dict[str, float] | None:
    """The values the first `tried_note` among a candidate's notes says it tried; None when
    there is none or it is not an object of numbers (notes are whatever an agent wrote)."""
    for note in notes:
        if note.startswith(TRIED_PREFIX):
            try:
                data = json.loads(note[len(TRIED_PREFIX) :])
                if not isinstance(data, dict):
                    return None
                return {str(k): float(v) for k, v in data.items()}
            except (ValueError, TypeError):
                return None
    return None
