"""Benchmark: search strategies on a yardstick no one here wrote, the BBOB functions of `ioh`.

    .venv/bin/python bench/bbob.py [--functions 1 2 ...] [--instances 1 2 3] [--seeds 10]
        [--iterations 100] [--dimension 5] [--lanes 4] [--workers 2] [--variants NAME ...]
        [--runs] [--json] [--model]

Each (function, instance, seed, variant) is a mission in its own temporary git repo: params.py
holds the coordinates (`X0 = 0.0` …), a `tune:` block in sandbox.md lets the built-in offline
agent propose, and the evaluator (`python eval.py`, a separate process calling ioh) prints
`METRIC f=<f(x) - f_opt>`, lower is better. Every variant runs through the real CLI with the
same `--max-iterations` (equal evaluation budgets: a duplicate candidate is not evaluated) and
the same `--seed`; best-at-N is read from `status RUN --json`. For N in (25, 50, 100 scaled to
--iterations) it prints, per function class, the median and interquartile range of the ratio
best-at-N(variant) / best-at-N(greedy) over functions × instances × seeds (below 1: better
than greedy) and in how many pairs the variant's best-at-100 beat greedy's (wins), then the
load average, and whether the issue's targets were met on this grid.
The defaults are the issue's grid (10 functions, 3 instances, 10 seeds, 100 evaluations) and
take hours on a small machine; pass a smaller grid to try it, or `--model` to replay the runs
in memory (bench/bbob_model.py: the same figures, without lanes, in seconds). Nothing here is a
pass/fail test.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

# the runs' environment: a fixed git identity, and no progress plot per run (~1.1 s each,
# and the bench reads `status --json`, never the plot)
RUN_ENV = {
    "AUTORESEARCH_REPORT_PLOT": "0",
    "GIT_AUTHOR_NAME": "bench",
    "GIT_AUTHOR_EMAIL": "bench@example.com",
    "GIT_COMMITTER_NAME": "bench",
    "GIT_COMMITTER_EMAIL": "bench@example.com",
}
# BBOB's classes (Hansen et al., "Real-parameter black-box optimization benchmarking 2009"):
# f3, f4 (Rastrigin, Büche-Rastrigin) and f15-f24 have many local optima, the rest do not
MULTIMODAL = frozenset({3, 4, *range(15, 25)})
DEFAULT_FUNCTIONS = (1, 2, 6, 8, 10, 3, 15, 17, 21, 22)  # five of each class
# A precision BBOB counts as solved; it keeps a ratio finite when greedy reaches the optimum.
FLOOR = 1e-8
NOT_AVAILABLE = "not available"
MSG_MODEL_LANES = "the in-process model has no lanes (run without --model)"

EVALUATOR = """\
import ioh
import params

problem = ioh.get_problem({function}, instance={instance}, dimension={dimension},
                          problem_class=ioh.ProblemClass.BBOB)
x = [getattr(params, f"X{{i}}") for i in range({dimension})]
print(f"METRIC f={{problem(x) - problem.optimum.y:.10g}}")
"""
SANDBOX = """\
---
evaluator:
  command: {python} eval.py
  format: metric
  metric: f
  direction: lower
  timeout_seconds: 60
evaluation:
  slots: 2   # the evaluator times nothing: lanes may evaluate at once
