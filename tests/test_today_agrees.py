"""A keep against the incumbent's older readings needs this iteration's own incumbent
readings to agree (#34, `today_agrees`): the false keep of the timed bench's seed 7, replayed
from its journal. Pure table tests of noise.next_action."""

from __future__ import annotations

import pytest

from autoresearch.noise import Action, NoisePolicy, Spread, Today, next_action
from autoresearch.states import Direction

DEFAULT = NoisePolicy()
BEFORE = NoisePolicy(today_agrees=False)  # the rule of 84fcd16

# Seed 7 of bench/timed_workload.py, iteration 10 (ms, lower is better): the incumbent's
# reference readings, most taken under the bench's load, then its two of this iteration ...
QUIET_THEN_LOADED = [10.8, 10.9, 10.5, 10.5, 10.8, 14.3, 14.2, 18.0, 14.0, 18.0, 13.9, 18.4]
LOADED = [16.8, 18.4, 10.0, 22.1, 10.1, 14.0, 13.8, 14.3, 10.1, 9.6, 9.8, 14.0, 18.0, 10.2]
LATER = [14.4, 14.2, 14.0, 10.8, 18.2, 13.5]
TODAY_INCUMBENT = [10.7, 10.0]
# ... and a slowdown's five, read after the load stopped: slower than both of those.
SLOWDOWN = [10.9, 10.9, 10.9, 10.8, 10.9]
ORDER = (
    (True, 10.9), (False, 10.7), (True, 10.9), (True, 10.9), (True, 10.8), (False, 10.0),
    (True, 10.9),
)  # fmt: skip
RUN = Spread(2.46, 150, 0.4)  # the run's spread, widened by the loaded readings


def seed_7(policy: NoisePolicy) -> Action:
    incumbent = [*QUIET_THEN_LOADED, *LOADED, *LATER, *TODAY_INCUMBENT]
    today = Today(ORDER, Spread(2.5, 140))
    return next_action(policy, Direction.LOWER, RUN, incumbent, SLOWDOWN, 2, today).action


@pytest.mark.parametrize(
    ("policy", "action"),
    [
        (BEFORE, Action.KEEP),  # kept against the loaded readings (the journal's LLR 2.46)
        (DEFAULT, Action.MEASURE_INCUMBENT),  # today's readings say otherwise: read more
        (DEFAULT._replace(max_evals=7), Action.UNDECIDED),  # ... unless the cap is reached
    ],
)
def test_a_keep_needs_this_iterations_incumbent_readings_to_agree(
    policy: NoisePolicy, action: Action
) -> None:
    assert seed_7(policy) is action


def test_a_keep_they_agree_with_stands() -> None:
    """The same readings with the candidate faster than today's incumbent readings."""
    incumbent = [*QUIET_THEN_LOADED, *LOADED, *LATER, *TODAY_INCUMBENT]
    faster = [9.2, 9.3, 9.1, 9.2, 9.3]
    today = Today(((True, 9.2), (False, 10.7), (True, 9.3), (True, 9.1), (False, 10.0)))
    verdict = next_action(DEFAULT, Direction.LOWER, RUN, incumbent, faster, 2, today)
    assert verdict.action is Action.KEEP
