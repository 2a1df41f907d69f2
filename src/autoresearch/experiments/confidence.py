"""Baseline, best and confidence of a segment (experiments.md "Confidence"), pure.

Crash and checks_failed runs are outcomes, never scores: they are counted, not compared.
Flagged runs are excluded from every number from the moment they are flagged.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import asdict, dataclass, replace

# a record of Confidence's, which the MCP schemas mirror (mcp/schemas.LevelDrift)
from autoresearch.experiments.pairing import LevelDrift as LevelDrift
from autoresearch.experiments.pairing import PairedPoint, chain_improvement, level_drifts
from autoresearch.jsonshape import json_shape
from autoresearch.noise import Interval, pooled_difference, pooled_spread, signed_interval
from autoresearch.states import Direction, Verdict, best_by

LIKELY_REAL, MARGINAL, WITHIN_NOISE = "likely real", "marginal", "within noise"
SIGNIFICANT, NOT_SIGNIFICANT = "significant", "not significant"
NO_SPREAD = "no repeated run yet: exp run --repeats N measures the spread"
PAIRED, POOLED = "paired", "pooled"
# said of a pooled significance: its readings were taken at other moments
POOLED_NOTE = (
    "pooled readings of different moments, drift not excluded: exp run --repeats N after a "
    "keep pairs each reading with one of the kept commit"
)
UNSCORED = (Verdict.CRASH, Verdict.CHECKS_FAILED)


@dataclass(frozen=True)
class Point:
    """One logged run as the statistics see it."""

    number: int
    status: Verdict | None  # None: a pending run (a segment's statistics read logged ones)
    metric: float | None
    flagged: bool = False
    commit: str | None = None
    readings: tuple[float, ...] = ()  # `exp run --repeats`: every reading (metric: their mean)
    # the kept commit read next to each reading, in the same order (pairing.py)
    reference_commit: str | None = None
    reference: tuple[float, ...] = ()

    @property
    def values(self) -> tuple[float, ...]:
        """The run's readings, or its one logged value."""
        if self.readings:
            return self.readings
        return () if self.metric is None else (self.metric,)

    @property
    def scored(self) -> bool:
        return (
            not self.flagged
            and self.status not in UNSCORED
            and self.metric is not None
            and math.isfinite(self.metric)
        )


@dataclass(frozen=True)
class Ref:
    """A run referred to by a report: its number, value and commit."""

    run: int
    metric: float
    commit: str | None = None

    def to_dict(self) -> dict[str, object]:
        return json_shape(self)


@dataclass(frozen=True)
class BestRef(Ref):
    """The best kept run with its change against the baseline (every view shows it):
    `paired`, once every keep from the baseline to it was read next to the commit kept before
    it (better is +: drift cancels); else only `delta_pct`, of pooled readings taken at other
    moments than the baseline's (drift not excluded)."""

    delta_pct: float | None = None
    paired: Interval | None = None


@dataclass(frozen=True)
class Significance:
    """best − baseline (better is +) with a 95 % interval, or the reason why there is none.
    `paired`: every keep from the baseline to the best was read next to the commit kept
    before it, and the interval chains those paired changes (drift cancels). `pooled`: the
    spread of repeated runs (each run's readings around their own mean, pooled over the
    segment) of readings taken at different moments, which drift can fool."""

    significant: bool | None
    difference: float | None = None
    low: float | None = None
    high: float | None = None
    spread: float | None = None
    df: int = 0
    reason: str | None = None
    basis: str = POOLED  # PAIRED or POOLED (see above)
    pairs: int = 0  # paired: the pairs of readings behind the interval

    @property
    def paired_change(self) -> Interval | None:
        """best − baseline from the chain of pairs (None: pooled, or none computed)."""
        if self.basis != PAIRED or self.difference is None:
            return None
        assert self.low is not None and self.high is not None
        return Interval(self.difference, self.low, self.high, self.pairs)

    @property
    def label(self) -> str:
        if self.significant is None:
            return f"n/a ({self.reason})"
        verdict = SIGNIFICANT if self.significant else NOT_SIGNIFICANT
        assert self.difference is not None and self.low is not None and self.high is not None
        shown = Interval(self.difference, self.low, self.high, self.pairs).signed_text()
        return f"{verdict}: {shown} (better is +)"


@dataclass(frozen=True)
class Confidence:
    """|best − baseline| / MAD with its label, or None and the reason why not; and whether
    the best is significantly better than the baseline."""

    value: float | None
    label: str | None
    mad: float | None
    runs: int
    reason: str | None = None
    significance: Significance | None = None
    drift: tuple[LevelDrift, ...] = ()  # how the baseline and the kept commit read then and now

    def to_dict(self) -> dict[str, object]:
        return json_shape(self)


