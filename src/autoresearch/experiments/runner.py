"""`run`: one harness run of the bound session, recorded as the session's pending run.

Invariants: at most one pending run per session (an earlier unlogged one is abandoned, and the
report says so); the harness runs in its own process group and a timeout ends the group; the
whole output goes to the run's log while METRIC/ASI lines are parsed from all of it in bounded
memory; the caller gets only a tail. The run row exists before the harness starts, so a killed
`exp run` leaves a pending run that the next run abandons (stopping any stray processes).
A run cancelled by its caller (`should_cancel`: an MCP host that gave up, Ctrl-C) stops its
process group at once and is recorded as abandoned with its log: it never waits for a log as if
it had completed, and it releases the session for the next run.
"""

from __future__ import annotations

import contextlib
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from autoresearch.children import ChildEnv, ChildTag, harness_tag, register, spawn_env
from autoresearch.clock import utc_now_iso
from autoresearch.contracts.check_record import CheckRecord
from autoresearch.contracts.metric_lines import MetricScanner, ParsedLines
from autoresearch.contracts.sandbox import EvaluatorSpec
from autoresearch.errors import ContractError, GitError, JournalError, RefusedError
from autoresearch.evaluate import EvaluationRecord, check_record, metric_record
from autoresearch.experiments.advice import advice, paired_advice, suggest
from autoresearch.experiments.confidence import Ref
from autoresearch.experiments.context import Context, open_context, session_lock
from autoresearch.experiments.ledger import (
    Progress,
    abandon_pending,
    abandoned_text,
    progress,
    stats,
)
from autoresearch.experiments.pairing import run_change
from autoresearch.experiments.params import DEFAULT_COMMAND, RunParams, run_timeout
from autoresearch.experiments.reference import (
    PairingPlan,
    Side,
    plan_pairing,
    reference_checkout,
    reference_log,
    reference_tree,
    round_order,
)
from autoresearch.experiments.rules import (
    CANCELLED,
    benchmark_state,
    max_reached_message,
)
from autoresearch.experiments.sealed import verified
from autoresearch.experiments.verbs import Door
from autoresearch.journal import children as registry
from autoresearch.journal import sessions
from autoresearch.journal.sessions import SessionRecord, SessionRunRecord
from autoresearch.jsonshape import json_shape
from autoresearch.noise import Interval
from autoresearch.paths import CHECKS_FILE, HARNESS_FILE
from autoresearch.proc import SupervisedSpec, run_supervised
from autoresearch.settings import kill_grace
from autoresearch.states import ChildRole, EvalFormat, EvalStatus, ProcessState
from autoresearch.streams import LineSplitter, Tail

MAX_REPEATS = 100
TAIL_LINES = 10
TAIL_BYTES = 4096
PROGRESS_EVERY = 1.0
CANCELLED_NOTE = "cancelled by the caller: its processes were stopped"
UNPAIRED = "not paired with the kept commit"
ProgressCallback = Callable[[float, str], None]
CancelCheck = Callable[[], bool]


@dataclass(frozen=True)
class RunReport:
    """What a run measured, and what to log: "use these values in log"."""

    session_id: int
    run: int
    segment: int
    command: str
    status: ProcessState
    exit_code: int | None
    timed_out: bool
    duration_seconds: float
    metric_name: str
    unit: str
    metric: float | None
    metrics: dict[str, float]
    asi: dict[str, object]
    checks: CheckRecord | None
    readings: list[float]  # `repeats` > 1: every reading of the primary (metric: their mean)
    # `repeats` > 1 after a baseline: the kept commit read next to each reading (pairing.py)
    reference_commit: str | None
    reference_readings: list[float]
    paired: Interval | None  # this run − the kept commit over those pairs, better is +
    log_path: str
    tail: str
    baseline: Ref | None
    best: Ref | None
    delta_pct: float | None
    progress: Progress
    abandoned_run: int | None
    suggested_status: str
    messages: tuple[str, ...]

    def to_dict(self) -> dict[str, object]:
        return json_shape(self)


