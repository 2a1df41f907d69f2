"""The loop (supervisor.md §9): placeholder → instructions → agent session → artifact → step,
until a limit, an abort, a failure, the search strategy or an operator stops it.

What to do next is a pure function of the run's state (`next_action`). One driver (`Driver`)
runs every iteration, for the single loop (the one-lane layout `SingleLane`, here) and for
`run --lanes K` (`supervisor/lanes.Lanes`) alike; what a session leaves is made consistent,
losing nothing, by `supervisor/session.after_session`.
"""

from __future__ import annotations

import contextlib
import itertools
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from enum import StrEnum
from typing import TYPE_CHECKING, Protocol

from autoresearch import children, failpoints, git, proc
from autoresearch.agents.base import Agent, AgentResult, SessionRequest
from autoresearch.clock import seconds_between, utc_now_iso
from autoresearch.contracts import candidate as cand
from autoresearch.decide import (
    DEFAULT_MAX_AGENT_FAILURES,
    DEFAULT_MAX_NOOPS,
    Budget,
    Spend,
    budget_exhausted,
    stop_agent_failures,
    stop_max_iterations,
    stop_noop_limit,
)
from autoresearch.errors import JournalError, RefusedError, RunInterrupted
from autoresearch.journal import children as registry
from autoresearch.journal import inflight, iteration_records, runs
from autoresearch.states import (
    REJECTS_CANDIDATE,
    ChildRole,
    DecisionKind,
    KeepPolicy,
    RunStatus,
)
from autoresearch.supervisor import diagnose, record, sync
from autoresearch.supervisor.archive import DEFAULT_ARCHIVE_SIZE
from autoresearch.supervisor.finalize import finalize_run
from autoresearch.supervisor.frontier import Keeper, NoArchive, keeper_for
from autoresearch.supervisor.handle import RunContext, RunHandle
from autoresearch.supervisor.lifecycle import has_pending_artifact
from autoresearch.supervisor.plateau import PlateauWatch, run_rule
from autoresearch.supervisor.portfolio import Portfolio
from autoresearch.supervisor.safety import dirty_entries
from autoresearch.supervisor.session import MSG_NO_ARTIFACT as MSG_NO_ARTIFACT
from autoresearch.supervisor.session import RunHistory as RunHistory
from autoresearch.supervisor.session import after_session, read_artifact
from autoresearch.supervisor.session import history as history
from autoresearch.supervisor.session import session_failure as session_failure
from autoresearch.supervisor.session import session_record as session_record
from autoresearch.supervisor.step import StepResult, step
from autoresearch.supervisor.step_input import StepInput
from autoresearch.supervisor.strategy import (
    DEFAULT_STRATEGY,
    SearchStrategy,
    SearchView,
    Start,
    strategy_named,
)

if TYPE_CHECKING:
    from autoresearch.journal.lanes import LaneRecord

STOP_POLL_SECONDS = 1.0
MSG_PROCESSING_PENDING = "processing the artifact the previous session left"


@dataclass(frozen=True)
class LoopLimits:
    """When the loop ends on its own."""

    max_iterations: int | None = None
    max_noops: int = DEFAULT_MAX_NOOPS
    max_agent_failures: int = DEFAULT_MAX_AGENT_FAILURES
    agent_timeout: float | None = None
    # spending limits over all lanes (sandbox.md `budget:` fills what is None here)
    budget_usd: float | None = None
    budget_tokens: int | None = None
    budget_hours: float | None = None
    lanes: int = 0  # agent sessions at once (`run --lanes K`, supervisor/lanes.py); 0: no lanes
    # a plateau (supervisor/plateau.py): None: sandbox.md's `search:`, else the default
    plateau: int | None = None
    on_plateau: str | None = None
    strategy: str = DEFAULT_STRATEGY  # how the run searches (supervisor/strategy.STRATEGIES)
    archive_size: int = DEFAULT_ARCHIVE_SIZE  # the frontier's elites at most


@dataclass(frozen=True)
class LoopState:
    """The facts `next_action` decides on."""

    status: RunStatus
    stop_requested: str | None
    iteration: int
    trailing_noops: int
    agent_failures: int
    pending_artifact: bool
    last_failure: str | None = None  # why the latest failed session failed (the stop note)
    budget_stop: str | None = None  # `budget exhausted (<which>)` once a budget is spent
    search_stop: str | None = None  # the search strategy's reason to end the run (a plateau)
    # the failure limit's stop reason when the latest failure was a malformed artifact: its
    # validation message (§4's stop reason); None: `repeated agent failure limit reached (<n>)`
    failure_stop: str | None = None


