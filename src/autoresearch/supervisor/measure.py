"""Several readings per iteration (trust.md): the sequential test of a candidate against the
incumbent, driven by noise.next_action.

The candidate is measured in the run's worktree; the incumbent (the last kept commit) in a
scratch checkout outside it, so the agent's tree is never moved. Readings are kept in memory
and written with the decision in one transaction: an iteration interrupted half-way is rolled
back whole and measured again, never half-counted.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from autoresearch import git
from autoresearch.decide import Decision, sequential_decision
from autoresearch.evaluate import EvaluationRecord
from autoresearch.fsutil import private_dir
from autoresearch.noise import (
    Action,
    Role,
    Spread,
    Verdict,
    confirmations,
    mean_interval,
    next_action,
)
from autoresearch.repo_state import link_shared_paths
from autoresearch.states import EvalStatus, KeepPolicy
from autoresearch.supervisor import estimates, record
from autoresearch.supervisor.handle import RunHandle


@dataclass
class Measured:
    """What the readings of one iteration decided."""

    decision: Decision
    readings: list[record.Reading] = field(default_factory=list)
    kept_score: float | None = None  # the reference mean of whatever is kept afterwards
    incumbent_score: float | None = None  # the incumbent's, should the keep be refused


def _usable(r: EvaluationRecord) -> bool:
    return r.status == EvalStatus.PASS and r.score is not None


def applies(h: RunHandle, first: EvaluationRecord) -> bool:
    """Whether this candidate goes through the sequential test (else the single rule)."""
    if h.run.keep_policy != KeepPolicy.SCORE_IMPROVEMENT or h.run.last_kept_score is None:
        return False
    if not _usable(first) or h.run.last_kept_commit is None:
        return False
    found = estimates.RunReadings.load(h.journal, h.run)
    return h.noise.sequential(found.spread.sd) and bool(found.scores(h.run.last_kept_commit))


def measure(
    h: RunHandle,
    iteration: int,
    candidate_commit: str,
    first: EvaluationRecord,
    should_cancel: Callable[[], bool] | None = None,
) -> Measured:
    """Measure until the test decides; then confirm a keep with fresh readings."""
    policy, direction = h.noise, h.run.direction
    kept = str(h.run.last_kept_commit)
    found = estimates.RunReadings.load(h.journal, h.run)
    incumbent = found.scores(kept)
    # this iteration's readings, by commit, until they are recorded with the decision
    taken: dict[str, list[float]] = {candidate_commit: [], kept: []}
    candidate = [*found.scores_all(candidate_commit), float(first.score or 0.0)]
    taken[candidate_commit].append(candidate[-1])
    readings: list[record.Reading] = [(Role.CANDIDATE, candidate_commit, first)]
    fresh = 0
    while True:
        spread = found.spread_with(taken)
        verdict = next_action(policy, direction, spread, incumbent, candidate, fresh)
        if verdict.final:
            break
        on_incumbent = verdict.action is Action.MEASURE_INCUMBENT
        if on_incumbent:
            tree = incumbent_checkout(h, kept)
            reading = record.evaluate(h, iteration, should_cancel, tree=tree, commit=kept)
            readings.append((Role.INCUMBENT, kept, reading))
        else:
            reading = record.evaluate(h, iteration, should_cancel, commit=candidate_commit)
            readings.append((Role.CANDIDATE, candidate_commit, reading))
        if not _usable(reading):
            decision = sequential_decision(
                verdict.action, _notes(readings), reading.summary(), on_incumbent
            )
            return Measured(decision, readings, *[statistics.fmean(incumbent)] * 2)
        score = float(reading.score or 0.0)
        if on_incumbent:
            incumbent.append(score)
            taken[kept].append(score)
            fresh += 1
        else:
            candidate.append(score)
            taken[candidate_commit].append(score)
    notes = _notes(readings, verdict, spread)
    standing = incumbent
    if verdict.action is Action.KEEP:
        confirmed: list[float] = []
        for _ in range(confirmations(policy, spread)):
            reading = record.evaluate(h, iteration, should_cancel, commit=candidate_commit)
            readings.append((Role.CONFIRM, candidate_commit, reading))
            if _usable(reading):
                confirmed.append(float(reading.score or 0.0))
                taken[candidate_commit].append(confirmed[-1])
        # no usable confirmation: the deciding readings are all there is to report
        standing = confirmed or candidate
    interval = mean_interval(standing, found.spread_with(taken))
    notes = (*notes, f"kept commit now at {interval.text()}")
    decision = sequential_decision(verdict.action, notes)
    return Measured(decision, readings, interval.mean, statistics.fmean(incumbent))


def incumbent_checkout(h: RunHandle, commit: str) -> Path:
    """The scratch checkout of the kept commit, created or moved on first use."""
    return scratch_checkout(h, h.incumbent_tree, commit)


def scratch_checkout(h: RunHandle, tree: Path, commit: str) -> Path:
    """A scratch checkout of `commit` at `tree` (under the run's scratch folder, out of the
    agent's reach), checked out afresh: edits to tracked files keep HEAD where it was."""
    if not git.is_worktree_of(tree, h.repo.repo_root):
        git.worktree_remove(h.repo.repo_root, tree)
        private_dir(tree.parent)  # under the private state folder: 0700 like the rest
        git.worktree_add_detached(h.repo.repo_root, tree, commit)
    else:
        git.clear_stale_locks(tree)  # a measurement killed mid-checkout left its lock
        git.checkout_detached(tree, commit)
    # Not the runtime-dirt rule (h.dirt): no reset of work, so nothing is spared but the
    # environment links; caches, results and `worktree.runtime` outputs of an earlier
    # reading of another commit go, so a reading (and certify's) sees `commit` alone.
    git.clean_untracked(tree, keep=h.links)
    link_shared_paths(h.repo.repo_root, tree, h.links)
    return tree


def _notes(
    readings: list[record.Reading], verdict: Verdict | None = None, spread: Spread | None = None
) -> tuple[str, ...]:
    counts = {role: sum(1 for r, _, _ in readings if r == role) for role in Role}
    line = (
        f"readings: {counts[Role.CANDIDATE]} candidate, {counts[Role.INCUMBENT]} incumbent "
        "(this iteration)"
    )
    if verdict is None or verdict.difference is None or spread is None:
        return (line,)
    stats = f"difference {verdict.difference:+.4g} (better is +), spread {spread.sd:.3g}"
    if verdict.llr is not None:
        stats += f", log likelihood ratio {verdict.llr:.2f}"
    return (line, stats)