def run_experiment(
    start: Path,
    params: RunParams | None = None,
    on_progress: ProgressCallback | None = None,
    should_cancel: CancelCheck | None = None,
    door: Door = Door.CLI,
) -> RunReport:
    """Run the session's command once; `on_progress(elapsed, last_line)` about every second;
    `should_cancel()`, polled about ten times a second, stops the benchmark or the checks."""
    params = params or RunParams()
    if not 1 <= params.repeats <= MAX_REPEATS:
        raise ContractError(f"run: repeats must be from 1 to {MAX_REPEATS}")
    ticker = _Ticker(on_progress, should_cancel)
    with open_context(start, door=door) as ctx:
        session = ctx.bound_session()
        with session_lock(ctx, session):
            done = progress(ctx.journal, session)
            if done.reached and done.max is not None:
                raise RefusedError(
                    f"{max_reached_message(done.max)} The session accepts no more runs: "
                    f"start a new segment ({ctx.verbs.new_segment}) or close it ({ctx.verbs.off})"
                )
            # a changed harness is refused before anything is recorded or measured
            sealed = verified(ctx.cwd, ctx.session_paths(session), ctx.verbs)
            abandoned = abandon_pending(ctx.journal, session)
            pair = plan_pairing(params.repeats, stats(ctx.journal, session).baseline is not None)
            with ctx.journal.tx() as conn:
                run = sessions.insert_run(conn, session, session.kept_commit)
            finished, cancelled, notes = _measure(ctx, session, run, params, ticker, sealed, pair)
            return _report(ctx, session, finished, done, abandoned, cancelled, notes)


@dataclass
class _Harness:
    """What one harness run produced, before it is recorded: the evaluation record the
    supervisor's `format: metric` evaluator makes, its ASI lines and the combined tail."""

    evaluation: EvaluationRecord
    asi: dict[str, object]
    tail: str


def _measure(
    ctx: Context,
    session: SessionRecord,
    run: SessionRunRecord,
    params: RunParams,
    ticker: _Ticker,
    sealed: Path | None,
    pair: PairingPlan,
) -> tuple[SessionRunRecord, bool, list[str]]:
    """The benchmark (`repeats` times while it passes, paired with the kept commit's readings
    when `pair` says so), then the checks when it passed; the recorded run, whether it was
    cancelled, and what the pairing has to say."""
    paths = ctx.session_paths(session)
    tag = harness_tag(session.session_id, run.number, session.directory)
    launch = _Launch.of(ctx, session, tag, sealed)
    rounds = _Rounds(_Reader(ctx, session, run, launch, params, ticker), pair)
    harness = rounds.read_all()
    checks = None
    if harness.evaluation.process == ProcessState.PASS and launch.checks is not None:
        log = paths.checks_log(run.number)
        checks = _run_checks(ctx, log, launch, params, ticker.cancelled)
    cancelled = harness.evaluation.cancelled or (checks is not None and checks.state == CANCELLED)
    recorded = _record(ctx, session, run, tag, harness, checks, cancelled, rounds)
    return recorded, cancelled, rounds.notes


class _Rounds:
    """The readings of one run: `repeats` rounds while the benchmark passes; with `pair`, each
    round also reads the kept commit in its scratch checkout, first or second by turns
    (reference.round_order). A reference reading that fails ends the pairing, not the run."""

    def __init__(self, reader: _Reader, pair: PairingPlan) -> None:
        self._reader = reader
        self._ctx, self._session, self._run = reader.ctx, reader.session, reader.run
        self._params, self._ticker = reader.params, reader.ticker
        self.readings: list[float] = []
        self.reference: list[float] = []
        self.duration_ms = 0
        self.notes: list[str] = []
        self._tree = self._checkout() if pair.paired else None

    def read_all(self) -> _Harness:
        for index in range(self._params.repeats):
            for side in round_order(index):
                if side == Side.REFERENCE:
                    self._read_reference(index)
                    continue
                harness = _run_harness(self._reader, index + 1)
                self.duration_ms += harness.evaluation.duration_ms
                if not _passed(harness):
                    return harness
                self.readings.append(float(harness.evaluation.score or 0.0))
        return harness

    @property
    def pairs(self) -> list[float]:
        """The reference readings that have a candidate reading in their round."""
        return self.reference[: len(self.readings)]

    def _checkout(self) -> Path | None:
        tree = reference_tree(self._ctx.session_paths(self._session))
        try:
            return reference_checkout(self._ctx.cwd, tree, self._session.kept_commit)
        except GitError as exc:
            self.notes.append(f"{UNPAIRED}: no scratch checkout of the kept commit ({exc})")
            return None

    def _read_reference(self, index: int) -> None:
        if self._tree is None or self._ticker.cancelled():
            return
        log = reference_log(self._ctx.session_paths(self._session), self._run.number, index)
        harness = _run_harness(self._reader, index + 1, _Where(self._tree, log))
        if _passed(harness):
            self.reference.append(float(harness.evaluation.score or 0.0))
            return
        self._tree = None
        self.notes.append(
            f"{UNPAIRED}: the kept commit {self._session.kept_commit[:7]} failed to read in "
            f"its scratch checkout ({harness.evaluation.status}; {log})"
        )


