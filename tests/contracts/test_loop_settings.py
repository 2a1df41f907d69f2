"""A loop's settings: one type for what was given and what a run recorded; the stored shape of
runs.loop_json (the manifest's `agent`) reads back and writes again unchanged."""

from __future__ import annotations

from typing import Any

import pytest

from autoresearch.agents import AgentConfig
from autoresearch.contracts.loop import LoopSettings
from autoresearch.decide import IterationLimit
from autoresearch.supervisor.loop import LoopLimits
from autoresearch.supervisor.options import LoopPlan, Where, continuation

RUN: dict[str, Any] = {
    "agent": "offline", "model": None, "agent_args": [], "max_turns": None, "seed": 3,
    "max_iterations": 5, "max_noops": 3, "max_agent_failures": 3, "agent_timeout": None,
    "budget_usd": None, "budget_tokens": None, "budget_hours": None, "lanes": 0,
    "executor": "local", "address": None,
}  # fmt: skip


@pytest.mark.parametrize(
    "stored",
    [
        RUN,
        {k: v for k, v in RUN.items() if k not in ("executor", "address")},  # the demo's
        {**RUN, "counts_from": 4},  # a continued run
        {**RUN, "future_key": [1, 2]},  # written by a newer version
    ],
)
def test_a_recorded_loop_reads_back_and_writes_the_same_object(stored: dict[str, Any]) -> None:
    assert LoopSettings.from_dict(stored).to_dict() == stored


def test_what_a_run_records_has_the_shape_it_always_had() -> None:
    plan = LoopPlan(AgentConfig("offline", seed=3), LoopLimits(max_iterations=5), Where())
    assert plan.record().to_dict() == RUN
    assert list(plan.record().to_dict()) == list(RUN)


def test_a_continuation_keeps_the_count_and_unknown_keys_and_drops_a_local_address() -> None:
    earlier = LoopSettings.from_dict(
        {**RUN, "executor": "ray", "address": "h:1", "counts_from": 4, "x": 1}
    )
    again = LoopPlan(AgentConfig("offline"), LoopLimits(), Where()).record(earlier)
    assert (again.counts_from, again.extra, again.executor, again.address) == (
        4, {"x": 1}, "local", None,
    )  # fmt: skip


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        (LoopSettings(), {"agent": "claude", "model": "m", "agent_args": ("-v",), "max_noops": 2}),
        (LoopSettings(max_noops=0), {"model": "m", "max_noops": 0}),
        (LoopSettings(agent_args=()), {"agent_args": ("-v",)}),  # empty: not given
        (LoopSettings(agent="claude", seed=1), {"model": "m", "seed": 1}),  # the same agent
        # a different agent does not inherit the recorded agent's own options
        (
            LoopSettings(agent="codex"),
            {"agent": "codex", "model": None, "agent_args": (), "max_turns": None, "seed": None},
        ),
    ],
)
def test_a_given_option_wins_over_the_recorded_one(
    given: LoopSettings, expected: dict[str, Any]
) -> None:
    recorded = LoopSettings(
        agent="claude", model="m", agent_args=("-v",), max_turns=4, max_noops=2, seed=7
    )
    merged = recorded.over(given)
    assert {key: getattr(merged, key) for key in expected} == expected


class _Run:
    def __init__(self, loop: LoopSettings | None, iteration: int) -> None:
        self.loop, self.iteration = loop, iteration


@pytest.mark.parametrize(
    ("recorded", "agent", "limit", "expected"),
    [
        (None, None, None, None),  # nothing to continue with: only re-armed
        (LoopSettings(agent="offline"), None, IterationLimit(0), None),
        (LoopSettings(agent="offline"), None, None, ("offline", None)),
        (LoopSettings(agent="offline"), "codex", IterationLimit(12), ("codex", 12)),
        (None, "codex", IterationLimit(2, relative=True), ("codex", 12)),
    ],
)
def test_a_resumed_run_continues_with_the_given_else_the_recorded_agent(
    recorded: LoopSettings | None,
    agent: str | None,
    limit: IterationLimit | None,
    expected: tuple[str, int | None] | None,
) -> None:
    run: Any = _Run(recorded, iteration=10)
    given = continuation(run, LoopSettings(agent=agent), limit)
    assert ((given.agent, given.max_iterations) if given else None) == expected


@pytest.mark.parametrize(
    ("given", "agents"),
    [
        (LoopSettings(), ("cmd:a", "cmd:b")),  # nothing given: the portfolio goes on
        (LoopSettings(agent="cmd:a"), ("cmd:a", "cmd:b")),  # its first agent: still on
        (LoopSettings(agent="claude"), None),  # one other agent: it runs alone
        (LoopSettings(agent="cmd:c", agents=("cmd:c", "cmd:d")), ("cmd:c", "cmd:d")),
    ],
)
def test_a_portfolio_is_kept_unless_another_agent_is_given(
    given: LoopSettings, agents: tuple[str, ...] | None
) -> None:
    recorded = LoopSettings(agent="cmd:a", agents=("cmd:a", "cmd:b"))
    assert recorded.over(given).agents == agents
    stored = recorded.to_dict()
    assert stored["agents"] == ["cmd:a", "cmd:b"]
    assert LoopSettings.from_dict(stored).agents == recorded.agents
    assert "agents" not in LoopSettings(agent="cmd:a").to_dict()  # one agent: shape unchanged
