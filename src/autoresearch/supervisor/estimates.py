"""What a commit is reported at (trust.md, "Honest numbers"): the mean of its unselected
readings (noise.reference) with a 95 % interval from the run's pooled spread, and how many
readings it rests on. Every view of a supervised run asks here – status, the summary, the
manifest, results.tsv, the report, the review evidence – so that they can never disagree, and
the number is always recomputable from the journal's readings.

What pooled readings cannot say (#34) is here too: the drift the run saw (`level_drift`: a
commit's first readings against its latest) and the improvement from certify's paired rounds
(`certified_improvement`), which drift does not touch.

A deterministic evaluator's readings agree exactly: its estimate is the reading itself with a
zero-width interval, and the views print exactly what they printed before intervals existed.
"""

from __future__ import annotations

import bisect
from collections.abc import Hashable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Generic, NamedTuple, TypeVar
from weakref import WeakKeyDictionary

from autoresearch.journal import runs
from autoresearch.journal.db import Journal
from autoresearch.journal.runs import RunRecord
from autoresearch.journal.views import format_score
from autoresearch.jsonshape import json_shape
from autoresearch.noise import (
    Interval,
    Role,
    Spread,
    mean_interval,
    mean_of,
    reference,
    signed,
    spread_of,
    squared_deviations,
)
from autoresearch.paired import paired_differences, paired_interval
from autoresearch.paths import RepoPaths
from autoresearch.scale import block_spread, deviations, robust_spread, with_today
from autoresearch.states import IterationKind, KeepPolicy, best_of

if TYPE_CHECKING:
    from autoresearch.journal.iteration_records import IterationRecord
    from autoresearch.journal.manifest import RunManifest


def recorded(run: RunRecord) -> bool:
    """Whether the run records readings with roles (a run prepared before did not: its views
    keep showing each iteration's own evaluation)."""
    return run.noise is not None


# Every finite float is a whole multiple of 2**-1074: in these units a sum of floats is an
# exact integer, and its one division back to a float is correctly rounded – math.fsum's value.
_UNIT = 2**1074


