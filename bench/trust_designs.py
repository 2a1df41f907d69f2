"""Benchmark: can any decision design reach the trust targets? (the evidence behind
bench/TRUST_FEASIBILITY.md)

    python3 dev.py bench --only trust-designs    (or: .venv/bin/python bench/trust_designs.py)

bench/trust.py's mission (60 iterations, 30 % of candidates +1σ, 70 % exact nulls, Gaussian
noise σ = 1; targets: false keeps <= 5 %, true keeps >= 80 %, <= 8 evaluations per iteration,
|reported best - truth| <= 0.3σ) through a fast simulator: sufficient statistics instead of
reading lists, the same two random streams as bench/trust.py. Its `Sequential` design is
noise.next_action as shipped and makes the same decisions one for one as bench/trust.py's real
decision code (checked at the start of every run). The other designs change one mechanism each.
Also printed: the known-incumbent lower bound (Wald–Wolfowitz: no test with the same error rates
needs fewer readings than the SPRT) and the survival bias of the shipped incumbent reference.
Nothing here is a pass/fail test.
"""

from __future__ import annotations

import argparse
import math
import random
import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import trust  # bench/trust.py: the real decision code's simulation, the SPRT quadrature

from autoresearch.noise import SIEGMUND_RHO, NoisePolicy, incumbent_pays, information

ROLES = ("candidate", "incumbent", "confirm")


@dataclass
class Group:
    """One commit's readings as running mean and sum of squares (for the pooled spread)."""

    n: int = 0
    mean: float = 0.0
    m2: float = 0.0


class Mission:
    """One mission: which changes are real and the evaluator's noise, from the streams of
    bench/trust.py; readings through cand()/inc()/conf(); σ estimated by pooling every
    commit's readings around its own mean, as noise.pooled_spread does."""

    def __init__(self, seed: int, p_real: float, effect: float, baseline: int) -> None:
        self.seed = seed
        self.mission, self.rng = trust._streams(seed)
        self.p_real, self.effect = p_real, effect
        self.truth = 0.0
        self.real, self.value = False, 0.0
        self.ss, self.df = 0.0, 0
        self.inc_group = Group()
        self.cand_group = Group()
        self.conf_group = Group()
        self.ref_n, self.ref_sum = 0.0, 0.0  # the incumbent's decision reference
        self.c_n, self.c_sum, self.fresh = 0, 0.0, 0
        self.counts = dict.fromkeys(ROLES, 0)
        for _ in range(baseline):
            x = self.rng.gauss(self.truth, 1.0)
            self._add(self.inc_group, x)
            self.ref_n += 1
            self.ref_sum += x
        self.rep_n, self.rep_sum = self.ref_n, self.ref_sum  # what the best is reported from

    def _add(self, g: Group, x: float) -> None:
        g.n += 1
        d = x - g.mean
        g.mean += d / g.n
        step = d * (x - g.mean)
        g.m2 += step
        self.ss += step
        if g.n > 1:
            self.df += 1

    def sigma(self) -> float:
        return math.sqrt(self.ss / self.df) if self.df else 0.0

    @property
    def ref_mean(self) -> float:
        return self.ref_sum / self.ref_n

    def start(self) -> None:
        self.real = self.mission.random() < self.p_real
        self.value = self.truth + (self.effect if self.real else 0.0)
        self.cand_group = Group()
        self.c_n, self.c_sum, self.fresh = 0, 0.0, 0

    def cand(self) -> float:
        x = self.rng.gauss(self.value, 1.0)
        self._add(self.cand_group, x)
        self.c_n += 1
        self.c_sum += x
        self.counts["candidate"] += 1
        return x

    def inc(self) -> float:
        x = self.rng.gauss(self.truth, 1.0)
        self._add(self.inc_group, x)
        self.ref_n += 1
        self.ref_sum += x
        self.rep_n += 1
        self.rep_sum += x
        self.fresh += 1
        self.counts["incumbent"] += 1
        return x

    def new_group(self) -> Group:
        self.conf_group = Group()
        return self.conf_group

    def conf(self, group: Group) -> float:
        x = self.rng.gauss(self.value, 1.0)
        self._add(group, x)
        self.counts["confirm"] += 1
        return x

    def llr(self, min_effect: float) -> tuple[float, float]:
        """noise.next_action's log LR of the test so far, and the spread it used."""
        s = self.sigma()
        eff = min_effect * s
        diff = self.c_sum / self.c_n - self.ref_mean
        return eff * (diff - eff / 2) / (s * s * (1 / self.c_n + 1 / self.ref_n)), s

    def keep_with(
        self, ref_n: float, ref_sum: float, group: Group, rep: tuple[float, float] | None = None
    ) -> None:
        """The candidate becomes the incumbent with this decision reference (rep: the readings
        its value is reported from, n and sum; default the reference)."""
        self.truth = self.value
        self.ref_n, self.ref_sum = ref_n, ref_sum
        self.rep_n, self.rep_sum = rep if rep else (ref_n, ref_sum)
        self.inc_group = group


