"""A run's improvement as every view reports it (#34): best − baseline, better is +.

When certify re-measured the run's baseline and final commit, the figure is its paired
estimate – the mean of the round-by-round differences, with their interval – because drift
cancels within a pair. The difference of the two pooled means is then not the figure: it mixes
in the drift between the moments each commit was read, and can even fall outside the paired
interval. Without a certification the figure is that difference of means, marked unpaired.

`improvement_of` is the one rule (pure); the report (report/model.improvement) and the run's
summary (`status`, the summary after `run`, MCP run_status: `run_improvement`) both call it,
so that no two views of a run can show different improvements.
"""

from __future__ import annotations

from typing import NamedTuple

from autoresearch.journal.db import Journal
from autoresearch.journal.runs import RunRecord
from autoresearch.jsonshape import json_shape
from autoresearch.noise import Interval, Role, pooled_difference, signed, signed_interval
from autoresearch.states import Direction
from autoresearch.supervisor import estimates


# a NamedTuple: `status` imports this module (a frozen dataclass compiles its methods at
# import), and nothing serialises or copies a paired change
class PairedChange(NamedTuple):
    """final − baseline (better is +) from readings paired in time, and the baseline's mean
    in those pairs (the level the change is a share of; None: unknown)."""

    change: Interval
    baseline: float | None = None


# a NamedTuple, as PairedChange: every run `status` lists has one (json_shape writes it)
class Improvement(NamedTuple):
    """The headline improvement: `change` (better is +), in % of the baseline, its 95 %
    interval (better is +; None: its spread is unknown) and whether it is paired."""

    change: float
    percent: float | None
    interval: Interval | None
    paired: bool

    @property
    def varies(self) -> bool:
        """Whether it rests on readings that vary: only then does pairing them matter (a
        deterministic evaluator's change is exact, paired or not)."""
        return self.paired or (self.interval is not None and self.interval.half_width > 0)

    def text(self) -> str:
        """`+3.52, 95 % interval [+2.91, +4.13] (paired; better is +)`; an unpaired change
        that varies says so."""
        if not self.varies:
            return f"{self.change:+.6g} (better is +)"
        value = self.interval.signed_text() if self.interval else f"{self.change:+.6g}"
        how = "paired" if self.paired else "unpaired: means of readings taken at other moments"
        return f"{value} ({how}; better is +)"

    def to_dict(self) -> dict[str, object]:
        return json_shape(self)


def improvement_of(
    direction: Direction,
    baseline: float | None,
    best: float | None,
    unpaired: Interval | None = None,
    paired: PairedChange | None = None,
) -> Improvement | None:
    """The improvement to report: the paired change when there is one, else best − baseline
    (`unpaired`: its interval, better is +); None when there is neither."""
    if paired is not None:
        level = baseline if paired.baseline is None else paired.baseline
        change = paired.change.mean
        return Improvement(change, _percent(change, level), paired.change, True)
    if baseline is None or best is None:
        return None
    change = signed(direction, best - baseline)
    return Improvement(change, _percent(change, baseline), unpaired, False)


def _percent(change: float, level: float | None) -> float | None:
    return None if not level else 100.0 * change / abs(level)


def run_improvement(
    journal: Journal, run: RunRecord, head: estimates.Headline
) -> Improvement | None:
    """The run's improvement now: certify's paired change, else its pooled means' (`head`:
    the run's headline, which the caller has already read for its best and baseline)."""
    pooled = pooled_change(journal, run, head)
    unpaired = None if pooled is None else signed_interval(run.direction, pooled)
    paired = certified(journal, run)
    return improvement_of(run.direction, head.baseline, head.best, unpaired, paired)


def certified(journal: Journal, run: RunRecord) -> PairedChange | None:
    """certify's paired change of the run's final commit (None: not certified)."""
    change = estimates.certified_improvement(journal, run)
    if change is None:
        return None
    found = estimates.RunReadings.load(journal, run)
    rows = found.by_commit.get(run.baseline_commit or "", [])
    paired = [r.score for r in rows if r.role == Role.CERTIFY][: change.n]
    from statistics import fmean  # at its use: a status line of an uncertified run needs none

    return PairedChange(change, fmean(paired) if paired else None)


def pooled_change(journal: Journal, run: RunRecord, head: estimates.Headline) -> Interval | None:
    """best − baseline as measured (not signed) with a t interval from the run's pooled
    spread, when both rest on readings that vary (None: a deterministic evaluator, a
    pass_only run, a run recorded before readings had roles)."""
    found = estimates.RunReadings.load(journal, run)
    if head.best_interval is None or head.baseline_interval is None or found.spread.sd == 0:
        return None
    best = found.scores(run.last_kept_commit)
    base = found.scores(run.baseline_commit)
    return pooled_difference(best, base, found.spread)
