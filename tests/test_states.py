"""The one vocabulary: members equal the contract's strings, and "better" is defined once."""

from __future__ import annotations

import json

import pytest

from autoresearch.decide import STOP_INTERRUPTED_DIRTY, Decision
from autoresearch.states import (
    REJECTS_CANDIDATE,
    DecisionKind,
    Direction,
    RunStatus,
    best_of,
    is_better,
)


@pytest.mark.parametrize(
    ("direction", "candidate", "incumbent", "better"),
    [
        (Direction.HIGHER, 2.0, 1.0, True),
        (Direction.HIGHER, 1.0, 1.0, False),
        (Direction.HIGHER, 0.5, 1.0, False),
        (Direction.LOWER, 0.5, 1.0, True),
        (Direction.LOWER, 1.0, 1.0, False),
        (Direction.LOWER, 2.0, 1.0, False),
    ],
)
def test_is_better(direction: Direction, candidate: float, incumbent: float, better: bool) -> None:
    assert is_better(direction, candidate, incumbent) is better


@pytest.mark.parametrize(
    ("direction", "scores", "best"),
    [
        (Direction.HIGHER, [], None),
        (Direction.HIGHER, [1.0, 3.0, 2.0], 3.0),
        (Direction.LOWER, [1.0, 3.0, 0.5], 0.5),
    ],
)
def test_best_of(direction: Direction, scores: list[float], best: float | None) -> None:
    assert best_of(direction, scores) == best


def test_members_are_the_contract_strings() -> None:
    assert RunStatus.RUNNING == "running"
    assert json.dumps({"s": RunStatus.FAILED}) == '{"s": "failed"}'
    assert f"{DecisionKind.KEEP}" == "keep"


def test_which_decisions_reset_is_defined_once() -> None:
    for kind in DecisionKind:
        d = Decision(kind, "r")
        assert d.keep == (kind is DecisionKind.KEEP)
        assert d.reset == (kind in REJECTS_CANDIDATE)
        # every decision but a keep brings the run branch back (the session may have moved it)
        assert d.needs_git_effect == (kind not in (DecisionKind.KEEP, DecisionKind.BASELINE))
    assert not Decision(DecisionKind.ERROR, STOP_INTERRUPTED_DIRTY).needs_git_effect