def per_role(t: trust.Tally, role: str) -> float:
    """Readings of `role` per iteration."""
    return sum(t.readings.get((real, role), 0) for real in (False, True)) / max(1, t.iterations)


def _pays(reuse: float, candidate: int, incumbent: float) -> bool:
    # noise.incumbent_pays counts readings; a weighted reference here may hold a fractional count
    return incumbent_pays(reuse, candidate, incumbent)  # type: ignore[arg-type]


def _step(m: Mission) -> float:
    """The information one more candidate reading adds to the test (1.0 before the first)."""
    if not m.c_n:
        return 1.0
    gain: float = information(m.c_n + 1, m.ref_n) - information(m.c_n, m.ref_n)  # type: ignore[arg-type]
    return gain


# --- the designs -----------------------------------------------------------------------------


@dataclass
class Sequential:
    """noise.next_action as shipped: the SPRT with Siegmund's correction on candidate minus
    incumbent, readings allocated by information (an incumbent reading worth `reuse`), an
    incumbent reading at least every `interleave` candidate readings, `confirm` fresh readings
    of a kept candidate as its reference and reported value."""

    policy: NoisePolicy = field(default_factory=NoisePolicy)

    @property
    def baseline(self) -> int:
        return self.policy.calibration

    def begin(self, m: Mission) -> None:
        pass

    def bounds(self, m: Mission, shift: float) -> tuple[float, float]:
        p = self.policy
        return math.log(p.power / p.alpha) - shift, math.log((1 - p.power) / (1 - p.alpha)) + shift

    def iterate(self, m: Mission) -> bool:
        p = self.policy
        m.cand()
        while True:
            llr, _ = m.llr(p.min_effect)
            upper, lower = self.bounds(m, SIEGMUND_RHO * p.min_effect)
            if llr <= lower:
                return False
            if llr >= upper and m.fresh > 0:
                break
            if m.c_n + m.fresh >= p.max_evals:
                return self.at_cap(m, llr)
            wanted = math.ceil(m.c_n / p.interleave) if p.interleave else 0
            if m.fresh < wanted or llr >= upper or _pays(p.reuse, m.c_n, m.ref_n):
                m.inc()
            else:
                m.cand()
        return self.on_keep(m)

    def at_cap(self, m: Mission, llr: float) -> bool:
        return False  # undecided within max_evals: discarded

    def on_keep(self, m: Mission) -> bool:
        c = self.policy.confirm
        if c:
            g = m.new_group()
            total = sum(m.conf(g) for _ in range(c))
            m.keep_with(c, total, g)
        else:
            m.keep_with(m.c_n, m.c_sum, m.cand_group)
        return True


