"""Benchmark: keep decisions on a machine that drifts and has heavy tails (#34), the pooled rule
of the releases before it beside the blocked default, on the same missions.

Rules: `pooled (before)` (the rule before #34), `blocked, σ/commit` (the blocked test with each
commit's readings pooled over the run for σ, the default before scale.py), `robust σ/commit`
(the same groups, σ robust), `blocked, no change` (σ within blocks, a commit's readings of one
iteration, robust, and at least this iteration's own: scale.py), `blocked (default)` (the same,
and a change of level inside an iteration sets the readings before it aside:
robust.since_level_change; a keep needs this iteration's incumbent readings to agree:
NoisePolicy.today_agrees), `blocked (before)` (the default as of 84fcd16, without that
agreement). `--rules` picks some.

    .venv/bin/python bench/drift.py                  (200 seeds x 60 iterations per model)
    .venv/bin/python bench/drift.py --seeds 20       (quicker)

A ground-truth mission as in bench/trust.py (30 % of changes +1σ, the rest exact nulls), read by
an evaluator whose readings are the commit's true value + the machine's level at that moment
+ noise. Noise models: Gaussian; a step of the level (1-3σ, either way, at a random reading);
a slow ramp (1-3σ over the run, either way); Student t with 3 degrees of freedom (scaled to
sd σ); Gaussian with 5 % outliers at ±5σ; a load on and off (3-15σ slower and 1.5 times as
noisy from a random reading for 10-50 % of the run: bench/timed_workload.py's background load,
switched inside an iteration as often as not); the timed load (bench/timed_workload.py's as
a quiet machine read it: readings 40-110 each 0, 16 or 32σ slower; with `--iterations 10` it
is that bench's run in miniature). The real decision code (noise.next_action) decides.

Printed per model and rule: false keeps (null kept / null proposed), the same in the first
iteration alone (its spread rests on the calibration's and its own few readings), true keeps,
evaluations per
iteration (candidate + incumbent + confirmation readings), the reported improvement minus the
true one (σ; mean and spread over runs), and the share of runs whose reported 95 % interval
covers the true improvement. The pooled rule reports what status showed (the kept commit's
reference mean minus the baseline's, a Welch interval); the blocked default reports a paired
end-of-run comparison of the final commit with the baseline (`END_PAIRS` pairs read
alternately, a t interval on their differences; no keep: exactly 0), its readings counted
apart. Nothing here is a pass/fail test.
"""

from __future__ import annotations

import argparse
import math
import random
import statistics
from collections.abc import Callable
from dataclasses import dataclass, field

import trust  # bench/trust.py: the tally of keeps

from autoresearch.noise import (
    Action,
    NoiseMode,
    NoisePolicy,
    Spread,
    Today,
    confirmations,
    difference_interval,
    next_action,
)
from autoresearch.paired import paired_interval
from autoresearch.scale import block_spread, with_today
from autoresearch.states import Direction

RUN_READINGS = 600  # about a run's readings: a ramp spans them
END_PAIRS = 8
TARGETS = {"false": 0.05, "coverage": 0.90, "true": 0.80, "evals": 10.5}


@dataclass
class Machine:
    """The evaluator: a reading of a commit of true value v at reading number t."""

    rng: random.Random
    level: Callable[[int], float]
    draw: Callable[[random.Random], float]
    t: int = 0

    def read(self, value: float) -> float:
        self.t += 1
        return value + self.level(self.t) + self.draw(self.rng)


def gaussian(rng: random.Random) -> float:
    return rng.gauss(0.0, 1.0)


def student3(rng: random.Random) -> float:
    # t with 3 df has variance 3: scaled to sd 1 so that min_effect means the same
    chi = sum(rng.gauss(0.0, 1.0) ** 2 for _ in range(3))
    return rng.gauss(0.0, 1.0) / math.sqrt(chi / 3) / math.sqrt(3)


def outliers(rng: random.Random) -> float:
    if rng.random() < 0.05:
        return rng.choice((-5.0, 5.0))
    return rng.gauss(0.0, 1.0)


def flat(_: int) -> float:
    return 0.0


