"""The frontier's side effects: its archive in the journal, the run's reference and branch.

The whole keep machinery (validation, the keep policy, noise-aware re-measuring, the reset of a
discard, recovery after a crash) compares a candidate with the run's `last_kept_commit` and
`last_kept_score`. The frontier reuses all of it by making that pair the *reference* of the
session under way: before a session it points them (and the run branch) at the session's
parent, so a candidate is judged against its own parent; between sessions (`settle`) it takes
the judged iterations into the archive and points them back at the best elite, so that
`status`, `finalize`, `certify` and `git log` of the run branch see the best answer.

Every step is in the journal before its git effect and idempotent: a kill between the two is
finished by the next `settle` (a pending artifact is judged first, against the parent it was
built on, since the reference is only moved back once no artifact waits).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Protocol

from autoresearch import failpoints, git
from autoresearch.journal import iteration_records, runs, search
from autoresearch.journal.search import EliteRow
from autoresearch.states import DecisionKind
from autoresearch.supervisor import estimates, record, refs, sync
from autoresearch.supervisor.archive import Elite, admit, lineage_of, ranked, rescored
from autoresearch.supervisor.handle import RunContext, RunHandle
from autoresearch.supervisor.lifecycle import has_pending_artifact
from autoresearch.supervisor.strategy import SearchStrategy, SearchView, Start


class Keeper(Protocol):
    """What the driver asks of a strategy's archive (nothing, for greedy)."""

    def settle(self) -> None:
        """Take the judged iterations in; the run's reference and branch at the best elite."""

    def start(self, strategy: SearchStrategy, view: SearchView, lane: int) -> Start:
        """The strategy's start (or the one recorded for this session), made the reference."""


class NoArchive:
    """Greedy's: the run's reference is the last kept commit, and stays it."""

    def settle(self) -> None:
        """Nothing to take in."""

    def start(self, strategy: SearchStrategy, view: SearchView, lane: int) -> Start:
        return strategy.start(view, lane)


def keeper_for(h: RunHandle, strategy: SearchStrategy, size: int) -> Keeper:
    return Archive(h, size) if strategy.keeps_archive else NoArchive()


@dataclass
class Archive:
    """The frontier's archive of run `h`, at most `size` elites."""

    h: RunHandle
    size: int

    archive: tuple[Elite, ...] = ()

    def settle(self) -> None:
        if has_pending_artifact(self.h.context, self.h.run):
            return  # judged first, against the parent it was built on (the reference now)
        self.archive = self.take_in()
        self._point_at(self.archive[0])

    def start(self, strategy: SearchStrategy, view: SearchView, lane: int) -> Start:
        """After `settle`: the session's parent, recorded before the session (a resumed run
        starts that session from the same parent), made the run's reference."""
        h, archive = self.h, self.archive or self.take_in()
        iteration = h.run.iteration + 1
        by_commit = {e.commit: e for e in archive}
        recorded = search.parent_of(h.journal, h.run_id, iteration)
        if recorded in by_commit:
            chosen = Start(recorded or "")
        else:
            tries = search.tries(h.journal, h.run_id)
            chosen = strategy.start(
                replace(view, archive=archive, tries=tries, seed=h.run_id), lane
            )
            with h.journal.tx() as conn:
                search.record_parent(conn, h.run_id, iteration, lane, chosen.parent)
            failpoints.hit("frontier.after_parent")
        self._point_at(by_commit.get(chosen.parent) or archive[0])
        return chosen

    def take_in(self) -> tuple[Elite, ...]:
        """The archive, best first, with every iteration judged since it last read (each
        elite's score the mean of its readings, once it has any)."""
        h = self.h
        upto = search.through(h.journal, h.run_id)
        if upto is None:  # the frontier starts from where the run stands
            commit = h.run.last_kept_commit or ""
            archive: tuple[Elite, ...] = (Elite(commit, h.run.last_kept_score, None, commit, 0),)
            refs.keep_elite(h.repo.repo_root, h.run_id, 0, commit)
            upto = h.run.iteration
        else:
            archive = tuple(_elite(r) for r in search.elites(h.journal, h.run_id))
        new = iteration_records.iterations_after(h.journal, h.run_id, upto)
        keeps = [it for it in new if it.decision == DecisionKind.KEEP and it.candidate_commit]
        evicted: list[EliteRow] = []
        if keeps:
            archive, evicted = self._admit_all(archive, keeps)
        found = estimates.RunReadings.load(h.journal, h.run)
        means = {e.commit: m for e in archive if (m := found.mean(e.commit)) is not None}
        archive = rescored(archive, means, h.run.direction)
        with h.journal.tx() as conn:
            last = new[-1].iteration if new else upto
            search.save(conn, h.run_id, [*map(_row, archive), *evicted], last)
        return archive

    def _admit_all(
        self, archive: tuple[Elite, ...], keeps: list[iteration_records.IterationRecord]
    ) -> tuple[tuple[Elite, ...], list[EliteRow]]:
        """Each keep into the archive in order; the rows of the elites it evicted."""
        h = self.h
        known = {r.commit: _elite(r) for r in search.elites(h.journal, h.run_id, current=False)}
        known.update({e.commit: e for e in archive})
        evicted: list[EliteRow] = []
        for it in keeps:
            commit = it.candidate_commit or ""
            parent = known.get(it.base_commit or "")
            score = it.evaluator.score if it.evaluator else None
            new = Elite(commit, score, it.base_commit, lineage_of(parent, commit), it.iteration)
            refs.keep_elite(h.repo.repo_root, h.run_id, it.iteration, commit)
            known[commit] = new
            archive, out = admit(archive, new, self.size, h.run.direction)
            if out is not None:
                evicted.append(replace(_row(out), evicted=it.iteration))
        return archive, evicted

    def _point_at(self, elite: Elite) -> None:
        """The run's reference (journal first) and branch at `elite`; the session's handoff
        files (placeholder, instructions) name it."""
        h = self.h
        same = h.run.last_kept_commit == elite.commit and h.run.last_kept_score == elite.score
        if not same:
            with h.journal.tx() as conn:
                runs.update_run(
                    conn, h.run_id, last_kept_commit=elite.commit, last_kept_score=elite.score
                )
            h.state.saw(replace(h.run, last_kept_commit=elite.commit, last_kept_score=elite.score))
        failpoints.hit("frontier.after_reference")  # the fault suite kills a move half-done here
        if git.head(h.worktree) != elite.commit or not same:
            label = "frontier" if record.dirty_tracked(h.context) else None  # leftovers are saved
            record.restore_branch(h.context, h.run, h.run.iteration, label, elite.commit)
            sync.write_placeholder(h.context, h.run.last_kept_commit)
            sync.write_instructions(h.context, h.run)
            estimates.write_manifest(h.journal, h.run, h.repo)


