"""The loop (supervisor.md §9): placeholder → instructions → agent session → artifact → step,
until a limit, an abort, a failure or an operator stops it.

What to do next is a pure function of the run's state (`next_action`). Work is never lost: a
session that timed out, was interrupted, or left uncommitted changes has them saved as a patch
under the run's logs before the worktree is reset.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from enum import StrEnum
from typing import Protocol

from autoresearch import children, failpoints, git, proc
from autoresearch.agents.base import Agent, AgentResult, PastIteration, SessionRequest
from autoresearch.clock import seconds_between, utc_now_iso
from autoresearch.contracts import candidate as cand
from autoresearch.contracts.agent_record import AgentRecord
from autoresearch.contracts.json_input import load_json
from autoresearch.contracts.tune import tried_values
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
from autoresearch.errors import RefusedError, RunInterrupted
from autoresearch.fsutil import atomic_write_json
from autoresearch.journal import children as registry
from autoresearch.journal import inflight, runs
from autoresearch.states import (
    REJECTS_CANDIDATE,
    ArtifactStatus,
    ChildRole,
    DecisionKind,
    KeepPolicy,
    RunStatus,
)
from autoresearch.supervisor import diagnose, record, sync
from autoresearch.supervisor.finalize import finalize_run
from autoresearch.supervisor.handle import RunHandle
from autoresearch.supervisor.lifecycle import has_pending_artifact
from autoresearch.supervisor.safety import dirty_entries
from autoresearch.supervisor.step import StepResult, step

STOP_POLL_SECONDS = 1.0
MSG_NO_ARTIFACT = "agent session wrote no candidate artifact"
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
        reason = stop_agent_failures(limits.max_agent_failures)
        return Action(ActionKind.FINISH, RunStatus.FAILED, reason, state.last_failure)
    if limits.max_iterations is not None and state.iteration >= limits.max_iterations:
        return Action(
            ActionKind.FINISH, RunStatus.COMPLETED, stop_max_iterations(limits.max_iterations)
        )
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
        return self.stop_reason is not None


def run_loop(
    h: RunHandle,
    agent: Agent,
    limits: LoopLimits,
    observer: LoopObserver,
    signal: StopSignal,
) -> LoopOutcome:
    """Drive the run until `next_action` says it is over or a signal interrupts it.

    Refuses before the first session when nothing could ever be kept (a score_improvement run
    whose baseline has no comparable score): sessions would be spent for nothing.
    """
    refuse_without_comparable_baseline(h)
    proc.become_subreaper()  # what escapes a session with setsid is reaped when it ends
    failures = sessions = 0
    last_failure: str | None = None
    reset_by_step = False  # the last step reset the tree: it is at the base, checked clean
    while True:
        h.refresh()
        state = loop_state(h, limits, failures, last_failure, has_pending_artifact(h))
        action = next_action(state, limits)
        if action.kind == ActionKind.EXIT:
            return _outcome(h, False, sessions)
        if action.kind == ActionKind.FINISH:
            finalize_run(h, action.status or RunStatus.STOPPED, action.reason or "", action.note)
            return _outcome(h, False, sessions)
        cancel = _CancelPoll(h, signal)
        try:
            if action.kind == ActionKind.PROCESS_PENDING:
                observer.note(MSG_PROCESSING_PENDING)
                observer.evaluation_started(h.run.iteration + 1)
                observer.step_recorded(step(h, should_cancel=cancel.by_signal), None)
                reset_by_step = False
                continue
            result, agent_result, wrote_artifact = _session(
                h, agent, limits, observer, cancel, reset_by_step
            )
        except RunInterrupted as exc:
            observer.note(str(exc))
            if signal.reason is None:
                continue  # an operator stop: the next turn finalizes the run
            return _outcome(h, True, sessions)
        sessions += 1
        observer.step_recorded(result, agent_result)
        reset_by_step = result.decision in REJECTS_CANDIDATE
        failure = session_failure(agent_result, result.decision, wrote_artifact)
        failures = failures + 1 if failure else 0
        last_failure = failure or last_failure
        if signal.reason is not None:
            return _outcome(h, True, sessions)


def session_failure(
    result: AgentResult, decision: DecisionKind, wrote_artifact: bool
) -> str | None:
    """Why a session counts toward the agent failure limit, or None.

    A session that broke (could not start, crashed, reported an error, was denied) or wrote
    no artifact counts unless it still produced a candidate that was judged."""
    if decision not in (DecisionKind.NOOP, DecisionKind.INTERRUPTED):
        return None
    if result.cancelled:
        return None
    if result.failure_reason:
        return result.failure_reason
    return None if wrote_artifact else MSG_NO_ARTIFACT


def session_record(result: AgentResult, wrote: bool, lane: int | None = None) -> AgentRecord:
    """What the iteration records of a session: its end, and what autoresearch concluded
    beside the agent's self-report (a failure; a stop by an operator or a signal is none)."""
    failure = result.failure_reason or (None if wrote else MSG_NO_ARTIFACT)
    return result.record(lane, failure if failure and not result.cancelled else None)