def machine(model: str, seed: int) -> Machine:
    shape = random.Random(seed + 2_000_003)
    size = shape.uniform(1.0, 3.0) * shape.choice((-1.0, 1.0))
    noise = random.Random(seed + 1_000_003)
    if model == "step":
        at = shape.randrange(RUN_READINGS)
        return Machine(noise, lambda t: size if t >= at else 0.0, gaussian)
    if model == "load on/off":
        return load_on_off(shape, noise)
    if model == "timed load":
        return timed_load(noise)
    if model == "ramp":
        return Machine(noise, lambda t: size * min(t, RUN_READINGS) / RUN_READINGS, gaussian)
    if model == "student-t 3":
        return Machine(noise, flat, student3)
    if model == "5 % outliers":
        return Machine(noise, flat, outliers)
    return Machine(noise, flat, gaussian)


def load_on_off(shape: random.Random, noise: random.Random) -> Machine:
    """bench/timed_workload.py's load: a background job slows every reading by 3-15σ (and
    makes it 1.5 times as noisy) from a random reading to a later one, then stops; switched
    on or off inside an iteration as often as between two."""
    start = shape.randrange(RUN_READINGS)
    stop = start + round(shape.uniform(0.1, 0.5) * RUN_READINGS)
    slower = shape.uniform(3.0, 15.0)

    def loaded(t: int) -> bool:
        return start <= t < stop

    machine = Machine(noise, lambda t: -slower if loaded(t) else 0.0, gaussian)
    machine.draw = lambda rng: gaussian(rng) * (1.5 if loaded(machine.t) else 1.0)
    return machine


# bench/timed_workload.py's background load, as the quiet machine of #34 read it: from the
# 40th to the 110th reading a time-sliced evaluator reads 1, 1.4 or 1.8 times as long (seed 7
# of the timed bench, readings 52-110: 10, 14 and 18 ms around a quiet 10.5 ± 0.3), i.e. 0,
# 16 or 32 quiet σ slower, in these shares.
TIMED_LOAD = (40, 110)
TIMED_SLOWER = ((0.0, 0.25), (16.0, 0.45), (32.0, 0.30))


def timed_load(noise: random.Random) -> Machine:
    """The timed bench's load: readings TIMED_LOAD[0] to TIMED_LOAD[1] slower by one of
    TIMED_SLOWER's amounts each, drawn afresh per reading; a run of ten iterations spends
    most of itself under it and ends about when it stops (`--iterations 10`)."""
    slower, shares = zip(*TIMED_SLOWER, strict=True)
    timed = Machine(noise, flat, gaussian)

    def draw(rng: random.Random) -> float:
        if not TIMED_LOAD[0] <= timed.t < TIMED_LOAD[1]:
            return gaussian(rng)
        return gaussian(rng) - rng.choices(slower, shares)[0]

    timed.draw = draw
    return timed


MODELS = (
    "gaussian",
    "step",
    "ramp",
    "student-t 3",
    "5 % outliers",
    "load on/off",
    "timed load",
)


@dataclass
class Groups:
    """Each commit's readings with Welford sums: the run's pooled spread, kept current."""

    moments: dict[int, tuple[int, float, float]] = field(default_factory=dict)
    ss: float = 0.0
    df: int = 0

    def add(self, commit: int, x: float) -> None:
        n, mean, m2 = self.moments.get(commit, (0, 0.0, 0.0))
        n += 1
        delta = x - mean
        mean += delta / n
        grown = delta * (x - mean)
        self.moments[commit] = (n, mean, m2 + grown)
        self.ss += grown
        self.df += n > 1

    @property
    def spread(self) -> Spread:
        return Spread(math.sqrt(max(self.ss, 0.0) / self.df) if self.df else 0.0, self.df)


@dataclass
class Blocks(Groups):
    """Readings grouped by (commit, iteration): the spread within blocks, robust (scale.py)."""

    blocks: dict[tuple[int, int], list[float]] = field(default_factory=dict)
    iteration: int = 0

    def add(self, commit: int, x: float) -> None:
        self.blocks.setdefault((commit, self.iteration), []).append(x)

    @property
    def spread(self) -> Spread:
        now = [b for (_, i), b in self.blocks.items() if i == self.iteration]
        return with_today(block_spread(self.blocks.values()), block_spread(now))


