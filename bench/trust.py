"""Benchmark: keep decisions under a noisy evaluator, today's rule beside the noise-aware default.

    python3 dev.py bench --only trust          (or: .venv/bin/python bench/trust.py)
    .venv/bin/python bench/trust.py --seed-sets 1   (seeds 0-199 only: a fifth of the time)

A ground-truth mission: each iteration proposes a change that is really better by `effect` σ
with probability `p_real` and does nothing otherwise; the evaluator returns the commit's true
value plus Gaussian noise σ. The real decision code (decide.decide for the single-reading rule,
noise.next_action for the default) is driven for many seeds. Printed per rule: false-keep rate
(null kept / null proposed), true-keep rate (real kept / real proposed), evaluations per
iteration, and the reported best minus the true value of the kept state (in σ). The seeds run in
disjoint sets (set k: seeds k*S to (k+1)*S - 1) and each figure is printed as the mean over the
sets with its range [lowest-highest]: one set of 200 missions is not the whole story (seeds 0-199
happen to be the default's cheapest set). Nothing here is a pass/fail test.
"""

from __future__ import annotations

import argparse
import math
import random
import statistics
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from autoresearch.decide import EvalSummary, decide, kept_score_after
from autoresearch.noise import (
    SIEGMUND_RHO,
    Action,
    NoiseMode,
    NoisePolicy,
    confirmations,
    next_action,
    pooled_spread,
)
from autoresearch.states import ArtifactStatus, Direction, EvalStatus, KeepPolicy

TARGETS = {"false": 0.05, "true": 0.80, "evals": 10.5, "bias": 0.3}  # evals: #34, after #13


@dataclass
class Tally:
    null_proposed: int = 0
    null_kept: int = 0
    real_proposed: int = 0
    real_kept: int = 0
    evaluations: int = 0
    iterations: int = 0
    calibration: int = 0
    bias: list[float] = field(default_factory=list)
    # readings of the iterations by (real change?, role): where the evaluations go
    readings: dict[tuple[bool, str], int] = field(default_factory=dict)
    decisions: list[bool] = field(default_factory=list)  # kept?, in order: rules compared

    def count(self, real: bool, role: str, n: int = 1) -> None:
        self.readings[(real, role)] = self.readings.get((real, role), 0) + n

    def per_proposal(self, real: bool, role: str) -> float:
        """Readings of `role` per iteration that proposed a real (or a null) change."""
        proposed = self.real_proposed if real else self.null_proposed
        return self.readings.get((real, role), 0) / max(1, proposed)

    def add(self, real: bool, kept: bool) -> None:
        self.decisions.append(kept)
        if real:
            self.real_proposed += 1
            self.real_kept += kept
        else:
            self.null_proposed += 1
            self.null_kept += kept

    @property
    def false_rate(self) -> float:
        return self.null_kept / max(1, self.null_proposed)

    @property
    def true_rate(self) -> float:
        return self.real_kept / max(1, self.real_proposed)

    @property
    def per_iteration(self) -> float:
        return self.evaluations / max(1, self.iterations)


def today(seed: int, iterations: int, p_real: float, effect: float, sigma: float, t: Tally) -> None:
    """The single-reading rule through decide.decide: one reading, better than the last kept."""
    mission, noise = _streams(seed)
    truth = 0.0
    kept = noise.gauss(truth, sigma)
    t.calibration += 1
    for _ in range(iterations):
        real = mission.random() < p_real
        value = truth + (effect * sigma if real else 0.0)
        summary = EvalSummary(EvalStatus.PASS, True, noise.gauss(value, sigma))
        t.evaluations += 1
        t.count(real, "candidate")
        d = decide(
            KeepPolicy.SCORE_IMPROVEMENT, Direction.HIGHER, kept, ArtifactStatus.CANDIDATE, summary
        )
        kept = kept_score_after(d, summary, kept) or kept
        if d.keep:
            truth = value
        t.add(real, d.keep)
        t.iterations += 1
    t.bias.append((kept - truth) / sigma if sigma else kept - truth)