class ActionKind(StrEnum):
    """What the loop does next (`next_action`)."""

    EXIT = "exit"  # the run is no longer running: leave it as it is
    FINISH = "finish"  # end the run with `Action.status`
    PROCESS_PENDING = "process_pending"  # step the artifact the previous session left
    LAUNCH = "launch"  # start an agent session


@dataclass(frozen=True)
class Action:
    kind: ActionKind
    status: RunStatus | None = None
    reason: str | None = None
    note: str | None = None


def next_action(state: LoopState, limits: LoopLimits) -> Action:
    """The loop's transition table."""
    if state.status != RunStatus.RUNNING:
        return Action(ActionKind.EXIT)
    if state.stop_requested:
        return Action(ActionKind.FINISH, RunStatus.STOPPED, state.stop_requested)
    if state.pending_artifact:
        return Action(ActionKind.PROCESS_PENDING)
    if state.budget_stop:
        return Action(ActionKind.FINISH, RunStatus.STOPPED, state.budget_stop)
    # failed sessions also record noops and count as iterations: the failure limit is checked
    # first, so that a broken agent ends the run as failed instead of looking like an agent
    # without ideas, or like a run that completed its iterations (exit 0)
    if limits.max_agent_failures > 0 and state.agent_failures >= limits.max_agent_failures:
        limit = stop_agent_failures(limits.max_agent_failures)
        if state.failure_stop:  # the artifact's message is the reason, the limit the note
            return Action(ActionKind.FINISH, RunStatus.FAILED, state.failure_stop, limit)
        return Action(ActionKind.FINISH, RunStatus.FAILED, limit, state.last_failure)
    if limits.max_iterations is not None and state.iteration >= limits.max_iterations:
        return Action(
            ActionKind.FINISH, RunStatus.COMPLETED, stop_max_iterations(limits.max_iterations)
        )
    if state.search_stop:
        return Action(ActionKind.FINISH, RunStatus.COMPLETED, state.search_stop)
    if limits.max_noops > 0 and state.trailing_noops >= limits.max_noops:
        return Action(ActionKind.FINISH, RunStatus.STOPPED, stop_noop_limit(limits.max_noops))
    return Action(ActionKind.LAUNCH)


class LoopObserver(Protocol):
    """Progress callbacks (the CLI renders them; tests may record them).

    `lane` > 0: the event is lane `lane`'s of `run --lanes K` (supervisor/lanes.py), and
    `iteration` is that lane's session number: an iteration is numbered when it is judged."""

    def session_started(self, iteration: int, lane: int = 0) -> None: ...

    def evaluation_started(self, iteration: int, lane: int = 0) -> None: ...

    def step_recorded(
        self, result: StepResult, agent: AgentResult | None, lane: int = 0
    ) -> None: ...

    def note(self, message: str) -> None: ...


class LaneObserver(LoopObserver, Protocol):
    """A loop observer that also shows what each lane is doing (here, not in lanes.py: a
    single loop's driver never imports the lane scheduler)."""

    def lanes_changed(self, lanes: list[LaneRecord]) -> None: ...


class StopSignal:
    """Set from a signal handler (Ctrl-C, SIGTERM); polled by the loop and its children."""

    def __init__(self) -> None:
        self.reason: str | None = None

    def set(self, reason: str) -> None:
        self.reason = reason


@dataclass(frozen=True)
class LoopOutcome:
    run_id: str
    status: RunStatus
    stop_reason: str | None
    interrupted: bool
    sessions: int


class _CancelPoll:
    """`should_cancel` for children: a signal, or an operator's `stop` seen in the journal."""

    def __init__(self, h: RunHandle, signal: StopSignal) -> None:
        self._h, self._signal = h, signal
        self._next = 0.0
        self.stop_reason: str | None = None

    def by_signal(self) -> bool:
        return self._signal.reason is not None

    def __call__(self) -> bool:
        if self._signal.reason is not None:
            return True
        now = time.monotonic()
        if now >= self._next:
            self._next = now + STOP_POLL_SECONDS
            run = runs.get_run(self._h.journal, self._h.run_id)
            self.stop_reason = run.stop_requested if run else None
            self._take_owed_backup()
        return self.stop_reason is not None

    def _take_owed_backup(self) -> None:
        """The backup the last decision owes (skipped by the throttle) is taken while the
        session runs, not after it: a session may last hours. The driver's own thread, outside
        any transaction; nothing owed costs a flag read. A backup refused (a journal tampered
        with, a full disk) stays owed: the step's safe point after the session meets it and
        stops the run there, instead of cutting a session short through its cancel poll."""
        with contextlib.suppress(JournalError):
            self._h.journal.take_deferred_backup()


