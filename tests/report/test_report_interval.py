"""The report's interval of an improvement is noise.py's Welch interval: its numbers pinned
against values computed independently, with scipy, outside this test (scipy is no dependency):

    va, vb = variance(after) / len(after), variance(before) / len(before)
    df = floor((va + vb) ** 2 / (va**2 / (len(after) - 1) + vb**2 / (len(before) - 1)))
    half = scipy.stats.t.ppf(0.975, df) * sqrt(va + vb)

noise.py floors Welch's degrees of freedom (the conservative side, as certify does) and takes
t from its Cornish-Fisher quantile, within 0.3 % of the exact one: the tolerance below."""

from __future__ import annotations

import pytest

from autoresearch import noise
from autoresearch.report.model import difference_interval

# before, after, scipy's low and high of mean(after) - mean(before) (at the df in the comment)
WELCH = [
    ((10.0, 10.4, 9.6), (8.0, 8.2, 7.8), -3.1109401577889035, -0.8890598422110965),  # df 2
    ((1.0, 2.0, 3.0), (11.0, 12.0, 13.0), 7.733042064472481, 12.266957935527518),  # df 4
    ((5.0, 5.2, 4.9, 5.1, 5.0), (4.0, 4.6), -4.606529626507038, 3.1265296265070375),  # df 1
    (  # df 5
        (100.0, 101.5, 99.0, 100.5),
        (97.0, 96.0, 98.5, 97.2, 96.8, 97.5),
        -4.677531655217131,
        -1.4891350114495256,
    ),
    (
        (0.5, 0.52, 0.49),
        (0.47, 0.46, 0.48, 0.45),
        -0.07311449333964992,
        -0.0035521733270167458,
    ),  # 3
]


@pytest.mark.parametrize(("before", "after", "low", "high"), WELCH)
def test_the_improvement_interval_is_welchs_t(
    before: tuple[float, ...], after: tuple[float, ...], low: float, high: float
) -> None:
    found = difference_interval(before, after)
    assert found is not None
    tolerance = 3e-3 * (high - low) / 2
    assert found.low == pytest.approx(low, abs=tolerance)
    assert found.high == pytest.approx(high, abs=tolerance)
    # the one owner's number, to the letter: the report computes no interval of its own
    assert found == noise.difference_interval(after, before)


def test_identical_readings_give_a_point_and_one_reading_no_interval() -> None:
    point = difference_interval((2.0, 2.0), (3.0, 3.0, 3.0))
    assert point is not None and (point.low, point.high) == (1.0, 1.0)
    assert difference_interval((1.0,), (2.0, 3.0)) is None
    assert difference_interval((2.0, 3.0), (1.0,)) is None