@dataclass(frozen=True)
class _Where:
    """Where a reading runs and logs, when not the candidate's own directory and run log."""

    cwd: Path
    log: Path


def _passed(harness: _Harness) -> bool:
    """Exited 0 with the primary METRIC line (the supervisor's `format: metric` pass)."""
    return harness.evaluation.status == EvalStatus.PASS


@dataclass(frozen=True)
class _Launch:
    """How the harness and the checks are started: from the sealed copy when there is one."""

    tag: ChildTag
    harness: list[str]
    checks: list[str] | None
    env: dict[str, str]

    @classmethod
    def of(
        cls, ctx: Context, session: SessionRecord, tag: ChildTag, sealed: Path | None
    ) -> _Launch:
        env = spawn_env(ChildEnv(tag, sealed_dir=sealed))
        if sealed is None:
            checks = ["bash", CHECKS_FILE] if (ctx.cwd / CHECKS_FILE).is_file() else None
            return cls(tag, ["bash", "-c", session.command], checks, env)
        harness = ["bash", "-c", session.command]
        if session.command == DEFAULT_COMMAND:
            harness = ["bash", str(sealed / HARNESS_FILE)]
        checks = ["bash", str(sealed / CHECKS_FILE)] if (sealed / CHECKS_FILE).is_file() else None
        return cls(tag, harness, checks, env)


def _registrar(ctx: Context, tag: ChildTag, role: ChildRole) -> Callable[[int], None]:
    """`on_spawn`: record the child's group so that a later `exp run` can stop it."""

    def on_spawn(pgid: int) -> None:
        # Must not raise: proc.run_supervised has not started supervising the child yet. A
        # missing entry only means the group is found by its environment instead.
        with contextlib.suppress(JournalError):
            register(ctx.journal, tag, pgid, role)

    return on_spawn


def _record(
    ctx: Context,
    session: SessionRecord,
    run: SessionRunRecord,
    tag: ChildTag,
    harness: _Harness,
    checks: CheckRecord | None,
    cancelled: bool,
    rounds: _Rounds,
) -> SessionRunRecord:
    evaluation, readings, reference = harness.evaluation, rounds.readings, rounds.pairs
    primary = evaluation.metrics.get(session.metric)
    if len(readings) > 1 and _passed(harness):
        # repeated: the value to log is the mean of the readings, every one of them kept
        primary = statistics.fmean(readings)
    now = utc_now_iso()
    with ctx.journal.tx() as conn:
        sessions.update_run(
            conn,
            run.run_id,
            # A cancelled run did not complete: abandoned at once, it never waits for a log.
            completed_at=None if cancelled else now,
            abandoned_at=now if cancelled else None,
            duration_ms=rounds.duration_ms,
            exit_code=evaluation.exit_code,
            timed_out=evaluation.timed_out,
            error=CANCELLED_NOTE if cancelled else evaluation.spawn_error,
            parsed_primary=primary,
            parsed_metrics={**evaluation.metrics, session.metric: primary}
            if primary is not None
            else evaluation.metrics,
            readings=readings if len(readings) > 1 else None,
            reference_commit=session.kept_commit if reference else None,
            reference_readings=reference or None,
            parsed_asi=harness.asi,
            checks=checks,
            log_path=str(ctx.session_paths(session).run_log(run.number)),
            tail=harness.tail,
        )
        registry.clear_children(conn, tag.owner)
        finished = sessions.get_run(conn, run.run_id)
    assert finished is not None
    return finished


@dataclass(frozen=True)
class _Reader:
    """What every harness reading of one run shares (`_Where` says where one runs)."""

    ctx: Context
    session: SessionRecord
    run: SessionRunRecord
    launch: _Launch
    params: RunParams
    ticker: _Ticker


def _run_harness(reader: _Reader, repeat: int, where: _Where | None = None) -> _Harness:
    """`bash -c <command>`: one scanner per stream sharing one result, one combined tail."""
    parsed, combined = ParsedLines(), Tail(2 * TAIL_BYTES)
    ctx, session, launch, ticker = reader.ctx, reader.session, reader.launch, reader.ticker
    if where is None:
        where = _Where(ctx.cwd, ctx.session_paths(session).repeat_log(reader.run.number, repeat))
    outcome = run_supervised(
        SupervisedSpec(
            argv=launch.harness,
            cwd=where.cwd,
            env=launch.env,
            log_path=where.log,
            timeout=run_timeout(reader.params.timeout_seconds),
            tail_bytes=TAIL_BYTES,
            grace_seconds=kill_grace(),
            stdout_consumers=[MetricScanner(parsed), combined, ticker.lines()],
            stderr_consumers=[MetricScanner(parsed), combined, ticker.lines()],
            should_cancel=ticker.tick,
            on_spawn=_registrar(ctx, launch.tag, ChildRole.HARNESS),
        )
    )
    spec = EvaluatorSpec(session.command, EvalFormat.METRIC, metric=session.metric)
    evaluation = metric_record(spec, outcome, parsed.metrics)
    return _Harness(evaluation, parsed.asi, clip_tail(combined.text()))


