"""Robust location and the level of now (noise.py's blocked rule, #34): pure arithmetic.

A shared machine drifts (its load changes; a GPU throttles) and has heavy tails (a reading taken
while other jobs paused). `local_reference` keeps only an incumbent's readings taken at the
machine's present level; `huber_mean` sums readings up so that one wild reading cannot carry
the estimate.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence

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


def huber_mean(values: Sequence[float], scale: float, k: float = HUBER_K) -> float:
    """Huber's M-estimate of location with a known scale: the mean of the values, each clipped
    to within k·scale of the estimate (iterated from the median). Its influence is bounded, so
    one outlier moves it by at most k·scale/n; a Gaussian sample is barely clipped."""
    center = statistics.median(values)
    for _ in range(20):
        clipped = [min(max(v, center - k * scale), center + k * scale) for v in values]
        moved = math.fsum(clipped) / len(clipped)
        if abs(moved - center) <= 1e-12 * (1 + abs(center)):
            return moved
        center = moved
    return center