@dataclass(frozen=True)
class SegmentStats:
    baseline: Ref | None
    best: Ref | None
    confidence: Confidence

    def delta_pct(self, value: float | None) -> float | None:
        return delta_pct(self.baseline.metric if self.baseline else None, value)

    def best_ref(self) -> BestRef | None:
        """The best kept run with its change against the baseline."""
        if self.best is None:
            return None
        sig = self.confidence.significance
        return BestRef(
            **asdict(self.best),
            delta_pct=self.delta_pct(self.best.metric),
            paired=None if sig is None else sig.paired_change,
        )


def label(value: float) -> str:
    if value >= 2:
        return LIKELY_REAL
    return MARGINAL if value >= 1 else WITHIN_NOISE


def baseline_of(points: Sequence[Point]) -> Ref | None:
    """The first non-flagged keep with a value (the baseline run is logged as keep)."""
    for p in points:
        if p.status == Verdict.KEEP and p.scored and p.metric is not None:
            return Ref(p.number, p.metric, p.commit)
    return None


def best_of(points: Sequence[Point], direction: Direction) -> Ref | None:
    """The best non-flagged keep by direction; the earliest wins a tie."""
    kept = [
        Ref(p.number, p.metric, p.commit)
        for p in points
        if p.status == Verdict.KEEP and p.scored and p.metric is not None
    ]
    return best_by(direction, kept, lambda r: r.metric)


def confidence(points: Sequence[Point], direction: Direction) -> Confidence:
    """The contract's formula over one segment's logged runs, with the significance."""
    found = _mad_confidence(points, direction)
    base = baseline_of(points)
    drift = level_drifts(paired_points(points), base.commit if base else None)
    return replace(found, significance=significance(points, direction), drift=drift)


def paired_points(points: Sequence[Point]) -> list[PairedPoint]:
    """The scored runs as pairing sees them."""
    return [
        PairedPoint(p.number, p.status, p.commit, p.values, p.reference_commit, p.reference)
        for p in points
        if p.scored
    ]


def _mad_confidence(points: Sequence[Point], direction: Direction) -> Confidence:
    values = [p.metric for p in points if p.scored and p.metric is not None]
    if len(values) < 3:
        return Confidence(None, None, None, len(values), "fewer than 3 comparable runs")
    center = statistics.median(values)
    mad = statistics.median(abs(v - center) for v in values)
    if mad == 0:
        return Confidence(None, None, 0.0, len(values), "MAD is 0")
    base, best = baseline_of(points), best_of(points, direction)
    if base is None:
        return Confidence(None, None, mad, len(values), "no baseline (no kept run)")
    if best is None or best.metric == base.metric:
        return Confidence(None, None, mad, len(values), "best equals the baseline")
    # rounded as every view prints it (`2.00 × MAD`), so that float noise (1.9999999999999996
    # for a ratio of exactly 2) cannot label a shown 2.00 `marginal`
    value = round(abs(best.metric - base.metric) / mad, 2)
    return Confidence(value, label(value), mad, len(values))


def significance(points: Sequence[Point], direction: Direction) -> Significance:
    """Whether the best kept run beats the baseline beyond the noise that repeated runs show."""
    base, best = baseline_of(points), best_of(points, direction)
    if base is None:
        return Significance(None, reason="no baseline (no kept run)")
    if best is None or best.run == base.run:
        return Significance(None, reason="best equals the baseline")
    chain = chain_improvement(paired_points(points), direction, base.run, best.run)
    if chain is not None:
        low = chain.low
        return Significance(low > 0, chain.mean, low, chain.high, basis=PAIRED, pairs=chain.n)
    spread = pooled_spread([p.values for p in points if p.scored])
    if spread.df < 1:
        return Significance(None, reason=NO_SPREAD)
    by_run = {p.number: p.values for p in points}
    diff = pooled_difference(by_run[best.run], by_run[base.run], spread)
    better = signed_interval(direction, diff)
    return Significance(better.low > 0, better.mean, better.low, better.high, spread.sd, spread.df)


def segment_stats(points: Sequence[Point], direction: Direction) -> SegmentStats:
    return SegmentStats(
        baseline_of(points), best_of(points, direction), confidence(points, direction)
    )


def delta_pct(baseline: float | None, value: float | None) -> float | None:
    """Relative change from the baseline in percent (None without a non-zero baseline)."""
    if baseline is None or value is None or baseline == 0:
        return None
    return (value - baseline) / abs(baseline) * 100.0