@dataclass
class Tally:
    """What the driver counts itself, for this process only: the sessions it saw end, the
    failed sessions in a row and the latest failure (the failure limit's count and note; a
    malformed artifact's message is the limit's stop reason, `invalid`)."""

    sessions: int = 0
    failures: int = 0
    last_failure: str | None = None
    invalid: str | None = None

    def session_judged(self, result: AgentResult, step: StepResult, wrote: bool) -> None:
        failure = step.invalid_artifact or session_failure(result, step.decision, wrote)
        self.failures = self.failures + 1 if failure else 0
        self.last_failure = failure or self.last_failure
        self.invalid = step.invalid_artifact if failure else None

    def pending_judged(self, step: StepResult) -> None:
        """An artifact a previous driver's session left: a malformed one is a failed session
        too (a valid one leaves the count as it was: no session of this driver made it)."""
        if step.invalid_artifact:
            self.failures += 1
            self.last_failure = self.invalid = step.invalid_artifact


class Layout(Protocol):
    """Where and how the driver's sessions run: the single loop's one session at a time in the
    run's worktree (`SingleLane`), or K lanes at once (`supervisor/lanes.Lanes`). The driver
    decides when; a layout carries out, and judges every candidate through `step`."""

    def open(self, tally: Tally) -> bool:
        """Recover what a previous driver left in flight; False: a signal interrupted that."""

    def pending_artifact(self) -> bool:
        """An artifact waits that the transition table should have judged first."""

    def process_pending(self) -> None: ...

    def advance(self) -> None:
        """Move on what ended since the last turn (sessions, readings)."""

    def in_flight(self) -> int:
        """Sessions and candidates started and not yet judged."""

    def idle_lanes(self) -> list[int]:
        """The lanes that may be given a session now, in order."""

    def launch(self, lane: int, start: Start) -> None: ...

    def cancel_sessions(self) -> None:
        """Stop the agent sessions running (an operator's stop, a spent budget)."""

    def follow(self) -> None:
        """Bookkeeping no session waits for (the run branch after a lanes keep)."""

    def publish(self) -> None: ...

    def wait(self) -> None:
        """Until something in flight ends (or the poll interval)."""

    def interrupted(self) -> None: ...

    def ended(self) -> None: ...

    def abort(self) -> None:
        """A second Ctrl-C: kill what runs now."""

    def close(self) -> None: ...


