"""The one rule a run's improvement is reported by (#34): certify's paired change when there is
one, else the difference of the means, said to be unpaired (pure, a table)."""

from __future__ import annotations

import pytest

from autoresearch.noise import Interval
from autoresearch.states import Direction
from autoresearch.supervisor.improvement import Improvement, PairedChange, improvement_of

HIGHER, LOWER = Direction.HIGHER, Direction.LOWER
PAIRED = Interval(9.0, 8.4, 9.6, 4)
POOLED = Interval(11.0, 10.0, 12.0, 5)


@pytest.mark.parametrize(
    ("direction", "baseline", "best", "unpaired", "paired", "expected"),
    [
        # certified: the paired change stands, however far the pooled means moved apart; its
        # percent of the baseline's level in the pairs
        (HIGHER, 3.0, 14.0, POOLED, PairedChange(PAIRED, 90.0), Improvement(9.0, 10.0, PAIRED, True)),
        # the paired baseline unknown: a share of the headline baseline
        (HIGHER, 3.0, 14.0, None, PairedChange(PAIRED), Improvement(9.0, 300.0, PAIRED, True)),
        # no certification: the means' difference, better is +, its interval, unpaired
        (HIGHER, 3.0, 14.0, POOLED, None, Improvement(11.0, pytest.approx(366.67, abs=0.01), POOLED, False)),
        (LOWER, 10.0, 5.0, None, None, Improvement(5.0, 50.0, None, False)),
        # a baseline of zero has no percent
        (HIGHER, 0.0, 2.0, None, None, Improvement(2.0, None, None, False)),
        # nothing to compare
        (HIGHER, None, 2.0, None, None, None),
        (HIGHER, 1.0, None, POOLED, None, None),
    ],
)  # fmt: skip
def test_the_improvement_a_run_reports(
    direction: Direction,
    baseline: float | None,
    best: float | None,
    unpaired: Interval | None,
    paired: PairedChange | None,
    expected: Improvement | None,
) -> None:
    assert improvement_of(direction, baseline, best, unpaired, paired) == expected


def test_its_text_says_whether_it_is_paired() -> None:
    paired = Improvement(9.0, 10.0, PAIRED, True).text()
    assert paired == "+9.00, 95 % interval [+8.40, +9.60] (paired; better is +)"
    unpaired = Improvement(11.0, 10.0, POOLED, False).text()
    assert unpaired == (
        "+11.0, 95 % interval [+10.0, +12.0] (unpaired: means of readings taken at other "
        "moments; better is +)"
    )
    # a deterministic evaluator's change is exact: pairing says nothing about it
    exact = Improvement(5.0, 50.0, Interval(5.0, 5.0, 5.0, 1), False)
    assert not exact.varies and exact.text() == "+5 (better is +)"
    assert Improvement(5.0, 50.0, None, False).text() == "+5 (better is +)"


def test_its_json_is_its_fields() -> None:
    found = Improvement(9.0, 10.0, PAIRED, True).to_dict()
    assert found == {"change": 9.0, "percent": 10.0, "interval": PAIRED.to_dict(), "paired": True}