def _run_checks(
    ctx: Context,
    log_path: Path,
    launch: _Launch,
    params: RunParams,
    should_cancel: CancelCheck,
) -> CheckRecord:
    """The correctness gate: own timeout, own log; its time is not the benchmark's."""
    assert launch.checks is not None
    combined = Tail(2 * TAIL_BYTES)
    outcome = run_supervised(
        SupervisedSpec(
            argv=launch.checks,
            cwd=ctx.cwd,
            env=launch.env,
            log_path=log_path,
            timeout=run_timeout(params.checks_timeout_seconds),
            tail_bytes=TAIL_BYTES,
            grace_seconds=kill_grace(),
            stdout_consumers=[combined],
            stderr_consumers=[combined],
            should_cancel=should_cancel,
            on_spawn=_registrar(ctx, launch.tag, ChildRole.CHECKS),
        )
    )
    return check_record(outcome, clip_tail(combined.text()))


def clip_tail(text: str, lines: int = TAIL_LINES, limit: int = TAIL_BYTES) -> str:
    """The last `lines` lines of `text`, at most `limit` bytes of UTF-8."""
    kept = "\n".join(text.rstrip("\n").split("\n")[-lines:])
    data = kept.encode("utf-8")
    if len(data) <= limit:
        return kept
    return data[-limit:].decode("utf-8", "ignore")


class _Ticker:
    """Polled while a child runs: calls `on_progress(elapsed, last_line)` at most once per
    second, and answers whether the caller cancelled the run."""

    def __init__(self, callback: ProgressCallback | None, cancel: CancelCheck | None) -> None:
        self._callback = callback
        self._cancel = cancel
        self._t0 = self._last = time.monotonic()
        self.last_line = ""

    def lines(self) -> LineSplitter:
        return LineSplitter(self._on_line, max_line=TAIL_BYTES)

    def _on_line(self, raw: bytes) -> None:
        text = raw.decode("utf-8", "replace").strip()
        if text:
            self.last_line = text[:200]

    def tick(self) -> bool:
        now = time.monotonic()
        if self._callback is not None and now - self._last >= PROGRESS_EVERY:
            self._last = now
            self._callback(now - self._t0, self.last_line)
        return self.cancelled()

    def cancelled(self) -> bool:
        return self._cancel is not None and self._cancel()


def _report(
    ctx: Context,
    session: SessionRecord,
    run: SessionRunRecord,
    done: Progress,
    abandoned: list[SessionRunRecord],
    cancelled: bool,
    notes: list[str],
) -> RunReport:
    segment = stats(ctx.journal, session)
    status = CANCELLED if cancelled else benchmark_state(run)
    paired = run_change(session.direction, run.readings or (), run.reference_readings or ())
    suggestion = suggest(session, run, status, segment, paired)
    messages = [abandoned_text(r) for r in abandoned]
    messages.extend(notes)
    messages.extend(paired_advice(paired))
    messages.extend(advice(session, run, status, segment))
    return RunReport(
        session_id=session.session_id,
        run=run.number,
        segment=run.segment,
        command=run.command,
        status=status,
        exit_code=run.exit_code,
        timed_out=run.timed_out,
        duration_seconds=round((run.duration_ms or 0) / 1000, 3),
        metric_name=session.metric,
        unit=session.unit,
        metric=run.parsed_primary,
        metrics={k: v for k, v in run.parsed_metrics.items() if k != session.metric},
        asi=run.parsed_asi,
        checks=run.checks,
        readings=list(run.readings or ()),
        reference_commit=run.reference_commit,
        reference_readings=list(run.reference_readings or ()),
        paired=paired,
        log_path=run.log_path or "",
        tail=run.tail,
        baseline=segment.baseline,
        best=segment.best,
        delta_pct=segment.delta_pct(run.parsed_primary),
        progress=done,
        abandoned_run=abandoned[-1].number if abandoned else None,
        suggested_status=suggestion,
        messages=tuple(messages),
    )