class Driver:
    """The one driver (issue 32): every iteration of a run goes through `run`, the single loop
    (one lane) and `run --lanes K` alike. The transition table (`next_action`) decides, the
    search strategy says where sessions start and may end the run, the layout runs them."""

    def __init__(
        self,
        h: RunHandle,
        layout: Layout,
        limits: LoopLimits,
        signal: StopSignal,
        strategy: SearchStrategy,
        say: Callable[[str], None] = lambda line: None,
        keeper: Keeper | None = None,
    ) -> None:
        self.h, self.layout, self.limits = h, layout, limits
        self.signal, self.strategy = signal, strategy
        self.keeper = keeper or NoArchive()  # the frontier's archive (supervisor/frontier.py)
        self.tally = Tally()
        rule = run_rule(h.run, limits.plateau, limits.on_plateau)
        self.plateau = PlateauWatch(h, rule, say, lambda: sync.write_instructions(h.context, h.run))
        self.stopping: Action | None = None  # the table said FINISH: once nothing is in flight
        self._history: RunHistory | None = None  # read only for a strategy that reads it

    def run(self) -> LoopOutcome:
        """Drive the run until the table says it is over or a signal interrupts it.

        Refuses before the first session when nothing could ever be kept (a
        score_improvement run whose baseline has no comparable score)."""
        refuse_without_comparable_baseline(self.h.context, self.h.run)
        # what escapes a session with setsid is reaped when the session ends, whatever the
        # layout: each lane's session ends with a scan for its own (proc.reap_orphans)
        proc.become_subreaper()
        try:
            if not self.layout.open(self.tally):
                return self._outcome(True)
            return self._turns()
        except KeyboardInterrupt:
            self.layout.abort()
            raise
        finally:
            self.layout.close()

    def _turns(self) -> LoopOutcome:
        layout = self.layout
        while True:
            if self.signal.reason is not None:
                layout.interrupted()
                self.h.journal.backup_owed()  # what was decided since the last one
                return self._outcome(True)
            layout.advance()
            self.h.refresh()
            if self.h.run.status != RunStatus.RUNNING:
                self.keeper.settle()  # a step ended the run: its branch at the best elite
                layout.ended()
                return self._outcome(False)
            if self._plan():
                layout.process_pending()
                continue
            if self.stopping is not None and not layout.in_flight():
                return self._finish(self.stopping)
            if self.stopping is None:
                self._launch()
            layout.follow()  # bookkeeping no lane waits for comes after the launches
            layout.publish()
            layout.wait()

    def _plan(self) -> bool:
        """The transition table over the run's state, counting the sessions in flight toward
        the iteration limit; True: an artifact waits to be judged first."""
        if self.stopping is not None:
            return False
        tally, in_flight = self.tally, self.layout.in_flight()
        pending = self.layout.pending_artifact()
        search = self.strategy.stop(self._view()) or self.plateau.stop()
        state = replace(
            loop_state(self.h, self.limits, tally.failures, tally.last_failure, pending, search),
            failure_stop=tally.invalid,
        )
        action = next_action(state, self.limits)
        if action.kind == ActionKind.PROCESS_PENDING:
            return True
        if action.kind == ActionKind.LAUNCH:
            self.plateau.act()  # explore or pause: only a run that goes on
        if action.kind != ActionKind.FINISH:
            return False
        self.stopping = action
        limit = self.limits.max_iterations
        if action.reason and limit is not None and state.iteration >= limit:
            return False  # every session in flight was started within the limit: they finish
        if action.status == RunStatus.STOPPED and action.reason and in_flight:
            # an operator's stop or a spent budget: end the sessions (their work is saved and
            # recorded as interrupted); readings in progress finish and are judged
            self.layout.cancel_sessions()
        return False

    def _launch(self) -> None:
        if self.plateau.holds(self.layout.in_flight()):
            return  # paused on a plateau until `continue`
        idle = self.layout.idle_lanes()
        if idle and self._may_launch():
            self.keeper.settle()
        for lane in idle:
            if self._may_launch():
                start = self.keeper.start(self.strategy, self._view(), lane)
                self.layout.launch(lane, start)

    def _may_launch(self) -> bool:
        limit = self.limits.max_iterations
        return limit is None or self.h.run.iteration + self.layout.in_flight() < limit

    def _view(self) -> SearchView:
        run = self.h.run
        if self.strategy.reads_history and self._history is None:
            self._history = RunHistory(self.h)
        past = self._history.snapshot() if self._history is not None else ()
        exploring = self.plateau.exploring()
        return SearchView((run.last_kept_commit or "",), run.iteration, past, exploring)

    def _finish(self, action: Action) -> LoopOutcome:
        self.layout.follow()
        self.keeper.settle()
        finalize_run(self.h, action.status or RunStatus.STOPPED, action.reason or "", action.note)
        self.layout.ended()
        return self._outcome(False)

    def _outcome(self, interrupted: bool) -> LoopOutcome:
        h = self.h
        h.refresh()
        return LoopOutcome(
            h.run_id, h.run.status, h.run.stop_reason, interrupted, self.tally.sessions
        )