def refuse_without_comparable_baseline(h: RunHandle) -> None:
    run = h.run
    if run.status != RunStatus.RUNNING or run.keep_policy != KeepPolicy.SCORE_IMPROVEMENT:
        return
    if run.last_kept_score is not None:
        return
    baseline = runs.get_iteration(h.journal, h.run_id, 0)
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
        budget_stop=budget_stop(h, limits),
    )


def run_budget(h: RunHandle, limits: LoopLimits) -> Budget:
    """The loop's budget: each `--budget-*` given wins over sandbox.md's `budget:`."""
    spec = h.run.sandbox.budget
    return Budget(
        usd=limits.budget_usd if limits.budget_usd is not None else spec.usd,
        tokens=limits.budget_tokens if limits.budget_tokens is not None else spec.tokens,
        hours=limits.budget_hours if limits.budget_hours is not None else spec.hours,
    )


def run_spend(h: RunHandle) -> Spend:
    """What the run has spent: recorded agent cost and tokens, hours since it was prepared."""
    usd, tokens = runs.spend(h.journal, h.run_id)
    return Spend(usd, tokens, seconds_between(h.run.created_at, utc_now_iso()) / 3600)


def budget_stop(h: RunHandle, limits: LoopLimits) -> str | None:
    budget = run_budget(h, limits)
    return budget_exhausted(budget, run_spend(h)) if budget.limited else None


def _outcome(h: RunHandle, interrupted: bool, sessions: int) -> LoopOutcome:
    h.refresh()
    return LoopOutcome(h.run_id, h.run.status, h.run.stop_reason, interrupted, sessions)


def _session(
    h: RunHandle,
    agent: Agent,
    limits: LoopLimits,
    observer: LoopObserver,
    cancel: _CancelPoll,
    base_is_clean: bool = False,
) -> tuple[StepResult, AgentResult, bool]:
    """One agent session and the step that judges it; True when the session wrote an artifact
    (or, for an agent that cannot, its changes were read from git)."""
    iteration = h.run.iteration + 1
    base = h.run.last_kept_commit or ""
    notes = [] if base_is_clean else _restore_base(h, iteration, base)
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
        timeout=limits.agent_timeout,
        sandbox=h.run.sandbox,
        history=lambda after: history(h, after),
        box=h.box(agent=True),
    )
    failpoints.hit("loop.before_agent")
    with h.journal.tx() as conn:
        inflight.start(conn, h.run_id, iteration, base)
    result = agent.run(request, cancel, lambda pgid: _register(h, pgid))
    with h.journal.tx() as conn:
        registry.clear_children(conn, h.run_id)
        inflight.finish(conn, h.run_id)
    failpoints.hit("loop.after_agent")
    wrote = not cand.is_placeholder(read_artifact(h)) or agent.artifact_from_git
    notes += after_session(h, agent.artifact_from_git, result, iteration, base)
    # An evaluation is cut short only by a signal: an operator's stop lets it finish, so the
    # candidate is judged and the branch never ends on an unevaluated commit.
    observer.evaluation_started(iteration)
    recorded = session_record(result, wrote)
    outcome = step(h, extra_notes=notes, agent=recorded, should_cancel=cancel.by_signal)
    return outcome, result, wrote


def history(h: RunHandle, after: int) -> list[PastIteration]:
    """What an agent may know of the run: its recorded iterations, never the journal."""
    return [
        PastIteration(
            it.iteration,
            it.decision,
            it.description,
            tuple(it.artifact_notes),
            tried_values(it.artifact_notes),
        )
        for it in runs.iterations_after(h.journal, h.run_id, after)
    ]


class RunHistory:
    """`history(h, 0)` as a tuple, kept current by reading only the iterations recorded since
    the last call (a lane ships the whole history with every session; read anew it cost
    0.76 s at 10,000 iterations).

    Appending is exact because what an agent sees of a recorded iteration never changes: an
    iteration is invisible while it is evaluating (and only then rolled back), becomes
    visible with its decision, and afterwards only its state and decision notes are written;
    iterations are recorded in increasing numbers, one at a time. That is checked, not
    assumed: when the journal's count of iteration rows up to the newest one held (in any
    state: an evaluating row below it would be a surprise too) differs from what is held,
    the history is read anew."""

    def __init__(self, h: RunHandle) -> None:
        self._h = h
        self._past: tuple[PastIteration, ...] = ()

    def snapshot(self) -> tuple[PastIteration, ...]:
        h, past = self._h, self._past
        last = past[-1].iteration if past else 0
        if past and runs.iteration_rows(h.journal, h.run_id, 0, last) != len(past):
            past, last = (), 0
        new = history(h, last)
        if new or not past:
            self._past = (*past, *new)
        return self._past


