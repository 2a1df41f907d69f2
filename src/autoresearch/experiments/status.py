"""`status` and `resume-message`: the context an agent needs at the start of every turn.

Read-only: nothing here writes the journal, touches git or creates `.autoresearch/` (a
repository without a journal has no session, and is told so).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from autoresearch.experiments.confidence import BestRef, Confidence, Ref, SegmentStats
from autoresearch.experiments.context import Context, open_context
from autoresearch.experiments.ledger import Progress, point, progress, stats
from autoresearch.experiments.notes import ideas
from autoresearch.experiments.pairing import run_change
from autoresearch.experiments.rules import (
    FAILURE_STREAK,
    MAX_RESUMED_TURNS,
    benchmark_state,
    failure_streak,
    plateau_notice,
)
from autoresearch.experiments.verbs import Door
from autoresearch.journal import hooks as journal_hooks
from autoresearch.journal import sessions
from autoresearch.journal.sessions import SessionRecord, SessionRunRecord
from autoresearch.jsonshape import json_shape
from autoresearch.locks import FileLock
from autoresearch.noise import Interval
from autoresearch.states import (
    DEFAULT_PLATEAU,
    Direction,
    ProcessState,
    RunState,
    SessionState,
    Verdict,
)

DEFAULT_HISTORY = 20


# The parts of a status are records, their JSON (field names and order) is the contract of
# `exp status --json` and the MCP StatusOutput: `to_dict` is `json_shape`
# (a nested record as its own to_dict, tuples as lists).


@dataclass(frozen=True)
class HistoryLine:
    """One logged run as the history shows it."""

    run: int
    segment: int
    status: Verdict | None
    metric: float | None
    measured: float | None  # the parsed value, when the logged metric differs from it
    delta_pct: float | None  # against the baseline, in the current segment only
    metrics: dict[str, float]
    description: str
    hypothesis: object  # the run's ASI values, whatever JSON the agent gave
    next_action_hint: object
    rollback_reason: object
    deviations: list[str]
    justification: str | None
    flagged: bool
    flag_reason: str | None
    commit: str | None
    patch_path: str | None
    log_path: str | None
    # `exp run --repeats` after a baseline: the run − the kept commit read next to it, better
    # is + (pairing.run_change), with the commit it was read against
    paired: Interval | None = None
    reference_commit: str | None = None


@dataclass(frozen=True)
class UnjustifiedKeep:
    """A kept run whose scope deviations still wait for a justification (or a flag)."""

    run: int
    description: str | None
    deviations: list[str]


@dataclass(frozen=True)
class PendingRun:
    """The unlogged run: running now, interrupted, or completed and waiting for its log."""

    run: int
    state: RunState
    started_at: str
    benchmark: ProcessState | None  # how the benchmark ended, once it completed
    metric: float | None
    metrics: dict[str, float]  # the secondary metrics it measured
    asi: dict[str, object]  # free-form, as the harness printed it
    checks: ProcessState | None  # how its checks ended, when it ran them
    log_path: str | None
    tail: str


@dataclass(frozen=True)
class HookStatus:
    """The auto-resume counters of the host hooks in this segment, and their limits."""

    resumed_turns: int
    max_resumed_turns: int
    failure_streak: int
    failure_streak_limit: int
    notice: str | None


@dataclass(frozen=True)
class StatusReport:
    """Goal, numbers, recent runs, open problems, notes and the pending run of a session."""

    session: SessionRecord
    segment: int
    counts: dict[str, int]
    baseline: Ref | None
    best: BestRef | None
    confidence: Confidence
    history: tuple[HistoryLine, ...]
    unjustified: tuple[UnjustifiedKeep, ...]
    notes: str
    ideas: tuple[str, ...]
    pending: PendingRun | None
    progress: Progress
    hooks: HookStatus
    plateau: str | None = None  # none of the latest logged runs was kept (rules.plateau_notice)

    def to_dict(self) -> dict[str, object]:
        return json_shape(self)


def session_status(start: Path, last: int = DEFAULT_HISTORY, door: Door = Door.CLI) -> StatusReport:
    """The bound session's full context."""
    with open_context(start, "read", door) as ctx:
        session = ctx.bound_session()
        return build_status(ctx, session, last)


def build_status(ctx: Context, session: SessionRecord, last: int) -> StatusReport:
    segment = stats(ctx.journal, session)
    logged = sessions.logged_runs(ctx.journal, session.session_id, session.segment)
    # every verdict, in params.STATUSES' order (a hook imports no log's parameters)
    counts = {s.value: sum(1 for r in logged if r.status == s) for s in Verdict}
    recent = sessions.recent_runs(ctx.journal, session.session_id, max(last, 0))
    pending = sessions.pending_run(ctx.journal, session.session_id)
    return StatusReport(
        session=session,
        segment=session.segment,
        counts=counts,
        baseline=segment.baseline,
        best=segment.best_ref(),
        confidence=segment.confidence,
        history=tuple(run_line(r, segment, session) for r in recent),
        unjustified=tuple(
            UnjustifiedKeep(r.number, r.description, r.deviations or [])
            for r in sessions.unjustified_keeps(ctx.journal, session.session_id)
        ),
        notes=session.notes,
        ideas=ideas(session.notes),
        pending=None if pending is None else pending_line(ctx, session, pending),
        progress=progress(ctx.journal, session),
        hooks=hook_status(ctx, session),
        plateau=plateau_notice(
            sessions.latest_statuses(
                ctx.journal, session.session_id, session.segment, DEFAULT_PLATEAU
            )
        ),
    )