class SingleLane:
    """The single loop's layout: one session at a time in the run's own worktree, run to its
    end with its step inside `launch`; nothing is ever in flight between two turns."""

    def __init__(
        self,
        h: RunHandle,
        agent: Agent,
        limits: LoopLimits,
        observer: LoopObserver,
        signal: StopSignal,
        strategy: SearchStrategy,
        portfolio: Portfolio | None = None,
    ) -> None:
        self.h, self.agent, self.limits = h, agent, limits
        self.portfolio = portfolio  # several agents: each session's is chosen from them
        self.observer, self.signal, self.strategy = observer, signal, strategy
        self.tally = Tally()
        self.reset_by_step = False  # the last step reset the tree: at the base, checked clean

    def open(self, tally: Tally) -> bool:
        self.tally = tally
        return True

    def pending_artifact(self) -> bool:
        return has_pending_artifact(self.h.context, self.h.run)

    def process_pending(self) -> None:
        h, cancel = self.h, _CancelPoll(self.h, self.signal)
        self.observer.note(MSG_PROCESSING_PENDING)
        self.observer.evaluation_started(h.run.iteration + 1)
        try:
            result = step(h, should_cancel=cancel.by_signal, shape_fails_run=False)
        except RunInterrupted as exc:
            self.observer.note(str(exc))  # a signal ends the next turn; a stop finalizes
            return
        self.observer.step_recorded(result, None)
        self.tally.pending_judged(result)
        self.reset_by_step = False

    def launch(self, lane: int, start: Start) -> None:
        cancel = _CancelPoll(self.h, self.signal)
        clean = self.reset_by_step and start.parent == (self.h.run.last_kept_commit or "")
        if self.portfolio is not None:
            self.agent = self.portfolio.agent_for(self.h.context)
        try:
            result, agent_result, wrote = _session(self, cancel, clean, start.parent)
        except RunInterrupted as exc:
            self.observer.note(str(exc))
            return
        self.tally.sessions += 1
        self.observer.step_recorded(result, agent_result)
        self.reset_by_step = result.decision in REJECTS_CANDIDATE
        self.tally.session_judged(agent_result, result, wrote)

    def in_flight(self) -> int:
        return 0

    def idle_lanes(self) -> list[int]:
        return [0]

    def advance(self) -> None:
        """Nothing runs between turns."""

    def cancel_sessions(self) -> None:
        """Nothing runs between turns."""

    def follow(self) -> None:
        """The run branch is the worktree's own: nothing to follow. A backup the last decision
        owes (skipped by the throttle) is taken once due: a run paused on a plateau calls this
        every poll and may idle for days."""
        self.h.journal.take_deferred_backup()

    def publish(self) -> None:
        """No lanes to show."""

    def wait(self) -> None:
        """Nothing to wait for: the next session starts at once."""

    def interrupted(self) -> None:
        """The session and its step were stopped inside `launch`."""

    def ended(self) -> None:
        """Nothing outlives a turn."""

    def abort(self) -> None:
        """The session's children die with the process group."""

    def close(self) -> None:
        """Nothing held."""


def run_loop(
    h: RunHandle,
    agent: Agent,
    limits: LoopLimits,
    observer: LoopObserver,
    signal: StopSignal,
    strategy: SearchStrategy | None = None,
    portfolio: Portfolio | None = None,
) -> LoopOutcome:
    """The single loop: the driver with one lane, the run's own worktree (greedy unless a
    strategy is given; each session's agent chosen from a portfolio when one is given)."""
    search = strategy or strategy_named(limits.strategy)
    layout = SingleLane(h, agent, limits, observer, signal, search, portfolio)
    keeper = keeper_for(h, search, limits.archive_size)
    return Driver(h, layout, limits, signal, search, observer.note, keeper).run()


def refuse_without_comparable_baseline(h: RunContext, run: runs.RunRecord) -> None:
    if run.status != RunStatus.RUNNING or run.keep_policy != KeepPolicy.SCORE_IMPROVEMENT:
        return
    if run.last_kept_score is not None:
        return
    baseline = iteration_records.get_iteration(h.journal, h.run_id, 0)
    raise RefusedError(
        diagnose.msg_baseline_not_comparable(
            h.run_id, run.worktree_path, baseline.evaluator if baseline else None
        )
    )


def trailing_noops(decisions: Iterable[DecisionKind]) -> int:
    """How many of the latest decisions (newest first) are noops, up to the first that is not:
    what the noop limit counts."""
    return sum(1 for _ in itertools.takewhile(lambda d: d == DecisionKind.NOOP, decisions))


