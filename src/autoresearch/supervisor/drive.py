"""Driving a run's loop: the one core function behind `run`, `demo`, `resume` and `continue`.

It chooses where the loop runs (this machine or a Ray cluster, connected and checked before
anything about the run exists or changes), runs lanes or the single loop under the one signal
policy (`signals.first_signal_stops`), certifies a noisy run's result (`--no-certify`: not)
and writes the loop's summary and the run's report. A front door hands in what it was given
and a `Door` (how progress shows, how it says what happens) and renders the typed result; MCP
or the worker would call the same functions.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from enum import StrEnum
from pathlib import Path
from typing import Protocol

from autoresearch.agents import AgentConfig, make_agent, require_installed, validate_spec
from autoresearch.contracts.loop import LoopSettings
from autoresearch.contracts.sandbox import EvaluationSlots
from autoresearch.decide import IterationLimit
from autoresearch.errors import AutoresearchError
from autoresearch.journal.manifest import RunManifest
from autoresearch.journal.runs import RunRecord
from autoresearch.mission import load_mission
from autoresearch.settings import kill_grace
from autoresearch.signals import first_signal_stops
from autoresearch.states import Direction, ExecutorKind, RunStatus
from autoresearch.supervisor import lifecycle, plateau
from autoresearch.supervisor.certify import CertificationStopped, certification_lines, certify
from autoresearch.supervisor.estimates import Headline, RunReadings, manifest, write_manifest
from autoresearch.supervisor.executor import Executor, measure_through, unscheduled_resources
from autoresearch.supervisor.handle import MeasureWith, RunHandle
from autoresearch.supervisor.loop import (
    LaneObserver,
    LoopLimits,
    LoopOutcome,
    StopSignal,
    refuse_without_comparable_baseline,
    run_loop,
)
from autoresearch.supervisor.options import (
    LoopPlan,
    check_sandbox,
    continuation,
    frozen_sandbox,
    new_loop,
    resumed_loop,
)
from autoresearch.supervisor.portfolio import Portfolio, member_name
from autoresearch.supervisor.prepare import mission_notes, prepare
from autoresearch.supervisor.summary import LoopSummary
from autoresearch.supervisor.tracked import end_tracking, tracked_progress

MSG_PENDING_ARTIFACT = "candidate.json holds an unprocessed session artifact"


class StopMoment(StrEnum):
    """Where a driver is when the first Ctrl-C or SIGTERM comes: what that signal does."""

    LOOP = "loop"  # sessions may run: they are stopped, their work saved, the run resumable
    FINISHING = "finishing"  # the loop has ended: the summary and the report are still written


class Progress(LaneObserver, Protocol):
    """The live progress of one loop (the CLI's `ProgressPrinter`)."""

    def header(self, run_id: str, agent: str, worktree: str, lanes: int = 0) -> None: ...

    def close(self) -> None: ...


class Door(Protocol):
    """What a front door gives the drive: how it shows progress and says what happens."""

    def progress(self, direction: Direction, head: Headline) -> Progress: ...

    def note(self, line: str) -> None:
        """A line worth the user's attention (the CLI: `autoresearch: <line>` on stderr)."""

    def stopping(self, moment: StopMoment) -> None:
        """The first stop signal came (called from the signal handler)."""

    def report(self, repo_root: Path, run_id: str) -> None:
        """Write the ended loop's report, which the summary points to (the door draws it: a
        run never imports its report); a failure is a note, never the run's."""

    def finished(self, result: LoopResult) -> None:
        """The loop's summary, to render while the signal policy still holds (a second signal
        while it is written interrupts at once, never SIGTERM's default)."""


@dataclass(frozen=True)
class LoopResult:
    """A driven loop: how it ended and its summary (with the run's manifest after a resume)."""

    outcome: LoopOutcome
    summary: LoopSummary
    stop_note: str | None
    manifest: RunManifest | None = None
    certified: str | None = None  # the certification at the loop's end, in a line

    @property
    def failed(self) -> bool:
        return self.outcome.status == RunStatus.FAILED


@dataclass(frozen=True)
class ResumeResult:
    """A resumed or continued run: its loop's result, or (only re-armed) its manifest."""

    loop: LoopResult | None
    manifest: RunManifest | None = None
    pending_artifact: bool = False


def start(mission_dir: Path, run_tag: str | None, given: LoopSettings, door: Door) -> LoopResult:
    """`run`: refuse what cannot run before anything exists (the agent, the placement, a Ray
    cluster that cannot be reached or has no node for the evaluation), prepare the run (its
    baseline measured where every candidate will be) and drive its loop."""
    plan = new_loop(given, mission_dir)
    for line in (*mission_notes(mission_dir), *_sandbox_note(plan)):
        door.note(line)
    if _here(plan):  # said before the baseline is measured
        _note_resources(load_mission(mission_dir).sandbox.evaluation, door)
    with _placed(plan, mission_dir=mission_dir) as executor:
        measure = measure_through(executor) if executor is not None else None
        with prepare(mission_dir, run_tag, loop=plan.record(), measure_with=measure) as handle:
            return drive(handle, plan, door, executor)


def demo_plan(iterations: int, seed: int | None, lanes: int | None) -> LoopPlan:
    """The demo's loop: the offline agent, the iterations asked, a few noops and failures."""
    limits = LoopLimits(
        max_iterations=iterations, max_noops=5, max_agent_failures=3, lanes=lanes or 0
    )
    return LoopPlan(AgentConfig("offline", seed=seed), limits)


def start_demo(mission_dir: Path, plan: LoopPlan, door: Door) -> LoopResult:
    """`demo`: prepare the example run and drive it on this machine."""
    for line in _sandbox_note(replace(plan, sandbox_note=check_sandbox(None, None))):
        door.note(line)
    with prepare(mission_dir, None, loop=plan.record()) as handle:
        return drive(handle, plan, door)


def iteration_limit(given_agent: str | None, max_iterations: str | None) -> IterationLimit | None:
    """Refuse bad `resume`/`continue` options before anything is re-armed or recorded: an
    agent that is not installed, a malformed `--max-iterations`, a kill grace that is not a
    finite number >= 0 (re-arming reaps a crashed driver's strays with it: `continue` would
    have reopened the run before the refusal)."""
    kill_grace()
    if given_agent is not None:
        require_installed(validate_spec(given_agent))
    return IterationLimit.parse(max_iterations) if max_iterations is not None else None


def resume(
    repo_root: Path,
    run_id: str,
    given: LoopSettings,
    max_iterations: str | None,
    door: Door,
    *,
    reopen: bool = False,
    save_dirty: bool = False,
    runtime: Sequence[str] = (),
) -> ResumeResult:
    """`resume` (`reopen`: `continue`): re-arm the run and drive its loop on with each option
    given over the recorded one, or only re-arm it (no agent at all, `--max-iterations 0`).

    The loop's placement is planned, and a Ray cluster connected and checked, once the run is
    known resumable and before anything about it changes: a refusal leaves it as it was."""
    limit = iteration_limit(given.agent, max_iterations)
    with_options = given != LoopSettings() or bool(max_iterations or save_dirty or runtime)
    if reopen and plateau.lift_for_live_driver(repo_root, run_id, with_options):
        door.note(plateau.MSG_PAUSE_LIFTED.format(run_id=run_id))
        return ResumeResult(None)  # its driver goes on: nothing to re-arm here
    placed = _Placement(given, limit)
    try:
        if reopen:
            armed = lifecycle.continue_run(
                repo_root, run_id, limit, save_dirty=save_dirty, runtime=runtime, ready=placed
            )
        else:
            armed = lifecycle.resume(
                repo_root, run_id, save_dirty=save_dirty, runtime=runtime, ready=placed
            )
        with armed.handle as handle:
            for note in armed.notes:
                door.note(note)
            if armed.pending_artifact:
                door.note(MSG_PENDING_ARTIFACT)
            settings = continuation(handle.run, given, limit)
            if settings is not None:
                plan = resumed_loop(handle.run.loop, settings, frozen_sandbox(handle.run))
                for line in _sandbox_note(plan):
                    door.note(line)
                lifecycle.record_loop_options(handle, plan.record(handle.run.loop))
                handle = handle.renewed()  # the facts with the sandbox this loop asked for
                if _here(plan):
                    _note_resources(handle.run.sandbox.evaluation, door)
                loop = drive(handle, plan, door, placed.executor, with_manifest=True)
                return ResumeResult(loop)
            data = manifest(handle.journal, handle.run, handle.repo)
        return ResumeResult(None, data, armed.pending_artifact)
    finally:
        placed.shutdown()


class _Placement:
    """`lifecycle.resume`'s `ready`: the resumed loop's plan from the run as it is, and its
    Ray executor connected and checked (asked again, the same one)."""

    def __init__(self, given: LoopSettings, limit: IterationLimit | None) -> None:
        self._given, self._limit = given, limit
        self.executor: Executor | None = None
        self._measure: MeasureWith | None = None
        self._asked = False

    def __call__(self, run: RunRecord) -> MeasureWith | None:
        if not self._asked:
            self._asked = True
            settings = continuation(run, self._given, self._limit)
            if settings is not None:
                # refuses a bad placement, and a sandbox this machine cannot give, here
                plan = resumed_loop(run.loop, settings, frozen_sandbox(run))
                self.executor = _ray_executor(plan, run=run)
                if self.executor is not None:
                    self._measure = measure_through(self.executor)
        return self._measure

    def shutdown(self) -> None:
        if self.executor is not None:
            self.executor.shutdown()


def _sandbox_note(plan: LoopPlan) -> tuple[str, ...]:
    """The one warning of an `auto` sandbox this machine cannot give (said before any child
    starts, the baseline's evaluation included)."""
    return (plan.sandbox_note,) if plan.sandbox_note else ()


@contextmanager
def _placed(plan: LoopPlan, mission_dir: Path) -> Iterator[Executor | None]:
    executor = _ray_executor(plan, mission_dir=mission_dir)
    try:
        yield executor
    finally:
        if executor is not None:
            executor.shutdown()


def _ray_executor(
    plan: LoopPlan, mission_dir: Path | None = None, run: RunRecord | None = None
) -> Executor | None:
    """A Ray loop's executor, connected and its resources checked (None: this machine)."""
    if _here(plan) or plan.where is None:
        return None
    from autoresearch.supervisor import ray_executor

    lanes = max(1, plan.limits.lanes)
    if run is not None:
        return ray_executor.for_evaluation(run.sandbox.evaluation, plan.where.address, lanes)
    assert mission_dir is not None
    return ray_executor.for_mission(mission_dir, plan.where.address, lanes)


def _here(plan: LoopPlan) -> bool:
    """Whether the loop's sessions and evaluations run on this machine (the local executor)."""
    return plan.where is None or plan.where.executor != ExecutorKind.RAY


def _note_resources(evaluation: EvaluationSlots, door: Door) -> None:
    note = unscheduled_resources(evaluation)
    if note is not None:
        door.note(note)


def drive(
    h: RunHandle,
    plan: LoopPlan,
    door: Door,
    executor: Executor | None = None,
    with_manifest: bool = False,
) -> LoopResult:
    """Run the loop of the open run `h` (lanes, or the single loop) until it ends or a signal
    stops it, then write its summary and report; `door.finished` renders the summary before
    the signal policy ends."""
    config, limits = plan.config, plan.limits
    refuse_without_comparable_baseline(h.context, h.run)  # before the header: no session will start
    progress, trackers = tracked_progress(
        h, plan.trackers, plan.tracker_uri, config.spec,
        door.progress(h.run.direction, lifecycle.baseline_and_best(h.context, h.run)), door.note,
    )  # fmt: skip
    progress.header(h.run_id, config.spec, h.run.worktree_path, limits.lanes)
    stop = StopSignal()
    moment = StopMoment.LOOP

    def on_signal(name: str) -> None:
        stop.set(name)
        door.stopping(moment)

    # The policy holds until the command's last write: a second signal while the summary and
    # the report are written still interrupts at once (exit 130), never SIGTERM's default.
    owned = None  # connected here: `start` and `resume` connect before the run changes
    with first_signal_stops(on_signal):
        try:
            if executor is None:
                executor = owned = _ray_executor(plan, run=h.run)
            if executor is not None:  # a Ray run has lanes
                limits = replace(limits, lanes=max(1, limits.lanes))
            if limits.lanes:
                # imported here: a single loop's driver never loads the lane scheduler
                from autoresearch.supervisor.lanes import run_lanes

                outcome = run_lanes(
                    h, config, limits, executor, progress, stop, portfolio=_portfolio(plan)
                )
            else:
                outcome = run_loop(
                    h, make_agent(config), limits, progress, stop, portfolio=_portfolio(plan)
                )
        finally:
            progress.close()
            if owned is not None:
                owned.shutdown()
        moment = StopMoment.FINISHING
        certified = _certify_at_end(h, door, stop) if _certifies(h, plan, outcome, stop) else None
        end_tracking(h, trackers)
        summary = lifecycle.run_summary(h, outcome.sessions, outcome.interrupted)
        door.report(h.repo.repo_root, h.run_id)
        data = manifest(h.journal, h.run, h.repo) if with_manifest else None
        result = LoopResult(outcome, summary, h.run.stop_note, data, certified)
        door.finished(result)
    return result


def _portfolio(plan: LoopPlan) -> Portfolio | None:
    """The members of a portfolio run, each with its model (`--model` once per agent, else
    the first's only) and its member name; the first with the other options given (its
    arguments, turns); None: one agent."""
    if not plan.agents:
        return None
    first = plan.config
    models = plan.models or (first.model,) + (None,) * (len(plan.agents) - 1)
    configs = [
        replace(first if i == 0 else AgentConfig(spec, seed=first.seed), model=model)
        for i, (spec, model) in enumerate(zip(plan.agents, models, strict=True))
    ]
    named = [replace(c, member=member_name(c.spec, c.model)) for c in configs]
    return Portfolio(named, make_agent, first.seed or 0)


# Pairs of the certification at the end of a loop: enough for a paired interval, cheap (8
# evaluations); `autoresearch certify RUN_ID --repeats N` takes more, counting these.
END_ROUNDS = 4
MSG_CERTIFYING = (
    "certifying: the baseline and the final commit re-measured in {n} interleaved pairs "
    "({readings} evaluations; --no-certify skips this)"
)
MSG_CERTIFY_STOPPED = (
    "certification stopped; the run is as it was, `autoresearch certify {run_id}` resumes it"
)


def _certifies(h: RunHandle, plan: LoopPlan, outcome: LoopOutcome, stop: StopSignal) -> bool:
    """Whether a loop's end certifies its result: it ended on its own (completed or stopped,
    no signal), kept a change, on this machine, and its evaluator varies (a deterministic one
    reads the same again: certification would add nothing)."""
    ended = outcome.status in (RunStatus.COMPLETED, RunStatus.STOPPED)
    if not plan.certify or not ended or outcome.interrupted or stop.reason or not _here(plan):
        return False
    h.refresh()
    run = h.run
    if run.last_kept_commit is None or run.last_kept_commit == run.baseline_commit:
        return False
    return RunReadings.load(h.journal, run).spread.sd > 0


def _certify_at_end(h: RunHandle, door: Door, stop: StopSignal) -> str | None:
    """A cheap certification before the summary and the report, which then show its paired
    improvement (its first line, None: not certified); a signal stops it between readings
    (those taken stay recorded)."""
    door.note(MSG_CERTIFYING.format(n=END_ROUNDS, readings=2 * END_ROUNDS))
    try:
        data = certify(h, END_ROUNDS, most=END_ROUNDS, stop=lambda: stop.reason is not None)
    except CertificationStopped:
        door.note(MSG_CERTIFY_STOPPED.format(run_id=h.run_id))
        return None
    except AutoresearchError as exc:
        door.note(f"not certified: {exc.message}")
        return None
    # its readings join the run's pooled spread: manifest.json says what status now says
    write_manifest(h.journal, h.run, h.repo)
    first, *rest = certification_lines(data)
    door.note(f"certified: {first}")
    for line in rest:
        door.note(line.strip())
    return first
