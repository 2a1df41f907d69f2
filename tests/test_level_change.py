"""A change of the machine's level inside an iteration (#34): the readings before it are set
aside, so a load switched on or off between a candidate's and an incumbent's readings cannot
decide a keep. Pure table tests of robust.since_level_change and noise.next_action."""

from __future__ import annotations

import pytest

from autoresearch.noise import Action, NoisePolicy, Spread, Today, next_action
from autoresearch.robust import since_level_change

C, INC = True, False  # a reading of the candidate, of the incumbent
NOISY = Spread(1.0, 40)
DEFAULT = NoisePolicy()
UNAWARE = NoisePolicy(level_changes=False)  # the rule before: the iteration's order unused


@pytest.mark.parametrize(
    ("today", "sigma", "since"),
    [
        ([(C, 0.1), (INC, -0.1), (C, 0.0), (INC, 0.2)], 1.0, 0),  # one level throughout
        # the candidate 3σ better throughout: a difference between the sides, not a step
        ([(C, 3.0), (INC, 0.0), (C, 3.1), (INC, 0.1), (C, 2.9), (INC, -0.1)], 1.0, 0),
        # a load switched off after the incumbent's reading: the candidate's fall 10σ
        ([(C, 10.0), (INC, 10.2), (C, 0.1), (C, -0.1), (C, 0.0)], 1.0, 2),
        # a load switched on: the incumbent's later readings rise 10σ
        ([(C, 0.0), (INC, 0.1), (C, -0.1), (INC, 10.0), (INC, 10.2), (INC, 9.9)], 1.0, 3),
        # on, then off again: the readings after the latest change
        ([(C, 0.0), (INC, 0.0), (C, 10.0), (INC, 10.0), (C, 0.1), (INC, -0.1)], 1.0, 4),
        # the same numbers from an evaluator ten times as noisy: no significant step
        ([(C, 10.0), (INC, 10.2), (C, 0.1), (C, -0.1), (C, 0.0)], 10.0, 0),
        ([(C, 1.0), (INC, 5.0)], 0.0, 0),  # a deterministic evaluator: nothing looked for
        ([], 1.0, 0),
    ],
)
def test_the_readings_since_the_level_changed_in_the_iteration(
    today: list[tuple[bool, float]], sigma: float, since: int
) -> None:
    assert since_level_change(today, (sigma**2 * 40, 40)) == since


def test_a_step_is_measured_in_the_spread_before_the_iteration() -> None:
    """The step itself widens the spread of the readings that straddle it (a block half at
    each level): measured in that, a 10σ step would hide behind itself."""
    stepped = ((C, 10.0), (INC, 10.2), (C, 0.1), (C, -0.1), (C, 0.0))
    assert Today(stepped).since_change(Spread(10.0, 40)) == 0
    assert Today(stepped, calm=Spread(1.0, 40)).since_change(Spread(10.0, 40)) == 2


def test_a_spread_low_by_chance_on_few_readings_raises_no_alarm() -> None:
    """Three calibration readings that happened to agree (σ 0.1 on 2 df) before readings of
    the usual spread, 1: pooled with the iteration's own spread, no step is seen."""
    level = ((C, 0.0), (INC, 1.5), (C, -1.2), (INC, -0.3), (C, 1.1), (INC, 0.2), (C, -0.9))
    assert since_level_change(level, (0.1**2 * 2, 2)) == 0
    assert Today(level, calm=Spread(0.1, 2)).since_change(NOISY) == 0


LOADED = [10.0, 10.1, 9.9, 10.2, 9.8]  # the incumbent's readings while a load ran


@pytest.mark.parametrize(
    ("policy", "incumbent", "today", "action"),
    [
        # the load stops after this iteration's incumbent reading; three candidate readings
        # after it read 10σ faster: a null change kept on them by the rule before
        (UNAWARE, [*LOADED, 10.0], [(C, 10.1), (INC, 10.0), (C, 0.1), (C, -0.1), (C, 0.0)],
         Action.KEEP),
        (DEFAULT, [*LOADED, 10.0], [(C, 10.1), (INC, 10.0), (C, 0.1), (C, -0.1), (C, 0.0)],
         Action.MEASURE_INCUMBENT),
        # the load starts after the candidate's readings: the incumbent's read 10σ slower
        (UNAWARE, [0.0, 0.1, -0.1, 0.0, 10.0, 10.2, 9.9],
         [(C, 0.0), (INC, 0.0), (C, 0.1), (C, -0.1), (INC, 10.0), (INC, 10.2), (INC, 9.9)],
         Action.KEEP),
        (DEFAULT, [0.0, 0.1, -0.1, 0.0, 10.0, 10.2, 9.9],
         [(C, 0.0), (INC, 0.0), (C, 0.1), (C, -0.1), (INC, 10.0), (INC, 10.2), (INC, 9.9)],
         Action.MEASURE_CANDIDATE),
        # after the change, readings of both at the new level decide: a real 3σ gain is kept
        (DEFAULT, [*LOADED, 10.0, 0.0, 0.1, -0.1],
         [(C, 10.1), (INC, 10.0), (C, -3.0), (INC, 0.0), (C, -3.1), (INC, 0.1), (C, -2.9), (INC, -0.1)],
         Action.KEEP),
    ],
)  # fmt: skip
def test_a_level_change_inside_the_iteration_decides_no_keep(
    policy: NoisePolicy,
    incumbent: list[float],
    today: list[tuple[bool, float]],
    action: Action,
) -> None:
    candidate = [x for side, x in today if side]
    fresh = sum(1 for side, _ in today if not side)
    order = Today(tuple(today))
    verdict = next_action(policy, "lower", NOISY, incumbent, candidate, fresh, order)
    assert verdict.action is action
