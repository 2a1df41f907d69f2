"""The offline agent's pure pieces: assignments in files and the seeded proposal rule."""

from __future__ import annotations

import pytest

from autoresearch.agents.tuning import (
    INITIAL_STEP,
    MIN_STEP,
    Birth,
    Trial,
    lane_share,
    line_of,
    propose,
    step_size,
)
from autoresearch.contracts.tune import ParamSpec, format_value, read_value, write_value

LR = ParamSpec("LR", 1e-4, 1.0, integer=False, log=True, file="train.py")
BATCH = ParamSpec("BATCH", 1, 256, integer=True, log=True, file="train.py")
MOM = ParamSpec("MOMENTUM", 0.0, 0.99, integer=False, log=False, file="train.py")


@pytest.mark.parametrize(
    ("text", "name", "value"),
    [
        ("LR = 0.01\n", "LR", 0.01),
        ("  LR=3e-4  # comment\n", "LR", 3e-4),
        ("export BATCH=64\n", "BATCH", 64),
        ("batch_size: 32\nBATCH: 16\n", "BATCH", 16),
        ("OTHER_LR = 5\nLR = 2\n", "LR", 2),
        ("LR = 'x'\n", "LR", None),
    ],
)
def test_read_value(text: str, name: str, value: float | None) -> None:
    assert read_value(text, name) == value


def test_write_value_keeps_the_rest_of_the_file() -> None:
    text = "# header\nLR = 0.01  # tuned\nBATCH = 64\nLR = 9\n"
    assert (
        write_value(text, "LR", 0.25, False) == "# header\nLR = 0.25  # tuned\nBATCH = 64\nLR = 9\n"
    )
    assert (
        write_value(text, "BATCH", 31.6, True)
        == "# header\nLR = 0.01  # tuned\nBATCH = 32\nLR = 9\n"
    )
    assert format_value(1.0, False) == "1.0" and format_value(1e-7, False) == "1e-07"


def test_step_size_follows_the_one_fifth_rule() -> None:
    assert step_size([]) == INITIAL_STEP
    grown = step_size([Trial({}, "keep")])
    shrunk = step_size([Trial({}, "discard")] * 4)
    assert grown > INITIAL_STEP and shrunk == pytest.approx(INITIAL_STEP / 1.5)
    assert step_size([Trial({}, "discard")] * 100) == MIN_STEP
    assert step_size([Trial({}, "noop")] * 10) == INITIAL_STEP


def test_proposals_are_deterministic_new_and_in_range() -> None:
    params = (LR, BATCH, MOM)
    incumbent = {"LR": 0.01, "BATCH": 64.0, "MOMENTUM": 0.5}
    first = propose(params, incumbent, [], seed=3, iteration=1)
    assert first is not None
    assert first == propose(params, incumbent, [], seed=3, iteration=1)
    assert first != propose(params, incumbent, [], seed=3, iteration=2)
    history = [Trial(first.values, "discard")]
    seen = {tuple(sorted(first.values.items()))}
    for iteration in range(2, 40):
        p = propose(params, incumbent, history, seed=3, iteration=iteration)
        assert p is not None
        key = tuple(sorted(p.values.items()))
        assert key not in seen
        seen.add(key)
        history.append(Trial(p.values, "discard"))
        assert 1e-4 <= p.values["LR"] <= 1.0 and 0.0 <= p.values["MOMENTUM"] <= 0.99
        assert p.values["BATCH"] == int(p.values["BATCH"]) and 1 <= p.values["BATCH"] <= 256
        assert p.description.startswith("tune ")


def test_exhausted_space_gives_none() -> None:
    tiny = ParamSpec("N", 1, 2, integer=True, log=False, file="f")
    history = [Trial({"N": 2.0}, "discard")]
    assert propose((tiny,), {"N": 1.0}, history, seed=0, iteration=5) is None


def test_each_lane_draws_its_own_deterministic_stream() -> None:
    params = (LR, BATCH, MOM)
    incumbent = {"LR": 0.01, "BATCH": 64.0, "MOMENTUM": 0.5}
    draws = {
        lane: propose(params, incumbent, [], seed=3, iteration=1, lane=lane) for lane in range(4)
    }
    assert draws[0] == propose(params, incumbent, [], seed=3, iteration=1)  # no lanes: unchanged
    assert len({str(d) for d in draws.values()}) == 4  # the lanes explore apart
    assert draws[2] == propose(params, incumbent, [], seed=3, iteration=1, lane=2)  # replayable


