"""Parallel lanes (`run --lanes K`, issue 14): K agent sessions at once, one driver.

Each lane has its own worktree (`.autoresearch/worktrees/lanes/<run>/<k>`), its own branch
(`handle.lane_branch`), its own handoff files and logs (`runs/<run>/lanes/<k>/`). A session
starts from the current incumbent. Sessions and readings run on an `Executor`; the driver
(this module, on one thread) is the journal's one writer and judges one candidate at a time:

    idle → agent → waiting → evaluating → (judged) → idle

* waiting: the session ended and its artifact is consistent (`session.after_session`). When
  another lane moved the incumbent meanwhile, the candidate's commits are replayed onto it
  (`git.replay_onto`) once a slot is free (sooner, a keep in that slot would make the replay
  stale); a conflict is a discard, `replay conflict`, never evaluated.
* evaluating: the first reading runs in an evaluation slot. When it is back and the incumbent
  is still the one it was replayed onto, `step` judges it with that reading (more readings of
  the noise-aware test also go through the executor, each in a slot, spread over the free
  ones: `_measure`). When the incumbent moved meanwhile, the candidate is replayed again and
  measured again: a keep is always a keep of the commit the run branch then points to.
* With more than one slot, a first reading may start while others are in flight. It is
  taken on the incumbent, or – when the run's keeps so far make that the better bet
  (`measure_on_tip`, over the run's record, `keep_record`, so a resumed driver bets as
  before) – on the candidate in flight, the candidate replayed onto it (`_onto`):
  a keep of that one makes the reading one of the new incumbent's, judged as it is; a reading
  back before that one is judged waits for its verdict (`_settle`), and any other verdict
  makes it stale, taken again after a replay onto the real incumbent.

The driver's own work is serial; what no lane waits for comes after the launches (the run
branch following a keep), and what would go stale waits for the slot (replays).
* a keep moves the lane branch's commit onto the run branch (the run worktree is idle).

Two kinds of run judge a candidate in its step as soon as it is examined, with no first
reading ahead of it: a run with `evaluator.screen` (the cascade: checks, screen, full readings
in the slots, as the single lane's) and the frontier (supervisor/frontier.LaneArchive: the
lane's session started from an elite; the run's reference moves to that parent just before
the step, so it is judged there and never replayed onto the best, and back to the best elite
once the keep is in the archive). A portfolio (supervisor/portfolio.py) picks each session's
agent when it starts, the sessions in flight counted in.

Crash safety: nothing about a lane in flight is in the journal until it is judged. After a
kill -9, `resume` reaps the lanes' processes, judges every artifact a finished session left (a
reading that finished but was not judged is taken again), saves whatever an unfinished
session left as a patch under the lane's logs, records it `interrupted` as the single loop's
(`recovery.finish_interrupted_session`, one rule for both) and restarts the lane;
`recovery.recover` finishes a decided iteration in its lane and brings the run branch to the
kept commit. A session is unfinished while its lane's `lane_inflight` row exists (written
before it starts, deleted once the driver has made its artifact consistent, or once recovery
made it `interrupted`): whatever such a session left in candidate.json,
half written or complete, the driver never saw it end, and it is no verdict. That recovery
covers the previous driver's layout, whatever `--lanes` the run is resumed with: a single
loop's pending iteration is judged in the run worktree first, and lanes beyond the new count
are armed like the others, never given a session, and stopped once their work is judged
(`Lanes.open`).
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field, replace
from fractions import Fraction

from autoresearch import children, failpoints, git, reset
from autoresearch.agents import AgentConfig, make_agent
from autoresearch.agents.base import AgentResult, PastIteration
from autoresearch.contracts import candidate as cand
from autoresearch.contracts.agent_record import AgentRecord
from autoresearch.contracts.candidate import ArtifactError, CandidateArtifact
from autoresearch.contracts.screen import ScreenSpec
from autoresearch.decide import Decision, replay_conflict, touched_sealed
from autoresearch.errors import GitError, RunInterrupted
from autoresearch.evaluate import EvaluationRecord
from autoresearch.fsutil import atomic_write_json, private_dir
from autoresearch.journal import inflight, iteration_records, runs
from autoresearch.journal import lanes as lane_store
from autoresearch.journal.lanes import LaneRecord
from autoresearch.repo_state import link_shared_paths
from autoresearch.states import ArtifactStatus, DecisionKind, LaneState, RunStatus
from autoresearch.supervisor import record, refs, seal, sync
from autoresearch.supervisor.executor import (
    AgentOutcome,
    AgentTask,
    EvaluationTask,
    Executor,
    LocalExecutor,
    TaskLost,
    wait_any,
)
from autoresearch.supervisor.frontier import LaneArchive, NoArchive
from autoresearch.supervisor.handle import RunContext, RunHandle
from autoresearch.supervisor.lifecycle import has_pending_artifact
from autoresearch.supervisor.loop import (
    MSG_PROCESSING_PENDING,
    STOP_POLL_SECONDS,
    Driver,
    LaneObserver,
    LoopLimits,
    LoopOutcome,
    StopSignal,
    Tally,
)
from autoresearch.supervisor.measure import scratch_checkout
from autoresearch.supervisor.portfolio import Portfolio
from autoresearch.supervisor.recovery import cut_artifact, finish_interrupted_session
from autoresearch.supervisor.safety import dirty_entries
from autoresearch.supervisor.session import (
    RunHistory,
    after_session,
    read_artifact,
    session_record,
    write_artifact,
)
from autoresearch.supervisor.step import StepResult, step, unmeasured_decision
from autoresearch.supervisor.step_input import StepInput
from autoresearch.supervisor.strategy import SearchStrategy, Start, strategy_named

NOTE_RESUMED = "judged after a restart of the driver: the session ended before it stopped"


@dataclass
class _Pending:
    """A finished session waiting to be judged."""

    notes: list[str]
    agent: AgentRecord | None
    result: AgentResult | None
    wrote: bool


@dataclass
class _Ahead:
    """A further reading of a commit, started into a free slot before the test asked for it."""

    future: Future[EvaluationRecord]
    cancel: threading.Event
    tree: int | None  # its scratch tree (`_read_ahead`); None: the tree the test gave


@dataclass
class Lane:
    number: int
    h: RunHandle
    state: LaneState = LaneState.IDLE
    session: int = 0
    base: str = ""  # the incumbent the lane's current work is built on
    detail: str | None = None
    cancel: threading.Event = field(default_factory=threading.Event)
    agent: Future[AgentOutcome] | None = None
    reading: Future[EvaluationRecord] | None = None
    reading_on: str = ""  # the incumbent the candidate under measurement is replayed onto
    measuring: str = ""  # the commit of that first reading
    # that reading, back before the candidate it was replayed onto (`reading_on`) was judged:
    # judged once that one is kept, stale once it is not (`Lanes._settle`)
    held: EvaluationRecord | None = None
    speculated_onto: str | None = None  # the candidate in the slot it was replayed onto
    # a waiting candidate examined against the incumbent `checked_on` (valid, measurable):
    # `ready` is its head once replayed onto it (None: the replay waits for a slot)
    checked_on: str | None = None
    ready: str | None = None
    base_of_candidate: str | None = None  # the resolved base the examined candidate names
    at: str | None = None  # the incumbent a judged lane's clean worktree was left at
    attempts: int = 0  # readings taken of the current session's candidate
    pending: _Pending | None = None
    queued: int = 0  # when its session ended (the driver's count): slots go oldest first
    last_iteration: int | None = None
    last_decision: DecisionKind | None = None
    # a lane of the previous driver beyond this layout (`resume --lanes` fewer): recovered
    # like every lane, never given a session, and stopped once its work is judged (`_retire`)
    retiring: bool = False
    config: AgentConfig | None = None  # the agent of its session (a portfolio's choice)

    @property
    def busy(self) -> bool:
        return self.state in (LaneState.AGENT, LaneState.WAITING, LaneState.EVALUATING)

    def to_record(self) -> LaneRecord:
        return LaneRecord(
            self.h.run_id, self.number, self.state, "", self.session, self.base or None,
            self.detail, self.last_iteration, self.last_decision,
        )  # fmt: skip


class Lanes:
    """The lanes' layout of the one driver (`loop.Driver`): K sessions at once, each in its
    lane, their candidates judged one at a time by this (the driver's) thread."""

    def __init__(
        self,
        h: RunHandle,
        config: AgentConfig,
        limits: LoopLimits,
        executor: Executor,
        observer: LaneObserver,
        signal: StopSignal,
        strategy: SearchStrategy,
        portfolio: Portfolio | None = None,
        archive: LaneArchive | None = None,
    ) -> None:
        self.h, self.config, self.limits = h, config, limits
        # the frontier's: each candidate judged against its own parent, at once (no first
        # reading ahead of the step, no replay onto the best elite)
        self.archive = archive
        self.executor, self.observer, self.signal = executor, observer, signal
        self.strategy = strategy
        self.portfolio = portfolio  # several agents: each session's is chosen from them
        # evaluator.screen: a candidate is judged by step at once (its cascade: checks, screen,
        # then the full readings, in slots), never given a first reading ahead of the step
        self.screened = ScreenSpec.of(h.evaluator.extra) is not None
        self.from_git = make_agent(config).artifact_from_git
        self.lanes = [Lane(k, h.for_lane(k)) for k in range(1, limits.lanes + 1)]
        self.lanes += [
            Lane(k, h.for_lane(k), retiring=True) for k in _earlier_lanes(h.context, limits)
        ]
        self.tally = Tally()  # the driver's, given at `open`
        self.run_branch_behind = False
        self.published: list[LaneRecord] = []
        self.queued_count = 0  # sessions ended so far: the order waiting ones get slots in
        self.ahead: dict[str, list[_Ahead]] = {}  # further readings started, by commit
        self.trees_busy: set[int] = set()  # scratch trees of readings in flight
        self.history = RunHistory(h)  # what each session is shipped, read incrementally
        # candidates judged, and how many were kept: the odds `_onto` bets on, from the run's
        # record (so a resumed or continued driver bets as the one before it), then counted on
        self.kept, self.judged = keep_record(self.history.snapshot())

    # --- the driver's turns -----------------------------------------------------------------

    def open(self, tally: Tally) -> bool:
        """The previous driver's work in flight is recovered before this layout starts,
        whatever its lane count (the single loop's included): the single loop's iteration is
        judged, then every lane of either layout is armed (strays stopped, a cut session's
        work saved, a finished candidate queued to be judged) before any session starts."""
        self.tally = tally
        self.h.state.measure_with = self._measure
        self.h.journal.defer_backups()  # taken in `_follow`, once the lanes were served
        if not self._judge_single_loop():
            return False
        for lane in self.lanes:
            lane.h.state.measure_with = self._measure
            self._arm(lane)
        self._publish()
        return True

    def pending_artifact(self) -> bool:
        return False  # the lanes judge a waiting artifact themselves (`open`, `_advance`)

    def process_pending(self) -> None:
        """Never asked: `pending_artifact` is False."""

    def advance(self) -> None:
        self._advance()

    def in_flight(self) -> int:
        return sum(1 for x in self.lanes if x.busy)

    def idle_lanes(self) -> list[int]:
        return [x.number for x in self.lanes if x.state == LaneState.IDLE and not x.retiring]

    def launch(self, lane: int, start: Start) -> None:
        self._launch(next(x for x in self.lanes if x.number == lane), start.parent)

    def cancel_sessions(self) -> None:
        for lane in self.lanes:
            if lane.state == LaneState.AGENT:
                lane.cancel.set()

    def follow(self) -> None:
        self._follow()

    def publish(self) -> None:
        self._publish()

    def wait(self) -> None:
        futures = [f for x in self.lanes for f in (x.agent, x.reading) if f is not None]
        waiting = any(x.state == LaneState.WAITING for x in self.lanes)
        if waiting and self._free_slots() > 0:
            return  # a candidate can move on at once
        wait_any(futures, STOP_POLL_SECONDS) if futures else self.signal_wait()

    def interrupted(self) -> None:
        self._interrupt()

    def ended(self) -> None:
        self._ended()

    def abort(self) -> None:
        self._abort()

    def close(self) -> None:
        for lane in self.lanes:
            lane.cancel.set()
        self.executor.shutdown()
        self.h.state.measure_with = None
        self.h.journal.defer_backups(False)

    def _follow(self) -> None:
        """The run branch (checked out in the idle run worktree) follows the last keep; lanes
        beyond the layout whose work was judged go; the journal's backup after a judgement
        (deferred: `run`) is taken."""
        if self.run_branch_behind:
            self.run_branch_behind = False
            record.advance_run_branch(self.h.context, self.h.run)
        for lane in [x for x in self.lanes if x.retiring and not x.busy]:
            self._retire(lane)
        self.h.journal.take_deferred_backup()

    def _judge_single_loop(self) -> bool:
        """A single loop's iteration that its killed driver left (recovery made its artifact
        consistent: a cut session's says interrupted) is judged in the run's own worktree,
        as the single loop would, before a lane starts from the incumbent. False: a signal
        interrupted it (its artifact stays for the next resume)."""
        h = self.h
        if not has_pending_artifact(h.context, h.run):
            return True
        self.observer.note(MSG_PROCESSING_PENDING)
        self.observer.evaluation_started(h.run.iteration + 1)
        try:
            result = step(h, should_cancel=self.signal_set, shape_fails_run=False)
        except RunInterrupted as exc:
            self.observer.note(str(exc))
            return False
        finally:
            self._drop_ahead()
        self.observer.step_recorded(result, None)
        self.tally.pending_judged(result)
        return True

    def _retire(self, lane: Lane) -> None:
        """A lane of the previous driver beyond this layout, its work judged: stopped, and
        the driver no longer looks at it. Its row stays (status shows what it did, and a later
        `--lanes` that has it again numbers its sessions on, never over its saved patches),
        and so do its worktree and branch, at an incumbent (`clean` removes them)."""
        lane.state = LaneState.STOPPED
        lane.detail = f"not in the layout: the run was resumed with --lanes {self.limits.lanes}"
        self._publish()
        self.lanes.remove(lane)

    def signal_wait(self) -> None:
        threading.Event().wait(STOP_POLL_SECONDS)

    # --- one lane ---------------------------------------------------------------------------

    def _arm(self, lane: Lane) -> None:
        """Make the lane's worktree ready after a start or a crash; resume what it left."""
        h, lh = self.h, lane.h
        known = {r.lane: r for r in lane_store.lanes_of(h.journal, h.run_id)}
        if lane.number in known:
            lane.session = known[lane.number].session
        # from the journal: a driver killed after a judgement, before it published its lanes,
        # left the lane's row behind it
        last = iteration_records.last_of_lane(h.journal, h.run_id, lane.number)
        if last is not None:
            lane.last_iteration, lane.last_decision = last.iteration, last.decision
        _ensure_worktree(lh.context, h.run.last_kept_commit or "HEAD")
        for line in record.reap_strays(lh.context, lh.tag):  # its strays, then a killed git's locks
            self.observer.note(f"lane {lane.number}: {line}")
        private_dir(lh.paths.logs)
        kept = h.run.last_kept_commit or ""
        if git.rebase_in_progress(lh.worktree):
            git.abort_rebase(lh.worktree)  # a replay the killed driver left half-done
        cut = inflight.get_lane(h.journal, h.run_id, lane.number)
        if cut is not None:
            lane.session = max(lane.session, cut.iteration)
        # a session the crash cut off: its work saved, its artifact `interrupted`, judged
        # below as the single loop's is; then the lane starts a fresh one
        lh.refresh()
        for line in finish_interrupted_session(lh.context, lh.run):
            self.observer.note(f"lane {lane.number}: {line}")
        if _pending_artifact(lh.context):
            lane.state, lane.base = LaneState.WAITING, kept
            self._queue(lane)
            # a cut session's artifact never ended as a session: no note says it did
            notes = [] if cut_artifact(read_artifact(lh.context)) else [NOTE_RESUMED]
            lane.pending = _Pending(notes, None, None, True)
            lane.detail = "resumed: its candidate waits to be judged"
            self.observer.note(f"lane {lane.number}: {MSG_PROCESSING_PENDING}")
            self._back_to_candidate(lane)
            return
        # a lane at the run branch's tip a restore set aside holds iterations kept after
        # the backup, not an unfinished session
        kept_aside = refs.kept_aside_at_head(h.repo.repo_root, h.run_id, lh.worktree, kept)
        label = refs.KEPT_BEFORE_RESTORE if kept_aside else "unfinished-session"
        note = self._restore(lane, label, kept)
        if note:
            self.observer.note(f"lane {lane.number}: {note}")

    def _back_to_candidate(self, lane: Lane) -> None:
        """A driver killed between replaying a candidate and rewriting its artifact leaves
        the lane branch at the replayed commit; one killed inside the replay's checkout leaves
        the new incumbent's files in the tree (edits and untracked files the aborted rebase
        does not take back). Put the lane back at the artifact's commit on a clean tree (what
        lay past it saved), so the candidate is replayed afresh instead of failing validation,
        conflicting with those files or blocking its discard's reset. Nothing in the tree is
        the session's: `after_session` saved what it left before the candidate waited."""
        lh = lane.h
        artifact = _candidate(lh.context)
        if artifact is None or artifact.status != ArtifactStatus.CANDIDATE:
            return
        commit = artifact.candidate_commit
        if commit is None:
            return
        resolved = git.resolve_commits(lh.worktree, [commit])[0]
        head = _head(lh.context)
        if resolved is None or head is None:
            return
        if head == resolved and not dirty_entries(lh.worktree, lh.dirt):
            return
        if git.head_branch(lh.worktree) != record.branch_ref(lh.context):
            return  # the session left HEAD elsewhere: step says so
        path = lh.paths.session_patch(lane.session, "unfinished-replay")
        note = record.save_and_reset(lh.context, lh.run, path, resolved)
        self.observer.note(f"lane {lane.number}: {note}")

    def _restore(self, lane: Lane, label: str, base: str) -> str | None:
        """The lane's branch at `base` on a clean tree; what lay past it saved as a patch.

        A lane judged last time is known to be on its branch at the incumbent of then
        (`lane.at`, step's post-condition), an ancestor of `base`: when the tree is clean it
        only moves forward, nothing of its own to save."""
        lh = lane.h
        at, lane.at = lane.at, None
        if at is not None:
            on_branch, head = True, at
        else:
            on_branch = git.head_branch(lh.worktree) == record.branch_ref(lh.context)
            head = git.head(lh.worktree) if on_branch else ""
        movable = on_branch and (head == base or at is not None)
        if movable and not dirty_entries(lh.worktree, lh.dirt):
            if head != base:
                reset.reset_tree(lh.worktree, base, lh.dirt, branch=lh.branch_name, clean=False)
            return None
        # at `base` itself, not the incumbent: the frontier's parent may be another elite, and
        # a session told `base` must find its tree there
        return self._save(lane, label, base, None, at=base)

    def _save(
        self, lane: Lane, label: str, base: str, reset_to: str | None, at: str | None = None
    ) -> str:
        """`record.save_and_reset` into the lane's session patch `label`; by default the lane
        branch is checked out again at `at`, else the incumbent (another lane's keep may have
        moved it)."""
        lh = lane.h
        path = lh.paths.session_patch(lane.session, label)
        at = at or self.h.run.last_kept_commit
        return record.save_and_reset(lh.context, lh.run, path, base, reset_to, at=at or base)

    def _session_over(self, lane: Lane) -> None:
        """The lane's session ended and the driver made its artifact consistent."""
        with self.h.journal.tx() as conn:
            inflight.finish_lane(conn, self.h.run_id, lane.number)

    def _launch(self, lane: Lane, kept: str) -> None:
        """A session in `lane` from `kept` (the strategy's parent: greedy's is the incumbent;
        a candidate built on another is replayed onto the incumbent before it is measured)."""
        h, lh = self.h, lane.h
        lh.refresh()
        lane.session += 1
        note = self._restore(lane, "leftover", kept)
        lane.pending = None
        lane.attempts = 0
        lane.speculated_onto = None
        lane.config = self._agent_config()
        _write_handoff(lh.context, lh.run, kept)
        task = AgentTask(
            run_id=h.run_id,
            lane=lane.number,
            iteration=lane.session,
            base_commit=kept,
            worktree=lh.worktree,
            branch=lh.branch_name,
            instructions_file=lh.paths.instructions,
            candidate_file=lh.paths.candidate,
            log_path=lh.paths.session_log(lane.session),
            leftover_patch=lh.paths.session_patch(lane.session, "remote-leftover"),
            agent=lane.config,
            timeout=self.limits.agent_timeout,
            sandbox=h.run.sandbox,
            history=self.strategy.shown(self.history.snapshot()),
            lanes=self.limits.lanes,
            box=h.box(agent=True),
        )
        lane.cancel = threading.Event()
        with h.journal.tx() as conn:
            inflight.start_lane(conn, h.run_id, lane.number, lane.session, kept)
        lane.agent = self.executor.submit_agent(task, lane.cancel, _no_register)
        lane.state, lane.base = LaneState.AGENT, kept
        lane.detail = f"session {lane.session} from {kept[:12]}"
        if note:
            lane.detail += f" ({note})"
        self.observer.session_started(lane.session, lane=lane.number)

    def _agent_config(self) -> AgentConfig:
        """The agent of a session starting now: the run's, or the portfolio's choice with
        the sessions of the other lanes still in flight counted in."""
        if self.portfolio is None:
            return self.config
        running = [x.config for x in self.lanes if x.busy and x.config is not None]
        return self.portfolio.config_for(self.h.context, running)

    def _from_git(self, lane: Lane) -> bool:
        if lane.config is None or lane.config == self.config:
            return self.from_git
        return make_agent(lane.config).artifact_from_git

    def _advance(self) -> None:
        """Finished sessions and readings first (a reading back frees its slot), then the
        candidates that wait."""
        for lane in self.lanes:
            if lane.state == LaneState.AGENT and lane.agent is not None and lane.agent.done():
                self._session_ended(lane)
            reading = lane.reading
            if lane.state == LaneState.EVALUATING and reading is not None and reading.done():
                self._reading_back(lane)
        self.h.refresh()
        self._settle()
        # oldest first: a lane whose session ended earlier must not be starved of slots by
        # lanes numbered before it (its candidate only grows staler)
        for lane in sorted(self.lanes, key=lambda x: x.queued):
            if lane.state != LaneState.WAITING:
                continue
            kept = self.h.run.last_kept_commit or ""  # current: a judgement refreshes it
            examined = lane.checked_on is not None and lane.checked_on in (
                kept,
                lane.speculated_onto,  # replayed onto the candidate in the slot: it waits too
            )
            if examined and self._free_slots() <= 0:
                continue  # examined already: only a slot is missing
            self._prepare_candidate(lane)
        self._speculate()

    def _free_slots(self) -> int:
        # A first reading is started only into a free slot: queued behind another, it would
        # be stale (measured on an older incumbent) whenever the one before it is kept.
        first = sum(1 for x in self.lanes if x.reading is not None)  # first readings in flight
        further = sum(1 for q in self.ahead.values() for x in q if not x.future.done())
        return self.executor.slots - first - further

    def _session_ended(self, lane: Lane) -> None:
        future, lane.agent = lane.agent, None
        assert future is not None
        lh = lane.h
        lh.refresh()
        try:
            outcome = future.result()
        except TaskLost as exc:
            note = self._save(lane, "lost", lane.base, None)
            text = f"agent session {exc}"
            write_artifact(lh.context, ArtifactStatus.INTERRUPTED, None, lane.base, text, [note])
            self._session_over(lane)
            lane.pending = _Pending([str(exc), note], None, None, False)
            lane.state = LaneState.WAITING
            self._queue(lane)
            return
        result = outcome.result
        if self.h.run.status != RunStatus.RUNNING:
            # the run ended meanwhile: keep the work, record nothing
            self._save(lane, "after-run-ended", lane.base, None)
            sync.write_placeholder(
                lh.context, lh.run.last_kept_commit
            )  # the session's work is in the patch: nothing to judge
            self._session_over(lane)
            lane.state = LaneState.STOPPED
            return

        def save(label: str, since: str, reset_to: str | None) -> str:
            return self._save(lane, label, since, reset_to)

        from_git = self._from_git(lane)
        notes = after_session(lh.context, lh.run, from_git, result, lane.session, lane.base, save)
        self._session_over(lane)  # its artifact is consistent: judged, even after a crash
        wrote = not cand.is_placeholder(read_artifact(lh.context)) or from_git
        lane.pending = _Pending(notes, session_record(result, wrote, lane.number), result, wrote)
        lane.state = LaneState.WAITING
        self._queue(lane)
        lane.detail = f"session {lane.session} ended; its candidate waits"

    def _queue(self, lane: Lane) -> None:
        self.queued_count += 1
        lane.queued = self.queued_count

    def _prepare_candidate(self, lane: Lane) -> None:
        """Bring the lane's candidate onto the incumbent and start its first reading (or judge
        at once what needs no reading).

        The git work waits for a slot where it would go stale: a replay done while the slot is
        busy is done again whenever the reading in it ends in a keep. What is examined once
        against an incumbent is not examined again (`checked_on`, `ready`)."""
        h, lh = self.h, lane.h
        if self.archive is not None:
            self._refer_to_parent(lane)
        kept = h.run.last_kept_commit or ""
        onto = self._onto()
        if lane.checked_on != kept and (onto is None or lane.checked_on != onto):
            lane.checked_on, lane.ready = None, None
            if not self._examine(lane, kept):
                return  # judged
        if self._free_slots() <= 0:
            lane.detail = "waits for an evaluation slot"
            return
        base = kept
        if onto is not None and self._ready_onto(lane, onto):
            base = onto  # measured on the candidate in flight: judged once it is kept
        elif lane.checked_on != kept:
            # not measurable there (a conflict, nothing changed): on the incumbent after all
            lane.checked_on, lane.ready = None, None
            if not self._examine(lane, kept):
                return  # judged
        if base == kept and lane.ready is None and not self._replay(lane, kept):
            return  # judged
        head = lane.ready
        assert head is not None
        seal.verify(lh.context)
        if self.screened or self.archive is not None:
            self._judge(lane)  # in step as without lanes (a screen's cascade included)
            return
        lane.attempts += 1
        while lh.paths.reading_log(lane.session, lane.attempts).exists():
            lane.attempts += 1  # an earlier reading (before a restart) keeps its log
        task = record.evaluation_task(
            lh.context,
            h.run.iteration + 1,
            head,
            lh.worktree,
            lh.paths.reading_log(lane.session, lane.attempts),
        )
        lane.cancel = threading.Event()
        lane.reading = self.executor.submit_evaluation(task, lane.cancel, _no_register)
        lane.reading_on, lane.measuring = base, head
        lane.state = LaneState.EVALUATING
        lane.checked_on, lane.ready = None, None
        lane.detail = f"measuring {head[:12]} (session {lane.session})"
        self.observer.evaluation_started(lane.session, lane=lane.number)

    def _refer_to_parent(self, lane: Lane) -> None:
        """The frontier's reference at the parent the candidate names (else the one its
        session started from): what `_examine` and step then judge it against."""
        assert self.archive is not None
        artifact = _candidate(lane.h.context)
        named = artifact.base_commit if artifact is not None else None
        try:
            base = git.resolve_commits(lane.h.worktree, [named])[0] if named else None
        except GitError:
            base = None
        self.archive.refer_to(self.h.run.iteration + 1, lane.number, [base, lane.base])
        lane.checked_on, lane.ready = None, None  # examined against this parent afresh

    def parents_in_flight(self) -> list[str]:
        """The parents the lanes' sessions and candidates not yet judged are built on."""
        return [x.base for x in self.lanes if x.busy and x.base]

    def _examine(self, lane: Lane, kept: str) -> bool:
        """Whether the waiting candidate needs a reading on `kept` (else it was judged): its
        artifact, its commits, and – built on `kept` already – what it changes."""
        lh = lane.h
        lh.refresh()
        artifact = _candidate(lh.context)
        if artifact is None:
            self._judge(lane)  # step records the invalid artifact as it would without lanes
            return False
        base, commit = artifact.base_commit, artifact.candidate_commit
        if artifact.status != ArtifactStatus.CANDIDATE:
            if base != kept:
                _rewrite(lh.context, artifact, kept)
            self._judge(lane)
            return False
        if commit is None:
            self._judge(lane)  # step says a candidate needs its commit
            return False
        try:
            resolved = git.resolve_commits(lh.worktree, [commit, base, "HEAD"])
        except GitError:  # a session may leave the worktree broken: step says what is wrong
            resolved = [None, None, None]
        head = resolved[2]
        if head is None or resolved[0] != head or resolved[1] is None:
            self._judge(lane)  # step's validation says what is wrong
            return False
        lane.base_of_candidate = resolved[1]
        lane.checked_on = kept
        if resolved[1] != kept:
            return True  # replayed once a slot is free
        if not self._measurable(lane, head, kept):
            return False
        lane.ready = head
        return True

    def _speculate(self) -> None:
        """While the one slot measures a candidate, replay the candidate next in line onto it.

        A keep of the candidate in the slot makes it the incumbent, and the next one's replay
        onto it is then what `_prepare_candidate` would do first: done now, while the driver
        only waits, the next reading starts as soon as the slot is free (the replay, a
        rebase, was on the slot's path after every keep). Anything else (a discard, a
        conflict, a replay that changes nothing) changes nothing that counts: the candidate
        is then built on that unjudged commit (its artifact says so) and is replayed from
        there onto whatever the incumbent is when its turn comes, its own commits only, as
        any replay; a conflict or an empty replay here is not judged, only not used."""
        if self._free_slots() > 0 or self.ahead:
            return
        kept = self.h.run.last_kept_commit or ""
        readers = [x for x in self.lanes if x.reading is not None]
        if len(readers) != 1 or readers[0].reading_on != kept or not readers[0].measuring:
            return
        onto = readers[0].measuring
        waiting = [x for x in self.lanes if x.state == LaneState.WAITING]
        ready = [x for x in waiting if x.checked_on == kept and x.base_of_candidate]
        if not ready:
            return
        lane = min(ready, key=lambda x: x.queued)
        if lane.speculated_onto == onto or min(waiting, key=lambda x: x.queued) is not lane:
            return  # tried onto this one already, or not next in line
        if self._replay_onto_unjudged(lane, onto):
            assert lane.ready is not None
            self.executor.stage(lane.h.worktree, lane.ready)  # shipped while the slot is busy

    def _onto(self) -> str | None:
        """The candidate in flight a first reading starting now is better taken on, replayed
        onto it (None: on the incumbent).

        The candidates in flight (measured or waiting for a verdict) built one on another from
        the incumbent, each measured on the one before, form a chain; a reading on its tip is
        of use when every one of them is kept, one on the incumbent when the first is not
        (`measure_on_tip` weighs the two). Two measured on one commit are no chain: whichever
        is judged first decides what the other's reading is worth, so a reading starting
        then goes on the incumbent, as with no chain."""
        kept = self.h.run.last_kept_commit or ""
        built_on: dict[str, list[str]] = {}
        for lane in self.lanes:
            if _in_flight(lane):
                built_on.setdefault(lane.reading_on, []).append(lane.measuring)
        tip, depth = kept, 0
        while depth < len(self.lanes) and len(built_on.get(tip, [])) == 1:
            tip, depth = built_on[tip][0], depth + 1
        if built_on.get(tip) or not measure_on_tip(self.kept, self.judged, depth):
            return None
        return tip

    def _live(self) -> set[str]:
        """The incumbent and the candidates in flight built on it, one on another: the commits
        a first reading may be on and still be judged."""
        live = {self.h.run.last_kept_commit or ""}
        grown = True
        while grown:
            more = {x.measuring for x in self.lanes if _in_flight(x) and x.reading_on in live}
            grown = not more <= live
            live |= more
        return live

    def _ready_onto(self, lane: Lane, onto: str) -> bool:
        """Whether the waiting candidate, examined against the incumbent, is ready to be
        measured replayed onto `onto`, a candidate in flight (replayed there now, unless a
        try onto it failed before)."""
        if lane.checked_on == onto and lane.ready is not None:
            return True  # replayed there while the slots were busy (`_speculate`)
        kept = self.h.run.last_kept_commit or ""
        if lane.checked_on != kept or lane.speculated_onto == onto:
            return False
        return self._replay_onto_unjudged(lane, onto)

    def _replay_onto_unjudged(self, lane: Lane, onto: str) -> bool:
        """Replay the waiting candidate, examined against the incumbent, onto `onto`, a
        candidate not yet judged: whether it is ready to be measured there (`lane.ready`).
        A conflict leaves it as it was; a replay that changes nothing leaves it built on
        `onto`, to be examined afresh. Neither is a verdict: `onto` may yet be discarded."""
        lane.speculated_onto = onto
        lh = lane.h
        artifact = _candidate(lh.context)
        old = lane.base_of_candidate
        if artifact is None or old is None:
            return False
        replayed, _ = git.replay_onto(lh.worktree, old, onto)
        if replayed is None:
            return False  # a conflict: the branch is back where it was; judged in its turn
        assert lane.pending is not None
        lane.pending.notes.append(
            f"replayed onto {onto[:12]} while it was measured (built on {old[:12]}): "
            f"{str(artifact.candidate_commit)[:12]} → {replayed[:12]}"
        )
        _rewrite(lh.context, artifact, onto, replayed)
        lane.base_of_candidate = onto
        lane.checked_on, lane.ready = onto, None
        if self._changes_something(lane, replayed, onto):
            lane.ready = replayed
            return True
        lane.checked_on = None  # examined afresh in its turn (step judges it then)
        return False

    def _replay(self, lane: Lane, kept: str) -> bool:
        """Replay the examined candidate onto `kept`: whether it still needs a reading (a
        conflict, or a replay that changes nothing, was judged)."""
        lh = lane.h
        old = lane.base_of_candidate
        artifact = _candidate(lh.context)
        assert artifact is not None and old is not None
        head = artifact.candidate_commit
        replayed, detail = git.replay_onto(lh.worktree, old, kept)
        if replayed is None:
            # judged as the session left it, built on `old`: an artifact rewritten as built on
            # `kept` whose commit is not, read by a driver killed before the discard was
            # recorded, would be measured and fail the run (`MSG_COMMIT_NOT_DESCENDANT`)
            failpoints.hit("lanes.after_replay_conflict")
            self._judge(lane, replay_conflict(kept, detail))
            return False
        assert lane.pending is not None
        lane.pending.notes.append(
            f"replayed onto {kept[:12]} (built on {old[:12]}): {str(head)[:12]} → {replayed[:12]}"
        )
        _rewrite(lh.context, artifact, kept, replayed)
        if not self._measurable(lane, replayed, kept):
            return False
        lane.ready = replayed
        return True

    def _measurable(self, lane: Lane, head: str, kept: str) -> bool:
        """False (and judged) when the candidate changes nothing or touches the sealed
        harness: step decides those without a reading."""
        if not self._changes_something(lane, head, kept):
            self._judge(lane)
            return False
        return True

    def _changes_something(self, lane: Lane, head: str, kept: str) -> bool:
        lh = lane.h
        if (lh.refresh().last_kept_commit or "") == kept:
            # built on the incumbent: ask step's own rule before any reading, a duplicate of a
            # measured tree (novelty) included, so a lane never spends a reading on one
            return unmeasured_decision(lh.context, kept, head).decision is None
        # built on a candidate not yet judged (speculation): it is not a verdict either way
        return not (
            git.same_tree(lh.worktree, head, kept)
            or bool(lh.sealed and touched_sealed(git.changed_paths(lh.worktree, kept), lh.sealed))
        )

    def _reading_back(self, lane: Lane) -> None:
        future, lane.reading = lane.reading, None
        assert future is not None
        try:
            reading = future.result()
        except TaskLost as exc:
            self.observer.note(f"lane {lane.number}: reading lost ({exc}); measuring again")
            lane.state = LaneState.WAITING
            return
        if reading.cancelled:
            lane.state = LaneState.WAITING  # interrupted: the artifact stays for resume
            return
        self.h.refresh()
        if (self.h.run.last_kept_commit or "") == lane.reading_on:
            self._judge(lane, first=reading)
        elif lane.reading_on in self._live():
            # measured on a candidate in flight: judged once that one is kept (`_settle`)
            lane.held = reading
            lane.detail = f"measured {lane.measuring[:12]}; waits for {lane.reading_on[:12]}"
            # a finished reading only the driver's memory holds: a kill now must lose nothing
            failpoints.hit("lanes.reading_held")
        else:
            lane.state = LaneState.WAITING  # another lane kept meanwhile: replay, measure again

    def _judge(
        self, lane: Lane, forced: Decision | None = None, first: EvaluationRecord | None = None
    ) -> None:
        lh = lane.h
        lh.refresh()
        lane.checked_on, lane.ready = None, None
        pending = lane.pending or _Pending([], None, None, True)
        cancel = self.signal_set
        if first is None:  # judged without a first reading: step runs now, as without lanes
            self.observer.evaluation_started(lane.session, lane=lane.number)
        given = StepInput(tuple(pending.notes), pending.agent, first, forced)
        try:
            result = step(lh, given, should_cancel=cancel, shape_fails_run=False)
        except RunInterrupted as exc:
            self.observer.note(f"lane {lane.number}: {exc}")
            lane.state = LaneState.WAITING
            return
        finally:
            self._drop_ahead()
        self.tally.sessions += 1
        if first is not None:
            self.judged += 1
            self.kept += result.keep
        self._recorded(lane, result, pending)

    def _settle(self) -> None:
        """After the readings that came back: a first reading on a candidate that became the
        incumbent is judged (one whose reading waited for it too, in turn); one on a commit
        that is neither the incumbent nor a candidate in flight is worthless (a keep moved the
        incumbent past it, or that candidate was not kept): a reading back goes, its candidate
        waits to be replayed and measured again, and one in flight is stopped now, its slot is
        wanted (`_reading_back` sends its candidate back to waiting)."""
        while True:  # a judgement refreshes the run (`_recorded`)
            kept = self.h.run.last_kept_commit or ""
            live = self._live()
            judge = [x for x in self.lanes if x.held is not None and x.reading_on == kept]
            for lane in self.lanes:
                if lane.held is not None and lane.reading_on not in live:
                    lane.held, lane.state = None, LaneState.WAITING
                if lane.reading is not None and lane.reading_on not in live:
                    lane.cancel.set()
            if not judge:
                return
            lane = judge[0]
            reading, lane.held = lane.held, None
            self._judge(lane, first=reading)

    def signal_set(self) -> bool:
        return self.signal.reason is not None

    def _recorded(self, lane: Lane, result: StepResult, pending: _Pending) -> None:
        self.h.refresh()
        if self.archive is not None:
            self.archive.settle()  # a keep enters the archive; the run branch at the best
        else:  # the run branch follows the kept lane commit once the lanes were served
            self.run_branch_behind = self.run_branch_behind or result.keep
        self.observer.step_recorded(result, pending.result, lane=lane.number)
        lane.last_iteration, lane.last_decision = result.iteration, result.decision
        lane.at = result.last_kept_commit if result.run_status == RunStatus.RUNNING else None
        lane.state, lane.pending, lane.detail = LaneState.IDLE, None, None
        if pending.result is not None:
            self.tally.session_judged(pending.result, result, pending.wrote)

    # --- readings through the executor ------------------------------------------------------

    def _measure(
        self, task: EvaluationTask, should_cancel: Callable[[], bool] | None
    ) -> EvaluationRecord:
        """A further reading of a candidate being judged (the noise-aware test), in a slot like
        every reading; the driver waits for it.

        With slots free, more readings of the same commit start at once, each in a scratch
        checkout of its own (`_read_ahead`); the test still takes them one at a time, in the
        order it asks, and decides after each as before. A reading's value does not depend on
        when it was started, and the test chose to take it before seeing it: the statistics
        are those of readings taken one after the other. Readings it does not ask for are
        dropped unseen when the iteration is judged (`_drop_ahead`)."""
        queue = self.ahead.setdefault(task.commit, [])
        if not queue:
            queue.append(self._submit_ahead(task))
        self._read_ahead(task, queue)
        reading = queue.pop(0)
        while True:
            try:
                result = reading.future.result(timeout=STOP_POLL_SECONDS)
            except TimeoutError:
                if should_cancel is not None and should_cancel():
                    reading.cancel.set()
                    for other in (x for q in self.ahead.values() for x in q):
                        other.cancel.set()
                continue
            except TaskLost:
                self._release(reading)
                reading = self._submit_ahead(task)
                continue
            self._release(reading)
            return result

    def _submit_ahead(self, task: EvaluationTask, tree: int | None = None) -> _Ahead:
        cancel = threading.Event()
        return _Ahead(self.executor.submit_evaluation(task, cancel, _no_register), cancel, tree)

    def _read_ahead(self, task: EvaluationTask, queue: list[_Ahead]) -> None:
        """Fill the free slots with readings of `task.commit`, each in its own scratch tree."""
        if not task.commit:
            return
        while self._free_slots() > 0:
            number = next(i for i in range(len(self.trees_busy) + 1) if i not in self.trees_busy)
            tree = self.h.paths.scratch / "ahead" / str(number)
            scratch_checkout(self.h.context, tree, task.commit)
            log = task.log_path.with_name(f"{task.log_path.stem}-ahead-{len(queue)}.log")
            self.trees_busy.add(number)
            queue.append(self._submit_ahead(replace(task, tree=tree, log_path=log), number))

    def _release(self, reading: _Ahead) -> None:
        if reading.tree is not None:
            self.trees_busy.discard(reading.tree)

    def _remove_ahead_trees(self) -> None:
        """An ended run keeps no scratch checkout (as finalize removes the incumbent's)."""
        folder = self.h.paths.scratch / "ahead"
        if folder.is_dir():
            for tree in sorted(folder.iterdir()):
                git.worktree_remove(self.h.repo.repo_root, tree)

    def _drop_ahead(self) -> None:
        """Readings started ahead that the test did not ask for: stopped and never seen."""
        dropped = [x for queue in self.ahead.values() for x in queue]
        self.ahead.clear()
        for reading in dropped:
            reading.cancel.set()
        for reading in dropped:
            with contextlib.suppress(TaskLost):
                reading.future.result()
            self._release(reading)
        if dropped:
            self.observer.note(f"{len(dropped)} reading(s) started ahead were not needed")

    # --- endings ----------------------------------------------------------------------------

    def _interrupt(self) -> None:
        """A signal: stop every session and reading; finished sessions are judged on resume."""
        for lane in self.lanes:
            lane.cancel.set()
        self._follow()
        for lane in self.lanes:
            if lane.agent is not None:
                try:
                    outcome = lane.agent.result()
                except TaskLost:
                    outcome = None
                lane.agent = None
                lh = lane.h
                lh.refresh()
                if outcome is not None and lh.run.status == RunStatus.RUNNING:

                    def save(label: str, since: str, reset_to: str | None, ln: Lane = lane) -> str:
                        return self._save(ln, label, since, reset_to)

                    from_git = self._from_git(lane)
                    after_session(
                        lh.context, lh.run, from_git, outcome.result, lane.session, lane.base, save
                    )
                    self._session_over(lane)
                lane.state, lane.detail = LaneState.WAITING, "interrupted; judged on resume"
            if lane.reading is not None or lane.held is not None:
                if lane.reading is not None:
                    lane.reading.result()
                lane.reading, lane.held = None, None
                lane.state, lane.detail = LaneState.WAITING, "interrupted; measured on resume"
        self._publish()

    def _abort(self) -> None:
        """A second Ctrl-C interrupts at once, as without lanes: the sessions and readings are
        killed now instead of being given their kill grace (the first signal gave it);
        `resume` saves what they left as patches. No SIGTERM grace either: given one lane
        after another, 2 s each, three stubborn lanes held the exit 6 s."""
        for lane in self.lanes:
            lane.cancel.set()
            children.reap(self.h.journal, lane.h.tag, grace=0.0)

    def _ended(self) -> None:
        self._follow()
        self._remove_ahead_trees()
        for lane in self.lanes:
            if lane.busy:
                lane.cancel.set()
        for lane in self.lanes:
            if lane.agent is not None:
                with contextlib.suppress(TaskLost):
                    lane.agent.result()
                lane.agent = None
                self._save(
                    lane, "after-run-ended", lane.base or self.h.run.last_kept_commit or "", None
                )
                sync.write_placeholder(
                    lane.h.context, lane.h.run.last_kept_commit
                )  # saved in the patch: nothing to judge
                self._session_over(lane)
            if lane.reading is not None:
                with contextlib.suppress(TaskLost):
                    lane.reading.result()
                lane.reading = None
            lane.held = None
            if lane.state != LaneState.WAITING:
                lane.state = LaneState.STOPPED
            lane.detail = None
        self._publish()

    def _publish(self) -> None:
        records = [lane.to_record() for lane in self.lanes]
        if records != self.published:  # a write per pass would cost the driver's time
            with self.h.journal.tx() as conn:
                for rec in records:
                    lane_store.save_lane(conn, rec)
            self.published = records
        self.observer.lanes_changed(records)


def run_lanes(
    h: RunHandle,
    config: AgentConfig,
    limits: LoopLimits,
    executor: Executor | None,
    observer: LaneObserver,
    signal: StopSignal,
    strategy: SearchStrategy | None = None,
    portfolio: Portfolio | None = None,
) -> LoopOutcome:
    """The one driver (`loop.Driver`) with `limits.lanes` lanes, until the loop's table says
    the run is over or a signal interrupts it (the same outcomes as `loop.run_loop`). Without
    an `executor`, the work runs on this machine with sandbox.md's evaluation slots; with a
    `portfolio`, each session's agent is chosen from it."""
    if executor is None:
        executor = local_executor(h.context, limits.lanes)
    search = strategy or strategy_named(limits.strategy)
    archive = LaneArchive(h, limits.archive_size) if search.keeps_archive else None
    layout = Lanes(h, config, limits, executor, observer, signal, search, portfolio, archive)
    if archive is not None:
        archive.busy = layout.parents_in_flight
    keeper = archive or NoArchive()
    return Driver(h, layout, limits, signal, search, observer.note, keeper).run()


def local_executor(h: RunContext, lanes: int) -> LocalExecutor:
    slots = h.sandbox.evaluation.slots
    return LocalExecutor(max(1, lanes), slots)


def _earlier_lanes(h: RunContext, limits: LoopLimits) -> list[int]:
    """The lanes a previous driver of the run had beyond `limits.lanes` that may hold work in
    flight (a session, a candidate) and strays, whatever lane count the run is resumed with:
    every one not stopped (a stopped lane's work ended with its run, or was retired)."""
    known = {
        r.lane for r in lane_store.lanes_of(h.journal, h.run_id) if r.state != LaneState.STOPPED
    }
    known.update(inflight.lanes_in_flight(h.journal, h.run_id))
    return sorted(k for k in known if k > limits.lanes)


def keep_record(past: Sequence[PastIteration]) -> tuple[int, int]:
    """(kept, judged) of a run's recorded candidates (keeps and discards; a noop or an
    interrupted session judged nothing): the keep rate `measure_on_tip` is given."""
    judged = [p.decision for p in past if p.decision in (DecisionKind.KEEP, DecisionKind.DISCARD)]
    return judged.count(DecisionKind.KEEP), len(judged)


def measure_on_tip(kept: int, judged: int, depth: int) -> bool:
    """Whether a first reading is better taken on the tip of a chain of `depth` candidates in
    flight (each built on the one before, the first on the incumbent) than on the incumbent,
    after `judged` candidates measured by the run's lanes of which `kept` were kept.

    A reading on the tip is of use when all `depth` are kept, one on the incumbent when the
    first of them is not; the other reading is taken again after a replay. With the keep
    rate p = (kept + 1) / (judged + 2) (none judged yet: even odds), the tip is the better bet
    when p ** depth > 1 - p; a tie goes to the incumbent, which needs no bet."""
    if depth < 1:
        return False
    p = Fraction(kept + 1, judged + 2)
    return p**depth > 1 - p


def _in_flight(lane: Lane) -> bool:
    """The lane's candidate is measured (its first reading running, not stopped) or was, its
    reading waiting for the verdict on the candidate it was replayed onto."""
    if lane.state != LaneState.EVALUATING or not lane.measuring:
        return False
    return lane.held is not None or (lane.reading is not None and not lane.cancel.is_set())


def _no_register(pgid: int) -> None:
    """Lane children are not registered (worker threads never write the journal): the
    reaper finds them by their lane's tag (RUN_ID and the lane worktree)."""


def _ensure_worktree(lh: RunContext, start: str) -> None:
    """The lane's worktree on its branch (a new one at `start`, the run's kept commit); one a
    kill inside `git worktree add` left half-built is built anew (its branch keeps the lane's
    commits). Only that damage: whatever else a session left in the tree is its work, saved by
    `_arm`."""
    private_dir(lh.worktree.parent)
    root = lh.repo.repo_root
    if git.ensure_worktree(root, lh.worktree, lh.branch_name, start, git.unfinished_add):
        link_shared_paths(root, lh.worktree, lh.links)


def _write_handoff(lh: RunContext, run: runs.RunRecord, kept: str) -> None:
    """The lane's placeholder and instructions, naming `kept` as the commit to build on (the
    frontier's parent may be another elite than the run's reference: named in them only, the
    record `run` stays the journal's, which the seal checks compare with)."""
    if not _placeholder_on(lh, kept):  # the judgement wrote it, unless a keep came
        sync.write_placeholder(lh, kept)
    sync.write_instructions(lh, replace(run, last_kept_commit=kept))


def _pending_artifact(lane: RunContext) -> bool:
    """The lane's candidate.json holds a session's artifact no step has judged."""
    read = sync.read_artifact(lane.paths.candidate)
    if read.sha256 is None or runs.artifact_judged(lane.journal, lane.run_id, read.sha256):
        return False
    return read.from_session


def _placeholder_on(lane: RunContext, kept: str) -> bool:
    data = read_artifact(lane)
    return cand.is_placeholder(data) and isinstance(data, dict) and data.get("base_commit") == kept


def _head(lane: RunContext) -> str | None:
    try:
        return git.head(lane.worktree)
    except GitError:  # a session may leave HEAD unborn or the worktree broken
        return None


def _candidate(lane: RunContext) -> CandidateArtifact | None:
    """The lane's artifact as the record step reads, None when it is not one (missing, not
    JSON, not schema-valid): step then judges it, with the message the single loop gives."""
    raw = sync.read_artifact(lane.paths.candidate).raw
    if raw is None:
        return None
    try:
        return cand.parse_artifact(raw.decode("utf-8", "replace"))
    except ArtifactError:
        return None


def _rewrite(
    lane: RunContext, artifact: CandidateArtifact, base: str, commit: str | None = None
) -> None:
    """The artifact as built on `base` (replayed there as `commit`, when given); the session's
    other fields stay as it wrote them, in the contract's JSON (`CandidateArtifact.to_dict`)."""
    moved = replace(
        artifact, base_commit=base, candidate_commit=commit or artifact.candidate_commit
    )
    atomic_write_json(lane.paths.candidate, moved.to_dict())
