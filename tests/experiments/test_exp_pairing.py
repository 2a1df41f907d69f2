"""The pure decisions of paired session readings (#34): pairing.py and reference.py."""

from __future__ import annotations

import math

import pytest

from autoresearch.experiments.confidence import PAIRED, POOLED, Point, significance
from autoresearch.experiments.pairing import (
    Moment,
    PairedPoint,
    chain_improvement,
    drift_of,
    level_drifts,
    run_change,
)
from autoresearch.experiments.reference import PairingPlan, Side, plan_pairing, round_order
from autoresearch.states import Direction, Verdict

KEEP, DISCARD = Verdict.KEEP, Verdict.DISCARD
LOWER, HIGHER = Direction.LOWER, Direction.HIGHER


@pytest.mark.parametrize(
    ("index", "order"),
    [
        (0, (Side.REFERENCE, Side.CANDIDATE)),
        (1, (Side.CANDIDATE, Side.REFERENCE)),
        (2, (Side.REFERENCE, Side.CANDIDATE)),
        (7, (Side.CANDIDATE, Side.REFERENCE)),
    ],
)
def test_rounds_alternate_which_side_is_read_first(index: int, order: tuple[Side, Side]) -> None:
    assert round_order(index) == order


@pytest.mark.parametrize(
    ("repeats", "has_baseline", "plan"),
    [
        (1, True, PairingPlan(False, "a single reading")),
        (3, False, PairingPlan(False, "no baseline yet: this run is the segment's reference")),
        (2, True, PairingPlan(True)),
        (100, True, PairingPlan(True)),
    ],
)
def test_a_run_pairs_only_repeated_readings_after_a_baseline(
    repeats: int, has_baseline: bool, plan: PairingPlan
) -> None:
    assert plan_pairing(repeats, has_baseline) == plan


@pytest.mark.parametrize(
    ("direction", "candidate", "reference", "mean", "bounded"),
    [
        # the level moves from 100 to 70 between rounds: each pair shares it, nothing remains
        (LOWER, (100.0, 70.0, 70.0), (100.0, 70.0, 70.0), 0.0, True),
        # 5 % faster at each level: +5, +3.5, +3.5 (lower is better, so better is +)
        (LOWER, (95.0, 66.5, 66.5), (100.0, 70.0, 70.0), 4.0, True),
        (HIGHER, (95.0, 66.5, 66.5), (100.0, 70.0, 70.0), -4.0, True),
        # one pair: its mean, no spread to bound it
        (LOWER, (9.0,), (10.0,), 1.0, False),
        # a reading without its partner (the candidate failed) does not count
        (LOWER, (9.0, 9.0), (10.0, 10.0, 10.0), 1.0, True),
    ],
)
def test_a_run_is_judged_on_its_pairs(
    direction: Direction,
    candidate: tuple[float, ...],
    reference: tuple[float, ...],
    mean: float,
    bounded: bool,
) -> None:
    found = run_change(direction, candidate, reference)
    assert found is not None and found.mean == pytest.approx(mean)
    assert math.isfinite(found.half_width) is bounded


def test_no_pair_no_change() -> None:
    assert run_change(LOWER, (9.0, 9.0), ()) is None


def _keep(n: int, commit: str, readings: tuple[float, ...], ref: str | None = None,
          reference: tuple[float, ...] = ()) -> PairedPoint:  # fmt: skip
    return PairedPoint(n, KEEP, commit, readings, ref, reference)


BASE = _keep(1, "a", (100.0, 100.2, 99.8))
SECOND = _keep(2, "b", (95.0, 66.6, 66.4), "a", (100.0, 70.1, 69.9))  # +5, +3.5, +3.5
THIRD = _keep(4, "c", (60.0, 60.2, 59.8), "b", (66.0, 66.1, 65.9))  # +6
OFF_CHAIN = _keep(4, "c", (60.0, 60.2, 59.8), "z", (66.0, 66.1, 65.9))  # read next to another
UNPAIRED = _keep(4, "c", (60.0, 60.2, 59.8))


