"""Keep policies: whether a candidate is kept, decided by objects that do no I/O.

A policy is asked, again and again, what it makes of what has been measured so far
(`Observations`): it answers a `Request` (a reading of the candidate, one of the incumbent, the
candidate's checks, confirmation readings) or a `Final` decision. The step carries out each
request and journals the readings with the decision (supervisor/measure.judge), so a policy is
a pure function of its observations and is tested with tables.

Checks are asked for before confirmations: a candidate that fails them spends no confirmation
reading. Policies are found by name through the `autoresearch.policies` entry points
(plugins.py); the built-ins register the same way in pyproject.toml. `score_improvement` is
noise-aware: it runs the sequential test (`Sequential`, trust.md) when the run's noise asks
for it, else the single-reading rule of supervisor.md §3.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from functools import cache
from typing import Protocol, runtime_checkable

from autoresearch.decide import (
    Decision,
    EvalSummary,
    checks_failed,
    decide,
    kept_score_after,
    sequential_decision,
)
from autoresearch.errors import ContractError
from autoresearch.noise import (
    Action,
    NoisePolicy,
    Spread,
    Today,
    Verdict,
    confirmations,
    mean_interval,
    next_action,
)
from autoresearch.states import ArtifactStatus, Direction, EvalStatus, KeepPolicy

NO_SPREAD = Spread(0.0, 0)  # no two readings of one commit yet
DEFAULT_NOISE = NoisePolicy()


class Need(StrEnum):
    """What a policy asks the step for (a reading's need is also its journal role)."""

    CANDIDATE = "candidate"  # a reading of the candidate commit, in the run's worktree
    INCUMBENT = "incumbent"  # a reading of the kept commit, in its scratch checkout
    CHECKS = "checks"  # sandbox.md's checks on the candidate (passed when it has none)
    CONFIRM = "confirm"  # fresh readings of a candidate about to be kept


@dataclass(frozen=True)
class Request:
    """'I need `count` of `need`' (only confirmations come several at once)."""

    need: Need
    count: int = 1


@dataclass(frozen=True)
class Final:
    """The decision, and the run's last_kept_score afterwards when `rescore` (else unchanged)."""

    decision: Decision
    rescore: bool = False
    kept_score: float | None = None


@dataclass(frozen=True)
class Reading:
    """One reading taken for this candidate, with the run's pooled spread as of it."""

    need: Need  # CANDIDATE, INCUMBENT or CONFIRM
    result: EvalSummary
    spread: Spread = NO_SPREAD

    @property
    def usable(self) -> bool:
        return self.result.status == EvalStatus.PASS and self.result.score is not None

    @property
    def score(self) -> float:
        return float(self.result.score or 0.0)


@dataclass(frozen=True)
class Checks:
    """How the candidate's checks ended: `failure` None when they passed (or there are none)."""

    failure: str | None
    log: str = ""


@dataclass(frozen=True)
class Situation:
    """What the run knew before this candidate was measured."""

    direction: Direction
    last_kept_score: float | None
    noise: NoisePolicy = DEFAULT_NOISE
    spread: Spread = NO_SPREAD  # the run's pooled spread before this candidate
    incumbent: tuple[float, ...] = ()  # the kept commit's reference readings
    candidate: tuple[float, ...] = ()  # earlier readings of the candidate's commit


@dataclass(frozen=True)
class Observations:
    """Everything measured for one candidate so far, in the order it was measured."""

    situation: Situation
    readings: tuple[Reading, ...] = ()
    checks: Checks | None = None  # None: not run yet

    def taken(self, need: Need) -> list[Reading]:
        return [r for r in self.readings if r.need is need]


@runtime_checkable
class Policy(Protocol):
    """A keep policy: what it needs next, or its decision. It must do no I/O and keep no
    state: one object answers for every candidate of a process, and everything it may
    decide on is in the observations it is shown."""

    def next(self, seen: Observations) -> Request | Final: ...


def checks_first(seen: Observations, incumbent_score: float | None) -> Request | Final | None:
    """What a keep waits for: its checks (None once they passed). A candidate whose checks
    fail is discarded and the run keeps the incumbent's score."""
    if seen.checks is None:
        return Request(Need.CHECKS)
    if seen.checks.failure is not None:
        decision = checks_failed(seen.checks.failure, seen.checks.log)
        return Final(decision, rescore=True, kept_score=incumbent_score)
    return None


@dataclass(frozen=True)
class _SingleReading:
    """One reading of the candidate decides by supervisor.md §3's table."""

    kind: KeepPolicy

    def next(self, seen: Observations) -> Request | Final:
        first = seen.taken(Need.CANDIDATE)
        if not first:
            return Request(Need.CANDIDATE)
        known, result = seen.situation, first[0].result
        decision = decide(
            self.kind, known.direction, known.last_kept_score, ArtifactStatus.CANDIDATE, result
        )
        if not decision.keep:
            return Final(decision)
        score = kept_score_after(decision, result, known.last_kept_score)
        return checks_first(seen, known.last_kept_score) or Final(decision, True, score)


@dataclass(frozen=True)
class PassOnly(_SingleReading):
    """`pass_only`: whatever the evaluator passes is kept (once its checks pass)."""

    kind: KeepPolicy = KeepPolicy.PASS_ONLY


@dataclass(frozen=True)
class SingleReading(_SingleReading):
    """score_improvement on one reading: a strictly better score than the kept one."""

    kind: KeepPolicy = KeepPolicy.SCORE_IMPROVEMENT


@dataclass(frozen=True)
class Sequential:
    """The sequential test against the incumbent (trust.md, noise.next_action): readings of
    both until it decides; a keep is checked, then confirmed with fresh readings that become
    the kept commit's reference. A later reading that fails ends the test."""

    def next(self, seen: Observations) -> Request | Final:
        tested = [r for r in seen.readings if r.need is not Need.CONFIRM]
        if not tested:
            return Request(Need.CANDIDATE)
        incumbent = [*seen.situation.incumbent, *_scores(tested, Need.INCUMBENT)]
        if not tested[-1].usable:
            return _failed(tested, incumbent)
        candidate = [*seen.situation.candidate, *_scores(tested, Need.CANDIDATE)]
        known, spread = seen.situation, tested[-1].spread
        fresh = len(seen.taken(Need.INCUMBENT))
        order = tuple((r.need is Need.CANDIDATE, r.score) for r in tested if r.usable)
        today = Today(order, known.spread)
        verdict = next_action(
            known.noise, known.direction, spread, incumbent, candidate, fresh, today
        )
        if not verdict.final:
            on_incumbent = verdict.action is Action.MEASURE_INCUMBENT
            return Request(Need.INCUMBENT if on_incumbent else Need.CANDIDATE)
        if verdict.action is not Action.KEEP:
            return _reported(seen, verdict, tested, incumbent)
        waiting = checks_first(seen, statistics.fmean(incumbent))
        return waiting or _confirmed(seen, verdict, tested, candidate)

    @staticmethod
    def applies(seen: Observations) -> bool:
        """Whether this candidate goes through the test (else the single-reading rule): its
        first reading is usable and the incumbent has readings to compare with."""
        known, first = seen.situation, seen.taken(Need.CANDIDATE)
        if known.last_kept_score is None or not known.incumbent:
            return False
        if not first or not first[0].usable:
            return False
        return known.noise.sequential(known.spread.sd)


def _failed(tested: list[Reading], incumbent: list[float]) -> Final:
    """A later reading failed: the candidate goes as if its first had, and a failed reading of
    the incumbent leaves nothing to compare with; the incumbent stays at its mean."""
    failed = tested[-1]
    on_incumbent = failed.need is Need.INCUMBENT
    decision = sequential_decision(Action.DISCARD, _notes(tested), failed.result, on_incumbent)
    return Final(decision, True, statistics.fmean(incumbent))


def _confirmed(
    seen: Observations, verdict: Verdict, tested: list[Reading], candidate: list[float]
) -> Request | Final:
    """A checked keep's confirmation readings, then the keep."""
    count = confirmations(seen.situation.noise, tested[-1].spread)
    asked = seen.taken(Need.CONFIRM)
    if len(asked) < count:
        return Request(Need.CONFIRM, count - len(asked))
    # no usable confirmation: the deciding readings are all there is to report
    return _reported(seen, verdict, tested, _scores(asked, Need.CONFIRM) or candidate)


def _reported(
    seen: Observations, verdict: Verdict, tested: list[Reading], standing: list[float]
) -> Final:
    """The test's decision, noting where the commit kept afterwards stands."""
    interval = mean_interval(standing, seen.readings[-1].spread)
    notes = (*_notes(tested, verdict), f"kept commit now at {interval.text()}")
    return Final(sequential_decision(verdict.action, notes), True, interval.mean)


def _scores(readings: Sequence[Reading], need: Need) -> list[float]:
    return [r.score for r in readings if r.need is need and r.usable]


def _notes(tested: Sequence[Reading], verdict: Verdict | None = None) -> tuple[str, ...]:
    counts = {need: sum(1 for r in tested if r.need is need) for need in Need}
    line = (
        f"readings: {counts[Need.CANDIDATE]} candidate, {counts[Need.INCUMBENT]} incumbent "
        "(this iteration)"
    )
    if verdict is None or verdict.difference is None:
        return (line,)
    spread = tested[-1].spread
    stats = f"difference {verdict.difference:+.4g} (better is +), spread {spread.sd:.3g}"
    if verdict.llr is not None:
        stats += f", log likelihood ratio {verdict.llr:.2f}"
    return (line, stats)


@dataclass(frozen=True)
class ScoreImprovement:
    """`score_improvement`, noise-aware: the sequential test when the run's noise asks for it
    and the incumbent has readings, else one reading against the kept score."""

    sequential: Sequential = field(default_factory=Sequential)
    single: SingleReading = field(default_factory=SingleReading)

    def next(self, seen: Observations) -> Request | Final:
        if Sequential.applies(seen):
            return self.sequential.next(seen)
        return self.single.next(seen)


# The built-ins by name. Their entry points in pyproject.toml name these same objects and are
# what lists them beside the plugins'; a step resolves a built-in here, since reading the
# installed metadata costs 35-70 ms a process (measured with ray installed) and no plugin may
# replace a built-in anyway (plugins.discover).
BUILT_INS: dict[str, type[Policy]] = {
    KeepPolicy.SCORE_IMPROVEMENT: ScoreImprovement,
    KeepPolicy.PASS_ONLY: PassOnly,
}


@cache
def policy(name: str) -> Policy:
    """The keep policy registered as `name` (an entry point of `autoresearch.policies`); a
    class is instantiated without arguments. Loaded once per process: a step asks every time."""
    if name in BUILT_INS:
        return BUILT_INS[name]()
    from autoresearch import plugins  # here: importlib.metadata is for plugins' names only

    found = plugins.discover(plugins.POLICIES).get(name)
    if found is None:
        raise ContractError(
            f"keep policy {name!r} is not installed (no entry point of that name "
            f"in {plugins.POLICIES})"
        )
    loaded = plugins.load(found)
    made = loaded() if isinstance(loaded, type) else loaded
    if not isinstance(made, Policy):
        raise ContractError(
            f"plugin {name!r} ({found.origin}) is no keep policy: it has no next(observations)"
        )
    return made
