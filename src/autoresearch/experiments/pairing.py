"""Honest numbers for sessions (#34): readings compared only with readings taken next to them.

`exp run --repeats N` after a baseline reads the kept commit (the run's reference, in a scratch
checkout) next to each reading of the candidate, alternating which goes first. A pair shares
the machine's state of that moment, so the machine's drift cancels in its difference. From
those pairs, pure:

* a run's change against the kept commit (`run_change`);
* the best kept run against the baseline as a chain of paired links: each keep's change
  against the commit kept before it (`chain_improvement`), never pooled readings of another
  hour;
* the drift the session saw: how a commit read when it was first read and how it reads now
  (`level_drifts`): the same code, so the difference is the machine's.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass

from autoresearch.jsonshape import json_shape
from autoresearch.noise import Interval, difference_interval
from autoresearch.paired import paired_differences, paired_interval
from autoresearch.states import Direction, Verdict

# The labels of the two commits whose level a status follows.
BASELINE, KEPT = "baseline", "kept commit"


@dataclass(frozen=True)
class Moment:
    """The readings of one commit taken in one run (`run`: its number)."""

    run: int
    readings: tuple[float, ...]


@dataclass(frozen=True)
class PairedPoint:
    """What pairing needs of a logged run: its own readings, the commit it was kept as (a
    keep), and the kept commit read next to them (its reference) with those readings."""

    number: int
    status: Verdict | None
    commit: str | None
    readings: tuple[float, ...]
    reference_commit: str | None = None
    reference: tuple[float, ...] = ()

    @property
    def paired(self) -> bool:
        return self.reference_commit is not None and bool(self.reference) and bool(self.readings)


def run_change(
    direction: Direction, candidate: Sequence[float], reference: Sequence[float]
) -> Interval | None:
    """candidate − reference (better is +) over the pairs of readings taken next to each other;
    None without a pair. One pair has an unbounded interval: it says nothing about spread."""
    pairs = paired_differences(direction, candidate, reference)
    return paired_interval(pairs) if pairs else None


def chain_improvement(
    points: Sequence[PairedPoint], direction: Direction, baseline: int, target: int
) -> Interval | None:
    """Run `target` − run `baseline` (better is +), both keeps: the sum of the paired changes
    of every keep after the baseline up to the target, each against the commit kept just
    before it. None when a link was not paired (its readings of the kept commit are missing or
    of another commit). The links are independent: their half-widths add in quadrature."""
    keeps = [p for p in points if p.status == Verdict.KEEP and baseline <= p.number <= target]
    if len(keeps) < 2 or keeps[0].number != baseline or keeps[-1].number != target:
        return None
    mean, squares, pairs = 0.0, 0.0, 0
    for before, after in itertools.pairwise(keeps):
        link = _link(direction, before, after)
        if link is None:
            return None
        mean, squares, pairs = mean + link.mean, squares + link.half_width**2, pairs + link.n
    half = math.sqrt(squares)
    return Interval(mean, mean - half, mean + half, pairs)


def _link(direction: Direction, before: PairedPoint, after: PairedPoint) -> Interval | None:
    if not after.paired or after.reference_commit != before.commit:
        return None
    return run_change(direction, after.readings, after.reference)


@dataclass(frozen=True)
class LevelDrift:
    """How one commit read at first and how it reads now: the same code, so a difference is
    the machine's (its load, its clocks), which pooled readings would have mixed."""

    label: str  # BASELINE, KEPT
    commit: str
    then: Interval
    then_run: int
    now: Interval
    now_run: int
    significant: bool  # whether now − then excludes 0 (Welch, 95 %)
    text: str

    def to_dict(self) -> dict[str, object]:
        return json_shape(self)


def level_of(readings: Sequence[float]) -> Interval:
    """The mean of one moment's readings with a t interval from their own spread (the same
    computation as a mean of pairs)."""
    return paired_interval(readings)


def drift_of(label: str, commit: str, then: Moment, now: Moment) -> LevelDrift | None:
    """None unless both moments are distinct runs with at least two readings each."""
    if then.run == now.run or len(then.readings) < 2 or len(now.readings) < 2:
        return None
    before, after = level_of(then.readings), level_of(now.readings)
    change = difference_interval(now.readings, then.readings)
    significant = change.low > 0 or change.high < 0
    tail = "" if significant else " (within the noise)"
    text = (
        f"the {label} now reads {after.text()} (run #{now.run}), it read {before.text()} "
        f"at run #{then.run}{tail}"
    )
    return LevelDrift(label, commit, before, then.run, after, now.run, significant, text)


def moments(points: Sequence[PairedPoint], commit: str) -> list[Moment]:
    """Every run's readings of `commit`, oldest first: as the candidate it was kept as, or as
    the reference read next to a later candidate."""
    found = []
    for p in points:
        if p.status == Verdict.KEEP and p.commit == commit and p.readings:
            found.append(Moment(p.number, p.readings))
        if p.reference_commit == commit and p.reference:
            found.append(Moment(p.number, p.reference))
    return found


def level_drifts(points: Sequence[PairedPoint], baseline: str | None) -> tuple[LevelDrift, ...]:
    """The drift of the baseline commit and of the last kept commit (when it is another one):
    their first readings against their latest."""
    kept = [p.commit for p in points if p.status == Verdict.KEEP and p.commit is not None]
    followed = [(BASELINE, baseline)]
    if kept and kept[-1] != baseline:
        followed.append((KEPT, kept[-1]))
    drifts = []
    for label, commit in followed:
        seen = moments(points, commit) if commit is not None else []
        if commit is not None and len(seen) >= 2:
            drift = drift_of(label, commit, seen[0], seen[-1])
            drifts += [drift] if drift is not None else []
    return tuple(drifts)
