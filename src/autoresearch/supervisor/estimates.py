"""What a commit is reported at (trust.md, "Honest numbers"): the mean of its unselected
readings (noise.reference) with a 95 % interval from the run's pooled spread, and how many
readings it rests on. Every view of a supervised run asks here – status, the summary, the
manifest, results.tsv, the report, the review evidence – so that they can never disagree, and
the number is always recomputable from the journal's readings.

A deterministic evaluator's readings agree exactly: its estimate is the reading itself with a
zero-width interval, and the views print exactly what they printed before intervals existed.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from autoresearch.journal import runs, views
from autoresearch.journal.db import Journal
from autoresearch.journal.runs import IterationRecord, RunRecord
from autoresearch.journal.views import format_score
from autoresearch.noise import Interval, Spread, mean_interval, mean_of, pooled_spread, reference
from autoresearch.paths import RepoPaths
from autoresearch.states import IterationKind, best_of


def recorded(run: RunRecord) -> bool:
    """Whether the run records readings with roles (a run prepared before did not: its views
    keep showing each iteration's own evaluation)."""
    return run.sandbox.noise is not None


@dataclass(frozen=True)
class RunReadings:
    """Every passing reading of a run (or of some of its commits), read once."""

    readings: Sequence[runs.Reading] = ()
    by_commit: dict[str, list[runs.Reading]] = field(default_factory=dict)

    @classmethod
    def of(cls, readings: Iterable[runs.Reading]) -> RunReadings:
        rows = list(readings)
        groups: dict[str, list[runs.Reading]] = {}
        for r in rows:
            groups.setdefault(r.commit, []).append(r)
        return cls(rows, groups)

    @classmethod
    def load(cls, journal: Journal, run: RunRecord, commit: str | None = None) -> RunReadings:
        """The run's readings (only `commit`'s: enough for a mean, not for an interval)."""
        if not recorded(run):
            return cls()
        return cls.of(runs.readings(journal, run.run_id, commit))

    @cached_property
    def spread(self) -> Spread:
        """The evaluator's spread: each commit's readings around its own mean, pooled."""
        return pooled_spread([r.score for r in group] for group in self.by_commit.values())

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

    def estimate_dict(self, it: IterationRecord) -> dict[str, float | int] | None:
        """An iteration's row in `status`: its commit's estimate now (None: not measured)."""
        return interval_dict(self.estimate(own_commit(it)))


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
    return RunReadings.load(journal, run, commit).mean(commit, it.iteration)


def row_means(journal: Journal, run: RunRecord, its: Sequence[IterationRecord]) -> dict[int, float]:
    """`row_mean` of every iteration, from one read of the readings (a rebuilt results.tsv)."""
    found = RunReadings.load(journal, run)
    means = {it.iteration: found.mean(own_commit(it), it.iteration) for it in its}
    return {i: m for i, m in means.items() if m is not None}


@dataclass(frozen=True)
class Headline:
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
    if kept is not None and run.keep_policy == "score_improvement":
        # trust.md: the best is the kept commit's mean reading, not the luckiest one ever seen
        return Headline(baseline, base, kept.mean, kept)
    # pass_only keeps whatever passes: its best is the best kept reading, which has no interval
    return Headline(
        baseline, base, best_of(run.direction, runs.kept_scores(journal, run.run_id)), None
    )


def manifest(journal: Journal, run: RunRecord, repo: RepoPaths) -> dict[str, Any]:
    """manifest.json with the kept commit's estimate (`last_kept_interval`)."""
    kept = commit_estimate(journal, run, run.last_kept_commit)
    return views.manifest(run, repo, interval_dict(kept))


def write_manifest(journal: Journal, run: RunRecord, repo: RepoPaths) -> None:
    kept = commit_estimate(journal, run, run.last_kept_commit)
    views.write_manifest(run, repo, interval_dict(kept))


def interval_dict(interval: Interval | None) -> dict[str, float | int] | None:
    return None if interval is None else interval.to_dict()


def text(value: float | None, interval: Mapping[str, Any] | Interval | None) -> str:
    """`18.98 ± 0.88 (n=5)` when the value rests on readings that vary; otherwise the value
    exactly as it always printed (format_score); empty for no value."""
    if isinstance(interval, Mapping):
        interval = _from_dict(interval)
    if interval is None or interval.half_width == 0:
        return format_score(value)
    return interval.text()


def row_text(score: float | None, estimate: Mapping[str, Any] | None) -> str:
    """An iteration's score cell: its commit's estimate, else its own evaluation's score."""
    return text(estimate["mean"], estimate) if estimate else format_score(score)


def _from_dict(d: Mapping[str, Any]) -> Interval | None:
    try:
        return Interval(
            float(d["mean"]), float(d["low"]), float(d["high"]), int(d["n"]), float(d["level"])
        )
    except (KeyError, TypeError, ValueError):
        return None