@dataclass
class Flex(Sequential):
    """The shipped test with options: `a1`/`b1` replace the keep/discard boundaries; the
    deciding candidate readings stay in the new incumbent's decision reference at weight
    `deciding` (its reported value stays the confirmations); `a2`: a second stage, the
    confirmations count toward the keep, kept iff the log LR after them is >= a2."""

    deciding: float = 0.0
    a1: float | None = None
    b1: float | None = None
    a2: float | None = None

    def bounds(self, m: Mission, shift: float) -> tuple[float, float]:
        up, lo = super().bounds(m, shift)
        return (up if self.a1 is None else self.a1), (lo if self.b1 is None else self.b1)

    def on_keep(self, m: Mission) -> bool:
        c = self.policy.confirm
        g = m.cand_group if self.deciding else m.new_group()
        total = sum(m.conf(g) for _ in range(c))
        if self.a2 is not None:
            s = m.sigma()
            eff = self.policy.min_effect * s
            n = m.c_n + c
            diff = (m.c_sum + total) / n - m.ref_mean
            if eff * (diff - eff / 2) / (s * s * (1 / n + 1 / m.ref_n)) < self.a2:
                return False  # vetoed: discarded after all
        w = self.deciding
        m.keep_with(c + w * m.c_n, total + w * m.c_sum, g, (c, total) if c else None)
        return True


@dataclass
class TruncKeep(Flex):
    """A truncated SPRT: at max_evals, kept iff log LR >= `cut` (instead of discarded)."""

    cut: float = 0.0

    def at_cap(self, m: Mission, llr: float) -> bool:
        return llr >= self.cut and m.fresh > 0 and self.on_keep(m)


@dataclass
class StepShift(Flex):
    """Siegmund's correction scaled by the real size of the next step, √(information one more
    candidate reading adds) (the shipped shift assumes one reading's worth)."""

    def bounds(self, m: Mission, shift: float) -> tuple[float, float]:
        return super().bounds(m, shift * math.sqrt(_step(m)))


@dataclass
class PriorAware(Sequential):
    """NOT generic (knows the bench's prior: 30 % real, effects exactly 0 or min_effect): the new
    incumbent's reference is the old one plus the posterior mean effect, its posterior variance
    as pseudo-readings, plus `confirm` fresh readings."""

    prior: float = 0.3

    def on_keep(self, m: Mission) -> bool:
        llr, s = m.llr(self.policy.min_effect)
        s = s or 1.0
        eff = self.policy.min_effect * s
        p = 1 / (1 + (1 - self.prior) / self.prior * math.exp(-min(llr, 50)))
        mean0 = m.ref_mean + p * eff
        n0 = s * s / (s * s / m.ref_n + p * (1 - p) * eff * eff)
        g = m.new_group()
        total = sum(m.conf(g) for _ in range(self.policy.confirm))
        m.keep_with(n0 + self.policy.confirm, n0 * mean0 + total, g)
        return True


@dataclass
class PoolDiscards(Flex):
    """NOT generic (assumes a discarded candidate changes nothing): its readings join the
    incumbent's decision reference; the reported value stays the incumbent's own readings."""

    def iterate(self, m: Mission) -> bool:
        kept = super().iterate(m)
        if not kept and m.c_n:
            m.ref_n += m.c_n
            m.ref_sum += m.c_sum
        return kept


@dataclass
class NoSurvival(Flex):
    """An idealisation (not implementable): before each test the incumbent's reference mean is
    redrawn as N(truth, 1/n), n kept: its honest spread without survival selection (an
    incumbent whose readings came out high does not live longer). Measures what that costs."""

    rng: random.Random = field(default_factory=random.Random)

    def begin(self, m: Mission) -> None:
        self.rng = random.Random(m.seed + 2_000_003)

    def iterate(self, m: Mission) -> bool:
        n = m.ref_n
        m.ref_sum = n * (m.truth + self.rng.gauss(0.0, 1.0) / math.sqrt(n))
        return super().iterate(m)


