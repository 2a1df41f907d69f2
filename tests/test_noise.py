"""The noise-aware decision functions, table-tested (noise.py is pure)."""

from __future__ import annotations

import math
import random

import pytest

from autoresearch.decide import EvalSummary, decide, sequential_decision
from autoresearch.noise import (
    Action,
    Interval,
    NoiseMode,
    NoisePolicy,
    Spread,
    confirmations,
    difference_interval,
    incumbent_pays,
    information,
    mean_interval,
    next_action,
    pooled_difference,
    pooled_spread,
    signed,
    signed_interval,
    t_quantile,
)
from autoresearch.paired import paired_interval
from autoresearch.robust import current_reference, huber_mean, local_reference
from autoresearch.states import Direction, EvalStatus

DEFAULT = NoisePolicy()
POOLED = NoisePolicy(blocked=False)  # the rule of the releases before #34
NOISY = Spread(1.0, 40)


@pytest.mark.parametrize(
    ("groups", "sd", "df"),
    [
        ([], 0.0, 0),
        ([[5.0]], 0.0, 0),  # one reading says nothing about spread
        ([[1.0, 1.0, 1.0]], 0.0, 2),  # deterministic
        ([[1.0, 3.0]], math.sqrt(2.0), 1),
        ([[1.0, 3.0], [10.0, 12.0], [7.0]], math.sqrt(2.0), 2),  # each around its own mean
    ],
)
def test_pooled_spread(groups: list[list[float]], sd: float, df: int) -> None:
    spread = pooled_spread(groups)
    assert spread.df == df
    assert spread.sd == pytest.approx(sd)


@pytest.mark.parametrize(
    ("p", "df", "table"),
    [(0.975, 1, 12.706), (0.975, 2, 4.303), (0.975, 3, 3.182), (0.975, 5, 2.571),
     (0.975, 10, 2.228), (0.975, 30, 2.042), (0.95, 3, 2.353), (0.95, 5, 2.015),
     (0.025, 10, -2.228)],
)  # fmt: skip
def test_t_quantile_matches_the_tables(p: float, df: int, table: float) -> None:
    assert t_quantile(p, df) == pytest.approx(table, rel=3e-3)


def test_mean_interval() -> None:
    exact = mean_interval([2.0, 2.0, 2.0], Spread(0.0, 2))
    assert (exact.mean, exact.low, exact.high, exact.text()) == (2.0, 2.0, 2.0, "2")
    wide = mean_interval([1.0, 3.0], Spread(math.sqrt(2.0), 1))
    assert wide.mean == 2.0
    assert wide.half_width == pytest.approx(12.706 * math.sqrt(2.0) / math.sqrt(2.0), rel=1e-3)
    assert wide.text().startswith("2 ± ")
    assert wide.text().endswith("(n=2)")
    with pytest.raises(ValueError):
        mean_interval([], NOISY)


@pytest.mark.parametrize("value", [0.1, 1 / 3, 2.675, 1e-7, 123456.789])
def test_identical_readings_are_their_value_with_no_spread(value: float) -> None:
    """fsum / n of equal readings can be one unit off: a deterministic evaluator would look
    noisy (spread 1e-17) and print 0.10000000000000002 for 0.1."""
    readings = [value] * 3
    assert pooled_spread([readings, [value]]) == Spread(0.0, 2)
    interval = mean_interval(readings, pooled_spread([readings]))
    assert (interval.mean, interval.low, interval.high) == (value, value, value)


@pytest.mark.parametrize(
    ("mean", "half", "text"),
    [(10.031, 0.595, "10.03 ± 0.60 (n=4)"), (3.07758, 0.076, "3.078 ± 0.076 (n=4)"),
     (1234567.8, 12.3, "1234568 ± 12 (n=4)"), (-2.0, 1.5, "-2.0 ± 1.5 (n=4)")],
)  # fmt: skip
def test_an_interval_prints_to_the_precision_it_has(mean: float, half: float, text: str) -> None:
    assert Interval(mean, mean - half, mean + half, 4).text() == text


def test_pooled_difference_uses_the_pooled_spread() -> None:
    diff = pooled_difference([11.0, 13.0], [1.0], Spread(1.0, 10))
    assert diff.mean == pytest.approx(11.0)
    assert diff.half_width == pytest.approx(2.228 * math.sqrt(1 / 2 + 1), rel=3e-3)
    exact = pooled_difference([3.0], [1.0], Spread(0.0, 0))
    assert (exact.low, exact.high) == (2.0, 2.0)


