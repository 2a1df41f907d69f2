"""The evaluator's spread from readings taken together (#34): pure arithmetic.

A block is one commit's readings of one iteration: taken minutes apart, at one level of the
machine. Spread is measured within blocks only, so a level that moves between iterations (a
step of the machine's load, a slow ramp) adds nothing to it; pooling a commit's readings over
the run counted every such move as noise and made the test too cautious to keep real gains.

Each reading's deviation from its block's mean, scaled by sqrt(n / (n − 1)), has the
evaluator's variance σ² whatever the block's size. Their scale is made robust by iterated
REJECT_Z-sigma clipping, from the plain spread down: deviations beyond the cut are left out,
the rest's root mean square is corrected for the Gaussian tails the cut removes, until the
set kept settles. Under Gaussian noise it cuts nothing (0.3 % of deviations at most) and is
the plain spread; a reading 5σ off (a job that paused) is left out. Why not the MAD: it is
only 37 % efficient, and a MAD low by chance cut good deviations in small runs (measured:
false keeps up to 5.2 % on Gaussian noise). Why not Huber's proposal 2: its clipped
deviations still count k² each, so 5 % outliers at 5σ still lift it by ~30 %.

The spread the test uses is then the one its estimate really has: the sandwich of a Huber
mean (robust.huber_mean) of such readings, the robust scale × sqrt(E[ψ²]) / E[ψ'], about the
scale itself under Gaussian noise, wider under heavy tails (5 % outliers at 5σ: ~1.25σ
where the plain spread says 1.5σ), so the test claims no more certainty than its robust
means give. Measuring min_effect in the robust scale alone (not widened) was tried: 3 more
points of true keeps with outliers for 1.7 more evaluations per iteration, and 0.3 more on
Gaussian noise (bench/drift.py, seeds 200-239): not worth it.

A slowdown makes timings noisier too: a decision taken after the level moved (the incumbent's
older readings are set aside) uses this iteration's own spread when it is wider (`with_today`).
Always taking the wider of the two was measured and rejected: on Gaussian noise it cost 0.4
evaluations per iteration and 1–2 points of true keeps (bench/drift.py, seeds 0–99).
"""

from __future__ import annotations

import bisect
import math
import operator
from collections.abc import Iterable, Sequence

from autoresearch.noise import Spread, mean_of, pooled_spread
from autoresearch.robust import HUBER_K

MAD_TO_SD = 1.482602218505602  # 1 / Φ⁻¹(3/4): the MAD of a Gaussian is 0.6745 σ
REJECT_Z = 3.0
# The standard normal's density and distribution at REJECT_Z, as statistics.NormalDist
# computes them (the same float), without importing statistics at every status line
_PDF_AT_REJECT = math.exp(REJECT_Z * REJECT_Z / -2.0) / math.sqrt(math.tau)
_CDF_AT_REJECT = 0.5 * (1.0 + math.erf(REJECT_Z / math.sqrt(2.0)))
# E[Z² | |Z| ≤ REJECT_Z]: the variance left after the cut, which the kept deviations estimate
_KEPT_VARIANCE = 1 - 2 * REJECT_Z * _PDF_AT_REJECT / (2 * _CDF_AT_REJECT - 1)


def deviations(block: Sequence[float]) -> list[float]:
    """Each reading's deviation from its block's mean, scaled to the variance of one reading
    (blocks of one say nothing about spread: none)."""
    n = len(block)
    if n < 2:
        return []
    center, widen = mean_of(block), math.sqrt(n / (n - 1))
    return [(x - center) * widen for x in block]


def block_spread(blocks: Iterable[Sequence[float]]) -> Spread:
    """The spread within blocks, robust to outliers (the module's clipping); its degrees of
    freedom are the blocks' (Σ n − 1), less the share of deviations left out."""
    kept = [b for b in blocks if len(b) >= 2]
    return robust_spread(pooled_spread(kept), sorted(abs(d) for b in kept for d in deviations(b)))


def robust_spread(plain: Spread, found: Sequence[float]) -> Spread:
    """block_spread from the plain spread within blocks and every block's absolute deviations,
    sorted (a running view keeps both up to date: supervisor/estimates.py)."""
    if plain.sd == 0 or not found:
        return plain
    sd, inside = clipped_sd(found, plain.sd)
    if sd == 0:  # a quantized evaluator whose readings mostly agree: nothing is an outlier
        return plain
    df = max(1, round(plain.df * inside / len(found)))
    return Spread(sd * huber_inflation(found, sd), df)


def with_today(run: Spread, today: Spread) -> Spread:
    """The run's spread, carrying this iteration's own (`Spread.today`): a decision taken
    after the machine's level moved uses it when wider (noise._local), since a loaded
    machine is slower and noisier too, and its calm earlier iterations say nothing of now."""
    return Spread(run.sd, run.df, today.sd)


def _squares(found: Sequence[float], count: int) -> float:
    """The exact sum of the squares of the `count` smallest of `found` (sorted)."""
    head = found[:count]
    return math.fsum(map(operator.mul, head, head))


def clipped_sd(found: Sequence[float], start: float) -> tuple[float, int]:
    """Iterated REJECT_Z-sigma clipping of the sorted absolute deviations `found`, from the
    plain spread `start`: the root mean square of those within the cut, corrected for the
    Gaussian tails the cut removes, until the deviations kept stop changing (none cut: the
    plain spread itself). Returns the spread and how many deviations it rests on."""
    sd, inside = start, len(found)
    for _ in range(100):  # it settles in a few rounds; the cap only bounds a cycle
        within = bisect.bisect_right(found, REJECT_Z * sd)
        if within == inside:
            break
        if not within:
            return 0.0, 0
        inside = within
        sd = math.sqrt(_squares(found, inside) / (inside * _KEPT_VARIANCE))
    return sd, inside


def huber_inflation(found: Sequence[float], sd: float) -> float:
    """How much wider a Huber mean (robust.huber_mean) of readings like these spreads than a
    mean of Gaussian readings of sd `sd`: sqrt(E[ψ²]) / E[ψ'] of the sorted absolute deviations
    in units of `sd` (the M-estimate's asymptotic variance, the sandwich). About 1.0 for
    Gaussian noise, above 1 for heavy tails: the test then uses the spread its estimate has."""
    limit = HUBER_K * sd
    within = bisect.bisect_right(found, limit)
    clipped = (_squares(found, within) + (len(found) - within) * limit * limit) / len(found)
    return math.sqrt(clipped) / sd / (within / len(found))