@dataclass
class BiasCorrected(Flex):
    """Generic, self-calibrating: a kept candidate's deciding readings stay in its decision
    reference at weight `deciding`, shifted down by the winner's curse measured on this run
    (each incumbent's deciding mean minus the mean of its later unselected readings, pooled by
    precision over the incumbents so far). Reported value: unselected readings only."""

    upper_step: bool = False  # Siegmund's shift of the keep boundary scaled by the real step
    # per incumbent: deciding mean, deciding n, sum and n of its unselected readings
    history: list[list[float]] = field(default_factory=list)
    current: list[float] = field(default_factory=list)
    _start: tuple[float, float] = (0.0, 0.0)
    _m: Mission | None = None

    def begin(self, m: Mission) -> None:
        self.history, self.current = [], [0.0, 0, m.ref_sum, m.ref_n]

    def curse(self) -> float | None:
        num = den = 0.0
        for deciding, n, fresh_sum, fresh_n in [*self.history, self.current]:
            if n and fresh_n:
                v = 1 / n + 1 / fresh_n
                num += (deciding - fresh_sum / fresh_n) / v
                den += 1 / v
        return num / den if den else None

    def bounds(self, m: Mission, shift: float) -> tuple[float, float]:
        if not self.upper_step:
            return super().bounds(m, shift)
        p = self.policy
        return (
            math.log(p.power / p.alpha) - shift * math.sqrt(_step(m)),
            math.log((1 - p.power) / (1 - p.alpha)) + shift,
        )

    def iterate(self, m: Mission) -> bool:
        deciding, n, fresh_sum, fresh_n = self.current
        bias = self.curse()
        if n and bias is not None and self.deciding:
            wn = self.deciding * n
            m.ref_n, m.ref_sum = fresh_n + wn, fresh_sum + wn * (deciding - bias)
        else:
            m.ref_n, m.ref_sum = fresh_n, fresh_sum
        self._start = (m.ref_n, m.ref_sum)
        kept = super().iterate(m)
        if not kept:
            self._count_fresh(m)
        return kept

    def _count_fresh(self, m: Mission) -> None:
        self.current[2] += m.ref_sum - self._start[1]
        self.current[3] += m.ref_n - self._start[0]

    def on_keep(self, m: Mission) -> bool:
        self._count_fresh(m)
        deciding, n = m.c_sum / m.c_n, m.c_n
        c = self.policy.confirm
        g = m.new_group()
        total = sum(m.conf(g) for _ in range(c))
        self.history.append(self.current)
        self.current = [deciding, n, total, c]
        m.keep_with(c or 1, total if c else deciding, g, (c, total) if c else None)
        return True


Design = Sequential


def run(
    design: Design, seeds: range, iterations: int = 60, p_real: float = 0.3, effect: float = 1.0
) -> trust.Tally:
    """One design over the missions of `seeds`, tallied as bench/trust.py tallies the real
    decision code."""
    t = trust.Tally()
    for seed in seeds:
        m = Mission(seed, p_real, effect, design.baseline)
        t.calibration += design.baseline
        design.begin(m)
        for _ in range(iterations):
            m.start()
            before = dict(m.counts)
            keep = design.iterate(m)
            for role in ROLES:
                used = m.counts[role] - before[role]
                if used:
                    t.count(m.real, role, used)
                    t.evaluations += used
            t.add(m.real, keep)
            t.iterations += 1
        t.bias.append(m.rep_sum / m.rep_n - m.truth)
    return t


# --- checks and bounds -----------------------------------------------------------------------


def same_as_real_code(seeds: range, iterations: int) -> tuple[bool, int]:
    """Whether the simulator's shipped design decides exactly as bench/trust.py's real decision
    code (noise.next_action on reading lists): decision for decision, reading for reading, the
    same reported bias."""
    t = trust.Tally()
    for seed in seeds:
        trust.noise_aware(P, seed, iterations, 0.3, 1.0, 1.0, t)
    r = run(Sequential(), seeds, iterations)
    # the reported means agree up to rounding (a running sum here, fmean of the list there)
    close = all(math.isclose(a, b, abs_tol=1e-9) for a, b in zip(t.bias, r.bias, strict=True))
    same = t.decisions == r.decisions and t.readings == r.readings and close
    return same, len(r.decisions)


@dataclass(frozen=True)
class Operating:
    upper: float
    lower: float
    false: float  # P(keep | null)
    true: float  # P(keep | +1σ)
    null_n: float  # E[readings | null]
    real_n: float  # E[readings | +1σ]

    def per_iteration(self, p_real: float) -> float:
        return (1 - p_real) * self.null_n + p_real * self.real_n