def hook_status(ctx: Context, session: SessionRecord) -> HookStatus:
    """What the Stop hook counted in this segment (journal rows; zeros before any hook ran)."""
    sid, segment = session.session_id, session.segment
    counters = journal_hooks.counters(ctx.journal, sid, segment)
    latest = sessions.latest_statuses(ctx.journal, sid, segment, FAILURE_STREAK + 1)
    return HookStatus(
        resumed_turns=counters.resumed_turns,
        max_resumed_turns=MAX_RESUMED_TURNS,
        failure_streak=failure_streak(latest),
        failure_streak_limit=FAILURE_STREAK,
        notice=counters.notice,
    )


def run_line(run: SessionRunRecord, segment: SegmentStats, session: SessionRecord) -> HistoryLine:
    """One logged run as the history shows it."""
    asi, current = run.asi or {}, session.segment
    pairs = point(run)  # no pairs when the logged value is not the measured one
    return HistoryLine(
        run=run.number,
        segment=run.segment,
        status=run.status,
        metric=run.metric,
        # the parsed value, shown when the logged metric differs from what was measured
        measured=run.parsed_primary
        if run.metric is not None
        and run.parsed_primary is not None
        and run.metric != run.parsed_primary
        else None,
        delta_pct=segment.delta_pct(run.metric) if run.segment == current else None,
        metrics=run.metrics or {},
        description=run.description or "",
        hypothesis=asi.get("hypothesis"),
        next_action_hint=asi.get("next_action_hint"),
        rollback_reason=asi.get("rollback_reason"),
        deviations=run.deviations or [],
        justification=run.justification,
        flagged=run.flagged,
        flag_reason=run.flag_reason,
        commit=run.commit_sha,
        patch_path=run.patch_path,
        log_path=run.log_path,
        paired=run_change(session.direction, pairs.readings, pairs.reference),
        reference_commit=pairs.reference_commit,
    )


def pending_line(ctx: Context, session: SessionRecord, run: SessionRunRecord) -> PendingRun:
    """The unlogged run: running now, interrupted, or completed and waiting for its log."""
    state = (
        RunState.COMPLETED
        if run.completed
        else RunState.RUNNING
        if _busy(ctx, session)
        else RunState.INTERRUPTED
    )
    return PendingRun(
        run=run.number,
        state=state,
        started_at=run.started_at,
        benchmark=benchmark_state(run) if run.completed else None,
        metric=run.parsed_primary,
        metrics={k: v for k, v in run.parsed_metrics.items() if k != session.metric},
        asi=run.parsed_asi,
        checks=None if run.checks is None else run.checks.state,
        log_path=run.log_path,
        tail=run.tail,
    )


def _busy(ctx: Context, session: SessionRecord) -> bool:
    return FileLock(ctx.session_paths(session).lock).held_elsewhere()


@dataclass(frozen=True)
class SessionSummary:
    """One line of `exp list`: a session, open or closed, with its current segment's numbers."""

    session_id: int
    name: str
    branch: str
    directory: str
    metric: str
    direction: Direction
    segment: int
    state: SessionState
    logged: int
    baseline: float | None
    best: float | None
    created_at: str
    closed_at: str | None
    # the best's change against the baseline, as exp status has it (SegmentStats.best_ref)
    delta_pct: float | None = None
    paired: Interval | None = None

    def to_dict(self) -> dict[str, object]:
        return json_shape(self)


@dataclass(frozen=True)
class SessionList:
    sessions: tuple[SessionSummary, ...]

    def to_dict(self) -> dict[str, object]:
        return json_shape(self)


def list_sessions(start: Path, door: Door = Door.CLI) -> SessionList:
    """Every session of the repository, newest first; closed ones can be reopened."""
    with open_context(start, "read", door) as ctx:
        found = sessions.all_sessions(ctx.journal)
        return SessionList(tuple(session_summary(ctx, session) for session in found))


def session_summary(ctx: Context, session: SessionRecord) -> SessionSummary:
    """One session's line, its numbers computed as `exp status` computes them (stats)."""
    segment = stats(ctx.journal, session)
    best = segment.best_ref()
    state = SessionState.CLOSED if session.closed_at else SessionState.OPEN
    if state == SessionState.OPEN and session.branch == ctx.branch:
        state = SessionState.ACTIVE
    return SessionSummary(
        session_id=session.session_id,
        name=session.name,
        branch=session.branch,
        directory=session.directory,
        metric=session.metric,
        direction=session.direction,
        segment=session.segment,
        state=state,
        logged=progress(ctx.journal, session).logged,
        baseline=segment.baseline.metric if segment.baseline else None,
        best=best.metric if best else None,
        delta_pct=best.delta_pct if best else None,
        paired=best.paired if best else None,
        created_at=session.created_at,
        closed_at=session.closed_at,
    )
