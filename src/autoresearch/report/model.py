"""What a report shows, as plain data: the same model for supervised runs and experiment
sessions, built from the journal by `collect`, drawn by `plot` and `html` (pure).

Numbers are what the journal recorded; nothing is estimated. A value the journal does not have
(tokens, cost, a lane) stays None and is shown as such.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from enum import StrEnum

from autoresearch.noise import Interval as Estimate
from autoresearch.noise import difference_interval as difference_interval_of
from autoresearch.noise import signed_interval
from autoresearch.states import (
    DecisionKind,
    Direction,
    RunStatus,
    SessionState,
    Verdict,
    best_by,
)
from autoresearch.supervisor.improvement import Improvement, PairedChange, improvement_of


class ReportKind(StrEnum):
    """What a report is of: a supervised run or an experiment session."""

    RUN = "run"
    SESSION = "session"


class Outcome(StrEnum):
    """How a row is drawn: the colour of its dot and its filter in the table."""

    BASELINE = "baseline"
    KEPT = "kept"
    DISCARDED = "discarded"
    ERROR = "error"
    OTHER = "other"  # noop, interrupted, abort, in progress: no measurement to compare


@dataclass(frozen=True)
class Link:
    """A file the row refers to (an evaluator log, an agent log, a saved patch)."""

    label: str
    path: str


@dataclass(frozen=True)
class Row:
    """One iteration of a run (or one logged run of a session)."""

    number: int
    decision: DecisionKind | Verdict | None  # a run's decision or a session's verdict
    outcome: Outcome
    score: float | None
    description: str = ""
    reason: str = ""
    notes: tuple[str, ...] = ()
    readings: tuple[float, ...] = ()
    commit: str | None = None
    agent: str | None = None
    lane: str | None = None
    tokens: int | None = None
    cost_usd: float | None = None
    seconds: float | None = None
    at: str = ""
    links: tuple[Link, ...] = ()
    # a supervised run's commit as every view reports it: the mean of its unselected readings
    # with its interval (supervisor.estimates); None: the row's own readings stand
    estimate: Estimate | None = None
    # a frontier run's lineage: the iteration that kept the elite this one started from (0: the
    # root); None: not a frontier run
    parent: int | None = None


@dataclass(frozen=True)
class KeptChange:
    """A kept commit and its diff against the state it was measured against."""

    number: int
    commit: str
    description: str
    score_before: float | None
    score_after: float | None
    diff: str
    truncated: bool = False
    before_estimate: Estimate | None = None
    after_estimate: Estimate | None = None


@dataclass(frozen=True)
class Spend:
    """Sessions, keeps, tokens and cost of one agent or one lane (None: never reported)."""

    key: str
    sessions: int
    tokens: int | None
    cost_usd: float | None
    keeps: int = 0


@dataclass(frozen=True)
class ReportData:
    """Everything one report shows."""

    kind: ReportKind
    ident: str
    title: str
    metric: str
    direction: Direction
    status: RunStatus | SessionState  # a session's is open or closed
    started_at: str
    ended_at: str | None
    generated_at: str
    rows: tuple[Row, ...]
    kept: tuple[KeptChange, ...] = ()
    unit: str = ""
    stop_reason: str | None = None  # a run's, shown after its status
    branch: str = ""
    detail: str = ""
    refresh_hint: str = ""
    facts: tuple[tuple[str, str], ...] = field(default_factory=tuple)
    # The headline numbers as `status` reports them (a run's calibrated baseline mean and its
    # kept commit's confirmed mean); None: the rows' means stand.
    baseline_score: float | None = None
    best_score: float | None = None
    baseline_estimate: Estimate | None = None
    best_estimate: Estimate | None = None
    # best - baseline from the two commits' pooled estimates (a run whose evaluator varies)
    improvement_interval: Estimate | None = None
    # best - baseline (better is +) from readings paired in time (a certified run's rounds, an
    # experiment session's chain of paired keeps): when set, the headline improvement, not the
    # pooled means' one, which mixes in the drift between the moments each was read
    paired_change: PairedChange | None = None

    @property
    def status_line(self) -> str:
        """The status as a report shows it: `stopped (max iterations)`."""
        return self.status + (f" ({self.stop_reason})" if self.stop_reason else "")

    @property
    def live(self) -> bool:
        return self.ended_at is None

    def count(self, outcome: Outcome) -> int:
        return sum(1 for r in self.rows if r.outcome is outcome)

    @property
    def baseline(self) -> Row | None:
        return next((r for r in self.rows if r.outcome is Outcome.BASELINE), None)

    @property
    def best(self) -> Row | None:
        """The best kept measurement (the baseline when nothing beat it)."""
        measured = (Outcome.BASELINE, Outcome.KEPT)
        candidates = [r for r in self.rows if r.outcome in measured and r.score is not None]
        if not candidates:
            return None
        return best_by(self.direction, candidates, mean_score)

    def spend_by(self, attribute: str) -> tuple[Spend, ...]:
        """Spend grouped by `agent` or `lane`; rows without that attribute are left out."""
        groups: dict[str, list[Row]] = {}
        for row in self.rows:
            key = getattr(row, attribute)
            if key:
                groups.setdefault(str(key), []).append(row)
        return tuple(
            Spend(
                key,
                len(rows),
                total_tokens(rows),
                total(r.cost_usd for r in rows),
                sum(1 for r in rows if r.outcome is Outcome.KEPT),
            )
            for key, rows in sorted(groups.items())
        )


def baseline_value(data: ReportData) -> float | None:
    """The headline baseline."""
    if data.baseline_score is not None:
        return data.baseline_score
    base = data.baseline
    return None if base is None or base.score is None else mean_score(base)


def best_value(data: ReportData) -> float | None:
    """The headline best."""
    if data.best_score is not None:
        return data.best_score
    best = data.best
    return None if best is None or best.score is None else mean_score(best)


def mean_score(row: Row) -> float:
    """The row's score: its commit's estimate, else the mean of its readings."""
    if row.estimate is not None:
        return row.estimate.mean
    if len(row.readings) > 1:
        return statistics.fmean(row.readings)
    return row.score if row.score is not None else math.nan


def total(values: Iterable[float | None]) -> float | None:
    """The sum of the reported values; None when nothing was reported at all."""
    seen = [v for v in values if v is not None]
    return sum(seen) if seen else None


def total_tokens(rows: Iterable[Row]) -> int | None:
    found = total(r.tokens for r in rows)
    return None if found is None else int(found)


def difference_interval(before: Sequence[float], after: Sequence[float]) -> Estimate | None:
    """95 % interval of mean(after) - mean(before), noise.py's Welch interval (the one the
    certification reports); None without two readings on each side, whose spread is unknown."""
    if len(before) < 2 or len(after) < 2:
        return None
    return difference_interval_of(after, before)


def improvement(data: ReportData) -> Improvement | None:
    """The headline improvement (better is +), by the rule every view of a run follows
    (supervisor/improvement.improvement_of): the paired change when there is one, else best −
    baseline with the pooled estimates' interval (or the rows' readings' Welch interval)."""
    base, best = data.baseline, data.best
    before, after = baseline_value(data), best_value(data)
    if base is None or best is None or before is None or after is None:
        return None
    found = data.improvement_interval or difference_interval(base.readings, best.readings)
    unpaired = None if found is None else signed_interval(data.direction, found)
    return improvement_of(data.direction, before, after, unpaired, data.paired_change)
