"""Confidence (experiments.md "Confidence"): the exact formula and labels, as tables."""

from __future__ import annotations

import pytest

from autoresearch.experiments.confidence import (
    LIKELY_REAL,
    MARGINAL,
    NO_SPREAD,
    WITHIN_NOISE,
    Point,
    baseline_of,
    best_of,
    confidence,
    delta_pct,
    label,
    significance,
)


def pts(*items: tuple[str, float | None] | tuple[str, float | None, bool]) -> list[Point]:
    out = []
    for i, item in enumerate(items, start=1):
        status, metric = item[0], item[1]
        flagged = bool(item[2]) if len(item) > 2 else False  # type: ignore[misc]
        out.append(Point(i, status, metric, flagged))
    return out


@pytest.mark.parametrize(
    ("points", "direction", "value", "reason"),
    [
        # fewer than 3 comparable runs
        (pts(("keep", 10), ("keep", 8)), "lower", None, "fewer than 3 comparable runs"),
        # crash / checks_failed / flagged / missing metrics do not count
        (
            pts(
                ("keep", 10),
                ("crash", 1),
                ("checks_failed", 2),
                ("keep", 8, True),
                ("discard", None),
            ),
            "lower",
            None,
            "fewer than 3 comparable runs",
        ),
        # MAD 0: most values equal
        (
            pts(("keep", 10), ("discard", 10), ("discard", 10), ("keep", 8)),
            "lower",
            None,
            "MAD is 0",
        ),
        # no keep at all
        (
            pts(("discard", 10), ("discard", 9), ("discard", 7)),
            "lower",
            None,
            "no baseline (no kept run)",
        ),
        # best equals the baseline
        (
            pts(("keep", 10), ("discard", 12), ("discard", 15)),
            "lower",
            None,
            "best equals the baseline",
        ),
        # lower is better: values 10, 9, 12, 8 → median 9.5, MAD median(.5,.5,2.5,1.5)=1.0
        # baseline 10, best 8 → 2.0
        (pts(("keep", 10), ("discard", 9), ("discard", 12), ("keep", 8)), "lower", 2.0, None),
        # higher is better on the same values: best keep is still the baseline 10 → none
        (
            pts(("keep", 10), ("discard", 9), ("discard", 12), ("keep", 8)),
            "higher",
            None,
            "best equals the baseline",
        ),
        # higher: baseline 10, best keep 12 → |12 − 10| / 1.0
        (pts(("keep", 10), ("discard", 9), ("keep", 12), ("discard", 8)), "higher", 2.0, None),
        # a flagged keep is neither baseline nor best, nor a value
        (
            pts(("keep", 100, True), ("keep", 10), ("discard", 9), ("discard", 12), ("keep", 8)),
            "lower",
            2.0,
            None,
        ),
    ],
)
def test_confidence_cases(
    points: list[Point], direction: str, value: float | None, reason: str | None
) -> None:
    result = confidence(points, direction)
    assert result.value == (pytest.approx(value) if value is not None else None)
    assert result.reason == reason
    if value is not None:
        assert result.label == label(value)


def test_a_ratio_of_two_is_labelled_as_printed_despite_float_noise() -> None:
    # |0.2 - 0.3| / MAD 0.05 is 1.9999999999999996 in floats; every view prints 2.00
    points = pts(("keep", 0.3), ("discard", 0.1), ("discard", 0.15), ("keep", 0.2))
    result = confidence(points, "lower")
    assert result.value == 2.0
    assert result.label == LIKELY_REAL


def test_mad_uses_median_of_absolute_deviations() -> None:
    # values 1, 2, 3, 4, 100: median 3, deviations 2, 1, 0, 1, 97 → MAD 1
    points = pts(("keep", 3), ("discard", 1), ("discard", 2), ("discard", 100), ("keep", 4))
    result = confidence(points, "higher")
    assert result.mad == 1.0
    assert result.value == pytest.approx(1.0)
    assert result.label == MARGINAL


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (5.0, LIKELY_REAL),
        (2.0, LIKELY_REAL),
        (1.99, MARGINAL),
        (1.0, MARGINAL),
        (0.99, WITHIN_NOISE),
        (0.0, WITHIN_NOISE),
    ],
)
def test_labels(value: float, expected: str) -> None:
    assert label(value) == expected


def test_baseline_is_the_first_unflagged_keep_and_best_follows_direction() -> None:
    points = pts(("discard", 50), ("keep", 10, True), ("keep", 9), ("keep", 7), ("keep", 11))
    base = baseline_of(points)
    assert base is not None and (base.run, base.metric) == (3, 9)
    low, high = best_of(points, "lower"), best_of(points, "higher")
    assert low is not None and (low.run, low.metric) == (4, 7)
    assert high is not None and (high.run, high.metric) == (5, 11)
    assert best_of(pts(("discard", 1)), "lower") is None


def test_ties_keep_the_earliest_best() -> None:
    best = best_of(pts(("keep", 5), ("keep", 5)), "lower")
    assert best is not None and best.run == 1


@pytest.mark.parametrize(
    ("baseline", "value", "expected"),
    [
        (100, 90, -10.0),
        (100, 110, 10.0),
        (-50, -25, 50.0),
        (0, 1, None),
        (None, 1, None),
        (1, None, None),
    ],
)
def test_delta_pct(baseline: float | None, value: float | None, expected: float | None) -> None:
    assert delta_pct(baseline, value) == (pytest.approx(expected) if expected is not None else None)


def _repeated(*runs: tuple[str, tuple[float, ...]]) -> list[Point]:
    return [
        Point(i, status, sum(values) / len(values), readings=values if len(values) > 1 else ())
        for i, (status, values) in enumerate(runs, start=1)
    ]


@pytest.mark.parametrize(
    ("points", "direction", "significant", "reason"),
    [
        # single readings only: no spread is known, whatever the MAD says
        (_repeated(("keep", (10.0,)), ("keep", (8.0,)), ("discard", (9.0,))), "lower", None,
         NO_SPREAD),
        # repeated runs, a gap far beyond their spread
        (_repeated(("keep", (10.0, 10.2, 9.8)), ("keep", (8.0, 8.1, 7.9))), "lower", True, None),
        (_repeated(("keep", (10.0, 10.2, 9.8)), ("keep", (12.0, 12.1, 11.9))), "higher", True,
         None),
        # a gap within the spread
        (_repeated(("keep", (10.0, 12.0, 8.0)), ("keep", (9.5, 11.5, 7.5))), "lower", False, None),
        # a discarded run's readings count for the spread only
        (_repeated(("keep", (10.0,)), ("discard", (9.0, 9.2, 8.8)), ("keep", (8.0,))), "lower",
         True, None),
        # repeated and exact (a deterministic benchmark): the difference itself decides
        (_repeated(("keep", (10.0, 10.0)), ("keep", (9.0, 9.0))), "lower", True, None),
        (_repeated(("keep", (10.0, 10.0))), "lower", None, "best equals the baseline"),
        (_repeated(("discard", (10.0, 10.0))), "lower", None, "no baseline (no kept run)"),
    ],
)  # fmt: skip
def test_significance_needs_the_spread_of_repeated_runs(
    points: list[Point], direction: str, significant: bool | None, reason: str | None
) -> None:
    found = significance(points, direction)
    assert found.significant is significant
    assert found.reason == reason
    if significant is not None:
        assert found.low is not None and found.high is not None and found.difference is not None
        assert found.low <= found.difference <= found.high
        assert (found.low > 0) is significant
    assert confidence(points, direction).significance == found
