"""Benchmark: keep decisions under a noisy evaluator, today's rule beside the noise-aware default.

    python3 dev.py bench --only trust          (or: .venv/bin/python bench/trust.py)

A ground-truth mission: each iteration proposes a change that is really better by `effect` σ
with probability `p_real` and does nothing otherwise; the evaluator returns the commit's true
value plus Gaussian noise σ. The real decision code (decide.decide for the single-reading rule,
noise.next_action for the default) is driven for many seeds. Printed per rule: false-keep rate
(null kept / null proposed), true-keep rate (real kept / real proposed), evaluations per
iteration, and the reported best minus the true value of the kept state (in σ). Nothing here is
a pass/fail test.
"""

from __future__ import annotations

import argparse
import random
import statistics
from dataclasses import dataclass, field, replace

from autoresearch.decide import EvalSummary, decide, kept_score_after
from autoresearch.noise import (
    Action,
    NoiseMode,
    NoisePolicy,
    confirmations,
    next_action,
    pooled_spread,
)

TARGETS = {"false": 0.05, "true": 0.80, "evals": 8.0, "bias": 0.3}


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

    def add(self, real: bool, kept: bool) -> None:
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
    rng = random.Random(seed)
    truth = 0.0
    kept = rng.gauss(truth, sigma)
    t.calibration += 1
    for _ in range(iterations):
        real = rng.random() < p_real
        value = truth + (effect * sigma if real else 0.0)
        summary = EvalSummary("pass", True, rng.gauss(value, sigma))
        t.evaluations += 1
        d = decide("score_improvement", "higher", kept, "candidate", summary)
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
    rng = random.Random(seed)
    truth = 0.0
    incumbent = [rng.gauss(truth, sigma) for _ in range(policy.baseline_readings)]
    groups = [incumbent]
    t.calibration += len(incumbent)
    for _ in range(iterations):
        real = rng.random() < p_real
        value = truth + (effect * sigma if real else 0.0)
        candidate: list[float] = []
        groups.append(candidate)
        fresh = 0
        while True:
            verdict = next_action(
                policy, "higher", pooled_spread(groups), incumbent, candidate, fresh
            )
            if verdict.action is Action.MEASURE_CANDIDATE:
                candidate.append(rng.gauss(value, sigma))
            elif verdict.action is Action.MEASURE_INCUMBENT:
                incumbent.append(rng.gauss(truth, sigma))
                fresh += 1
            else:
                break
        t.evaluations += len(candidate) + fresh
        kept = verdict.action is Action.KEEP
        if kept:
            # the readings that won the test are selected for luck: the new incumbent's
            # reference is fresh confirmation readings (and every re-measurement after them)
            truth = value
            fresh = confirmations(policy, pooled_spread(groups))
            if fresh:
                incumbent = [rng.gauss(value, sigma) for _ in range(fresh)]
                t.evaluations += fresh
                groups.append(incumbent)
            else:
                incumbent = candidate
        t.add(real, kept)
        t.iterations += 1
    best = statistics.fmean(incumbent)
    t.bias.append((best - truth) / sigma if sigma else best - truth)


def row(name: str, t: Tally) -> str:
    bias = statistics.fmean(t.bias)
    spread = statistics.pstdev(t.bias)
    return (
        f"{name:<28} {t.false_rate:>7.1%} {t.true_rate:>7.1%} {t.per_iteration:>8.2f} "
        f"{bias:>+8.2f} {spread:>6.2f} {t.calibration / len(t.bias):>6.1f}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=200)
    parser.add_argument("--iterations", type=int, default=60)
    parser.add_argument("--p-real", type=float, default=0.3)
    parser.add_argument("--effect", type=float, default=1.0, help="real effect in σ")
    args = parser.parse_args()
    run(args.seeds, args.iterations, args.p_real, args.effect)


# The first noise-aware release, for comparison: candidate readings by a fixed interleave only.
FIRST_RELEASE = NoisePolicy(power=0.85, max_evals=24, confirm=6, reuse=0.0)


def simulate(
    policy: NoisePolicy | None, seeds: int, iterations: int, p_real: float, effect: float
) -> Tally:
    """One rule over `seeds` missions (None: today's single-reading rule)."""
    t = Tally()
    for seed in range(seeds):
        if policy is None:
            today(seed, iterations, p_real, effect, 1.0, t)
        else:
            noise_aware(policy, seed, iterations, p_real, effect, 1.0, t)
    return t


def run(seeds: int, iterations: int, p_real: float = 0.3, effect: float = 1.0) -> None:
    default = NoisePolicy()
    rules: dict[str, NoisePolicy | None] = {
        "today (single reading)": None,
        "first noise-aware release": FIRST_RELEASE,
        "noise-aware default": default,
    }
    print(
        f"\nKeep decisions under noise: {seeds} seeds x {iterations} iterations, "
        f"{p_real:.0%} of changes +{effect:g}σ, the rest null"
    )
    header = f"{'rule':<28} {'false':>7} {'true':>7} {'evals/it':>8} {'best-tru':>8} {'sd':>6}"
    print(f"{header} {'calib':>6}")
    tallies = {}
    for name, policy in rules.items():
        tallies[name] = simulate(policy, seeds, iterations, p_real, effect)
        print(row(name, tallies[name]))
    new = tallies["noise-aware default"]
    bias = abs(statistics.fmean(new.bias))
    print(
        f"targets: false <= {TARGETS['false']:.0%} ({_ok(new.false_rate <= TARGETS['false'])}), "
        f"true >= {TARGETS['true']:.0%} ({_ok(new.true_rate >= TARGETS['true'])}), "
        f"evals/it <= {TARGETS['evals']:g} ({_ok(new.per_iteration <= TARGETS['evals'])}), "
        f"|best-true| <= {TARGETS['bias']}σ ({_ok(bias <= TARGETS['bias'])})"
    )
    print("the price of power (the default with another `power`):")
    for power in (0.8, 0.85, 0.95):
        priced = replace(default, power=power)
        print(row(f"  power {power:g}", simulate(priced, seeds, iterations, p_real, effect)))
    det = Tally()
    for seed in range(min(seeds, 50)):
        noise_aware(default, seed, iterations, p_real, effect, 0.0, det)
    single = Tally()
    for seed in range(min(seeds, 50)):
        noise_aware(
            NoisePolicy(mode=NoiseMode.SINGLE), seed, iterations, p_real, effect, 1.0, single
        )
    print(
        f"deterministic evaluator (σ = 0), default policy: {det.per_iteration:.2f} evaluations "
        f"per iteration (target 1.00: {_ok(det.per_iteration == 1.0)})"
    )
    print(row("mode: single (= today)", single))


def _ok(flag: bool) -> str:
    return "met" if flag else "MISSED"


if __name__ == "__main__":
    main()