def loop_state(
    h: RunHandle,
    limits: LoopLimits,
    failures: int,
    last_failure: str | None,
    pending_artifact: bool,
    search_stop: str | None = None,
) -> LoopState:
    """The run's facts for `next_action`, read from the journal; the loop's own counts (failed
    sessions in a row, the latest failure) and whether an artifact waits come from the driver,
    the single loop's or the lanes'."""
    # a continued run counts its noops afresh from where it was continued
    since = h.run.loop_settings.counts_from or 0
    window = max(limits.max_noops, 1)
    return LoopState(
        status=h.run.status,
        stop_requested=h.run.stop_requested,
        iteration=h.run.iteration,
        trailing_noops=trailing_noops(runs.trailing_decisions(h.journal, h.run_id, window, since)),
        agent_failures=failures,
        pending_artifact=pending_artifact,
        last_failure=last_failure,
        budget_stop=budget_stop(h.context, h.run, limits),
        search_stop=search_stop,
    )


def run_budget(h: RunContext, limits: LoopLimits) -> Budget:
    """The loop's budget: each `--budget-*` given wins over sandbox.md's `budget:`."""
    spec = h.sandbox.budget
    return Budget(
        usd=limits.budget_usd if limits.budget_usd is not None else spec.usd,
        tokens=limits.budget_tokens if limits.budget_tokens is not None else spec.tokens,
        hours=limits.budget_hours if limits.budget_hours is not None else spec.hours,
    )


def run_spend(h: RunContext, run: runs.RunRecord) -> Spend:
    """What the run has spent: recorded agent cost and tokens, hours since it was prepared."""
    usd, tokens = runs.spend(h.journal, h.run_id)
    return Spend(usd, tokens, seconds_between(run.created_at, utc_now_iso()) / 3600)


def budget_stop(h: RunContext, run: runs.RunRecord, limits: LoopLimits) -> str | None:
    budget = run_budget(h, limits)
    return budget_exhausted(budget, run_spend(h, run)) if budget.limited else None


def _session(
    single: SingleLane, cancel: _CancelPoll, base_is_clean: bool, base: str
) -> tuple[StepResult, AgentResult, bool]:
    """One agent session from `base` and the step that judges it; True when the session wrote
    an artifact (or, for an agent that cannot, its changes were read from git)."""
    h, agent, observer = single.h, single.agent, single.observer
    iteration = h.run.iteration + 1
    notes = [] if base_is_clean else _restore_base(h.context, h.run, iteration, base)
    # placeholder and instructions are already current: prepare, resume and every step
    # write them after recording
    observer.session_started(iteration)
    request = SessionRequest(
        run_id=h.run_id,
        iteration=iteration,
        worktree=h.worktree,
        instructions_file=h.paths.instructions,
        candidate_file=h.paths.candidate,
        base_commit=base,
        log_path=h.paths.agent_log(iteration),
        timeout=single.limits.agent_timeout,
        sandbox=h.run.sandbox,
        history=lambda after: single.strategy.shown(history(h.context, after)),
        box=h.box(agent=True),
    )
    failpoints.hit("loop.before_agent")
    with h.journal.tx() as conn:
        inflight.start(conn, h.run_id, iteration, base)
    result = agent.run(request, cancel, lambda pgid: _register(h.context, pgid))
    with h.journal.tx() as conn:
        registry.clear_children(conn, h.run_id)
        inflight.finish(conn, h.run_id)
    failpoints.hit("loop.after_agent")
    wrote = not cand.is_placeholder(read_artifact(h.context)) or agent.artifact_from_git
    notes += after_session(h.context, h.run, agent.artifact_from_git, result, iteration, base)
    # An evaluation is cut short only by a signal: an operator's stop lets it finish, so the
    # candidate is judged and the branch never ends on an unevaluated commit.
    observer.evaluation_started(iteration)
    recorded = session_record(result, wrote)
    given = StepInput(tuple(notes), recorded)
    outcome = step(h, given, should_cancel=cancel.by_signal, shape_fails_run=False)
    return outcome, result, wrote


def _register(run: RunContext, pgid: int) -> None:
    children.register(run.journal, run.tag, pgid, ChildRole.AGENT)


def _restore_base(h: RunContext, run: runs.RunRecord, iteration: int, base: str) -> list[str]:
    """A session starts from the last kept commit, checked out on the run branch, on a clean
    tree; leftovers are saved."""
    on_branch = git.head_branch(h.worktree) == record.branch_ref(h)
    clean = on_branch and git.head(h.worktree) == base
    if clean and not dirty_entries(h.worktree, h.dirt):
        return []
    note = record.save_and_reset(h, run, h.paths.patch(iteration, "leftover"), base)
    return [f"a previous session left changes behind: {note}"]