def noise_aware(
    policy: NoisePolicy,
    seed: int,
    iterations: int,
    p_real: float,
    effect: float,
    sigma: float,
    t: Tally,
) -> None:
    """The default policy: calibrated baseline, sequential test, pooled incumbent readings."""
    mission, rng = _streams(seed)
    truth = 0.0
    incumbent = [rng.gauss(truth, sigma) for _ in range(policy.baseline_readings)]
    groups = [incumbent]
    t.calibration += len(incumbent)
    for _ in range(iterations):
        real = mission.random() < p_real
        value = truth + (effect * sigma if real else 0.0)
        candidate: list[float] = []
        groups.append(candidate)
        fresh = 0
        while True:
            verdict = next_action(
                policy, Direction.HIGHER, pooled_spread(groups), incumbent, candidate, fresh
            )
            if verdict.action is Action.MEASURE_CANDIDATE:
                candidate.append(rng.gauss(value, sigma))
            elif verdict.action is Action.MEASURE_INCUMBENT:
                incumbent.append(rng.gauss(truth, sigma))
                fresh += 1
            else:
                break
        t.evaluations += len(candidate) + fresh
        t.count(real, "candidate", len(candidate))
        t.count(real, "incumbent", fresh)
        kept = verdict.action is Action.KEEP
        if kept:
            # the readings that won the test are selected for luck: the new incumbent's
            # reference is fresh confirmation readings (and every re-measurement after them)
            truth = value
            fresh = confirmations(policy, pooled_spread(groups))
            if fresh:
                incumbent = [rng.gauss(value, sigma) for _ in range(fresh)]
                t.evaluations += fresh
                t.count(real, "confirm", fresh)
                groups.append(incumbent)
            else:
                incumbent = candidate
        t.add(real, kept)
        t.iterations += 1
    best = statistics.fmean(incumbent)
    t.bias.append((best - truth) / sigma if sigma else best - truth)


def _streams(seed: int) -> tuple[random.Random, random.Random]:
    """Which changes are real, and the evaluator's noise, drawn apart: every rule meets the same
    proposals, so decisions can be compared one for one."""
    return random.Random(seed), random.Random(seed + 1_000_003)


def row(name: str, t: Tally) -> str:
    bias = statistics.fmean(t.bias)
    spread = statistics.pstdev(t.bias)
    return (
        f"{name:<28} {t.false_rate:>7.1%} {t.true_rate:>7.1%} {t.per_iteration:>8.2f} "
        f"{bias:>+8.2f} {spread:>6.2f} {t.calibration / len(t.bias):>6.1f}"
    )


def cell(values: Sequence[float], fmt: str) -> str:
    """The mean over seed sets, with [lowest-highest] when there are several sets."""
    text = format(statistics.fmean(values), fmt)
    if len(values) > 1:
        text += f" [{format(min(values), fmt)}–{format(max(values), fmt)}]"
    return text


def sets_row(name: str, tallies: Sequence[Tally]) -> str:
    """One rule over several seed sets: each figure's mean over the sets and its range."""
    wide = len(tallies) > 1
    rates, evals = (20, 20) if wide else (7, 8)
    return (
        f"{name:<28} {cell([t.false_rate for t in tallies], '.1%'):>{rates}} "
        f"{cell([t.true_rate for t in tallies], '.1%'):>{rates}} "
        f"{cell([t.per_iteration for t in tallies], '.2f'):>{evals}} "
        f"{cell([statistics.fmean(t.bias) for t in tallies], '+.2f'):>{evals + 2}}"
    )


def sets_header(sets: int) -> str:
    rates, evals = (20, 20) if sets > 1 else (7, 8)
    return (
        f"{'rule':<28} {'false':>{rates}} {'true':>{rates}} {'evals/it':>{evals}} "
        f"{'best-true (σ)':>{evals + 2}}"
    )


def merged(tallies: Sequence[Tally]) -> Tally:
    """The tallies of several seed sets as one (for where the evaluations go)."""
    total = Tally()
    for t in tallies:
        total.null_proposed += t.null_proposed
        total.null_kept += t.null_kept
        total.real_proposed += t.real_proposed
        total.real_kept += t.real_kept
        total.evaluations += t.evaluations
        total.iterations += t.iterations
        total.calibration += t.calibration
        total.bias += t.bias
        total.decisions += t.decisions
        for key, n in t.readings.items():
            total.readings[key] = total.readings.get(key, 0) + n
    return total


def seed_sets(seeds: int, sets: int) -> list[range]:
    """`sets` disjoint sets of `seeds` missions each: set k is seeds k*seeds .. (k+1)*seeds - 1."""
    return [range(k * seeds, (k + 1) * seeds) for k in range(sets)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=200, help="missions per seed set")
    parser.add_argument(
        "--seed-sets", type=int, default=5, help="disjoint seed sets (ranges over them)"
    )
    parser.add_argument("--iterations", type=int, default=60)
    parser.add_argument("--p-real", type=float, default=0.3)
    parser.add_argument("--effect", type=float, default=1.0, help="real effect in σ")
    args = parser.parse_args()
    run(args.seeds, args.iterations, args.p_real, args.effect, args.seed_sets)