def test_difference_interval_welch() -> None:
    diff = difference_interval([11.0, 12.0, 13.0], [1.0, 2.0, 3.0])
    assert diff.mean == pytest.approx(10.0)
    # Welch with equal variances 1 and n 3: se = sqrt(2/3), df = 4
    assert diff.half_width == pytest.approx(2.776 * math.sqrt(2 / 3), rel=3e-3)
    point = difference_interval([5.0, 5.0], [4.0])
    assert (point.low, point.high) == (1.0, 1.0)


@pytest.mark.parametrize("direction", ["higher", "lower"])
@pytest.mark.parametrize(("incumbent", "candidate"), [(1.0, 2.0), (2.0, 1.0), (1.0, 1.0)])
def test_a_deterministic_evaluator_decides_exactly_like_the_single_reading_rule(
    direction: str, incumbent: float, candidate: float
) -> None:
    """Zero calibration spread: one candidate reading, today's decision, for every mode
    but `sequential`."""
    today = decide("score_improvement", direction, incumbent, "candidate",
                   EvalSummary("pass", True, candidate))  # fmt: skip
    for policy in (DEFAULT, NoisePolicy(mode=NoiseMode.SINGLE)):
        assert next_action(policy, direction, Spread(0.0, 2), [incumbent], [], 0).action is (
            Action.MEASURE_CANDIDATE
        )
        verdict = next_action(policy, direction, Spread(0.0, 2), [incumbent] * 3, [candidate], 0)
        assert verdict.action is (Action.KEEP if today.keep else Action.DISCARD)
        assert confirmations(policy, Spread(0.0, 2)) == 0


def test_single_mode_ignores_noise() -> None:
    policy = NoisePolicy(mode=NoiseMode.SINGLE)
    assert policy.baseline_readings == 1
    assert next_action(policy, "higher", NOISY, [0.0], [0.1], 0).action is Action.KEEP
    assert confirmations(policy, NOISY) == 0


@pytest.mark.parametrize(
    ("direction", "incumbent", "candidate", "fresh", "action"),
    [
        # a first reading far below the incumbent: clearly not better, stop at once
        ("higher", [0.0] * 10, [-3.0], 0, Action.DISCARD),
        ("lower", [0.0] * 10, [3.0], 0, Action.DISCARD),
        # clearly better but no incumbent reading in this iteration yet: re-measure first
        ("higher", [0.0] * 10, [3.0, 3.1, 2.9], 0, Action.MEASURE_INCUMBENT),
        ("higher", [0.0] * 10, [3.0, 3.1, 2.9], 1, Action.KEEP),
        ("lower", [0.0] * 10, [-3.0, -3.1, -2.9], 1, Action.KEEP),
        # unclear after one reading each: measure the candidate again
        ("higher", [0.0] * 10, [0.5], 1, Action.MEASURE_CANDIDATE),
        # interleaving: one incumbent reading per `interleave` (3) candidate readings
        ("higher", [0.0] * 10, [0.5, 0.4, 0.6, 0.5], 1, Action.MEASURE_INCUMBENT),
    ],
)
def test_sequential_test(
    direction: str, incumbent: list[float], candidate: list[float], fresh: int, action: Action
) -> None:
    verdict = next_action(POOLED, direction, NOISY, incumbent, candidate, fresh)
    assert verdict.action is action
    assert verdict.final == (action in (Action.KEEP, Action.DISCARD, Action.UNDECIDED))


@pytest.mark.parametrize(
    ("reuse", "candidate", "incumbent", "pays"),
    [
        (0.0, 2, 2, False),  # no reuse: a tie goes to the candidate
        (2.0, 2, 2, True),  # reused later: a tie goes to the incumbent
        (2.0, 1, 10, False),  # a well-known incumbent: the candidate is what is uncertain
        (1.0, 8, 3, True),  # a poorly known incumbent bounds the information
        (2.0, 10, 5, True),
        (2.0, 5, 10, False),
        (2.0, 3, 20, False),
    ],
)
def test_each_reading_goes_where_it_adds_most_information(
    reuse: float, candidate: int, incumbent: int, pays: bool
) -> None:
    assert incumbent_pays(reuse, candidate, incumbent) is pays


def test_information_is_one_over_the_variance_of_the_difference() -> None:
    assert information(4, 4) == pytest.approx(2.0)
    assert information(1, 10**9) == pytest.approx(1.0)


