"""Paired readings (#34): two commits read one after the other, judged on the differences of
each pair, so that the machine's drift, the same for both readings of a pair, cancels. Pure.
certify reads its subjects in interleaved rounds, in turn (A B, B A, …: `in_turn`); each
round's two readings are a pair.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TypeVar

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


T = TypeVar("T")


def in_turn(subjects: Sequence[T], round_: int) -> list[T]:
    """The order round `round_` reads its subjects in: as given in even rounds, reversed in
    odd ones (A B, B A, …). Whatever favours the first or the second reading of a round (the
    machine speeding up or slowing down steadily, a load fading, the first reading after other
    work running cold) then adds to half the pairs' differences and takes from the other half:
    it cancels in their mean, and shows in their spread, so the interval stays honest. Read
    always A then B, a drift of δ per reading moved every pair by δ alike, and the interval,
    whose spread no constant shift widens, missed the truth."""
    return list(subjects) if round_ % 2 == 0 else list(reversed(subjects))


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
    from statistics import NormalDist  # at its use: a status line imports this module

    sd = math.sqrt(squared_deviations(pairs) / (len(pairs) - 1))
    z = NormalDist().inv_cdf(0.5 + level / 2)
    return max(len(pairs) + 1, math.ceil((z * sd / (abs(effect) / 2)) ** 2))
