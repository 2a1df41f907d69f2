"""Noise-aware keep decisions (trust.md): calibration, pooled spread, a sequential test.

Pure: readings in, the next action out. The supervisor asks `next_action` after every reading
of an iteration and does what it says (measure the candidate, re-measure the incumbent, keep,
discard); the same function replays any run from its journal rows.

The test is Wald's sequential probability ratio test on the difference of means, candidate
minus incumbent (in the mission's direction), with the evaluator's spread estimated within
blocks, a commit's readings of one iteration, robust to outliers (scale.py; runs frozen before
it: each commit's readings around its own mean, pooled over the run):
    H0: the candidate is no better (effect 0)    H1: it is better by `min_effect`
    keep when log LR >= ln(power / alpha), discard when log LR <= ln((1 - power) / (1 - alpha))
(both moved in by Siegmund's correction) so a change that does nothing is kept with probability
about `alpha` and a change worth `min_effect` is kept with probability about `power`.

A real machine drifts and has heavy tails (#34). The default (`blocked`) therefore compares
the candidate with the incumbent's readings taken at today's level only (robust.local_reference:
its latest readings since its level last changed), each side
summed up by Huber's M-estimate (robust.huber_mean: one wild reading moves it by at most 2σ/n),
and a keep needs MIN_SIDE readings of each side. No decision rests on old readings alone:
keep and discard both wait for a reading of the incumbent taken in this iteration, and the
incumbent's older readings (earlier iterations, confirmations, calibration) count only while
this iteration's agree with them (robust.current_reference); else the test is on this
iteration's readings of both sides, taken together, so a slowdown between iterations can
neither discard a real gain nor keep a null change. A change of level INSIDE the iteration (a
load switched off between the incumbent's reading and the candidate's next ones) is looked for
in this iteration's readings of both in the order taken (`Today`, robust.since_level_change):
after one, every reading before it is set aside, both sides', and the test goes on with the
readings after it only. A keep that rests on older readings too also needs this iteration's
incumbent readings to agree (`_today_agrees`). The log LR keeps its Gaussian form with the
spread a Huber mean of such readings has (scale.py): wider than the bulk's under heavy tails.
Pairing every candidate reading with an incumbent one (drift-proof by construction) was
measured and rejected: a paired difference has twice a reading's variance and serves one test,
so ≥ 80 % true keeps cost ~17 evaluations per iteration against ~10 (bench/drift.py). The
improvement a user reads comes from readings taken together (paired.paired_interval). Runs frozen
before (`blocked` false) compare with every reference reading since the incumbent was kept.

The boundaries hold however readings are allocated (the log LR is a Brownian motion in the
test's information), so each reading goes where it adds the most information, an incumbent
reading counting `reuse` times (it serves later tests too). A deterministic evaluator (the
calibration readings agree exactly) is measured once per iteration and decided by today's rule.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from enum import StrEnum
from typing import Any, NamedTuple, cast

from autoresearch.jsonshape import FieldShape, json_field, json_shape
from autoresearch.robust import current_reference, huber_mean, since_level_change
from autoresearch.states import Direction

# a reading's role is a journal value like the states: states.py's, named here too
from autoresearch.states import Role as Role

# Wald's boundaries ignore the overshoot of the last step and so err far on the safe side;
# Siegmund's correction moves them in by 0.583 standard deviations of one step's log LR, which
# brings the real error rates close to alpha and 1 - power at a lower cost.
SIEGMUND_RHO = 0.583


class NoiseMode(StrEnum):
    """`auto`: sequential when the calibration shows spread, else one reading; `sequential`:
    always the test; `single`: exactly the historical rule (one reading, strictly better than
    the last kept score, one baseline reading)."""

    AUTO = "auto"
    SEQUENTIAL = "sequential"
    SINGLE = "single"


# The readings that are an incumbent's reference (and its reported value): not those that won
# it its keep, which are selected for luck.
REFERENCE_ROLES = frozenset({Role.BASELINE, Role.INCUMBENT, Role.CONFIRM})


def reference(readings: Sequence[tuple[str, float]]) -> list[float]:
    """The scores that stand for a kept commit: its unselected readings when it has any, else
    every reading (a keep decided by the single-reading rule)."""
    fresh = [score for role, score in readings if role in REFERENCE_ROLES]
    return fresh or [score for _, score in readings]


class Action(StrEnum):
    MEASURE_CANDIDATE = "measure candidate"
    MEASURE_INCUMBENT = "measure incumbent"
    KEEP = "keep"
    DISCARD = "discard"
    UNDECIDED = "undecided"  # the cap was reached first: treated as a discard


def _effect_unit(in_sigma: object) -> str:
    return "sigma" if in_sigma else "metric"


def _spread_basis(blocks: object) -> str:
    return "blocks" if blocks else "commits"


# a NamedTuple: status imports it, and a frozen dataclass compiles its methods at import
class NoisePolicy(NamedTuple):
    """The `noise:` block of sandbox.md, defaults filled in."""

    mode: NoiseMode = NoiseMode.AUTO
    calibration: int = 3  # baseline readings at prepare
    alpha: float = 0.05  # probability of keeping a change that does nothing
    power: float = 0.9  # probability of keeping a change worth min_effect
    min_effect: float = 1.0
    # min_effect in units of the evaluator's spread (the JSON names the unit: `json_fields`)
    min_effect_in_sigma: bool = True
    max_evals: int = 40  # readings the test may take per iteration (candidate + incumbent)
    interleave: int = 3  # at least one incumbent reading per this many candidate readings
    confirm: int = 5  # fresh readings of a newly kept candidate: its unbiased reference
    reuse: float = 2.0  # an incumbent reading's worth against a candidate's (it serves later tests)
    # keeps judged on this iteration's paired readings (drift-proof); False: the pooled rule of
    # the releases before it (a run frozen by one of them decides as it did)
    blocked: bool = True
    # the spread measured within blocks (a commit's readings of one iteration), robustly
    # (scale.py); False: each commit's readings pooled over the run, as before it (the JSON
    # names the basis: `json_fields`)
    blocks: bool = True
    # a change of the machine's level inside an iteration sets the readings before it aside
    # (robust.since_level_change); False: a run frozen before it decides as it did
    level_changes: bool = True
    # a keep against older readings of the incumbent needs this iteration's own to agree
    # (`today_agrees`); False: a run frozen before it decides as it did
    today_agrees: bool = True

    @property
    def baseline_readings(self) -> int:
        return 1 if self.mode is NoiseMode.SINGLE else self.calibration

    def sequential(self, sigma: float) -> bool:
        """Whether iterations use the test (else: one reading, today's rule)."""
        if self.mode is NoiseMode.SINGLE:
            return False
        return self.mode is NoiseMode.SEQUENTIAL or sigma > 0

    def effect(self, sigma: float) -> float:
        """min_effect in metric units."""
        return self.min_effect * sigma if self.min_effect_in_sigma else self.min_effect

    @staticmethod
    def json_fields() -> Mapping[str, Mapping[str, FieldShape]]:
        """The JSON names min_effect's unit and the spread's basis (jsonshape)."""
        return _POLICY_KEYS

    def to_dict(self) -> dict[str, object]:
        return json_shape(self)

    @classmethod
    def from_dict(cls, data: dict[str, object] | None) -> NoisePolicy:
        """The frozen form (manifest); an old run without one decides as it always did."""
        if not data:
            return cls(mode=NoiseMode.SINGLE, calibration=1)

        def num(key: str, default: float) -> float:
            value = data.get(key, default)
            return float(value) if isinstance(value, int | float) else default

        # a missing key: the value of the release that froze the run (`reuse` came later;
        # a run frozen before it keeps allocating readings as it did)
        return cls(
            mode=NoiseMode(str(data.get("mode", "auto"))),
            calibration=int(num("calibration", 3)),
            alpha=num("alpha", 0.05),
            power=num("power", 0.85),
            min_effect=num("min_effect", 1.0),
            min_effect_in_sigma=data.get("min_effect_unit", "sigma") == "sigma",
            max_evals=int(num("max_evals", 24)),
            interleave=int(num("interleave", 3)),
            confirm=int(num("confirm", 6)),
            reuse=num("reuse", 0.0),
            blocked=data.get("blocked") is True,
            blocks=data.get("spread") == "blocks",
            level_changes=data.get("level_changes") is True,
            today_agrees=data.get("today_agrees") is True,
        )


_POLICY_KEYS = {
    "min_effect_in_sigma": json_field(key="min_effect_unit", convert=_effect_unit),
    "blocks": json_field(key="spread", convert=_spread_basis),
}


# a NamedTuple: status imports it, and a frozen dataclass compiles its methods at import
class Spread(NamedTuple):
    """The evaluator's spread: sd and its degrees of freedom (scale.py); `today`: this
    iteration's own readings' (0: none), which a decision after a change of level uses when
    wider (a loaded machine is slower and noisier)."""

    sd: float
    df: int
    today: float = 0.0


def squared_deviations(readings: Sequence[float]) -> float:
    """One group's readings around its own mean: the sum of squares (0 for fewer than two)."""
    if len(readings) < 2:
        return 0.0
    center = mean_of(readings)  # identical readings: exactly 0 spread, not 1e-17
    return math.fsum((x - center) ** 2 for x in readings)


def spread_of(ss: float, df: int) -> Spread:
    return Spread(math.sqrt(ss / df) if df else 0.0, df)


def pooled_spread(groups: Iterable[Sequence[float]]) -> Spread:
    """Each group's readings around its own mean, pooled (groups of one add nothing). The
    groups' sums are added exactly (fsum), so the spread does not depend on their order and a
    running total (supervisor/estimates.py) comes to the same number."""
    sums, df = [], 0
    for readings in groups:
        if len(readings) >= 2:
            sums.append(squared_deviations(readings))
            df += len(readings) - 1
    return spread_of(math.fsum(sums), df)


# a NamedTuple: status imports it, and a frozen dataclass compiles its methods at import
class Interval(NamedTuple):
    """A mean with its two-sided interval."""

    mean: float
    low: float
    high: float
    n: int
    level: float = 0.95

    @property
    def half_width(self) -> float:
        return (self.high - self.low) / 2

    def to_dict(self) -> dict[str, float | int]:
        return cast(dict[str, float | int], json_shape(self))

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Interval:
        """The interval `to_dict` wrote (KeyError, TypeError, ValueError: it is not one)."""
        return cls(
            float(d["mean"]), float(d["low"]), float(d["high"]), int(d["n"]), float(d["level"])
        )

    @property
    def decimals(self) -> int | None:
        """The decimals the interval gives its numbers (two significant digits of the
        half-width); None for a point or an unbounded interval."""
        if self.half_width == 0 or not math.isfinite(self.half_width):
            return None
        return min(max(1 - math.floor(math.log10(self.half_width)), 0), 15)

    def text(self, digits: int = 6) -> str:
        """`0.523 ± 0.031 (n=5)`: mean and half-width to the precision the interval gives
        them; a point prints with `digits`."""
        if (places := self.decimals) is None:
            return f"{self.mean:.{digits}g}"
        return f"{self.mean:.{places}f} ± {self.half_width:.{places}f} (n={self.n})"

    def signed_text(self) -> str:
        """`+46.99, 95 % interval [+20.1, +73.9]` (a difference), to the same precision."""
        places = self.decimals
        if places is None:
            return f"{self.mean:+.6g}, 95 % interval [{self.low:+.6g}, {self.high:+.6g}]"
        low, high = f"{self.low:+.{places}f}", f"{self.high:+.{places}f}"
        return f"{self.mean:+.{places}f}, 95 % interval [{low}, {high}]"


def t_quantile(p: float, df: int) -> float:
    """Student-t quantile: exact for df 1 and 2, Cornish-Fisher expansion above (A&S 26.7.5,
    within 0.3 % of the tables for df >= 3), the normal for large df."""
    if not 0 < p < 1:
        raise ValueError("p must be in (0, 1)")
    if df < 1:
        raise ValueError("df must be >= 1")
    if df == 1:
        return math.tan(math.pi * (p - 0.5))
    if df == 2:
        return (2 * p - 1) / math.sqrt(2 * p * (1 - p))
    z = _normal_quantile(p)
    g1 = (z**3 + z) / 4
    g2 = (5 * z**5 + 16 * z**3 + 3 * z) / 96
    g3 = (3 * z**7 + 19 * z**5 + 17 * z**3 - 15 * z) / 384
    g4 = (79 * z**9 + 776 * z**7 + 1482 * z**5 - 1920 * z**3 - 945 * z) / 92160
    return z + g1 / df + g2 / df**2 + g3 / df**3 + g4 / df**4


def _normal_quantile(p: float) -> float:
    # statistics brings random, decimal and fractions: imported at the first interval, not by
    # every `status` and hook that imports this module (issue 36: tests/test_import_graph.py)
    from statistics import NormalDist

    return NormalDist().inv_cdf(p)


def mean_of(readings: Sequence[float]) -> float:
    """The mean; readings that all agree are their value exactly (fsum / n of equal values
    can be one unit off), so a deterministic evaluator's numbers print as measured."""
    first = readings[0]
    if all(x == first for x in readings):
        return first
    return math.fsum(readings) / len(readings)


def mean_interval(readings: Sequence[float], spread: Spread, level: float = 0.95) -> Interval:
    """Mean of `readings` with a t interval from the pooled spread (zero spread: a point)."""
    if not readings:
        raise ValueError("no readings")
    n = len(readings)
    mean = mean_of(readings)
    if spread.df < 1 or spread.sd == 0:
        return Interval(mean, mean, mean, n, level)
    half = t_quantile(0.5 + level / 2, spread.df) * spread.sd / math.sqrt(n)
    return Interval(mean, mean - half, mean + half, n, level)


def difference_interval(
    after: Sequence[float], before: Sequence[float], level: float = 0.95
) -> Interval:
    """mean(after) − mean(before) with a Welch interval (certification: two commits only)."""
    if not after or not before:
        raise ValueError("no readings")
    import statistics  # at its use: see _normal_quantile

    diff = statistics.fmean(after) - statistics.fmean(before)
    va = statistics.variance(after) / len(after) if len(after) > 1 else 0.0
    vb = statistics.variance(before) / len(before) if len(before) > 1 else 0.0
    se2 = va + vb
    n = len(after) + len(before)
    if se2 == 0:
        return Interval(diff, diff, diff, n, level)
    parts = [(v, len(r)) for v, r in ((va, after), (vb, before)) if len(r) > 1]
    denominator = sum(v * v / (k - 1) for v, k in parts)
    df = max(1, math.floor(se2 * se2 / denominator)) if denominator else 1
    half = t_quantile(0.5 + level / 2, df) * math.sqrt(se2)
    return Interval(diff, diff - half, diff + half, n, level)


def pooled_difference(
    after: Sequence[float], before: Sequence[float], spread: Spread, level: float = 0.95
) -> Interval:
    """mean(after) − mean(before) with a t interval from a spread pooled over more groups than
    these two (a session's repeated runs): exact when the spread is 0 or unknown."""
    if not after or not before:
        raise ValueError("no readings")
    from statistics import fmean  # at its use: see _normal_quantile

    diff = fmean(after) - fmean(before)
    n = len(after) + len(before)
    if spread.df < 1 or spread.sd == 0:
        return Interval(diff, diff, diff, n, level)
    se = spread.sd * math.sqrt(1 / len(after) + 1 / len(before))
    half = t_quantile(0.5 + level / 2, spread.df) * se
    return Interval(diff, diff - half, diff + half, n, level)


def calibration_note(policy: NoisePolicy, scores: Sequence[float]) -> str:
    """What the baseline readings say about the evaluator, for the ledger."""
    if policy.mode is NoiseMode.SINGLE:
        return "noise policy single: one reading per candidate, kept when strictly better"
    spread = pooled_spread([scores])
    interval = mean_interval(scores, spread)
    head = f"baseline measured {len(scores)} times: {interval.text()}"
    if spread.df == 0:
        return f"{head}; spread unknown (one reading): one reading per candidate"
    if spread.sd == 0 and policy.mode is NoiseMode.AUTO:
        return f"{head}; readings identical: deterministic, one reading per candidate"
    return (
        f"{head}; spread {spread.sd:.3g}: candidates are measured until the sequential test "
        f"decides (alpha {policy.alpha:g}, power {policy.power:g}, at most "
        f"{policy.max_evals} readings)"
    )


def confirmations(policy: NoisePolicy, spread: Spread) -> int:
    """Fresh readings a newly kept candidate gets; they (and every later re-measurement) are its
    reference and its reported value. The readings that won the test are selected for luck (a
    test that stops as soon as the evidence suffices stops on a lucky streak): reused, they
    would inflate the reported best and make every later candidate face too high a bar.
    0: the deciding readings stay the reference (the single-reading rule)."""
    return policy.confirm if policy.sequential(spread.sd) else 0


# Today and Verdict are NamedTuples: only a decision makes them, yet every reader of a run
# (`status`, a hook) imports this module, and a frozen dataclass compiles its methods at
# import (~0.5 ms each); nothing serialises, copies or compares them across types.
class Today(NamedTuple):
    """This iteration's readings of the candidate and the incumbent in the order they were
    taken (True: the candidate's), and the run's spread before them (`calm`: no df, unknown),
    which a step of the machine's level inside the iteration cannot have widened."""

    readings: tuple[tuple[bool, float], ...] = ()
    calm: Spread = Spread(0.0, 0)

    def since_change(self, spread: Spread) -> int:
        """Where its readings at today's level begin (robust.since_level_change), measured
        in the spread before them when known, else in `spread`, each pooled with today's."""
        prior = self.calm if self.calm.df else spread
        return since_level_change(self.readings, (prior.sd**2 * prior.df, prior.df))


class Verdict(NamedTuple):
    """What to do next, and the statistic behind it (for notes and replays)."""

    action: Action
    difference: float | None = None  # mean(candidate) − mean(incumbent), + = better
    llr: float | None = None

    @property
    def final(self) -> bool:
        return self.action in (Action.KEEP, Action.DISCARD, Action.UNDECIDED)


def signed(direction: Direction, value: float) -> float:
    """A score difference with "better" positive."""
    return -value if direction == Direction.LOWER else value


def signed_interval(direction: Direction, diff: Interval) -> Interval:
    """An interval of a score difference with "better" positive (`signed` of each end)."""
    if direction != Direction.LOWER:
        return diff
    return Interval(-diff.mean, -diff.high, -diff.low, diff.n, diff.level)


def next_action(
    policy: NoisePolicy,
    direction: Direction,
    spread: Spread,
    incumbent: Sequence[float],
    candidate: Sequence[float],
    incumbent_fresh: int,
    today: Today | None = None,
) -> Verdict:
    """The sequential test after the readings so far.

    `incumbent` are the incumbent's reference readings in the order they were taken (pooled
    over the run; the last `incumbent_fresh` of them are this iteration's), `candidate` this
    candidate's, in order. Evaluations used this iteration = len(candidate) + incumbent_fresh.
    `today`: this iteration's readings of both in order, where the blocked rule looks for a
    change of the machine's level inside the iteration (None: it does not).
    """
    if not candidate:
        return Verdict(Action.MEASURE_CANDIDATE)
    if not incumbent:
        raise ValueError("the incumbent has no reading")
    from statistics import fmean  # at its use: see _normal_quantile

    diff = signed(direction, fmean(candidate) - fmean(incumbent))
    if not policy.sequential(spread.sd):
        keep = diff > 0
        return Verdict(Action.KEEP if keep else Action.DISCARD, diff)
    if spread.sd == 0:
        # a sequential run whose readings never varied: nothing to weigh, compare directly
        keep = diff > 0 and incumbent_fresh > 0
        if keep or diff <= 0:
            return Verdict(Action.KEEP if keep else Action.DISCARD, diff)
        return Verdict(Action.MEASURE_INCUMBENT, diff)
    if policy.blocked:
        taken = today.readings if today is not None else ()
        since = (
            today.since_change(spread)
            if today is not None and taken and policy.level_changes
            else 0
        )
        if since:
            return _after_change(policy, direction, spread, taken[since:], len(taken))
        return _local(policy, direction, spread, incumbent, candidate, incumbent_fresh)
    return _pooled(policy, spread.sd, diff, (len(incumbent), len(candidate)), incumbent_fresh)


def _pooled(
    policy: NoisePolicy,
    sigma: float,
    diff: float,
    counts: tuple[int, int],
    fresh: int,
    may_keep: bool = True,
    spent: int | None = None,
) -> Verdict:
    """The sequential test on a difference of means of `counts` (incumbent, candidate)
    readings; `may_keep` False holds a keep back until more readings come; `spent`: the
    iteration's readings that count against the cap (None: candidate + fresh)."""
    incumbent, candidate = counts
    effect = policy.effect(sigma)
    llr = effect * (diff - effect / 2) / (sigma * sigma * (1 / candidate + 1 / incumbent))
    shift = SIEGMUND_RHO * effect / sigma
    upper = math.log(policy.power / policy.alpha) - shift
    if llr <= math.log((1 - policy.power) / (1 - policy.alpha)) + shift:
        return Verdict(Action.DISCARD, diff, llr)
    if llr >= upper and fresh > 0 and may_keep:
        return Verdict(Action.KEEP, diff, llr)
    if (candidate + fresh if spent is None else spent) >= policy.max_evals:
        return Verdict(Action.UNDECIDED, diff, llr)
    wanted = math.ceil(candidate / policy.interleave) if policy.interleave else 0
    if fresh < wanted or (llr >= upper and fresh == 0):
        return Verdict(Action.MEASURE_INCUMBENT, diff, llr)
    if llr < upper and incumbent_pays(policy.reuse, candidate, incumbent):
        return Verdict(Action.MEASURE_INCUMBENT, diff, llr)
    return Verdict(Action.MEASURE_CANDIDATE, diff, llr)


# A keep rests on at least this many readings of each side (the candidate's, the incumbent's
# since the level last changed): with three, the median is a reading of neither an outlier, so
# one wild reading cannot carry the robust mean.
MIN_SIDE = 3


def _local(
    policy: NoisePolicy,
    direction: Direction,
    spread: Spread,
    incumbent: Sequence[float],
    candidate: Sequence[float],
    fresh: int,
) -> Verdict:
    """The sequential test against the incumbent's readings since its level last changed
    (only this iteration's when the older ones read another level), robust means on both
    sides, a keep on MIN_SIDE readings of each side at least, and no decision either way
    before the incumbent is read this iteration: old readings alone cannot discard."""
    reference = current_reference(incumbent, fresh, sigma := spread.sd)
    if len(reference) <= fresh < len(incumbent):  # older readings are of another level
        sigma = max(sigma, spread.today)
    center = huber_mean(candidate, sigma) - huber_mean(reference, sigma)
    diff = signed(direction, center)
    enough = min(len(candidate), len(reference)) >= MIN_SIDE
    fresh_here = min(fresh, len(reference))
    verdict = _pooled(policy, sigma, diff, (len(reference), len(candidate)), fresh_here, enough)
    if verdict.action is Action.KEEP and not _today_agrees(
        policy, direction, sigma, candidate, incumbent[len(incumbent) - fresh :]
    ):
        capped = len(candidate) + fresh >= policy.max_evals
        return Verdict(Action.UNDECIDED if capped else Action.MEASURE_INCUMBENT, diff, verdict.llr)
    if verdict.action is Action.DISCARD and fresh == 0:
        return Verdict(Action.MEASURE_INCUMBENT, diff, verdict.llr)
    if verdict.action is Action.MEASURE_INCUMBENT or enough or verdict.final:
        return verdict
    if len(reference) < MIN_SIDE and len(candidate) >= len(reference):
        return Verdict(Action.MEASURE_INCUMBENT, diff, verdict.llr)
    return Verdict(Action.MEASURE_CANDIDATE, diff, verdict.llr)


def _today_agrees(
    policy: NoisePolicy,
    direction: Direction,
    sigma: float,
    candidate: Sequence[float],
    today: Sequence[float],
) -> bool:
    """Whether the incumbent's readings of this iteration (`today`) agree with a keep: the
    candidate's robust mean is better than theirs. A keep may rest on the incumbent's older
    readings too, and whether they still read today's level is judged in the run's spread; a
    load that made the machine slower and far noisier leaves that spread wide after it stops,
    so a step back of several quiet σ passed unseen and a slowdown read after the load was
    kept against the incumbent's loaded readings though both of its readings of the same
    iteration were faster (#34, bench/timed_workload.py seed 7). False: no veto (frozen)."""
    if not policy.today_agrees or not today:
        return True
    return signed(direction, huber_mean(candidate, sigma) - huber_mean(today, sigma)) > 0


def _after_change(
    policy: NoisePolicy,
    direction: Direction,
    spread: Spread,
    today: Sequence[tuple[bool, float]],
    spent: int,
) -> Verdict:
    """The test on the readings since the level changed inside this iteration, both sides
    (every older reading is of another level), with the wider of the run's and today's
    spread; `spent` readings count against the cap."""
    candidate = [x for side, x in today if side]
    reference = [x for side, x in today if not side]
    if not reference or not candidate:
        need = Action.MEASURE_INCUMBENT if not reference else Action.MEASURE_CANDIDATE
        return Verdict(Action.UNDECIDED if spent >= policy.max_evals else need)
    sigma = max(spread.sd, spread.today)
    diff = signed(direction, huber_mean(candidate, sigma) - huber_mean(reference, sigma))
    enough = min(len(candidate), len(reference)) >= MIN_SIDE
    counts = (len(reference), len(candidate))
    verdict = _pooled(policy, sigma, diff, counts, len(reference), enough, spent)
    if verdict.final or verdict.action is Action.MEASURE_INCUMBENT or enough:
        return verdict
    short = Action.MEASURE_INCUMBENT if len(reference) < len(candidate) else None
    return Verdict(short or Action.MEASURE_CANDIDATE, diff, verdict.llr)


def information(candidate: int, incumbent: int) -> float:
    """The test's information (1 / variance of the difference, in units of 1/σ²) after
    `candidate` and `incumbent` readings."""
    return candidate * incumbent / (candidate + incumbent)


def incumbent_pays(reuse: float, candidate: int, incumbent: int) -> bool:
    """Whether the next reading should be the incumbent's: the one that adds more information
    to the test, an incumbent reading weighted by `reuse` because it also serves every later
    test against the same incumbent (a candidate reading serves this one only)."""
    gain_candidate = information(candidate + 1, incumbent) - information(candidate, incumbent)
    gain_incumbent = information(candidate, incumbent + 1) - information(candidate, incumbent)
    return reuse * gain_incumbent > gain_candidate
