"""Pure pieces of the offline agent: a seeded proposal rule (the `NAME = <number>` assignments
it edits are read and written by contracts/tune.py).

The proposal is a (1+1) evolution strategy in the unit cube (log-scaled where declared): perturb
one or two parameters of the incumbent with a Gaussian step whose size follows the 1/5 success
rule, replayed from the history – so a proposal is a pure function of (seed, iteration,
incumbent, history) and a resumed run proposes exactly what an uninterrupted one would.

The step is replayed over the session's line of descent (`line_of`), not over the whole run:
a (1+1)-ES's state belongs to its incumbent, and a frontier session that starts from an older
elite should search around it with the step that elite's line had learnt, not one shrunk by
the failures of another hill. On a greedy run every trial lies on the one line, so the step is
what the whole history replays.
"""

from __future__ import annotations

import math
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from autoresearch.contracts.tune import ParamSpec, format_value
from autoresearch.states import REJECTS_CANDIDATE, DecisionKind

INITIAL_STEP = 0.2
MIN_STEP, MAX_STEP = 0.02, 0.5
GROW, SHRINK = 1.5, 1.5**-0.25
EXPLORE_PROBABILITY = 0.15
MAX_DRAWS = 30


@dataclass(frozen=True)
class Trial:
    """A past proposal and what the supervisor decided about it: the commit its session
    started from (None: unknown, counted on every line) and its iteration."""

    values: Mapping[str, float]
    decision: DecisionKind
    base: str | None = None
    iteration: int = 0


@dataclass(frozen=True)
class Birth:
    """A kept commit, the commit it was built on and the iteration that kept it: one parent
    edge of the run's tree of kept commits."""

    commit: str
    base: str
    iteration: int


@dataclass(frozen=True)
class Proposal:
    values: dict[str, float]
    description: str


def _to_unit(p: ParamSpec, value: float) -> float:
    lo, hi, v = p.low, p.high, min(max(value, p.low), p.high)
    if p.log:
        return (math.log(v) - math.log(lo)) / (math.log(hi) - math.log(lo))
    return (v - lo) / (hi - lo)


def _from_unit(p: ParamSpec, u: float) -> float:
    u = min(max(u, 0.0), 1.0)
    if p.log:
        value = math.exp(math.log(p.low) + u * (math.log(p.high) - math.log(p.low)))
    else:
        value = p.low + u * (p.high - p.low)
    return float(round(value)) if p.integer else float(format(value, ".6g"))


def step_size(history: Sequence[Trial]) -> float:
    """The 1/5 success rule replayed over the history."""
    step = INITIAL_STEP
    for trial in history:
        if trial.decision == DecisionKind.KEEP:
            step = min(MAX_STEP, step * GROW)
        elif trial.decision in REJECTS_CANDIDATE:
            step = max(MIN_STEP, step * SHRINK)
    return step


def line_of(trials: Sequence[Trial], births: Mapping[str, Birth], parent: str) -> list[Trial]:
    """The trials of `parent`'s line of descent, oldest first: every trial made from `parent`,
    and from each of its ancestors those up to the one that made the next commit of the line
    (what came later from an ancestor searched another branch). A trial whose base is unknown
    counts on every line."""
    last: dict[str, float] = {parent: math.inf}  # a commit of the line -> its last trial counted
    commit = parent
    while (birth := births.get(commit)) is not None and birth.base not in last:
        last[birth.base] = birth.iteration
        commit = birth.base
    return [t for t in trials if t.base is None or t.iteration <= last.get(t.base, -1)]


def _key(params: Sequence[ParamSpec], values: Mapping[str, float]) -> tuple[str, ...]:
    return tuple(format_value(values.get(p.name, math.nan), p.integer) for p in params)


def lane_share(params: Sequence[ParamSpec], lane: int, lanes: int) -> tuple[ParamSpec, ...]:
    """The parameters lane `lane` of `lanes` tunes when the lanes split them (tune.split_lanes):
    the lane-th, the lane+K-th, …; with more lanes than parameters, lane k shares the
    ((k-1) mod n)-th. Without lanes, all of them."""
    if lane < 1 or lanes < 2:
        return tuple(params)
    if lanes > len(params):
        return (params[(lane - 1) % len(params)],)
    return tuple(p for i, p in enumerate(params) if i % lanes == lane - 1)


def propose(
    params: Sequence[ParamSpec],
    incumbent: Mapping[str, float],
    history: Sequence[Trial],
    seed: int,
    iteration: int,
    lane: int = 0,
    movable: Sequence[ParamSpec] | None = None,
    line: Sequence[Trial] | None = None,
) -> Proposal | None:
    """The next configuration to try, or None when nothing new is found near the incumbent.

    Deterministic in (seed, lane, iteration): each parallel lane draws its own stream, and a
    run without lanes (lane 0) draws what it always drew. Only `movable` parameters change
    (default: all). The step follows `line` (the incumbent's line of descent, `line_of`;
    default: the whole history); nothing the whole `history` tried is proposed again."""
    rng = random.Random(f"{seed}:{iteration}" if lane == 0 else f"{seed}:{lane}:{iteration}")
    step = step_size(history if line is None else line)
    tried = {_key(params, t.values) for t in history}
    tried.add(_key(params, incumbent))
    for _ in range(MAX_DRAWS):
        values = _draw(params if movable is None else movable, incumbent, step, rng)
        if _key(params, values) not in tried:
            return Proposal(values, _describe(params, incumbent, values))
    return None


def _draw(
    params: Sequence[ParamSpec], incumbent: Mapping[str, float], step: float, rng: random.Random
) -> dict[str, float]:
    values = {name: float(value) for name, value in incumbent.items()}
    count = 1 if len(params) == 1 or rng.random() < 0.6 else 2
    for p in rng.sample(list(params), count):
        if rng.random() < EXPLORE_PROBABILITY:
            u = rng.random()  # an occasional global jump keeps the search from stalling
        else:
            u = _to_unit(p, incumbent[p.name]) + rng.gauss(0.0, step)
        values[p.name] = _from_unit(p, u)
    return values


def _describe(
    params: Sequence[ParamSpec], old: Mapping[str, float], new: Mapping[str, float]
) -> str:
    changes = [
        f"{p.name} {format_value(old[p.name], p.integer)} -> {format_value(new[p.name], p.integer)}"
        for p in params
        if format_value(old[p.name], p.integer) != format_value(new[p.name], p.integer)
    ]
    return "tune " + ", ".join(changes)
