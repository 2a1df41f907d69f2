"""Paired readings (#34): two commits read one after the other, judged on the differences of
each pair, so that the machine's drift, the same for both readings of a pair, cancels. Pure.
certify reads its subjects in interleaved rounds; each round's two readings are a pair.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from statistics import NormalDist

from autoresearch.noise import Interval, mean_of, signed, squared_deviations, t_quantile
from autoresearch.states import Direction


def paired_interval(differences: Sequence[float], level: float = 0.95) -> Interval:
    """The mean of paired differences (each pair read next to each other, so drift cancels)
    with a t interval from their own spread; `n` counts the pairs. One pair says nothing about
    spread: its interval is unbounded. Valid under heavy tails of finite variance (the mean of
    the pairs is nearly normal by the central limit theorem; t with n − 1 df is conservative
    for short tails and close for t-like ones)."""
    if not differences:
        raise ValueError("no readings")
    n = len(differences)
    mean = mean_of(differences)
    if n < 2:
        return Interval(mean, -math.inf, math.inf, n, level)
    sd = math.sqrt(squared_deviations(differences) / (n - 1))
    half = t_quantile(0.5 + level / 2, n - 1) * sd / math.sqrt(n)
    return Interval(mean, mean - half, mean + half, n, level)


def paired_differences(
    direction: Direction, after: Sequence[float], before: Sequence[float]
) -> list[float]:
    """after[k] − before[k] (better is +) of readings taken one after the other."""
    return [signed(direction, a - b) for a, b in zip(after, before, strict=False)]


def pairs_to_resolve(pairs: Sequence[float], effect: float, level: float = 0.95) -> int:
    """How many pairs like these make `paired_interval` at most |effect|/2 wide, so that an
    effect of that size comes out significant: from their spread, with the normal quantile
    that the t quantile nears as pairs are added; at least as many as there are."""
    if len(pairs) < 2 or not effect or paired_interval(pairs, level).half_width <= abs(effect) / 2:
        return len(pairs)
    sd = math.sqrt(squared_deviations(pairs) / (len(pairs) - 1))
    z = NormalDist().inv_cdf(0.5 + level / 2)
    return max(len(pairs) + 1, math.ceil((z * sd / (abs(effect) / 2)) ** 2))
