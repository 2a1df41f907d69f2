"""An in-process model of one bench/bbob.py run (`bbob.py --model`): seconds for a grid the CLI
needs hours for, so that a change to the search can be tried on hundreds of pairs first.

It replays the run with the core's own pure pieces: the offline agent's proposal and its line
of descent (agents/tuning.py), the frontier's archive, lineages and parent rule
(supervisor/archive.py), and the keep policy of a bench mission (a strictly lower f than the
session's parent). The driver, git, the journal and the evaluator's process are left out; on
the 16 runs compared (f1, f3, f21; greedy, frontier, frontier + explore) it gave the CLI's
figures to the digit.
What it does not model (lanes, noise-aware keeps, a tie broken by the run's random id) is
what the CLI run is for: confirm a finding there before reporting it.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

import ioh

from autoresearch.agents.tuning import Birth, Trial, line_of, propose
from autoresearch.contracts.tune import ParamSpec
from autoresearch.states import DecisionKind, Direction
from autoresearch.supervisor.archive import (
    DEFAULT_ARCHIVE_SIZE,
    Elite,
    admit,
    choose_parent,
    lineage_of,
    tries_of,
)

ROOT = "root"
LOW, HIGH = -5.0, 5.0  # BBOB's domain, and the mission's tune bounds


@dataclass(frozen=True)
class ModelSpec:
    """One run: a BBOB problem, the offline agent's seed and the search's settings."""

    function: int
    instance: int
    seed: int
    strategy: str  # greedy | frontier
    plateau: int  # flat iterations before `explore` (above the budget: never)
    dimension: int = 5


@dataclass(frozen=True)
class ModelResult:
    best: dict[int, float]  # iteration -> best f - f_opt so far (0: the baseline)
    off_best: int  # sessions started from a parent that was not the best so far


@dataclass
class ModelRun:
    """The state the driver, the agent and the archive would hold, in memory."""

    spec: ModelSpec
    objective: Callable[[Sequence[float]], float]  # f(x) - f_opt
    params: tuple[ParamSpec, ...]
    values: dict[str, Mapping[str, float]] = field(default_factory=dict)
    scores: dict[str, float] = field(default_factory=dict)
    trials: list[Trial] = field(default_factory=list)
    births: dict[str, Birth] = field(default_factory=dict)
    parents: list[str] = field(default_factory=list)
    archive: tuple[Elite, ...] = ()
    known: dict[str, Elite] = field(default_factory=dict)
    incumbent: str = ROOT
    best: str = ROOT
    flat: int = 0  # iterations since a keep or since the plateau last fired
    exploring: bool = False

    def score(self, values: Mapping[str, float]) -> float:
        """What the mission's evaluator prints (`.10g`), read back as the journal holds it."""
        return float(f"{self.objective([values[p.name] for p in self.params]):.10g}")

    def parent(self) -> str:
        if self.spec.strategy == "greedy":
            return self.incumbent
        tries = tries_of(self.parents)
        return choose_parent(self.archive, tries, (), "model", self.exploring).commit

    def step(self, iteration: int) -> None:
        base = self.parent()
        self.parents.append(base)
        line = line_of(self.trials, self.births, base)
        seed, values = self.spec.seed, self.values[base]
        proposal = propose(self.params, values, self.trials, seed, iteration, line=line)
        if proposal is None:  # a noop: an iteration without a candidate
            return self._flat()
        commit, score = f"c{iteration}", self.score(proposal.values)
        self.values[commit], self.scores[commit] = proposal.values, score
        kept = score < self.scores[base]
        decision = DecisionKind.KEEP if kept else DecisionKind.DISCARD
        self.trials.append(Trial(proposal.values, decision, base, iteration))
        if score < self.scores[self.best]:
            self.best = commit
        if not kept:
            return self._flat()
        self.births[commit] = Birth(commit, base, iteration)
        self.incumbent, self.flat, self.exploring = commit, 0, False
        new = Elite(commit, score, base, lineage_of(self.known.get(base), commit), iteration)
        self.known[commit] = new
        self.archive, _ = admit(self.archive, new, DEFAULT_ARCHIVE_SIZE, Direction.LOWER)

    def _flat(self) -> None:
        self.flat += 1
        if self.flat >= self.spec.plateau:  # `--on-plateau explore`: count afresh from here
            self.flat, self.exploring = 0, True


def model_run(spec: ModelSpec, iterations: int) -> ModelResult:
    """Run `spec` for `iterations` evaluations in memory; the best so far after each."""
    params = tuple(
        ParamSpec(f"X{i}", LOW, HIGH, False, False, "params.py") for i in range(spec.dimension)
    )
    run = ModelRun(spec, objective(spec), params)
    run.values[ROOT] = {p.name: 0.0 for p in params}  # the mission's centre
    run.scores[ROOT] = run.score(run.values[ROOT])
    run.archive = (Elite(ROOT, run.scores[ROOT], None, ROOT, 0),)
    run.known[ROOT] = run.archive[0]
    best, off_best = {0: run.scores[ROOT]}, 0
    for iteration in range(1, iterations + 1):
        before = run.best
        run.step(iteration)
        off_best += run.parents[-1] != before and spec.strategy != "greedy"
        best[iteration] = min(best[iteration - 1], run.scores[run.best])
    return ModelResult(best, off_best)


def objective(spec: ModelSpec) -> Callable[[Sequence[float]], float]:
    """The mission's evaluator as a function: f(x) - f_opt of the spec's BBOB problem."""
    problem = ioh.get_problem(
        spec.function,
        instance=spec.instance,
        dimension=spec.dimension,
        problem_class=ioh.ProblemClass.BBOB,
    )
    if not isinstance(problem, ioh.problem.RealSingleObjective):
        raise TypeError(f"BBOB f{spec.function} is not a real-valued problem")
    real = problem  # a name mypy holds narrowed inside the lambda
    return lambda x: float(real(list(x))) - float(real.optimum.y)


def best_at(result: ModelResult, budgets: tuple[int, ...]) -> dict[int, float]:
    return {n: result.best.get(n, math.inf) for n in budgets}