def test_a_poorly_known_incumbent_is_re_measured() -> None:
    unclear = [0.5, 0.4]
    reused = next_action(POOLED, "higher", NOISY, [0.0, 0.0], unclear, 1)
    assert reused.action is Action.MEASURE_INCUMBENT
    classic = NoisePolicy(reuse=0.0, blocked=False)
    assert next_action(classic, "higher", NOISY, [0.0, 0.0], unclear, 1).action is (
        Action.MEASURE_CANDIDATE
    )


def test_the_cap_ends_an_undecided_test() -> None:
    policy = NoisePolicy(max_evals=4)
    unclear = [0.5, 0.5, 0.5]
    assert next_action(policy, "higher", NOISY, [0.0] * 5, unclear, 1).action is Action.UNDECIDED
    assert next_action(policy, "higher", NOISY, [0.0] * 5, unclear[:2], 1).final is False


def test_min_effect_in_metric_units() -> None:
    # a difference of 0.5 is far beyond a min_effect of 0.01 with sigma 0.1 ...
    small = NoisePolicy(min_effect=0.01, min_effect_in_sigma=False)
    spread = Spread(0.1, 40)
    many = [0.5] * 20
    assert next_action(small, "higher", spread, [0.0] * 20, many, 5).action is Action.KEEP
    # ... and the test is about that effect, not about sigma
    assert small.effect(0.1) == 0.01
    assert DEFAULT.effect(0.1) == pytest.approx(0.1)


def test_policy_round_trips_and_old_runs_keep_their_rule() -> None:
    custom = NoisePolicy(alpha=0.01, min_effect=0.2, min_effect_in_sigma=False, max_evals=9)
    assert NoisePolicy.from_dict(custom.to_dict()) == custom
    assert NoisePolicy.from_dict(DEFAULT.to_dict()) == DEFAULT
    assert NoisePolicy.from_dict(None).mode is NoiseMode.SINGLE  # a run prepared before
    before_34 = {k: v for k, v in DEFAULT.to_dict().items() if k != "blocked"}
    assert NoisePolicy.from_dict(before_34).blocked is False  # it keeps its pooled rule
    before_changes = {k: v for k, v in DEFAULT.to_dict().items() if k != "level_changes"}
    assert NoisePolicy.from_dict(before_changes).level_changes is False
    before_today = {k: v for k, v in DEFAULT.to_dict().items() if k != "today_agrees"}
    assert NoisePolicy.from_dict(before_today).today_agrees is False


@pytest.mark.parametrize("effect", [0.0, 1.0])
def test_error_rates_are_near_the_budget(effect: float) -> None:
    """A null change is kept at most about alpha of the time, a min_effect change about
    `power` of the time (a well-measured incumbent, 400 trials)."""
    rng = random.Random(7)
    kept = 0
    for _ in range(400):
        incumbent = [rng.gauss(0, 1) for _ in range(60)]
        candidate: list[float] = []
        fresh = 0
        while not (
            verdict := next_action(DEFAULT, "higher", NOISY, incumbent, candidate, fresh)
        ).final:
            if verdict.action is Action.MEASURE_CANDIDATE:
                candidate.append(rng.gauss(effect, 1))
            else:
                incumbent.append(rng.gauss(0, 1))
                fresh += 1
        kept += verdict.action is Action.KEEP
    rate = kept / 400
    if effect == 0:
        assert rate <= DEFAULT.alpha + 0.02
    else:
        assert rate >= DEFAULT.power - 0.1


@pytest.mark.parametrize(
    ("action", "failed", "on_incumbent", "decision", "reason"),
    [
        (Action.KEEP, None, False, "keep", "score improved significantly over the incumbent"),
        (Action.DISCARD, None, False, "discard",
         "score not significantly better than the incumbent"),
        (Action.UNDECIDED, None, False, "discard", "undecided within max_evals"),
        (Action.MEASURE_CANDIDATE, EvalSummary(EvalStatus.ERROR, None, None), False, "discard",
         "evaluator error"),
        (Action.MEASURE_CANDIDATE, EvalSummary(EvalStatus.FAIL, False, 1.0), False, "discard",
         "evaluator reported failure"),
        (Action.MEASURE_CANDIDATE, EvalSummary(EvalStatus.PASS, True, None), False, "ambiguous",
         "evaluator pass without comparable score"),
        (Action.MEASURE_INCUMBENT, EvalSummary(EvalStatus.ERROR, None, None), True, "discard",
         "incumbent re-measurement failed"),
    ],
)  # fmt: skip
def test_sequential_decisions_and_their_contract_reasons(
    action: Action, failed: EvalSummary | None, on_incumbent: bool, decision: str, reason: str
) -> None:
    made = sequential_decision(action, ("stats",), failed, on_incumbent)
    assert (made.decision, made.reason) == (decision, reason)
    assert made.notes[-1] == "stats"
    assert made.keep == (decision == "keep")
    assert made.reset == (decision != "keep")