def _nobody() -> Sequence[str]:
    return ()


@dataclass
class LaneArchive(Archive):
    """The frontier's archive with lanes (`run --lanes K`, Ray): sessions start from
    different parents at once, so nothing is recorded or moved when one starts. Its parent
    is chosen with the parents of the sessions in flight (`busy`) counted as tried and
    avoided while another elite is free; just before its candidate is judged, the run's
    reference moves to that parent (`refer_to`), and back to the best elite once it is
    judged (`settle`): a candidate is judged against its own parent, never replayed onto
    the best."""

    busy: Callable[[], Sequence[str]] = _nobody

    def start(self, strategy: SearchStrategy, view: SearchView, lane: int) -> Start:
        archive = self.archive or self.take_in()
        running = tuple(self.busy())
        tries = Counter(search.tries(self.h.journal, self.h.run_id))
        tries.update(running)
        seen = replace(view, archive=archive, tries=tries, busy=running, seed=self.h.run_id)
        return strategy.start(seen, lane)

    def refer_to(self, iteration: int, lane: int, parents: Sequence[str | None]) -> None:
        """Before a lane's candidate is judged as `iteration`: the run's reference at its
        parent, the first of `parents` that was ever an elite (evicted meanwhile included),
        recorded as that iteration's parent. The journal only: the run worktree stays at the
        best elite, and a kill here is undone by the next `settle`."""
        h = self.h
        known = {r.commit: r for r in search.elites(h.journal, h.run_id, current=False)}
        row = next((known[p] for p in parents if p in known), None)
        commit, score = h.run.last_kept_commit or "", h.run.last_kept_score  # the best elite
        if row is not None:
            commit, score = row.commit, row.score
        with h.journal.tx() as conn:
            runs.update_run(conn, h.run_id, last_kept_commit=commit, last_kept_score=score)
            search.set_parent(conn, h.run_id, iteration, lane, commit)
        h.state.saw(replace(h.run, last_kept_commit=commit, last_kept_score=score))
        failpoints.hit("frontier.after_lane_reference")


def _elite(row: EliteRow) -> Elite:
    return Elite(row.commit, row.score, row.parent, row.lineage, row.entered)


def _row(elite: Elite) -> EliteRow:
    return EliteRow(elite.commit, elite.score, elite.parent, elite.lineage, elite.entered)


def archive_of(h: RunContext) -> tuple[Elite, ...]:
    """The run's archive as the journal holds it, best first (status, the summary)."""
    rows = search.elites(h.journal, h.run_id)
    return ranked([_elite(r) for r in rows], h.direction)