@dataclass
class Tally(trust.Tally):
    """bench/trust.py's tally, with what the report said."""

    end_evaluations: int = 0  # readings of the end-of-run paired comparisons
    first_null: int = 0  # null changes proposed in a run's first iteration
    first_false: int = 0  # ... and kept
    errors: list[float] = field(default_factory=list)  # reported − true improvement (σ)
    covered: int = 0  # runs whose reported interval covers the true improvement


def mission(rule: Rule, model: str, seed: int, iterations: int, t: Tally) -> None:
    """One run: calibration, `iterations` proposals decided by next_action, then the report."""
    policy, groups = rule.policy, rule.spread()
    proposals, evaluator = random.Random(seed), machine(model, seed)
    truth, commit = 0.0, 0
    incumbent = [evaluator.read(truth) for _ in range(policy.baseline_readings)]
    baseline = list(incumbent)
    for x in incumbent:
        groups.add(0, x)
    for i in range(1, iterations + 1):
        if isinstance(groups, Blocks):
            groups.iteration = i
        real = proposals.random() < 0.3
        value = truth + (1.0 if real else 0.0)
        candidate: list[float] = []
        today: list[tuple[bool, float]] = []  # this iteration's readings in order (True: candidate)
        fresh, calm = 0, groups.spread
        while True:
            order = Today(tuple(today), calm) if rule.in_iteration else None
            verdict = next_action(
                policy, Direction.HIGHER, groups.spread, incumbent, candidate, fresh, order
            )
            if verdict.action is Action.MEASURE_CANDIDATE:
                candidate.append(evaluator.read(value))
                groups.add(i, candidate[-1])
                today.append((True, candidate[-1]))
            elif verdict.action is Action.MEASURE_INCUMBENT:
                incumbent.append(evaluator.read(truth))
                groups.add(commit, incumbent[-1])
                today.append((False, incumbent[-1]))
                fresh += 1
                if commit == 0:
                    baseline.append(incumbent[-1])
            else:
                break
        t.evaluations += len(candidate) + fresh
        kept = verdict.action is Action.KEEP
        if kept:
            truth, commit = value, i
            confirmed = [evaluator.read(value) for _ in range(confirmations(policy, groups.spread))]
            for x in confirmed:
                groups.add(i, x)
            t.evaluations += len(confirmed)
            incumbent = confirmed or candidate
        t.add(real, kept)
        t.iterations += 1
        if i == 1 and not real:
            t.first_null, t.first_false = t.first_null + 1, t.first_false + kept
    report(policy, evaluator, baseline, incumbent, (truth, commit), t)


def report(
    policy: NoisePolicy,
    evaluator: Machine,
    baseline: list[float],
    final: list[float],
    kept: tuple[float, int],
    t: Tally,
) -> None:
    """The reported improvement and whether its interval covers the truth."""
    truth, commit = kept
    if commit == 0:
        low = high = estimate = 0.0  # nothing kept: the final state is the baseline
    elif policy.blocked:
        pairs = []
        for k in range(END_PAIRS):
            first, second = (truth, 0.0) if k % 2 == 0 else (0.0, truth)
            a, b = evaluator.read(first), evaluator.read(second)
            pairs.append(a - b if k % 2 == 0 else b - a)
        t.end_evaluations += 2 * END_PAIRS
        interval = paired_interval(pairs)
        estimate, low, high = interval.mean, interval.low, interval.high
    else:
        interval = difference_interval(final, baseline)
        estimate, low, high = interval.mean, interval.low, interval.high
    t.errors.append(estimate - truth)
    t.covered += low <= truth <= high


@dataclass(frozen=True)
class Rule:
    """A decision rule and how it estimates the evaluator's spread."""

    policy: NoisePolicy
    spread: Callable[[], Groups]
    in_iteration: bool = True  # the iteration's readings in order: a level change inside it


@dataclass
class RobustCommits(Blocks):
    """Each commit's readings over the run as one group, robust (scale.py)."""

    def add(self, commit: int, x: float) -> None:
        self.blocks.setdefault((commit, 0), []).append(x)


RULES = {
    "pooled (before)": Rule(NoisePolicy(blocked=False), Groups),
    "blocked, σ/commit": Rule(NoisePolicy(), Groups),
    "robust σ/commit": Rule(NoisePolicy(), RobustCommits),
    "blocked, no change": Rule(NoisePolicy(), Blocks, in_iteration=False),
    "blocked (before)": Rule(NoisePolicy(today_agrees=False), Blocks),
    "blocked (default)": Rule(NoisePolicy(), Blocks),
}
POLICIES = {name: rule.policy for name, rule in RULES.items()}