# The first noise-aware release, for comparison: candidate readings by a fixed interleave only.
FIRST_RELEASE = NoisePolicy(power=0.85, max_evals=24, confirm=6, reuse=0.0, blocked=False)
# The default before #34: the candidate against every reference reading of the incumbent.
POOLED = NoisePolicy(blocked=False)


def simulate(
    policy: NoisePolicy | None, seeds: range, iterations: int, p_real: float, effect: float
) -> Tally:
    """One rule over the missions of `seeds` (None: today's single-reading rule)."""
    t = Tally()
    for seed in seeds:
        if policy is None:
            today(seed, iterations, p_real, effect, 1.0, t)
        else:
            noise_aware(policy, seed, iterations, p_real, effect, 1.0, t)
    return t


def run(
    seeds: int, iterations: int, p_real: float = 0.3, effect: float = 1.0, sets: int = 5
) -> None:
    default = NoisePolicy()
    rules: dict[str, NoisePolicy | None] = {
        "today (single reading)": None,
        "first noise-aware release": FIRST_RELEASE,
        "pooled default (before #34)": POOLED,
        "noise-aware default": default,
    }
    groups = seed_sets(seeds, sets)
    print(
        f"\nKeep decisions under noise: {sets} seed set(s) x {seeds} seeds x {iterations} "
        f"iterations, {p_real:.0%} of changes +{effect:g}σ, the rest null"
        + (
            f" (mean over the sets [lowest-highest]; seeds 0-{sets * seeds - 1})"
            if sets > 1
            else ""
        )
    )
    print(sets_header(sets))
    tallies: dict[str, list[Tally]] = {}
    for name, policy in rules.items():
        tallies[name] = [simulate(policy, g, iterations, p_real, effect) for g in groups]
        print(sets_row(name, tallies[name]), flush=True)
    new = tallies["noise-aware default"]
    false_rate = statistics.fmean(t.false_rate for t in new)
    true_rate = statistics.fmean(t.true_rate for t in new)
    per_iteration = statistics.fmean(t.per_iteration for t in new)
    bias = abs(statistics.fmean(statistics.fmean(t.bias) for t in new))
    print(
        f"targets (default, means): false <= {TARGETS['false']:.0%} "
        f"({_ok(false_rate <= TARGETS['false'])}), "
        f"true >= {TARGETS['true']:.0%} ({_ok(true_rate >= TARGETS['true'])}), "
        f"evals/it <= {TARGETS['evals']:g} ({_ok(per_iteration <= TARGETS['evals'])}), "
        f"|best-true| <= {TARGETS['bias']}σ ({_ok(bias <= TARGETS['bias'])})"
    )
    if sets > 1:
        per_set = ", ".join(
            f"seeds {g.start}-{g.stop - 1}: {t.per_iteration:.2f}"
            for g, t in zip(groups, new, strict=True)
        )
        print(f"  the default's evaluations per iteration by seed set: {per_set}")
    print("where the default's evaluations go (readings per iteration, all sets):")
    print(breakdown(merged(new)))
    known = known_incumbent(default, effect)
    print(
        f"  a bound: against an exactly known incumbent the same test takes {known[0]:.2f} "
        f"candidate readings on a null change and {known[1]:.2f} on a +{effect:g}σ one "
        f"({(1 - p_real) * known[0] + p_real * known[1]:.2f} per iteration here; exact by "
        "quadrature, no sampling noise); the rest is the price of knowing each new incumbent"
    )
    print("the price of power (the default with another `power`):")
    for power in (0.8, 0.85, 0.95):
        priced = default._replace(power=power)
        runs = [simulate(priced, g, iterations, p_real, effect) for g in groups]
        print(sets_row(f"  power {power:g}", runs), flush=True)
    few = range(min(seeds, 50))
    det, det_today = Tally(), Tally()
    for seed in few:
        noise_aware(default, seed, iterations, p_real, effect, 0.0, det)
        today(seed, iterations, p_real, effect, 0.0, det_today)
    same = det.decisions == det_today.decisions
    print(
        f"deterministic evaluator (σ = 0), default policy: {det.per_iteration:.2f} evaluations "
        f"per iteration (target 1.00: {_ok(det.per_iteration == 1.0)}); decisions identical "
        f"to the single-reading rule: {'yes' if same else 'NO'} ({len(det.decisions)})"
    )
    single, single_today = Tally(), Tally()
    for seed in few:
        noise_aware(
            NoisePolicy(mode=NoiseMode.SINGLE), seed, iterations, p_real, effect, 1.0, single
        )
        today(seed, iterations, p_real, effect, 1.0, single_today)
    same = single.decisions == single_today.decisions
    print(f"{'rule':<28} {'false':>7} {'true':>7} {'evals/it':>8} {'best-tru':>8} {'sd':>6} calib")
    print(row("mode: single (= today)", single))
    print(f"  decisions identical to the single-reading rule: {'yes' if same else 'NO'}")