tune:
  file: params.py
  parameters:
{parameters}
---
Only edit the coordinates in params.py.
"""


@dataclass(frozen=True)
class Variant:
    """One way of running the search: a strategy, its plateau handling, its lanes."""

    name: str
    strategy: str
    explore: bool = False
    lanes: int = 0

    def plateau(self, iterations: int) -> int:
        # the plateau default (20, explore) would apply to every variant: only the explore
        # variant gets a plateau, short enough to fire within the budget
        return max(iterations // 10, 2) if self.explore else iterations + 1

    def flags(self, iterations: int) -> tuple[str, ...]:
        on = ("--on-plateau", "explore") if self.explore else ()
        lanes = ("--lanes", str(self.lanes)) if self.lanes else ()
        plateau = str(self.plateau(iterations))
        return ("--strategy", self.strategy, "--plateau", plateau, *on, *lanes)


@dataclass(frozen=True)
class Job:
    function: int
    instance: int
    seed: int
    variant: Variant


@dataclass(frozen=True)
class Outcome:
    job: Job
    best_at: dict[int, float]  # N -> best f - f_opt within the first N evaluations
    refused: str | None = None
    off_best: int = 0  # sessions started from a parent that was not the best so far


def variants(lanes: int) -> tuple[Variant, ...]:
    single = (Variant("greedy", "greedy"), Variant("frontier", "frontier"))
    explore = (Variant("frontier+explore", "frontier", explore=True),)
    if not lanes:
        return single + explore
    laned = (
        Variant(f"greedy {lanes} lanes", "greedy", lanes=lanes),
        Variant(f"frontier {lanes} lanes", "frontier", lanes=lanes),
    )
    return single + explore + laned


def _call(root: Path, *argv: str, check: bool = False) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, **RUN_ENV}
    return subprocess.run(argv, cwd=root, env=env, capture_output=True, text=True, check=check)


def build_mission(root: Path, function: int, instance: int, dimension: int) -> Path:
    """A fresh git repo holding one BBOB problem as a mission; every coordinate starts at 0
    (the centre of BBOB's domain [-5, 5])."""
    root.mkdir(parents=True)
    names = [f"X{i}" for i in range(dimension)]
    (root / "params.py").write_text("".join(f"{n} = 0.0\n" for n in names))
    (root / "eval.py").write_text(
        EVALUATOR.format(function=function, instance=instance, dimension=dimension)
    )
    parameters = "\n".join(f"    {n}: {{min: -5.0, max: 5.0}}" for n in names)
    sandbox = SANDBOX.format(python=shlex.quote(sys.executable), parameters=parameters)
    (root / "sandbox.md").write_text(sandbox)
    (root / "mission.md").write_text(f"Minimise BBOB f{function} (instance {instance}).\n")
    for args in (("init", "-q", "-b", "main"), ("add", "-A"), ("commit", "-qm", "mission")):
        _call(root, "git", *args, check=True)
    return root


def _autoresearch(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return _call(root, sys.executable, "-m", "autoresearch", *args)


def best_at(iterations: list[dict[str, Any]], budgets: tuple[int, ...]) -> dict[int, float]:
    """The best score among the baseline (iteration 0) and the first N iterations, for each N;
    an iteration without a score (a failed evaluation, a duplicate, a noop) adds nothing."""
    scored = [
        (it["iteration"], float(it["evaluator"]["score"]))
        for it in iterations  # status --json: a JSON edge
        if isinstance(it.get("evaluator"), dict) and it["evaluator"].get("score") is not None
    ]
    return {n: min(s for i, s in scored if i <= n) for n in budgets}


def off_best(iterations: list[dict[str, Any]]) -> int:
    """How many sessions started from a parent (a frontier run's `parent`) that was not the
    best commit kept so far: the sessions a frontier spent on other hills (greedy: 0)."""
    ordered = sorted(iterations, key=lambda it: it["iteration"])  # status --json: a JSON edge
    best, best_score, count = None, math.inf, 0
    for it in ordered:
        score = (it.get("evaluator") or {}).get("score")
        if best is not None and it.get("parent", best) != best:
            count += 1
        if it["decision"] in ("baseline", "keep") and score is not None and score < best_score:
            best, best_score = it["candidate_commit"], float(score)
    return count


def run_one(scratch: Path, job: Job, iterations: int, dimension: int) -> Outcome:
    v = job.variant
    name = f"f{job.function}-i{job.instance}-s{job.seed}-{v.name.replace(' ', '_')}"
    root = build_mission(scratch / name.replace("+", "_"), job.function, job.instance, dimension)
    done = _autoresearch(
        root, "run", ".", "--agent", "offline", "--seed", str(job.seed), "--no-certify",
        "--max-iterations", str(iterations), "--max-noops", "0", "--json", *v.flags(iterations),
    )  # fmt: skip
    if done.returncode != 0:
        return Outcome(job, {}, refused=done.stderr.strip().splitlines()[-1])
    run_id = json.loads(done.stdout)["run_id"]
    status = json.loads(_autoresearch(root, "status", run_id, "--json").stdout)
    found = status["iterations"]
    return Outcome(job, best_at(found, budgets_for(iterations)), off_best=off_best(found))


def budgets_for(iterations: int) -> tuple[int, ...]:
    """N = 25, 50, 100 evaluations, scaled when the budget is not 100."""
    return tuple(sorted({max(1, iterations * k // 4) for k in (1, 2, 4)}))


def quartiles(values: list[float]) -> tuple[float, float, float]:
    if len(values) == 1:
        return values[0], values[0], values[0]
    q1, q2, q3 = statistics.quantiles(values, n=4, method="inclusive")
    return q1, q2, q3


def ratios(outcomes: list[Outcome], variant: str, n: int, multimodal: bool) -> list[float]:
    """best-at-n of `variant` over greedy's, paired by function, instance and seed."""
    greedy = {
        (o.job.function, o.job.instance, o.job.seed): o.best_at[n]
        for o in outcomes
        if o.job.variant.name == "greedy" and not o.refused
    }
    return [
        (o.best_at[n] + FLOOR) / (greedy[key] + FLOOR)
        for o in outcomes
        if o.job.variant.name == variant and not o.refused
        and (o.job.function in MULTIMODAL) == multimodal
        and (key := (o.job.function, o.job.instance, o.job.seed)) in greedy
    ]  # fmt: skip


@dataclass(frozen=True)
class Row:
    """One variant on one function class: quartiles of its ratio to greedy at each N."""

    variant: str
    multimodal: bool
    pairs: int
    at: dict[int, tuple[float, float, float]]  # N -> (q1, median, q3)
    refused: str | None = None
    wins: int = 0  # pairs whose best-at-last is below greedy's

    @property
    def kind(self) -> str:
        return "multimodal" if self.multimodal else "unimodal"

    def to_json(self) -> dict[str, object]:
        at = {f"best@{n}": list(q) for n, q in self.at.items()}
        return {"variant": self.variant, "class": self.kind, "pairs": self.pairs,
                "wins": self.wins, **at, "refused": self.refused}  # fmt: skip


def summary(outcomes: list[Outcome], names: list[str], budgets: tuple[int, ...]) -> list[Row]:
    rows = []
    for name in names:
        mine = [o for o in outcomes if o.job.variant.name == name]
        refusal = next((o.refused for o in mine if o.refused), None)
        for multimodal in (False, True):
            at = {n: ratios(outcomes, name, n, multimodal) for n in budgets}
            last = at[budgets[-1]]
            quarts = {n: quartiles(v) for n, v in at.items() if v}
            wins = sum(1 for r in last if r < 1.0)
            rows.append(Row(name, multimodal, len(last), quarts, refusal, wins))
    return rows


def verdict(rows: list[Row], last: int) -> list[str]:
    """The issue's targets, judged on this grid: frontier's median best-at-last below greedy's
    on the multimodal functions, and its interquartile range holding 1 on the unimodal ones."""
    lines = []
    for row in rows:
        if row.variant != "frontier" or last not in row.at:
            continue
        q1, median, q3 = row.at[last]
        if row.multimodal:
            met, goal = median < 1.0, "median ratio < 1 (better than greedy)"
        else:
            met = q1 <= 1.0 <= q3 or abs(median - 1.0) <= 0.1
            goal = "within noise of greedy (IQR holds 1, or median within 10 %)"
        lines.append(f"{row.kind}: {goal}: {'MET' if met else 'NOT MET'} (median {median:.3g})")
    return lines


def print_table(rows: list[Row], budgets: tuple[int, ...]) -> None:
    head = "".join(f"{f'best@{n} median [IQR]':>28}" for n in budgets)
    print(f"{'variant':<20}{'class':<12}{'pairs':>6}{'wins':>6}{head}")
    for row in rows:
        lead = f"{row.variant:<20}{row.kind:<12}"
        if row.refused and not row.pairs:
            print(f"{lead}{'':>6}  {NOT_AVAILABLE}: {row.refused}")
            continue
        cells = "".join(_cell(row.at.get(n)) for n in budgets)
        print(f"{lead}{row.pairs:>6}{row.wins:>6}{cells}")


def _cell(q: tuple[float, float, float] | None) -> str:
    text = "-" if q is None else f"{q[1]:.3g} [{q[0]:.3g}, {q[2]:.3g}]"
    return f"{text:>28}"


def print_runs(outcomes: list[Outcome], budgets: tuple[int, ...]) -> None:
    """One line per run: its best-at-N and the sessions it started off the best parent."""
    for o in outcomes:
        j = o.job
        best = " ".join(f"best@{n} {o.best_at[n]:.4g}" for n in budgets if n in o.best_at)
        print(f"run f{j.function} i{j.instance} s{j.seed} {j.variant.name:<18} "
              f"{o.refused or best} off-best {o.off_best}")  # fmt: skip


def chosen_variants(args: argparse.Namespace) -> list[Variant]:
    """The variants to run: those named (greedy always: the ratios are to it), else all."""
    named = {"greedy", *args.variants} if args.variants else None
    return [v for v in variants(args.lanes) if named is None or v.name in named]


def grid(args: argparse.Namespace) -> list[Job]:
    chosen = chosen_variants(args)
    return [
        Job(f, i, s, v)
        for f in args.functions for i in args.instances for s in range(args.seeds)
        for v in chosen
    ]  # fmt: skip


def model_one(job: Job, iterations: int, dimension: int) -> Outcome:
    """`run_one` in memory (bench/bbob_model.py): the same figures, in milliseconds."""
    import bbob_model  # beside this script; only --model needs it

    v = job.variant
    if v.lanes:
        return Outcome(job, {}, refused=MSG_MODEL_LANES)
    spec = bbob_model.ModelSpec(
        job.function, job.instance, job.seed, v.strategy, v.plateau(iterations), dimension
    )
    found = bbob_model.model_run(spec, iterations)
    budgets = budgets_for(iterations)
    return Outcome(job, bbob_model.best_at(found, budgets), off_best=found.off_best)


def run_grid(args: argparse.Namespace) -> list[Outcome]:
    jobs = grid(args)
    if args.model:
        return [model_one(j, args.iterations, args.dim) for j in jobs]
    with (
        tempfile.TemporaryDirectory(prefix="bbob-bench-") as scratch,
        ThreadPoolExecutor(max_workers=args.workers) as pool,  # each job is one subprocess
    ):
        work = [pool.submit(run_one, Path(scratch), j, args.iterations, args.dim) for j in jobs]
        return [w.result() for w in work]


def parse(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--functions", type=int, nargs="+", default=list(DEFAULT_FUNCTIONS))
    parser.add_argument("--instances", type=int, nargs="+", default=[1, 2, 3])
    parser.add_argument("--seeds", type=int, default=10, help="seeds 0..N-1")
    parser.add_argument("--iterations", type=int, default=100, help="evaluations per run")
    parser.add_argument("--dimension", dest="dim", type=int, default=5)
    parser.add_argument("--lanes", type=int, default=4, help="0: no lane variants")
    parser.add_argument("--workers", type=int, default=2, help="runs at once")
    parser.add_argument("--variants", nargs="+", help="only these (greedy always runs)")
    parser.add_argument("--runs", action="store_true", help="also print each run's line")
    parser.add_argument("--json", action="store_true", help="print the rows as JSON")
    parser.add_argument(
        "--model",
        action="store_true",
        help="replay each run in memory (bench/bbob_model.py), not through the CLI: the same "
        "figures without lanes, in seconds; confirm a finding without it",
    )
    return parser.parse_args(argv)


def main() -> None:
    args = parse()
    try:
        import ioh  # noqa: F401  (the evaluator imports it; fail here in one line, not per run)
    except ImportError:
        raise SystemExit("bench/bbob.py needs ioh: pip install ioh (or the dev extra)") from None
    started, load = time.monotonic(), os.getloadavg()
    outcomes = run_grid(args)
    budgets = budgets_for(args.iterations)
    rows = summary(outcomes, [v.name for v in chosen_variants(args)], budgets)
    if args.json:
        print(
            json.dumps(
                {
                    "rows": [r.to_json() for r in rows],
                    "load_before": load,
                    "load_after": os.getloadavg(),
                }
            )
        )
        return
    print(
        f"BBOB f{','.join(map(str, args.functions))}, instances {args.instances}, "
        f"{args.seeds} seeds, dimension {args.dim}, {args.iterations} evaluations per run; "
        "ratio = best-at-N / greedy's best-at-N on f - f_opt (below 1: better than greedy)"
    )
    if args.runs:
        print_runs(outcomes, budgets)
    print_table(rows, budgets)
    print(
        f"load average before {load[0]:.2f}, after {os.getloadavg()[0]:.2f}; "
        f"{len(outcomes)} runs in {time.monotonic() - started:.0f} s"
    )
    for line in verdict(rows, budgets[-1]):
        print("target", line)


if __name__ == "__main__":
    main()