def simulate(rule: Rule, model: str, seeds: range, iterations: int) -> Tally:
    t = Tally()
    for seed in seeds:
        mission(rule, model, seed, iterations, t)
    return t


def line(model: str, name: str, t: Tally) -> str:
    false, true, per_it = t.false_rate, t.true_rate, t.per_iteration
    end = t.end_evaluations / max(1, len(t.errors))
    bias, spread = statistics.fmean(t.errors), statistics.pstdev(t.errors)
    cover, first = t.covered / max(1, len(t.errors)), t.first_false / max(1, t.first_null)
    return (
        f"{model:<14} {name:<18} {false:>6.1%} {first:>6.1%} {true:>6.1%} {per_it:>8.2f} "
        f"{end:>6.1f} "
        f"{bias:>+8.2f} {spread:>6.2f} {cover:>7.1%}"
    )


def run(
    seeds: int,
    iterations: int,
    models: tuple[str, ...] = MODELS,
    first: int = 0,
    rules: tuple[str, ...] = tuple(RULES),
) -> None:
    print(
        f"\nKeep decisions on a drifting, heavy-tailed machine: {seeds} seeds ({first}-"
        f"{first + seeds - 1}) x {iterations} iterations per model, 30 % of changes +1σ"
    )
    print(
        f"{'model':<14} {'rule':<18} {'false':>6} {'1st it':>6} {'true':>6} {'evals/it':>8} "
        f"{'end':>6} "
        f"{'rep-true':>8} {'sd':>6} {'covers':>7}"
    )
    for model in models:
        for name in rules:
            rule, missions = RULES[name], range(first, first + seeds)
            print(line(model, name, simulate(rule, model, missions, iterations)), flush=True)
    print(
        "  end: readings of the end-of-run paired comparison per run (the blocked rule's "
        "report); rep-true: reported − true improvement (σ), mean and sd over runs"
    )
    deterministic(min(seeds, 50), iterations)


def deterministic(seeds: int, iterations: int) -> None:
    """σ = 0: one reading per iteration, the same decisions as the single-reading rule."""
    rows = {}
    for name, policy in {"single": NoisePolicy(mode=NoiseMode.SINGLE), **POLICIES}.items():
        t = Tally()
        for seed in range(seeds):
            exact = Machine(random.Random(seed), flat, lambda _: 0.0)
            deterministic_mission(policy, exact, seed, iterations, t)
        rows[name] = t
    same = rows["blocked (default)"].decisions == rows["single"].decisions
    t = rows["blocked (default)"]
    print(
        f"deterministic evaluator: {t.evaluations / t.iterations:.2f} evaluations per iteration, "
        f"decisions identical to the single-reading rule: {'yes' if same else 'NO'} "
        f"({len(t.decisions)})"
    )


def deterministic_mission(
    policy: NoisePolicy, evaluator: Machine, seed: int, iterations: int, t: Tally
) -> None:
    proposals = random.Random(seed)
    truth = 0.0
    incumbent = [evaluator.read(truth) for _ in range(policy.baseline_readings)]
    for _ in range(iterations):
        real = proposals.random() < 0.3
        value = truth + (proposals.choice((1.0, -1.0)) if real else 0.0)
        candidate = [evaluator.read(value)]
        verdict = next_action(policy, Direction.HIGHER, Spread(0.0, 2), incumbent, candidate, 0)
        t.evaluations += 1
        kept = verdict.action is Action.KEEP
        if kept:
            truth, incumbent = value, candidate
        t.add(real, kept)
        t.iterations += 1


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=200)
    parser.add_argument("--first-seed", type=int, default=0, help="seeds first .. first+seeds-1")
    parser.add_argument("--iterations", type=int, default=60)
    parser.add_argument("--models", nargs="*", default=list(MODELS), choices=MODELS)
    parser.add_argument("--rules", nargs="*", default=list(RULES), choices=RULES)
    args = parser.parse_args()
    run(args.seeds, args.iterations, tuple(args.models), args.first_seed, tuple(args.rules))


if __name__ == "__main__":
    main()