@pytest.mark.parametrize(
    ("lane", "lanes", "names"),
    [
        (0, 0, ["LR", "BATCH", "MOMENTUM"]),  # no lanes: every parameter
        (1, 1, ["LR", "BATCH", "MOMENTUM"]),
        (1, 2, ["LR", "MOMENTUM"]),
        (2, 2, ["BATCH"]),
        (3, 3, ["MOMENTUM"]),
        (4, 4, ["LR"]),  # more lanes than parameters: lane k shares the ((k-1) mod n)-th
    ],
)
def test_lane_share(lane: int, lanes: int, names: list[str]) -> None:
    assert [p.name for p in lane_share((LR, BATCH, MOM), lane, lanes)] == names


def test_a_lane_moves_only_its_share() -> None:
    params = (LR, BATCH, MOM)
    incumbent = {"LR": 0.01, "BATCH": 64.0, "MOMENTUM": 0.5}
    for iteration in range(1, 30):
        proposal = propose(params, incumbent, [], 3, iteration, lane=2, movable=(BATCH,))
        assert proposal is not None
        assert proposal.values["LR"] == 0.01 and proposal.values["MOMENTUM"] == 0.5
        assert proposal.values["BATCH"] != 64.0


# A frontier run's tree: R the root; A kept from R at 2, B from A at 4, C from R at 6 (a second
# hill, after A was born); 8 tried A again after B was born; 9's base is unknown.
TREE = [
    Trial({}, "discard", "R", 1),
    Trial({}, "keep", "R", 2),
    Trial({}, "discard", "A", 3),
    Trial({}, "keep", "A", 4),
    Trial({}, "discard", "R", 5),
    Trial({}, "keep", "R", 6),
    Trial({}, "discard", "B", 7),
    Trial({}, "discard", "A", 8),
    Trial({}, "discard", None, 9),
]
BIRTHS = {b.commit: b for b in (Birth("A", "R", 2), Birth("B", "A", 4), Birth("C", "R", 6))}


@pytest.mark.parametrize(
    ("parent", "iterations"),
    [
        ("B", [1, 2, 3, 4, 7, 9]),  # R's up to A's birth, A's up to B's, all of B's
        ("A", [1, 2, 3, 4, 8, 9]),  # 8 was tried from A after B's birth: A's own
        ("C", [1, 2, 5, 6, 9]),  # A's branch is another hill
        ("R", [1, 2, 5, 6, 9]),
        ("X", [9]),  # a commit the history never kept: only what may be anyone's
    ],
)
def test_the_line_of_descent_holds_the_trials_of_the_parent_and_its_ancestors(
    parent: str, iterations: list[int]
) -> None:
    assert [t.iteration for t in line_of(TREE, BIRTHS, parent)] == iterations


def test_a_greedy_runs_line_is_its_whole_history() -> None:
    chain = [Trial({}, "discard", "R", 1), Trial({}, "keep", "R", 2)]
    chain += [Trial({}, "discard", "A", 3), Trial({}, "keep", "A", 4)]
    births = {"A": Birth("A", "R", 2), "B": Birth("B", "A", 4)}
    assert line_of(chain, births, "B") == chain


def test_the_step_follows_the_line_and_novelty_the_whole_history() -> None:
    incumbent = {"LR": 0.01, "BATCH": 64.0, "MOMENTUM": 0.5}
    elsewhere = {"LR": 0.5, "BATCH": 2.0, "MOMENTUM": 0.1}
    failures = [Trial(elsewhere, "discard", "other", n) for n in range(1, 40)]
    fresh = propose((LR, BATCH, MOM), incumbent, failures, 3, 40, line=[])
    shrunk = propose((LR, BATCH, MOM), incumbent, failures, 3, 40)
    assert fresh == propose((LR, BATCH, MOM), incumbent, [], 3, 40)  # the line's step: initial
    assert fresh != shrunk  # the whole history's step: shrunk by another line's failures
    assert fresh is not None
    tried = [Trial(fresh.values, "discard", "other", 1)]
    assert propose((LR, BATCH, MOM), incumbent, tried, 3, 40, line=[]) != fresh