def operating(upper: float, lower: float, cap: int = 200) -> Operating:
    """The known-incumbent test (σ = 1, min_effect 1σ: each reading moves the log LR by
    N(∓½, 1)) at these boundaries, by quadrature (bench/trust.py)."""
    false, null_n = trust.sprt_operating(upper, lower, -0.5, cap)
    true, real_n = trust.sprt_operating(upper, lower, 0.5, cap)
    return Operating(upper, lower, false, true, null_n, real_n)


def bisect(f: Callable[[float], bool], lo: float, hi: float, steps: int = 26) -> float:
    """The point in [lo, hi] where the monotone predicate `f` turns from true to false."""
    for _ in range(steps):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if f(mid) else (lo, mid)
    return (lo + hi) / 2


def known_incumbent_bound(alpha: float, power: float) -> Operating:
    """The SPRT against an exactly known incumbent with P(keep | null) = alpha and
    P(keep | +1σ) = power exactly. By the Wald–Wolfowitz theorem no sequential test with error
    rates no worse needs fewer readings on average, under either hypothesis: a lower bound for
    every design, however it allocates readings and whatever it knows of the prior."""

    def lower_for(upper: float) -> float:
        # raising the discard boundary only removes keeps: P(keep | +1σ) falls with it
        return bisect(
            lambda b: trust.sprt_operating(upper, b, 0.5, 200, 300)[0] >= power, -8.0, upper
        )

    def too_loose(upper: float) -> bool:
        return trust.sprt_operating(upper, lower_for(upper), -0.5, 200, 300)[0] > alpha

    upper = bisect(too_loose, 0.5, 6.0, 24)
    return operating(upper, lower_for(upper))


def honesty_price(candidate: float, keeps: float) -> tuple[float, float]:
    """An estimate (not a bound): each incumbent learned from n readings that did not select
    it, shared by all its tests; a test then needs candidate·n/(n - candidate) candidate
    readings for the known-incumbent test's information, and a new incumbent arrives `keeps`
    times per iteration. The n minimising candidate·n/(n - candidate) + keeps·n, and the
    evaluations per iteration there."""
    n = candidate + candidate / math.sqrt(keeps)
    return n, candidate * n / (n - candidate) + keeps * n


@dataclass
class Recording(Sequential):
    """The shipped design, recording the incumbent reference's error and size at every test."""

    errors: list[tuple[float, float, bool]] = field(default_factory=list)

    def iterate(self, m: Mission) -> bool:
        self.errors.append((m.ref_mean - m.truth, m.ref_n, m.real))
        return super().iterate(m)


# --- the table -------------------------------------------------------------------------------

P = NoisePolicy(blocked=False)  # the pooled rule this study is of (#13)


def _p(**changes: float) -> NoisePolicy:
    return P._replace(**changes)  # type: ignore[arg-type]


