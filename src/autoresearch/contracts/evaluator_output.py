"""Pure interpretation of evaluator output (supervisor.md §2).

`format: json` – a JSON object with boolean `pass` and optional numeric `score`;
`format: metric` – `METRIC name=value` lines, the primary metric is the score.

A score or metric beyond ±MAX_MAGNITUDE is not comparable: its sum or square leaves the float
range (the mean of 1e308 and 1e308 overflows), so the score is refused as an evaluation error
with its own reason, and a side metric is dropped. Every view, the report and `certify` then
only ever meet numbers they can add, square and subtract.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from autoresearch.contracts.json_input import load_json

MSG_NOT_JSON = (
    "Evaluator output must be valid JSON with required boolean pass and optional numeric score."
)
MSG_NOT_JSON_LONG_LINE = (
    MSG_NOT_JSON[:-1] + " (output over 1 MiB is read line by line, and a line over 1 MiB is "
    "ignored)."
)
MSG_NOT_OBJECT = "Evaluator output must be a JSON object."
MSG_NO_PASS = "Evaluator output must include boolean pass."
MSG_BAD_SCORE = "Evaluator output score must be numeric when provided."
MSG_NO_METRIC = "Evaluator output must include a METRIC {name}=<number> line."
# Far beyond any real measurement, small enough that n readings' squares stay finite.
MAX_MAGNITUDE = 1e100


def msg_too_large(name: str, value: float) -> str:
    return (
        f"Evaluator output {name} {value:g} is beyond ±{MAX_MAGNITUDE:g}: not comparable "
        "(a mean or spread of it overflows)."
    )


def within_bounds(value: float) -> bool:
    """Whether `value` is a magnitude scores can be averaged and compared at."""
    return abs(value) <= MAX_MAGNITUDE


@dataclass(frozen=True)
class Verdict:
    """What an evaluator said, before exit codes and timeouts are taken into account."""

    passed: bool | None
    score: float | None = None
    metrics: dict[str, float] = field(default_factory=dict)
    extra: dict[str, object] = field(default_factory=dict)
    parse_error: str | None = None


def is_number(value: object) -> bool:
    """Numeric in the evaluator sense: int or float, not bool, finite as a float."""
    if not isinstance(value, int | float) or isinstance(value, bool):
        return False
    try:
        return math.isfinite(float(value))
    except OverflowError:  # an integer too large for a float
        return False


def find_json_object(stdout: str) -> Any:
    """The whole trimmed stdout as JSON, else the last non-empty line that is a JSON object.

    Raises ValueError(MSG_NOT_JSON) when neither exists.
    """
    text = stdout.strip()
    try:
        return load_json(text, nonfinite_as_null=True)
    except ValueError:
        pass
    for line in reversed(text.splitlines()):
        line = line.strip()
        if not line.startswith("{"):
            continue
        try:
            value = load_json(line, nonfinite_as_null=True)
        except ValueError:
            continue
        if isinstance(value, dict):
            return value
    raise ValueError(MSG_NOT_JSON)


def parse_json_verdict(stdout: str) -> Verdict:
    """Interpret `format: json` output."""
    try:
        value = find_json_object(stdout)
    except ValueError as exc:
        return Verdict(passed=None, parse_error=str(exc))
    if not isinstance(value, dict):
        return Verdict(passed=None, parse_error=MSG_NOT_OBJECT)
    passed = value.get("pass")
    if not isinstance(passed, bool):
        return Verdict(passed=None, parse_error=MSG_NO_PASS)
    score = value.get("score")
    if "score" in value and not is_number(score):
        return Verdict(passed=None, parse_error=MSG_BAD_SCORE)
    if score is not None and not within_bounds(float(score)):
        return Verdict(passed=None, parse_error=msg_too_large("score", float(score)))
    extra = {k: v for k, v in value.items() if k not in ("pass", "score")}
    return Verdict(
        passed=passed,
        score=float(score) if score is not None else None,
        extra=extra,
    )


def metric_passed(exit_code: int | None, primary_value: float | None) -> bool:
    """The one rule of `METRIC` output, for the supervisor and experiment sessions alike: a
    run passed when it exited 0 and printed its primary metric (finite, as the grammar says)."""
    return exit_code == 0 and primary_value is not None


def metric_verdict(metrics: dict[str, float], primary: str, exit_code: int | None) -> Verdict:
    """Interpret `format: metric` output already scanned into `metrics`."""
    value = metrics.get(primary)
    if value is not None and not within_bounds(value):
        return Verdict(passed=None, parse_error=msg_too_large(primary, value))
    metrics = {name: v for name, v in metrics.items() if within_bounds(v)}
    if value is None:
        return Verdict(
            passed=None,
            metrics=dict(metrics),
            parse_error=MSG_NO_METRIC.format(name=primary),
        )
    return Verdict(passed=metric_passed(exit_code, value), score=value, metrics=dict(metrics))
