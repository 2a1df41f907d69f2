"""A run's keeps in order, each with the score it improved on: what `finalize` cuts review
branches from and what the report lists. The supervisor's, so that the report reads the run
and no supervisor module reads the report (no package cycle)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from autoresearch.journal import search
from autoresearch.journal.db import Journal
from autoresearch.journal.iteration_records import IterationRecord
from autoresearch.journal.runs import RunRecord
from autoresearch.noise import Interval as Estimate
from autoresearch.states import DecisionKind
from autoresearch.supervisor import estimates


@dataclass(frozen=True)
class KeptStep:
    """A kept iteration with the kept score before it and its own (the reported means)."""

    iteration: int
    base: str
    commit: str
    description: str
    before: float | None
    after: float | None
    before_estimate: Estimate | None = None
    after_estimate: Estimate | None = None


def kept_steps(journal: Journal, run: RunRecord, its: Iterable[IterationRecord]) -> list[KeptStep]:
    """The run's keeps in order, each with the score it improved on: the values `status`
    reports (each kept commit's estimate – the mean of its unselected readings – the baseline's
    included), never the lucky first reading that won the test."""
    its = on_best_lineage(journal, run, its)
    found = estimates.RunReadings.load(journal, run)
    head = estimates.headline(journal, run)
    steps: list[KeptStep] = []
    before: float | None = None
    before_estimate: Estimate | None = None
    for it in its:
        score = it.evaluator.score if it.evaluator else None
        if it.decision == DecisionKind.BASELINE:
            before, before_estimate = head.baseline, head.baseline_interval
        if it.decision != DecisionKind.KEEP or not it.kept_commit or not it.base_commit:
            continue
        estimate = found.estimate(it.kept_commit)
        score = estimate.mean if estimate is not None else score
        description = " ".join((it.description or "").split())
        steps.append(
            KeptStep(
                it.iteration,
                it.base_commit,
                it.kept_commit,
                description,
                before,
                score,
                before_estimate,
                estimate,
            )
        )
        before, before_estimate = score, estimate
    return steps


def on_best_lineage(
    journal: Journal, run: RunRecord, its: Iterable[IterationRecord]
) -> list[IterationRecord]:
    """A frontier run's iterations without the keeps off the best elite's lineage (a child
    kept against its own parent on another hill is no step toward the result): `finalize`
    cuts, and the report lists, the steps that lead to the run branch. Every iteration of a
    run without an archive."""
    found = list(its)
    if search.through(journal, run.run_id) is None:
        return found
    base_of = {it.kept_commit: it.base_commit for it in found if it.decision == DecisionKind.KEEP}
    chain, commit = set(), run.last_kept_commit
    while commit in base_of and commit not in chain:
        chain.add(commit)
        commit = base_of[commit]
    return [it for it in found if it.decision != DecisionKind.KEEP or it.kept_commit in chain]
