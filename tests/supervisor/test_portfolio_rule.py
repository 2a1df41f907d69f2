"""The portfolio's pure allocation rule (issue 33): warm-up, then kept improvement per cost."""

from __future__ import annotations

import pytest

from autoresearch.supervisor.portfolio import (
    WARMUP,
    AgentTally,
    SessionCost,
    choose,
    cost_unit,
    recorded_name,
)


def tally(spec: str, sessions: int, keeps: int, seconds: float, **kw: float) -> AgentTally:
    return AgentTally(spec, sessions, keeps, float(keeps), seconds, kw.get("usd"), None)


@pytest.mark.parametrize(
    ("tallies", "chosen", "why"),
    [
        ([tally("a", 0, 0, 0), tally("b", 0, 0, 0)], 0, "nothing tried: the first"),
        ([tally("a", WARMUP, 2, 2), tally("b", 1, 0, 1)], 1, "warm-up: the least tried"),
        ([tally("a", 10, 8, 10), tally("b", 10, 2, 10)], 0, "same cost: more kept"),
        ([tally("a", 10, 4, 40), tally("b", 10, 4, 10)], 1, "same keeps: the cheaper"),
        ([tally("a", 10, 4, 10), tally("b", 10, 8, 100)], 0, "10x dearer for 2x the keeps"),
        ([tally("a", 40, 20, 40), tally("b", 2, 0, 2)], 1, "rarely tried: explored again"),
        ([tally("a", 2, 0, 2), tally("b", 10, 3, 10)], 0, "an unlucky warm-up: tried again"),
        (
            [tally("a", 10, 5, 10, usd=1.0), tally("b", 10, 5, 1, usd=10.0)],
            0,
            "dollars reported by all: they are the cost, not seconds",
        ),
    ],
)
def test_choose(tallies: list[AgentTally], chosen: int, why: str) -> None:
    assert choose(tallies) == chosen, why


def test_ties_follow_the_seed_and_are_reproducible() -> None:
    even = [tally("a", 5, 2, 5), tally("b", 5, 2, 5)]
    picks = {choose(even, seed) for seed in range(20)}
    assert picks == {0, 1}
    assert all(choose(even, seed) == choose(even, seed) for seed in range(20))


def test_the_cost_unit_falls_back_when_one_session_reported_nothing() -> None:
    paid = AgentTally("a").add(SessionCost(1.0, 2.0, 0.5, 100))
    assert cost_unit([paid]) == "usd"
    unpaid = paid.add(SessionCost(0.0, 2.0, None, 50))
    assert (unpaid.usd, unpaid.tokens, unpaid.keeps, unpaid.sessions) == (None, 150, 1, 2)
    assert cost_unit([unpaid]) == "tokens"
    assert cost_unit([unpaid.add(SessionCost(0.0, 1.0))]) == "seconds"


def test_recorded_name_matches_what_a_command_session_records() -> None:
    assert recorded_name("cmd:  python a.py ") == "cmd:python a.py"
    assert recorded_name("claude") == "claude"