@pytest.mark.parametrize(
    ("direction", "diff", "better"),
    [
        (Direction.HIGHER, Interval(0.5, 0.2, 0.8, 6), Interval(0.5, 0.2, 0.8, 6)),
        (Direction.LOWER, Interval(0.5, 0.2, 0.8, 6), Interval(-0.5, -0.8, -0.2, 6)),
        (Direction.LOWER, Interval(-1.0, -3.0, 0.5, 4, 0.9), Interval(1.0, -0.5, 3.0, 4, 0.9)),
        (Direction.LOWER, Interval(2.0, 2.0, 2.0, 2), Interval(-2.0, -2.0, -2.0, 2)),
    ],
)
def test_signed_interval(direction: Direction, diff: Interval, better: Interval) -> None:
    found = signed_interval(direction, diff)
    assert found == better
    assert found.low <= found.mean <= found.high
    assert found.mean == signed(direction, diff.mean)


# The machine's level rose by 4σ after the incumbent's first ten readings: the two fresh
# incumbent readings and a candidate that changes nothing read 4 higher. Against the pooled
# readings the candidate looks 3.3σ better (the rule before #34 kept it); against the readings
# since the level changed it is no better.
STEPPED = [0.0, 0.1, -0.1, 0.05, -0.05, 0.0, 0.1, -0.1, 0.05, -0.05, 4.0, 4.1]


LATER = [*STEPPED, 3.9, 4.05, 3.95]  # three more incumbent readings at the new level
NULL = [4.0, 3.9, 4.1, 4.05, 3.95, 4.0]  # a candidate that changes nothing, at the new level


@pytest.mark.parametrize(
    ("policy", "direction", "incumbent", "candidate", "fresh", "kept"),
    [
        (POOLED, "higher", STEPPED, NULL[:3], 2, True),  # today's rule: fooled by the drift
        (DEFAULT, "higher", STEPPED, NULL[:3], 2, False),
        (DEFAULT, "higher", LATER, NULL, 5, False),
        (POOLED, "lower", [-x for x in STEPPED], [-x for x in NULL[:3]], 2, True),
        (DEFAULT, "lower", [-x for x in LATER], [-x for x in NULL], 5, False),
        # a real gain of 2σ is still found against the readings at today's level
        (DEFAULT, "higher", LATER, [x + 2 for x in NULL], 5, True),
    ],
)
def test_a_drifting_level_does_not_pass_for_an_improvement(
    policy: NoisePolicy,
    direction: str,
    incumbent: list[float],
    candidate: list[float],
    fresh: int,
    kept: bool,
) -> None:
    verdict = next_action(policy, direction, NOISY, incumbent, candidate, fresh)
    assert (verdict.action is Action.KEEP) is kept


CALM = [0.0, 0.1, -0.1, 0.05, -0.05, 0.0, 0.1, -0.1, 0.05, 0.02]


@pytest.mark.parametrize(
    ("policy", "candidate", "action"),
    [
        # one wild candidate reading (6σ) against an incumbent read this iteration too
        (POOLED, [6.0], Action.KEEP),  # today's rule: one reading of each side decides
        (DEFAULT, [6.0], Action.MEASURE_CANDIDATE),
        # one wild reading among three: the plain mean is +2σ, the robust one +0.7σ
        (POOLED, [6.0, 0.1, -0.1], Action.KEEP),
        (DEFAULT, [6.0, 0.1, -0.1], Action.MEASURE_CANDIDATE),
        # three readings that agree on +3σ: kept
        (DEFAULT, [3.0, 3.1, 2.9], Action.KEEP),
    ],
)
def test_one_outlier_does_not_decide_a_keep(
    policy: NoisePolicy, candidate: list[float], action: Action
) -> None:
    assert next_action(policy, "higher", NOISY, CALM, candidate, 1).action is action


