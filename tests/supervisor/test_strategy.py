"""The search strategy seam (issue 32): greedy, today's behaviour, as a pure table; the
registry; and a strategy's stop in the loop's transition table."""

from __future__ import annotations

import pytest

from autoresearch.agents.base import PastIteration
from autoresearch.errors import ContractError
from autoresearch.states import DecisionKind, RunStatus
from autoresearch.supervisor.loop import Action, ActionKind, LoopLimits, LoopState, next_action
from autoresearch.supervisor.strategy import (
    DEFAULT_STRATEGY,
    STRATEGIES,
    Greedy,
    SearchView,
    Start,
    strategy_named,
)

PAST = (
    PastIteration(1, DecisionKind.KEEP, "first", (), ()),
    PastIteration(2, DecisionKind.DISCARD, "second", (), ()),
    PastIteration(3, DecisionKind.NOOP, "third", (), ()),
)


@pytest.mark.parametrize(
    ("view", "lane", "start"),
    [
        (SearchView(("k1",), 0), 0, Start("k1")),  # the single loop: the incumbent
        (SearchView(("k1",), 7, PAST), 1, Start("k1")),  # every lane: the same incumbent
        (SearchView(("k1",), 7, PAST), 4, Start("k1")),
        (SearchView(("best", "second"), 9), 2, Start("best")),  # several: the best one
        (SearchView((), 0), 0, Start("")),  # no kept commit yet
    ],
)
def test_greedy_starts_every_lane_from_the_best_incumbent(
    view: SearchView, lane: int, start: Start
) -> None:
    assert Greedy().start(view, lane) == start


@pytest.mark.parametrize("past", [(), PAST[:1], PAST])
def test_greedy_shows_the_whole_history_and_never_stops_a_run(
    past: tuple[PastIteration, ...],
) -> None:
    assert Greedy().shown(list(past)) == past
    assert Greedy().stop(SearchView(("k",), len(past), past)) is None
    assert Greedy.reads_history is False  # the driver reads no history for it


def test_greedy_is_the_registered_default() -> None:
    assert DEFAULT_STRATEGY == "greedy" and set(STRATEGIES) == {"greedy", "frontier"}
    assert strategy_named() == Greedy() and strategy_named("greedy").name == "greedy"


def test_an_unknown_strategy_is_refused_in_one_line() -> None:
    with pytest.raises(ContractError) as err:
        strategy_named("beam")
    assert str(err.value) == "unknown search strategy: beam (known: frontier, greedy)"


def _state(**change: object) -> LoopState:
    base: dict[str, object] = dict(
        status=RunStatus.RUNNING, stop_requested=None, iteration=3, trailing_noops=0,
        agent_failures=0, pending_artifact=False,
    )  # fmt: skip
    base.update(change)
    return LoopState(**base)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("state", "action"),
    [
        (_state(search_stop="plateau"), Action(ActionKind.FINISH, RunStatus.COMPLETED, "plateau")),
        (_state(), Action(ActionKind.LAUNCH)),
        # an operator's stop, a waiting artifact and a spent budget come first
        (
            _state(search_stop="plateau", stop_requested="stop by operator"),
            Action(ActionKind.FINISH, RunStatus.STOPPED, "stop by operator"),
        ),
        (_state(search_stop="plateau", pending_artifact=True), Action(ActionKind.PROCESS_PENDING)),
        (
            _state(search_stop="plateau", budget_stop="budget exhausted (usd)"),
            Action(ActionKind.FINISH, RunStatus.STOPPED, "budget exhausted (usd)"),
        ),
    ],
)
def test_a_strategys_stop_completes_the_run(state: LoopState, action: Action) -> None:
    assert next_action(state, LoopLimits(max_iterations=10)) == action