# (section, label, design): the rows of bench/TRUST_FEASIBILITY.md's table
ROWS: list[tuple[str, str, Callable[[], Design]]] = [
    ("honest and generic (alpha and power as given)", "", lambda: Sequential()),
    ("", "shipped default (power 0.9, confirm 5, reuse 2)", lambda: Sequential()),
    ("", "default, power 0.85", lambda: Sequential(_p(power=0.85))),
    ("", "default, max_evals 16 (undecided = discard)", lambda: Sequential(_p(max_evals=16))),
    ("", "default, max_evals 20", lambda: Sequential(_p(max_evals=20))),
    ("", "A power 0.88, reuse 1", lambda: Sequential(_p(power=0.88, reuse=1.0))),
    ("", "A confirm 3, interleave 100", lambda: Sequential(_p(confirm=3, interleave=100))),
    ("", "A power 0.86, confirm 3", lambda: Sequential(_p(power=0.86, confirm=3))),
    ("", "A power 0.86, confirm 0 (deciding = reference)",
     lambda: Sequential(_p(power=0.86, confirm=0))),
    ("", "E deciding at weight 1/2, confirm 3, reuse 1",
     lambda: Flex(_p(confirm=3, reuse=1.0), deciding=0.5)),
    ("", "E deciding at weight 1, confirm 2", lambda: Flex(_p(confirm=2), deciding=1.0)),
    ("", "SS Siegmund by real step, power 0.86",
     lambda: StepShift(_p(power=0.86))),
    ("", "BC winner's curse measured, power 0.88, confirm 2",
     lambda: BiasCorrected(_p(power=0.88, confirm=2), deciding=1.0)),
    ("", "BC as above, alpha 0.04",
     lambda: BiasCorrected(_p(alpha=0.04, power=0.88, confirm=2), deciding=1.0)),
    ("", "BC + Siegmund by real step (keep boundary)",
     lambda: BiasCorrected(_p(power=0.88, confirm=2), deciding=1.0, upper_step=True)),
    ("", "TK truncated at 16, keep iff log LR >= 0.5",
     lambda: TruncKeep(_p(power=0.85, max_evals=16), cut=0.5)),
    ("boundaries chosen on this bench", "", lambda: Sequential()),
    ("", "B a = 2.1, b = -1.6, reuse 1", lambda: Flex(_p(reuse=1.0), a1=2.1, b1=-1.6)),
    ("", "B a = 2.3, b = -1.5, reuse 1", lambda: Flex(_p(reuse=1.0), a1=2.3, b1=-1.5)),
    ("", "C 2-stage a1 2.0, confirm 3 count, a2 1.5", lambda: Flex(_p(confirm=3), a1=2.0, a2=1.5)),
    ("", "C2 futility veto: a1 1.4, confirm 5, a2 0.35", lambda: Flex(a1=1.4, a2=0.35)),
    ("", "C2 a1 1.6, confirm 5, a2 0.2", lambda: Flex(a1=1.6, a2=0.2)),
    ("", "E' weight 1, confirm 2, a = 1.8, b = -1.8",
     lambda: Flex(_p(confirm=2), deciding=1.0, a1=1.8, b1=-1.8)),
    ("", "E' weight 1, confirm 2, a = 1.9, b = -1.8",
     lambda: Flex(_p(confirm=2), deciding=1.0, a1=1.9, b1=-1.8)),
    ("", "E' weight 3/4, confirm 2, a = 1.9, b = -1.8",
     lambda: Flex(_p(confirm=2), deciding=0.75, a1=1.9, b1=-1.8)),
    ("", "E' weight 1, confirm 1, a = 1.9, b = -1.9",
     lambda: Flex(_p(confirm=1), deciding=1.0, a1=1.9, b1=-1.9)),
    ("extra assumptions (not generic)", "", lambda: Sequential()),
    ("", "PD discards' readings pooled, power 0.85, reuse 1",
     lambda: PoolDiscards(_p(power=0.85, reuse=1.0))),
    ("", "PA prior known, alpha 0.04, power 0.87, confirm 1",
     lambda: PriorAware(_p(alpha=0.04, power=0.87, confirm=1, reuse=1.0))),
    ("", "PA prior known, power 0.875, confirm 2",
     lambda: PriorAware(_p(power=0.875, confirm=2, reuse=1.0))),
    ("an idealisation (not implementable)", "", lambda: Sequential()),
    ("", "NS no survival selection, power 0.86, confirm 3",
     lambda: NoSurvival(_p(power=0.86, confirm=3))),
]  # fmt: skip


