"""The cascade's decision (screening.py) and the `evaluator.screen` contract, as tables."""

from __future__ import annotations

from typing import Any

import pytest

from autoresearch.contracts.sandbox import parse_evaluator
from autoresearch.contracts.screen import ScreenSpec, parse_screen
from autoresearch.errors import ContractError
from autoresearch.evaluate import EvaluationRecord
from autoresearch.screening import ScreenReading, verdict
from autoresearch.states import Direction, EvalFormat, EvalStatus

HIGHER, LOWER = Direction.HIGHER, Direction.LOWER
R = ScreenReading


@pytest.mark.parametrize(
    ("direction", "margin", "candidate", "reference", "reason"),
    [
        (HIGHER, 0.0, R(0.9), R(1.0), "screen: clearly worse than ref (0.9 vs 1)"),
        (HIGHER, 0.2, R(0.9), R(1.0), None),  # within the margin: the full evaluation decides
        (HIGHER, 0.0, R(1.0), R(1.0), None),  # equal is not worse
        (HIGHER, 0.0, R(0.123456789), R(1.0), "screen: clearly worse than ref (0.123457 vs 1)"),
        (HIGHER, 0.0, R(2.0), R(1.0), None),
        (LOWER, 0.0, R(2.0), R(1.0), "screen: clearly worse than ref (2 vs 1)"),
        (LOWER, 0.5, R(1.4), R(1.0), None),
        (LOWER, 0.0, R(0.5), R(1.0), None),
        (HIGHER, 0.0, R(None, "timeout"), R(1.0), "screen failed: timeout"),
        (HIGHER, 0.0, R(None, "exit 2"), None, "screen failed: exit 2"),
        (HIGHER, 0.0, R(0.1), R(None, "exit 1"), None),  # no reference: nothing to compare
        (HIGHER, 0.0, R(0.1), None, None),
    ],
)
def test_the_screen_verdict(
    direction: Direction,
    margin: float,
    candidate: ScreenReading,
    reference: ScreenReading | None,
    reason: str | None,
) -> None:
    found = verdict(direction, margin, candidate, reference, "ref")
    assert (found.discard.reason if found.discard else None) == reason
    if found.discard:
        assert found.discard.decision == "discard" and found.discard.reset


def record(**kw: Any) -> EvaluationRecord:
    base: dict[str, Any] = dict(
        command="x", format=EvalFormat.JSON, ran_at="", duration_ms=1, status=EvalStatus.PASS,
        passed=True, score=1.5, exit_code=0, timed_out=False, stdout="", stderr="", log_file="",
    )  # fmt: skip
    return EvaluationRecord(**{**base, **kw})


@pytest.mark.parametrize(
    ("changes", "reading"),
    [
        ({}, R(1.5)),
        ({"timed_out": True, "status": EvalStatus.ERROR, "score": None}, R(None, "timeout")),
        ({"status": EvalStatus.ERROR, "exit_code": 3, "score": None}, R(None, "exit 3")),
        ({"status": EvalStatus.ERROR, "score": None}, R(None, "no usable output")),
        ({"status": EvalStatus.FAIL, "passed": False}, R(None, "did not pass")),
        ({"score": None}, R(None, "no score")),
        ({"spawn_error": "no sh", "status": EvalStatus.ERROR}, R(None, "could not start (no sh)")),
    ],
)
def test_what_a_screen_run_reads(changes: dict[str, Any], reading: ScreenReading) -> None:
    assert ScreenReading.of(record(**changes)) == reading


def test_the_screen_block_parses_with_defaults_and_survives_the_frozen_evaluator() -> None:
    block = {"command": "python3 fast.py", "margin": 0.1}
    evaluator = parse_evaluator({"command": "python3 slow.py", "format": "json", "screen": block})
    again = type(evaluator).from_dict(evaluator.to_dict())  # as the run froze it
    assert ScreenSpec.of(again.extra) == ScreenSpec("python3 fast.py", margin=0.1)
    assert parse_screen(None) is None
    full = parse_screen({"command": " c ", "format": "METRIC", "metric": "m", "timeout_seconds": 3})
    assert full == ScreenSpec("c", EvalFormat.METRIC, "m", 3.0, 0.0)


@pytest.mark.parametrize(
    ("block", "message"),
    [
        ("fast.py", "evaluator.screen must be a mapping"),
        ({"margin": 1}, "evaluator.screen.command must be a command"),
        ({"command": "c", "colour": 1}, "evaluator.screen.colour is not a known key"),
        ({"command": "c", "format": "xml"}, "evaluator.screen.format must be json or metric"),
        ({"command": "c", "margin": -1}, "evaluator.screen.margin must be a non-negative"),
        ({"command": "c", "timeout_seconds": 0}, "timeout_seconds must be a positive"),
        ({"command": "c", "margin": True}, "evaluator.screen.margin must be a non-negative"),
        ({"command": "c", "margin": 10**400}, "evaluator.screen.margin must be a non-negative"),
    ],
)
def test_a_malformed_screen_is_refused_in_one_line(block: object, message: str) -> None:
    with pytest.raises(ContractError, match=message):
        parse_evaluator({"command": "c", "format": "json", "screen": block})
