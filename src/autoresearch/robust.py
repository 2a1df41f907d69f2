"""Robust location and the level of now (noise.py's blocked rule, #34): pure arithmetic.

A shared machine drifts (its load changes; a GPU throttles) and has heavy tails (a reading taken
while other jobs paused). `local_reference` keeps only an incumbent's readings taken at the
machine's present level; `huber_mean` sums readings up so that one wild reading cannot carry
the estimate.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import NamedTuple

# Huber's tuning constant, in standard deviations of a reading: under Gaussian noise the
# estimate is the plain mean for 95 % of readings (efficiency about 99 %); one wild reading
# moves it by at most HUBER_K standard deviations divided by the number of readings.
HUBER_K = 2.0
# How far apart (in standard errors) the incumbent's readings before and after a point must
# be for the level to count as changed there: a change is looked for at every split, so the
# bar is well above the 1.96 of a single comparison.
CHANGE_Z = 3.5
# At most this many of the incumbent's latest readings form its reference: a slow drift then
# biases the reference by the drift over that many readings, not over the incumbent's life.
LOCAL_READINGS = 24
# How far apart (in standard errors) this iteration's incumbent readings and its older ones
# may be before the older ones count as taken under other conditions. The split is known in
# advance (the iteration's start), one comparison, so the bar is lower than CHANGE_Z: a level
# that moved by 2σ since the last iteration is caught by three fresh readings. Not lower: the
# switch is chosen by the fresh readings themselves, and at 2 it was taken by chance often
# enough to lift false keeps from 4.3 % to 4.9 % (bench/drift.py, Gaussian, seeds 200-599).
AGREE_Z = 3.0


def local_reference(incumbent: Sequence[float], sigma: float) -> Sequence[float]:
    """The incumbent's latest readings taken at today's level: at most LOCAL_READINGS of them,
    cut after the most significant change of level (a step of the machine's speed), if one is
    significant at CHANGE_Z standard errors."""
    recent = incumbent[-LOCAL_READINGS:]
    n = len(recent)
    if n < 2 or sigma <= 0:
        return recent
    total, before, best, cut = math.fsum(recent), 0.0, CHANGE_Z, 0
    for j in range(1, n):
        before += recent[j - 1]
        gap = (total - before) / (n - j) - before / j
        z = abs(gap) / (sigma * math.sqrt(1 / j + 1 / (n - j)))
        if z > best:
            best, cut = z, j
    return recent[cut:]


def current_reference(incumbent: Sequence[float], fresh: int, sigma: float) -> Sequence[float]:
    """The incumbent's readings a decision compares with: `local_reference` of all of them,
    unless this iteration's (the last `fresh`) disagree with the older ones by more than
    AGREE_Z standard errors; then the older ones are old (read at another level of the
    machine) and only this iteration's count, so the test is on readings taken together."""
    if fresh <= 0 or fresh >= len(incumbent) or sigma <= 0:
        return local_reference(incumbent, sigma)
    new = incumbent[-fresh:]
    old = local_reference(incumbent[:-fresh], sigma)
    gap = math.fsum(new) / len(new) - math.fsum(old) / len(old)
    if abs(gap) > AGREE_Z * sigma * math.sqrt(1 / len(new) + 1 / len(old)):
        return new
    return local_reference(incumbent, sigma)


# How far apart (in standard errors) an iteration's readings before and after a split must be
# for the level to count as changed inside it. Above CHANGE_Z: the scan is repeated after every
# reading of the iteration, so chance excursions add up, and a load that matters (the timed
# workload's 1.6x) is 10σ and more. At CHANGE_Z a timed-workload-like simulation (a 1.6x load
# for readings 40-110 of 10 iterations, 300 seeds) took 9.08 readings per iteration and kept
# 87.1 % of speed-ups; at 4.5, 8.93 and 88.9 %, with 4.4 % of null changes kept either way.
STEP_Z = 4.5
# A prior spread on fewer degrees of freedom than this is pooled with the spread within the
# iteration's own segments (one low by chance, three calibration readings that agreed, raised
# false alarms: 0.05 evaluations per iteration on Gaussian noise); on more it stands alone,
# since the segments of a split hold any second step of the iteration (a load on, then off).
PRIOR_DF = 20


def since_level_change(
    today: Sequence[tuple[bool, float]], prior: tuple[float, int] = (0.0, 0)
) -> int:
    """Where this iteration's readings at today's level begin: `today` is the iteration's
    readings in the order they were taken, each marked True for the candidate's, False for
    the incumbent's; the answer is the index after the latest step of the machine's level
    (0: none). A step is looked for within each side, its readings after a split against its
    readings before it, the two sides' estimates weighed by their information, so the
    candidate's difference from the incumbent cannot pass for a step; it counts when
    significant at STEP_Z standard errors. The spread it is measured in is the `prior` one
    (its sum of squares and degrees of freedom: the run's before this iteration, which the
    step cannot have widened), on fewer than PRIOR_DF degrees of freedom pooled with the
    spread within each side and segment of the split. After a step
    the readings before it are of another level: a load switched off between an incumbent
    reading and three candidate ones made a null change read 35 % faster (#34)."""
    start = 0
    while (cut := _most_significant_step(today[start:], prior)) > 0:
        start += cut
    return start


def _most_significant_step(today: Sequence[tuple[bool, float]], prior: tuple[float, int]) -> int:
    """The split of `today` whose within-side step is largest, if beyond STEP_Z (else 0);
    of splits that say the same (a reading of one side between two of the other), the
    latest, which sets the reading of unknown level aside. A split with one reading after it
    counts: asking two (so that one wild reading is no step) was measured and rejected, since
    a keep can rest on the one candidate reading after a load stopped (the timed simulation of
    STEP_Z's note: 4.4 % → 4.9 % of null changes kept)."""
    best, cut = STEP_Z, 0
    for j in reversed(range(1, len(today))):
        sides = [_side_step(today, j, side) for side in (True, False)]
        weighted, information = sum(s.weight * s.step for s in sides), sum(s.weight for s in sides)
        ss, df = prior
        if df < PRIOR_DF:  # a few readings' spread, maybe low by chance: today's added
            ss, df = ss + sum(s.ss for s in sides), df + sum(s.df for s in sides)
        if not information or df < 1 or ss <= 0:
            continue
        if (z := abs(weighted) / math.sqrt(ss / df * information)) > best:
            best, cut = z, j
    return cut


class _SideStep(NamedTuple):
    """One side's readings after a split minus its readings before it: the step, its
    information (in units of 1/σ²; 0 when the side is on one side of the split only) and the
    sum of squares within the two segments, with its degrees of freedom. A NamedTuple: a
    status line imports this module, and a frozen dataclass's methods cost ~0.3 ms to build."""

    step: float = 0.0
    weight: float = 0.0
    ss: float = 0.0
    df: int = 0


def _side_step(today: Sequence[tuple[bool, float]], j: int, side: bool) -> _SideStep:
    before = [x for s, x in today[:j] if s is side]
    after = [x for s, x in today[j:] if s is side]
    ss = _sum_of_squares(before) + _sum_of_squares(after)
    df = max(len(before) - 1, 0) + max(len(after) - 1, 0)
    if not before or not after:
        return _SideStep(ss=ss, df=df)
    step = math.fsum(after) / len(after) - math.fsum(before) / len(before)
    return _SideStep(step, len(before) * len(after) / (len(before) + len(after)), ss, df)


def _sum_of_squares(values: Sequence[float]) -> float:
    if len(values) < 2:
        return 0.0
    center = math.fsum(values) / len(values)
    return math.fsum((x - center) ** 2 for x in values)


def huber_mean(values: Sequence[float], scale: float, k: float = HUBER_K) -> float:
    """Huber's M-estimate of location with a known scale: the mean of the values, each clipped
    to within k·scale of the estimate (iterated from the median). Its influence is bounded, so
    one outlier moves it by at most k·scale/n; a Gaussian sample is barely clipped."""
    # statistics (with random, decimal, fractions) at its use: a status line imports this module
    from statistics import median

    center = median(values)
    for _ in range(20):
        clipped = [min(max(v, center - k * scale), center + k * scale) for v in values]
        moved = math.fsum(clipped) / len(clipped)
        if abs(moved - center) <= 1e-12 * (1 + abs(center)):
            return moved
        center = moved
    return center