@pytest.mark.parametrize(
    ("points", "target", "mean", "pairs"),
    [
        ([BASE, SECOND], 2, 4.0, 3),
        ([BASE, SECOND, PairedPoint(3, DISCARD, None, (1.0, 1.0)), THIRD], 4, 10.0, 6),
        ([BASE, SECOND, THIRD], 2, 4.0, 3),  # up to the best, when a worse keep came later
        ([BASE, SECOND, OFF_CHAIN], 4, None, 0),  # a link read next to another commit
        ([BASE, SECOND, UNPAIRED], 4, None, 0),  # a link without pairs: pooled only
        ([BASE], 1, None, 0),
    ],
)
def test_the_best_against_the_baseline_is_a_chain_of_paired_links(
    points: list[PairedPoint], target: int, mean: float | None, pairs: int
) -> None:
    found = chain_improvement(points, LOWER, 1, target)
    if mean is None:
        assert found is None
    else:
        assert found is not None and found.mean == pytest.approx(mean, abs=0.01)
        assert found.low < found.mean < found.high and found.n == pairs


@pytest.mark.parametrize(
    ("then", "now", "significant"),
    [
        (Moment(1, (100.0, 100.2, 99.8)), Moment(5, (70.0, 70.1, 69.9)), True),
        (Moment(1, (100.0, 100.2, 99.8)), Moment(5, (100.1, 99.9, 100.0)), False),
    ],
)
def test_drift_compares_two_moments_of_one_commit(
    then: Moment, now: Moment, significant: bool
) -> None:
    found = drift_of("baseline", "a", then, now)
    assert found is not None and found.significant is significant
    assert found.text.startswith("the baseline now reads ")
    assert "(within the noise)" in found.text or significant


@pytest.mark.parametrize(
    ("then", "now"),
    [
        (Moment(1, (100.0, 100.2)), Moment(1, (70.0, 70.2))),  # one moment
        (Moment(1, (100.0,)), Moment(5, (70.0, 70.2))),  # one reading says nothing of spread
    ],
)
def test_no_drift_without_two_moments_of_readings(then: Moment, now: Moment) -> None:
    assert drift_of("baseline", "a", then, now) is None


def test_the_drift_of_the_baseline_and_of_the_kept_commit() -> None:
    later = PairedPoint(5, DISCARD, None, (58.0, 58.1), "c", (50.0, 50.1))
    drifts = level_drifts([BASE, SECOND, PairedPoint(3, DISCARD, None, (1.0, 1.0)), THIRD, later],
                          "a")  # fmt: skip
    assert [(d.label, d.commit, d.then_run, d.now_run) for d in drifts] == [
        ("baseline", "a", 1, 2),
        ("kept commit", "c", 4, 5),
    ]
    assert "it read 100.00 ± 0.50 (n=3) at run #1" in drifts[0].text


def _point(n: int, status: Verdict, readings: tuple[float, ...], commit: str,
           ref: str | None = None, reference: tuple[float, ...] = ()) -> Point:  # fmt: skip
    mean = sum(readings) / len(readings)
    return Point(n, status, mean, False, commit, readings, ref, reference)


def test_significance_is_paired_when_the_chain_is_and_pooled_otherwise() -> None:
    base = _point(1, KEEP, (100.0, 100.2, 99.8), "a")
    # pooled it looks like −30 (significant); paired, against "a" read alongside: nothing
    null = _point(2, KEEP, (70.0, 70.2, 69.8), "b", "a", (70.1, 70.0, 69.9))
    found = significance([base, null], LOWER)
    assert found.basis == PAIRED and found.pairs == 3 and found.significant is False
    unpaired = _point(2, KEEP, (70.0, 70.2, 69.8), "b")
    pooled = significance([base, unpaired], LOWER)
    assert pooled.basis == POOLED and pooled.significant is True