def _register(h: RunHandle, pgid: int) -> None:
    children.register(h.journal, h.tag, pgid, ChildRole.AGENT)


def _restore_base(h: RunHandle, iteration: int, base: str) -> list[str]:
    """A session starts from the last kept commit, checked out on the run branch, on a clean
    tree; leftovers are saved."""
    on_branch = git.head_branch(h.worktree) == record.branch_ref(h)
    clean = on_branch and git.head(h.worktree) == base
    if clean and not dirty_entries(h.worktree, h.dirt):
        return []
    note = record.save_and_reset(h, h.paths.patch(iteration, "leftover"), base)
    return [f"a previous session left changes behind: {note}"]


# Save what a session left past a base, then reset: (label, base, reset_to) → the ledger note.
Saver = Callable[[str, str, str | None], str]


def after_session(
    h: RunHandle,
    from_git: bool,
    result: AgentResult,
    iteration: int,
    base: str,
    save: Saver | None = None,
) -> list[str]:
    """Make the artifact and the worktree consistent after a session ended, losing nothing.

    `from_git`: the agent cannot write the artifact (Agent.artifact_from_git). `save` names
    the patches (default: by `iteration`; a lane names them by its session)."""

    def saved(label: str, since: str, reset_to: str | None = None) -> str:
        if save is not None:
            return save(label, since, reset_to)
        return record.save_and_reset(h, h.paths.patch(iteration, label), since, reset_to)

    notes = _agent_notes(result)
    if result.timed_out or result.cancelled:
        label = "timed-out" if result.timed_out else "interrupted"
        notes.append(saved(label, base))
        write_artifact(h, ArtifactStatus.INTERRUPTED, None, base, f"agent session {label}", notes)
        return []
    artifact = read_artifact(h)
    if cand.is_placeholder(artifact):
        if from_git:
            return notes + _artifact_from_git(h, iteration, base)
        # the placeholder's own text would read as the agent's: say what happened instead
        write_artifact(h, ArtifactStatus.NOOP, None, base, MSG_NO_ARTIFACT, [])
        return [*notes, MSG_NO_ARTIFACT]
    status = artifact.get("status") if isinstance(artifact, dict) else None
    if status == ArtifactStatus.CANDIDATE and dirty_entries(h.worktree, h.dirt):
        head = git.head(h.worktree)
        notes.append(saved("uncommitted", head, head))
        notes.append("uncommitted changes were not evaluated (saved above)")
    return notes


def _agent_notes(result: AgentResult) -> list[str]:
    if result.cancelled and not result.timed_out:
        return ["agent session was stopped"]
    reason = result.failure_reason
    notes = [reason] if reason else []
    denied = "agent was denied: " + "; ".join(result.usage.denials)
    if result.usage.denials and reason != denied:  # a crash that was also denied: both
        notes.append(denied)
    return notes


def read_artifact(h: RunHandle) -> object:
    raw = sync.read_artifact(h.paths.candidate).raw
    try:
        return load_json(raw) if raw is not None else None
    except ValueError:
        return None


def _artifact_from_git(h: RunHandle, iteration: int, base: str) -> list[str]:
    """For agents that cannot write the artifact: changes → a candidate commit, none → noop."""
    message = f"autoresearch: {h.run.mission_slug} iteration {iteration} (agent edits)"
    paths: list[str] = []
    for entry in dirty_entries(h.worktree, h.dirt):  # runtime files stay out
        paths += [entry.path, *([entry.orig_path] if entry.orig_path else [])]
    commit = git.commit_all(h.worktree, message, pathspec=paths) if paths else None
    head = commit or git.head(h.worktree)
    if head == base:
        write_artifact(h, ArtifactStatus.NOOP, None, base, "agent made no changes", [])
        return []
    write_artifact(
        h, ArtifactStatus.CANDIDATE, head, base, git.commit_message(h.worktree, head), []
    )
    return ["artifact derived from git: the agent's changes were committed by autoresearch"]


def write_artifact(
    h: RunHandle,
    status: ArtifactStatus,
    commit: str | None,
    base: str,
    description: str,
    notes: list[str],
) -> None:
    data = cand.artifact(status, commit, base, description, notes, utc_now_iso())
    atomic_write_json(h.paths.candidate, data)
