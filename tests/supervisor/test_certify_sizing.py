"""certify's numbers (#34): paired by round, sized to the noise, rounded, better is +."""

from __future__ import annotations

import pytest

from autoresearch.noise import Interval
from autoresearch.paired import pairs_to_resolve
from autoresearch.states import Direction
from autoresearch.supervisor.certify import (
    MAX_ROUNDS,
    Certification,
    Measured,
    Subject,
    certification_lines,
    rounds_to_resolve,
)

BASE, FINAL = Subject("baseline", "b" * 40), Subject("final", "f" * 40)


def scores(base: list[float], final: list[float]) -> dict[str, list[float]]:
    return {BASE.commit: base, FINAL.commit: final}


@pytest.mark.parametrize(
    ("base", "final", "claimed", "rounds"),
    [
        # pairs that agree closely on +10: five rounds resolve a claim of 10
        ([0.0, 1.0, 2.0, 3.0, 4.0], [10.1, 10.9, 12.0, 13.1, 13.9], 10.0, 5),
        # the same pairs, a claim of 0.01: more rounds, up to the cap
        ([0.0, 1.0, 2.0, 3.0, 4.0], [10.1, 10.9, 12.0, 13.1, 13.9], 0.01, MAX_ROUNDS),
        # differences spread ±1 around 1: a claim of 1 needs more rounds than the five taken
        ([0.0, 0.0, 0.0, 0.0, 0.0], [0.0, 2.0, 1.0, 0.2, 1.8], 1.0, 13),
        # nothing claimed (no keep, or a deterministic run): what was asked for
        ([0.0, 0.0, 0.0], [1.0, 2.0, 3.0], None, 3),
    ],
)
def test_certify_takes_the_rounds_that_resolve_the_claimed_improvement(
    base: list[float], final: list[float], claimed: float | None, rounds: int
) -> None:
    found = rounds_to_resolve(Direction.HIGHER, scores(base, final), [BASE, FINAL], claimed)
    assert found == rounds


def test_drift_common_to_a_pair_costs_no_rounds() -> None:
    """The machine slowed by 30 % half-way: each pair's difference is unchanged, so the pairs
    resolve what the pooled means could not."""
    base = [100.0, 100.5, 99.5, 130.0, 130.5, 129.5]
    final = [95.0, 95.4, 94.6, 125.0, 125.6, 124.4]
    assert rounds_to_resolve(Direction.LOWER, scores(base, final), [BASE, FINAL], 5.0) == 6
    assert pairs_to_resolve([5.0, 5.1, 4.9, 5.0, 4.8, 5.1], 5.0) == 6


def test_certification_lines_round_and_say_what_cannot_be_resolved() -> None:
    imp = Interval(46.99123, 20.1234, 73.8591, 5)
    report = Certification(
        run_id="r", repeats=5, direction=Direction.LOWER, failed_readings=0, spread=27.4,
        baseline=Measured(BASE.commit, [204.9678] * 5, Interval(204.9678, 177.5, 232.4, 5)),
        final=Measured(FINAL.commit, [158.0] * 5, Interval(158.0, 130.6, 185.4, 5)),
        improvement=imp, significant=True, same_commit=False, baseline_mean=204.9678,
        resolution="the interval (± 27) is too wide to resolve …",
    )  # fmt: skip
    first, second = certification_lines(report)
    assert first.startswith("improvement +47, 95 % interval [+20, +74] (significant;")
    assert second == "  the interval (± 27) is too wide to resolve …"
    assert Certification.from_json(report.to_json()) == report