def _exact(x: float) -> int:
    numerator, denominator = x.as_integer_ratio()  # the denominator is a power of two
    return numerator * (_UNIT // denominator)


K = TypeVar("K", bound=Hashable)


class _Totals(Generic[K]):
    """Each group's squared deviations around its own mean as a running exact total: the
    pooled spread (noise.pooled_spread) kept up to date group by group."""

    def __init__(self) -> None:
        self.counted: dict[K, tuple[int, float]] = {}  # each group's size and squares
        self.total = 0  # the exact sum of the squared deviations, in units of 2**-1074
        self.df = 0

    def replaced(self, key: K, group: Sequence[float]) -> tuple[int, int, float]:
        """The running total and df were `key`'s readings `group`, and its squares."""
        n, squares = self.counted.get(key, (0, 0.0))
        now = squared_deviations(group)
        total = self.total - _exact(squares) + _exact(now)
        return total, self.df - max(n - 1, 0) + max(len(group) - 1, 0), now

    def set(self, key: K, group: Sequence[float]) -> None:
        if len(group) < 2 and key not in self.counted:
            # a new group of one spreads nothing: the totals stay (most commits of a long
            # run have one reading, and `status` loads them all)
            self.counted[key] = (len(group), 0.0)
            return
        self.total, self.df, squares = self.replaced(key, group)
        self.counted[key] = (len(group), squares)

    def spread_with(self, groups: Mapping[K, Sequence[float]]) -> Spread:
        """The pooled spread were these groups' readings `groups[key]` (not recorded)."""
        total, df = self.total, self.df
        for key, group in groups.items():
            moved_total, moved_df, _ = self.replaced(key, group)
            total += moved_total - self.total
            df += moved_df - self.df
        return spread_of(total / _UNIT, df)


Block = tuple[str, int]  # a commit's readings of one iteration


class _Deviations:
    """Every block's absolute deviations (scale.deviations), sorted, kept up to date block by
    block: scale.robust_spread reads them without sorting the run's readings again."""

    def __init__(self) -> None:
        self.of: dict[Block, list[float]] = {}
        self.sorted: list[float] = []

    def set(self, key: Block, block: Sequence[float], into: list[float] | None = None) -> None:
        """`key`'s deviations those of `block`, in this view (or only in the copy `into`)."""
        if len(block) < 2 and key not in self.of:  # a new block of one has no deviation
            if into is None:
                self.of[key] = []
            return
        target = self.sorted if into is None else into
        for d in self.of.get(key, ()):
            del target[bisect.bisect_left(target, d)]
        new = sorted(abs(d) for d in deviations(block))
        for d in new:
            bisect.insort(target, d)
        if into is None:
            self.of[key] = new


class RunReadings:
    """Every passing reading of a run, grouped by commit and by block (a commit's readings
    of one iteration), with the run's spread.

    One driver asks at every step (the decision, results.tsv, the manifest, the step's own
    result), so `load` keeps the view of each open journal and brings it up to date with the
    rows added since (one rowid range). The plain spreads are running totals, exact, and the
    blocks' deviations stay sorted as readings come, so the spread within blocks
    (scale.block_spread) costs a few passes in C over them per change, not a sort of the
    run; every number equals the full recomputation over the groups."""

    def __init__(self, readings: Iterable[runs.Reading] = (), blocks: bool = True) -> None:
        self.by_commit: dict[str, list[runs.Reading]] = {}
        # blocks: the spread within each commit's readings of one iteration (scale.py), else
        # within each commit's readings over the run (a run frozen before it decides as it did)
        self.blocks = blocks
        self.by_block: dict[Block, list[float]] = {}
        self._upto = 0  # the highest evaluation id read (runs.readings_since)
        self._reset()
        self._extend(readings)

    def _reset(self) -> None:
        self.by_commit, self.by_block = {}, {}
        # each iteration's blocks: a decision's own spread reads them without a scan of the run
        self._blocks_of: dict[int, dict[Block, None]] = {}
        self._commits: _Totals[str] = _Totals()
        self._blocks: _Totals[Block] = _Totals()
        self._deviations = _Deviations()
        self._block_spread: Spread | None = None  # worked out once per change of the readings

    @classmethod
    def load(cls, journal: Journal, run: RunRecord) -> RunReadings:
        """The run's readings as they are in the journal now. A view kept from an earlier
        load of the same open journal is brought up to date and returned (it stays current
        until the next write: use it, do not keep it)."""
        blocks = run.noise_policy.blocks
        if not recorded(run):
            return cls(blocks=blocks)
        if journal.in_transaction:  # what this read sees may yet be rolled back: not kept
            return cls(runs.readings(journal, run.run_id), blocks)
        kept = _LOADED.setdefault(journal, {})
        key = (run.run_id, run.created_at)  # a run forgotten and prepared again is another
        found = kept.get(key)
        if found is None:
            found = kept[key] = cls(blocks=blocks)
        found._refresh(journal, run.run_id)
        return found

    def _refresh(self, journal: Journal, run_id: str) -> None:
        fresh, upto = runs.readings_since(journal, run_id, self._upto)
        if upto < self._upto:  # rows this view had read are gone (a journal put back): anew
            self._reset()
            fresh, upto = runs.readings_since(journal, run_id, 0)
        self._extend(fresh)
        self._upto = upto

    def _extend(self, readings: Iterable[runs.Reading]) -> None:
        # `status` loads every reading of a run here: the loops keep to local names
        by_commit, by_block, blocks_of = self.by_commit, self.by_block, self._blocks_of
        commits: dict[str, None] = {}
        blocks: dict[Block, None] = {}
        for r in readings:
            block = (r.commit, r.iteration)
            by_commit.setdefault(r.commit, []).append(r)
            by_block.setdefault(block, []).append(r.score)
            blocks_of.setdefault(r.iteration, {})[block] = None
            commits[r.commit] = blocks[block] = None
        if commits:
            self._block_spread = None
        for commit in commits:  # each changed group once, however many readings it gained
            self._commits.set(commit, [r.score for r in by_commit[commit]])
        for block in blocks if self.blocks else ():
            self._blocks.set(block, by_block[block])
            self._deviations.set(block, by_block[block])

    @property
    def spread(self) -> Spread:
        """The evaluator's spread: within blocks (scale.block_spread), or each commit's
        readings around its own mean, pooled."""
        if not self.blocks:
            return self._commits.spread_with({})
        if self._block_spread is None:
            plain = self._blocks.spread_with({})
            self._block_spread = robust_spread(plain, self._deviations.sorted)
        return self._block_spread

    def spread_with(self, more: Mapping[str, Sequence[float]], iteration: int = -1) -> Spread:
        """The spread were `more[commit]` (readings of `iteration` not yet recorded) added:
        within blocks, carrying this iteration's own (scale.with_today)."""
        if not self.blocks:
            return self._commits.spread_with(
                {commit: [*self.scores_all(commit), *scores] for commit, scores in more.items()}
            )
        pending = {(c, iteration): [*self.by_block.get((c, iteration), []), *scores]
                   for c, scores in more.items()}  # fmt: skip
        found = list(self._deviations.sorted)
        for block, scores in pending.items():
            self._deviations.set(block, scores, into=found)
        run = robust_spread(self._blocks.spread_with(pending), found)
        today = {k: self.by_block[k] for k in self._blocks_of.get(iteration, ())}
        today.update(pending)
        return with_today(run, block_spread(today.values()))

    def scores_all(self, commit: str) -> list[float]:
        """Every reading of `commit`, whatever its role."""
        return [r.score for r in self.by_commit.get(commit, ())]

    def scores(self, commit: str | None, through: int | None = None) -> list[float]:
        """The readings that stand for `commit` (as of iteration `through`, when given)."""
        rows = self.by_commit.get(commit or "", [])
        if through is not None:
            rows = [r for r in rows if r.iteration <= through]
        return reference([(r.role, r.score) for r in rows])

    def estimate(self, commit: str | None) -> Interval | None:
        """The commit's reported value now: mean, 95 % interval, n (None: no reading)."""
        scores = self.scores(commit)
        return mean_interval(scores, self.spread) if scores else None

    def mean(self, commit: str | None, through: int | None = None) -> float | None:
        scores = self.scores(commit, through)
        return mean_of(scores) if scores else None


# The views kept per open journal and run (RunReadings.load); a journal closed and dropped
# takes its views with it.
_LOADED: WeakKeyDictionary[Journal, dict[tuple[str, str], RunReadings]] = WeakKeyDictionary()


def own_commit(it: IterationRecord) -> str | None:
    """The commit an iteration measured (None: it measured nothing – noop, refused…)."""
    if not it.evaluator:
        return None
    return it.base_commit if it.kind == IterationKind.BASELINE else it.candidate_commit


def commit_estimate(journal: Journal, run: RunRecord, commit: str | None) -> Interval | None:
    """One commit's reported value now (None: the run has no reading of it)."""
    if commit is None:
        return None
    return RunReadings.load(journal, run).estimate(commit)


def row_mean(journal: Journal, run: RunRecord, it: IterationRecord) -> float | None:
    """An iteration's score as of its decision (results.tsv, an append-only log): the mean of
    its commit's readings up to then; None when it has no passing reading."""
    commit = own_commit(it)
    if commit is None:
        return None
    return RunReadings.load(journal, run).mean(commit, it.iteration)


def row_means(journal: Journal, run: RunRecord, its: Sequence[IterationRecord]) -> dict[int, float]:
    """`row_mean` of every iteration, from one read of the readings (a rebuilt results.tsv)."""
    found = RunReadings.load(journal, run)
    means = {it.iteration: found.mean(own_commit(it), it.iteration) for it in its}
    return {i: m for i, m in means.items() if m is not None}


# a NamedTuple: status imports it, and a frozen dataclass compiles its methods at import
class Headline(NamedTuple):
    """The numbers a run is summed up by: its baseline and its best (the kept commit), each
    with its interval when it rests on readings (None for a run without them)."""

    baseline: float | None
    baseline_interval: Interval | None
    best: float | None
    best_interval: Interval | None


def headline(journal: Journal, run: RunRecord) -> Headline:
    found = RunReadings.load(journal, run)
    base = found.estimate(run.baseline_commit) if run.baseline_commit else None
    kept = found.estimate(run.last_kept_commit) if run.last_kept_commit else None
    if base is not None:
        baseline: float | None = base.mean
    else:  # a run recorded before readings had roles: its first passing baseline evaluation
        baseline = runs.baseline_score(journal, run.run_id, run.baseline_commit)
    if kept is not None and run.keep_policy == KeepPolicy.SCORE_IMPROVEMENT:
        # trust.md: the best is the kept commit's mean reading, not the luckiest one ever seen
        return Headline(baseline, base, kept.mean, kept)
    # pass_only keeps whatever passes: its best is the best kept reading, which has no interval
    return Headline(
        baseline, base, best_of(run.direction, runs.kept_scores(journal, run.run_id)), None
    )


def claimed_improvement(journal: Journal, run: RunRecord) -> float | None:
    """What the run claims: best − baseline, better is + (None: nothing to compare)."""
    head = headline(journal, run)
    if head.best is None or head.baseline is None:
        return None
    return signed(run.direction, head.best - head.baseline)


# Readings of a commit that sum up its level at one time: its first, and its latest.
LEVEL_READINGS = 3


# a NamedTuple: status imports it, and a frozen dataclass compiles its methods at import
class LevelDrift(NamedTuple):
    """How one commit read at first and how it reads now: the same code, so any difference is
    the machine's (its load, its clocks), which pooled readings would have mixed."""

    label: str  # "baseline", "kept commit"
    then: Interval
    now: Interval
    since: int  # the iteration of its first readings (0: prepare)

    @property
    def significant(self) -> bool:
        """Whether the two intervals do not overlap (a conservative test of a difference)."""
        return self.now.low > self.then.high or self.now.high < self.then.low

    def text(self) -> str:
        """`the baseline now reads 100 ± 4 (n=3), it read 131 ± 5 (n=3) at iteration 0`."""
        when = "at prepare" if self.since <= 0 else f"at iteration {self.since}"
        tail = "" if self.significant else " (within the noise)"
        return (
            f"the {self.label} now reads {self.now.text()}, it read {self.then.text()} {when}{tail}"
        )

    def to_dict(self) -> dict[str, object]:
        """The JSON of status and MCP run_status: both moments, and the sentence."""
        return json_shape(self)

    def json_extra(self) -> dict[str, object]:
        return {"significant": self.significant, "text": self.text()}


def level_drift(journal: Journal, run: RunRecord) -> tuple[LevelDrift, ...]:
    """The drift the run saw: the baseline's and the kept commit's first readings against
    their latest (certify's included), when each has readings from two moments apart."""
    found = RunReadings.load(journal, run)
    seen = []
    for label, commit in (("baseline", run.baseline_commit), ("kept commit", run.last_kept_commit)):
        rows = found.by_commit.get(commit or "", [])
        if commit is None or (label == "kept commit" and commit == run.baseline_commit):
            continue
        drift = _drift_of(label, rows, found.spread)
        if drift is not None:
            seen.append(drift)
    return tuple(seen)


def _drift_of(label: str, rows: Sequence[runs.Reading], spread: Spread) -> LevelDrift | None:
    usable = [r for r in rows if r.role != Role.CANDIDATE]  # those that won a keep: selected
    if len(usable) < 2 * LEVEL_READINGS or spread.sd == 0:
        return None
    first, last = usable[:LEVEL_READINGS], usable[-LEVEL_READINGS:]
    if {r.iteration for r in first} == {r.iteration for r in last}:
        return None  # read at one moment: nothing to compare
    then = mean_interval([r.score for r in first], spread)
    now = mean_interval([r.score for r in last], spread)
    return LevelDrift(label, then, now, first[0].iteration)


def certified_improvement(journal: Journal, run: RunRecord) -> Interval | None:
    """final − baseline (better is +) from certify's interleaved rounds of the run's current
    baseline and final commits, paired round by round (drift cancels); None: not certified."""
    if run.baseline_commit is None or run.last_kept_commit is None:
        return None
    found = RunReadings.load(journal, run)

    def certify_scores(commit: str) -> list[float]:
        return [r.score for r in found.by_commit.get(commit, []) if r.role == Role.CERTIFY]

    pairs = paired_differences(
        run.direction, certify_scores(run.last_kept_commit), certify_scores(run.baseline_commit)
    )
    return paired_interval(pairs) if len(pairs) >= 2 else None


def manifest(journal: Journal, run: RunRecord, repo: RepoPaths) -> RunManifest:
    """manifest.json with the kept commit's estimate (`last_kept_interval`)."""
    from autoresearch.journal.manifest import RunManifest  # `status` listing shows none

    return RunManifest(run, repo, commit_estimate(journal, run, run.last_kept_commit))


def write_manifest(journal: Journal, run: RunRecord, repo: RepoPaths) -> None:
    from autoresearch.journal.manifest import write_manifest

    write_manifest(manifest(journal, run, repo))


def interval_dict(interval: Interval | None) -> dict[str, float | int] | None:
    return None if interval is None else interval.to_dict()


def text(value: float | None, interval: Interval | None) -> str:
    """`18.98 ± 0.88 (n=5)` when the value rests on readings that vary; otherwise the value
    exactly as it always printed (format_score); empty for no value."""
    if interval is None or interval.half_width == 0:
        return format_score(value)
    return interval.text()


def row_text(score: float | None, estimate: Interval | None) -> str:
    """An iteration's score cell: its commit's estimate, else its own evaluation's score."""
    return text(estimate.mean, estimate) if estimate else format_score(score)