def breakdown(t: Tally) -> str:
    """Candidate readings, incumbent re-measures and confirmations, per null and per real
    proposal and per iteration."""
    lines = [f"  {'':<22} {'candidate':>9} {'incumbent':>9} {'confirm':>8} {'total':>7}"]
    for label, real in (("per null proposal", False), ("per +1σ proposal", True)):
        parts = [t.per_proposal(real, role) for role in ("candidate", "incumbent", "confirm")]
        cells = " ".join(f"{x:>9.2f}" for x in parts[:2])
        lines.append(f"  {label:<22} {cells} {parts[2]:>8.2f} {sum(parts):>7.2f}")
    per_it = [
        sum(t.readings.get((real, role), 0) for real in (False, True)) / max(1, t.iterations)
        for role in ("candidate", "incumbent", "confirm")
    ]
    cells = " ".join(f"{x:>9.2f}" for x in per_it[:2])
    lines.append(f"  {'per iteration':<22} {cells} {per_it[2]:>8.2f} {sum(per_it):>7.2f}")
    return "\n".join(lines)


def sprt_boundaries(policy: NoisePolicy, sigma: float = 1.0) -> tuple[float, float]:
    """The keep and discard boundaries of noise.next_action's log LR (Wald's, moved in by
    Siegmund's correction), for a spread `sigma`."""
    shift = SIEGMUND_RHO * policy.effect(sigma) / sigma
    upper = math.log(policy.power / policy.alpha) - shift
    lower = math.log((1 - policy.power) / (1 - policy.alpha)) + shift
    return upper, lower


def sprt_operating(
    upper: float, lower: float, drift: float, cap: int, cells: int = 600
) -> tuple[float, float]:
    """P(keep) and E[readings] of a sequential test whose log LR starts at 0 and moves by
    N(drift, 1) per reading, kept at >= upper, discarded at <= lower, discarded undecided after
    `cap` readings. Exact up to the midpoint rule on `cells` cells of (lower, upper): the
    density of the log LR among undecided tests is carried from reading to reading (no
    sampling noise, unlike a Monte Carlo estimate)."""
    width = upper - lower
    h = width / cells
    x = lower + h * (np.arange(cells) + 0.5)
    normal = statistics.NormalDist()
    # kernel[i, j]: density of moving from cell j to cell i in one reading, times the cell width
    steps = x[:, None] - x[None, :] - drift
    kernel = h * np.exp(-0.5 * steps * steps) / math.sqrt(2 * math.pi)
    over = np.array([1 - normal.cdf(upper - xj - drift) for xj in x])
    density = np.exp(-0.5 * (x - drift) ** 2) / math.sqrt(2 * math.pi)  # after reading 1
    keep = 1 - normal.cdf(upper - drift)
    readings = 1.0
    for _ in range(1, cap):
        alive = float(density.sum() * h)
        if alive < 1e-12:
            break
        readings += alive
        keep += float(h * over @ density)
        density = kernel @ density
    return keep, readings


def known_incumbent(policy: NoisePolicy, effect: float) -> tuple[float, float]:
    """Mean candidate readings of the default's test against an incumbent known exactly (a
    bound no allocation can beat), on a null change and on a real one. With σ = 1 and the
    incumbent known, each reading moves the log LR by m·x - m²/2 (m = min_effect in σ,
    x ~ N(δ, 1)): in units of m that is N(δ - m/2, 1), with the boundaries divided by m."""
    m = policy.effect(1.0)
    upper, lower = sprt_boundaries(policy)
    # next_action stops at max_evals readings, one of them the (here useless) incumbent's
    cap = policy.max_evals - 1
    null = sprt_operating(upper / m, lower / m, -m / 2, cap)
    real = sprt_operating(upper / m, lower / m, effect - m / 2, cap)
    return null[1], real[1]


def _ok(flag: bool) -> str:
    return "met" if flag else "MISSED"


if __name__ == "__main__":
    main()