def table_row(label: str, results: Sequence[trust.Tally]) -> str:
    cell = trust.cell
    parts = " ".join(
        f"{statistics.fmean(per_role(r, role) for r in results):>9.2f}" for role in ROLES
    )
    return (
        f"  {label:<50} {cell([r.false_rate for r in results], '.1%'):>20} "
        f"{cell([r.true_rate for r in results], '.1%'):>20} "
        f"{cell([r.per_iteration for r in results], '.2f'):>19} "
        f"{statistics.fmean(statistics.fmean(r.bias) for r in results):>+6.2f} {parts}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=200, help="missions per seed set")
    parser.add_argument("--seed-sets", type=int, default=5, help="disjoint seed sets")
    parser.add_argument("--iterations", type=int, default=60)
    args = parser.parse_args()
    report(args.seeds, args.seed_sets, args.iterations)


def report(seeds: int, sets: int, iterations: int = 60) -> None:
    p_real = 0.3
    groups = trust.seed_sets(seeds, sets)
    same, n = same_as_real_code(range(min(seeds, 10)), iterations)
    print(
        f"\nDecision designs against the trust targets: {sets} seed set(s) x {seeds} missions x "
        f"{iterations} iterations (seeds 0-{sets * seeds - 1}), {p_real:.0%} of changes +1σ"
    )
    print(
        f"simulator's shipped design vs bench/trust.py's real decision code (seeds "
        f"0-{min(seeds, 10) - 1}): {'the same' if same else 'DIFFERENT'} decisions, readings "
        f"and reported values ({n} decisions)"
    )
    bound = known_incumbent_bound(0.05, 0.80)
    keeps = (1 - p_real) * bound.false + p_real * bound.true
    per_it = bound.per_iteration(p_real)
    print(
        "lower bound, any design (known incumbent; the SPRT with false 5 %, true 80 % exactly, "
        f"by quadrature): a = {bound.upper:.3f}, b = {bound.lower:.3f}, E[readings] "
        f"{bound.null_n:.2f} on a null, {bound.real_n:.2f} on a +1σ change: {per_it:.2f} "
        f"candidate readings per iteration, + {keeps:.3f} incumbent readings (one per keep) "
        f"= {per_it + keeps:.2f} evaluations per iteration"
    )
    upper, lower = trust.sprt_boundaries(P)
    shipped = operating(upper, lower, P.max_evals - 1)
    at80 = operating(*trust.sprt_boundaries(_p(power=0.8)), P.max_evals - 1)
    print(
        f"  the shipped boundaries against a known incumbent: power 0.9 ({upper:.3f}, "
        f"{lower:.3f}): false {shipped.false:.2%}, true {shipped.true:.2%}, "
        f"{shipped.per_iteration(p_real):.2f} per iteration; power 0.8 ({at80.upper:.3f}, "
        f"{at80.lower:.3f}): false {at80.false:.2%}, true {at80.true:.2%}, "
        f"{at80.per_iteration(p_real):.2f}"
    )
    n_best, price = honesty_price(per_it, keeps)
    print(
        f"the price of honesty without a prior (an estimate): {n_best:.1f} unselected readings "
        f"per incumbent, {price:.2f} evaluations per iteration"
    )
    recorder = Recording()
    run(recorder, groups[0], iterations)
    errors = recorder.errors
    first = groups[0]
    print(
        f"survival bias of the shipped reference at the start of a test (seeds "
        f"{first.start}-{first.stop - 1}): {statistics.fmean(e for e, _, _ in errors):+.3f}σ "
        f"(+1σ tests {statistics.fmean(e for e, _, real in errors if real):+.3f}σ), "
        f"mean {statistics.fmean(n for _, n, _ in errors):.1f} readings"
    )
    print(
        f"\n  {'':<50} {'false':>20} {'true':>20} {'evals/it':>19} {'best-':>6} "
        f"{'readings per iteration':>29}"
    )
    print(
        f"  {'design':<50} {'keeps':>20} {'keeps':>20} {'':>19} {'truth':>6} "
        f"{'candidate':>9} {'incumbent':>9} {'confirm':>9}"
    )
    for section, label, make in ROWS:
        if section:
            print(f"{section}:")
            continue
        results = [run(make(), g, iterations) for g in groups]
        print(table_row(label, results), flush=True)
        if label.startswith("shipped default") and sets > 1:
            per_set = ", ".join(f"{r.per_iteration:.2f}" for r in results)
            print(f"  {'':<50} evaluations per iteration by seed set: {per_set}")


if __name__ == "__main__":
    main()
