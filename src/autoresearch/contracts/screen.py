"""sandbox.md's optional `evaluator.screen` (#34, the cascade): a cheaper command run on a
candidate before the full evaluation. Pure parsing; what the screen decides is screening.py.

    evaluator:
      command: python3 train.py            # the full evaluation
      format: json
      screen:
        command: python3 train.py --steps 50   # required
        format: json                           # default: the evaluator's
        metric: loss                           # default: the evaluator's (format metric)
        timeout_seconds: 60                    # default: the evaluator's
        margin: 0.02                           # default 0: how much worse is "clearly worse"

The block is stored with the evaluator's other keys (`EvaluatorSpec.extra["screen"]`), so it
is frozen with the run at prepare like the rest of the evaluator.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from autoresearch.errors import ContractError
from autoresearch.states import EvalFormat

SCREEN_KEYS = ("command", "format", "metric", "timeout_seconds", "margin")

MSG_SCREEN_NOT_MAPPING = (
    "sandbox.md frontmatter evaluator.screen must be a mapping with a `command`."
)
MSG_SCREEN_UNKNOWN = (
    "sandbox.md frontmatter evaluator.screen.{key} is not a known key (known: {known})."
)
MSG_SCREEN_NO_COMMAND = "sandbox.md frontmatter evaluator.screen.command must be a command."
MSG_SCREEN_BAD_FORMAT = "sandbox.md frontmatter evaluator.screen.format must be json or metric."
MSG_SCREEN_BAD_NUMBER = (
    "sandbox.md frontmatter evaluator.screen.{key} must be a {what} number (got {value!r})."
)


@dataclass(frozen=True)
class ScreenSpec:
    """The screen's command and how to read it; None fields fall back to the evaluator's."""

    command: str
    format: EvalFormat | None = None
    metric: str | None = None
    timeout_seconds: float | None = None
    margin: float = 0.0  # in the metric's units: worse than the reference by more is discarded

    @classmethod
    def of(cls, evaluator_extra: Mapping[str, Any]) -> ScreenSpec | None:
        """The run's screen, from the evaluator's extra keys (None: the mission has none)."""
        return parse_screen(evaluator_extra.get("screen"))


def parse_screen(block: object) -> ScreenSpec | None:
    """Validate `evaluator.screen` (None when absent)."""
    if block is None:
        return None
    if not isinstance(block, dict):
        raise ContractError(MSG_SCREEN_NOT_MAPPING)
    unknown = sorted(str(k) for k in block if k not in SCREEN_KEYS)
    if unknown:
        raise ContractError(MSG_SCREEN_UNKNOWN.format(key=unknown[0], known=", ".join(SCREEN_KEYS)))
    command = block.get("command")
    if not isinstance(command, str) or not command.strip() or "\0" in command:
        raise ContractError(MSG_SCREEN_NO_COMMAND)
    fmt = block.get("format")
    if fmt is not None and str(fmt).strip().lower() not in tuple(EvalFormat):
        raise ContractError(MSG_SCREEN_BAD_FORMAT)
    metric = block.get("metric")
    timeout = block.get("timeout_seconds")
    return ScreenSpec(
        command=command.strip(),
        format=None if fmt is None else EvalFormat(str(fmt).strip().lower()),
        metric=metric.strip() if isinstance(metric, str) and metric.strip() else None,
        timeout_seconds=None if timeout is None else _number(timeout, "timeout_seconds", True),
        margin=_number(block.get("margin", 0.0), "margin", False),
    )


def _number(value: object, key: str, positive: bool) -> float:
    what = "positive" if positive else "non-negative"
    number = -1.0
    if isinstance(value, int | float) and not isinstance(value, bool):
        number = float(value) if abs(value) < 1e300 else math.inf
    if not math.isfinite(number) or number < 0 or (positive and number == 0):
        raise ContractError(MSG_SCREEN_BAD_NUMBER.format(key=key, what=what, value=value))
    return number
