"""Carrying out a keep policy's requests (policies.py): readings of the candidate in the run's
worktree, of the incumbent (the last kept commit) in a scratch checkout outside it, so the
agent's tree is never moved, the candidate's checks and its confirmation readings.

Readings are kept in memory and written with the decision in one transaction: an iteration
interrupted half-way is rolled back whole and measured again, never half-counted.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path

from autoresearch import git
from autoresearch.errors import ContractError
from autoresearch.evaluate import EvaluationRecord
from autoresearch.fsutil import private_dir
from autoresearch.journal.runs import RunRecord
from autoresearch.noise import Role
from autoresearch.policies import (
    Checks,
    Final,
    Need,
    Observations,
    Policy,
    Reading,
    Request,
    Situation,
)
from autoresearch.repo_state import link_shared_paths
from autoresearch.supervisor import estimates, record
from autoresearch.supervisor.handle import RunContext, RunHandle

ROLES = {Need.CANDIDATE: Role.CANDIDATE, Need.INCUMBENT: Role.INCUMBENT, Need.CONFIRM: Role.CONFIRM}


@dataclass
class Judged:
    """What a policy decided of one candidate, and the readings it took to decide."""

    final: Final
    readings: list[record.Reading] = field(default_factory=list)

    @property
    def evaluation(self) -> EvaluationRecord | None:
        """The candidate's first reading: the iteration's own evaluation."""
        return next((r for role, _, r in self.readings if role == Role.CANDIDATE), None)


@dataclass
class _Measuring:
    """One candidate's measurement under way: the run's readings, this iteration's."""

    h: RunHandle
    iteration: int
    commit: str
    found: estimates.RunReadings
    should_cancel: Callable[[], bool] | None
    first: EvaluationRecord | None
    readings: list[record.Reading] = field(default_factory=list)
    # this iteration's passing readings by commit, until they are recorded with the decision
    taken: dict[str, list[float]] = field(default_factory=dict)


def judge(
    h: RunHandle,
    rule: Policy,
    iteration: int,
    commit: str,
    first: EvaluationRecord | None = None,
    should_cancel: Callable[[], bool] | None = None,
    checks: Checks | None = None,
) -> Judged:
    """Ask the run's keep policy `rule` until it decides, carrying out each of its requests
    (`first`: the candidate's reading a lane took already, the answer to its first request of
    one; `checks`: the candidate's checks, run already before its screen)."""
    found = estimates.RunReadings.load(h.journal, h.run)
    measuring = _Measuring(h, iteration, commit, found, should_cancel, first)
    seen = Observations(situation(h.context, h.run, found, commit), checks=checks)
    while True:
        answer = rule.next(seen)
        if isinstance(answer, Final):
            return Judged(answer, measuring.readings)
        seen = _carry_out(measuring, answer, seen)


def situation(
    h: RunContext, run: RunRecord, found: estimates.RunReadings, commit: str
) -> Situation:
    """What `run` knows before the candidate `commit` is measured."""
    kept = run.last_kept_commit
    return Situation(
        direction=h.direction,
        last_kept_score=run.last_kept_score,
        noise=h.noise,
        spread=found.spread,
        incumbent=tuple(found.scores(kept)) if kept else (),
        candidate=tuple(found.scores_all(commit)),
    )


def readings_allowed(h: RunContext) -> int:
    """The most readings a policy may ask of one candidate: twice what the built-in test can
    take (its cap, then its confirmations), so that a plugin that never decides ends."""
    return 2 * (h.noise.max_evals + h.noise.confirm)


def _carry_out(m: _Measuring, asked: Request, seen: Observations) -> Observations:
    _refuse_endless(m, asked, seen)
    if asked.need is Need.CHECKS:
        failure = record.run_checks(m.h.context, m.iteration, m.should_cancel)
        return replace(seen, checks=Checks(failure, str(m.h.paths.checks_log(m.iteration))))
    taken = tuple(_reading(m, asked.need) for _ in range(max(asked.count, 1)))
    return replace(seen, readings=(*seen.readings, *taken))


def _refuse_endless(m: _Measuring, asked: Request, seen: Observations) -> None:
    again = asked.need is Need.CHECKS and seen.checks is not None
    if again or len(m.readings) + max(asked.count, 1) > readings_allowed(m.h.context):
        what = "the checks twice" if again else f"over {readings_allowed(m.h.context)} readings"
        raise ContractError(
            f"keep policy {str(m.h.run.keep_policy)!r} asked for {what} of one candidate "
            "without deciding; fix or uninstall the plugin that provides it"
        )


def _reading(m: _Measuring, need: Need) -> Reading:
    """One reading `need` asks for, kept with the run's pooled spread as of it."""
    commit, result = _evaluate(m, need)
    m.readings.append((ROLES[need], commit, result))
    taken = Reading(need, result.summary())
    if taken.usable:
        m.taken.setdefault(commit, []).append(taken.score)
    return replace(taken, spread=m.found.spread_with(m.taken, m.iteration))


def _evaluate(m: _Measuring, need: Need) -> tuple[str, EvaluationRecord]:
    h, iteration, cancel = m.h, m.iteration, m.should_cancel
    if need is not Need.INCUMBENT:
        if m.first is not None:  # a lane's reading answers the first request of one
            first, m.first = m.first, None
            return m.commit, first
        return m.commit, record.evaluate(h, iteration, cancel, commit=m.commit)
    kept = h.run.last_kept_commit
    if kept is None:
        raise ContractError(
            f"keep policy {str(h.run.keep_policy)!r} asked for a reading of the incumbent, "
            "but the run has kept no commit"
        )
    tree = incumbent_checkout(h.context, kept)
    return kept, record.evaluate(h, iteration, cancel, tree=tree, commit=kept)


def incumbent_checkout(h: RunContext, commit: str) -> Path:
    """The scratch checkout of the kept commit, created or moved on first use."""
    return scratch_checkout(h, h.incumbent_tree, commit)


def scratch_checkout(h: RunContext, tree: Path, commit: str) -> Path:
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