@pytest.mark.parametrize(
    ("readings", "sigma", "kept"),
    [
        (CALM, 1.0, 10),  # no change: every reading
        (STEPPED, 1.0, 2),  # a 4σ step: the readings after it
        (STEPPED, 10.0, 12),  # the same numbers on a noisier evaluator: no significant step
        ([float(x) for x in range(40)], 100.0, 24),  # at most the latest LOCAL_READINGS
        ([1.0], 1.0, 1),
    ],
)
def test_the_local_reference_is_the_readings_since_the_level_changed(
    readings: list[float], sigma: float, kept: int
) -> None:
    found = local_reference(readings, sigma)
    assert list(found) == readings[len(readings) - kept :]


SLOWED = [*CALM, -5.0]  # the machine slowed by 5σ since the incumbent's older readings


@pytest.mark.parametrize(
    ("incumbent", "fresh", "kept"),
    [
        (CALM, 0, 10),  # nothing read this iteration: the readings at today's level
        (CALM, 2, 10),  # this iteration's agree with the older ones: every reading
        ([*CALM, 3.0], 1, 11),  # 2.9 standard errors off: within the bar, every reading
        ([*CALM, 3.5], 1, 1),  # 3.3 standard errors off: the older ones are old
        ([*CALM, 3.0, 2.5, 3.2], 3, 3),
        (SLOWED, 1, 1),
        ([1.0, 1.5], 2, 2),  # nothing older to disagree with
    ],
)
def test_older_readings_count_only_while_this_iterations_agree_with_them(
    incumbent: list[float], fresh: int, kept: int
) -> None:
    found = current_reference(incumbent, fresh, 1.0)
    assert list(found) == incumbent[len(incumbent) - kept :]


@pytest.mark.parametrize(
    ("policy", "incumbent", "candidate", "fresh", "action"),
    [
        # clearly worse than the incumbent's older readings: read the incumbent first
        (DEFAULT, CALM, [-3.0], 0, Action.MEASURE_INCUMBENT),
        (POOLED, CALM, [-3.0], 0, Action.DISCARD),  # the rule before: on old readings
        (DEFAULT, [*CALM, 0.1], [-3.0], 1, Action.DISCARD),  # the fresh reading agrees
        # the gap: after a slowdown a real +1σ gain reads 4σ below the old readings;
        # against this iteration's reading of the incumbent it is not a loss: read on
        (POOLED, SLOWED, [-4.0], 1, Action.DISCARD),
        (DEFAULT, SLOWED, [-4.0], 1, Action.MEASURE_INCUMBENT),
        # judged on this iteration's readings of both: a 3σ gain kept, a 1σ loss discarded
        (DEFAULT, [*SLOWED, -5.1, -4.9], [-2.0, -1.9, -2.1], 3, Action.KEEP),
        (DEFAULT, [*SLOWED, -5.1, -4.9], [-6.0, -6.1, -5.9], 3, Action.DISCARD),
        # a 2.2σ step, too small to find among all splits (3.3 standard errors < CHANGE_Z) but
        # plain at the iteration's start: a null change is not kept on the older readings
        (POOLED, [*CALM, 2.2, 2.3, 2.1], [2.2, 2.3, 2.1, 2.2], 3, Action.KEEP),
        (DEFAULT, [*CALM, 2.2, 2.3, 2.1], [2.2, 2.3, 2.1, 2.2], 3, Action.MEASURE_INCUMBENT),
    ],
)
def test_no_decision_rests_on_old_incumbent_readings_alone(
    policy: NoisePolicy, incumbent: list[float], candidate: list[float], fresh: int, action: Action
) -> None:
    assert next_action(policy, "higher", NOISY, incumbent, candidate, fresh).action is action


@pytest.mark.parametrize(
    ("values", "scale", "center"),
    [
        ([1.0, 2.0, 3.0], 10.0, 2.0),  # nothing far: the mean
        ([0.0, 0.0, 0.0, 100.0], 1.0, 2 / 3),  # the wild value clipped to 2 scales off
        ([5.0], 1.0, 5.0),
    ],
)
def test_huber_mean_bounds_an_outlier(values: list[float], scale: float, center: float) -> None:
    assert huber_mean(values, scale) == pytest.approx(center)


def test_paired_interval_is_a_t_interval_of_the_differences() -> None:
    found = paired_interval([1.0, 2.0, 3.0])
    assert found.mean == 2.0 and found.n == 3
    assert found.half_width == pytest.approx(4.303 / math.sqrt(3), rel=3e-3)
    assert math.isinf(paired_interval([1.0]).half_width)
