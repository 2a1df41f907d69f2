"""A run's trackers as its driver uses them (`run --tracker NAME`, tracking.py): built when
the loop starts and told what the journal holds – every recorded iteration as the progress
shows it, the run's end after its certification. A run without trackers builds nothing and
imports no tracker's library.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from autoresearch.agents.base import AgentResult
from autoresearch.journal import iteration_records
from autoresearch.journal.iteration_records import IterationRecord
from autoresearch.journal.lanes import LaneRecord
from autoresearch.noise import Interval
from autoresearch.states import RunStatus
from autoresearch.supervisor.certify import last_certification
from autoresearch.supervisor.handle import RunHandle
from autoresearch.supervisor.loop import LaneObserver
from autoresearch.supervisor.step import StepResult
from autoresearch.tracking import (
    Mirror,
    Tracker,
    TrackerConfig,
    failure_note,
    load_tracker,
    tracked_end,
    tracked_run,
)


class RunTrackers:
    """The trackers of one driven loop; every failure is a note, never the run's."""

    def __init__(
        self,
        h: RunHandle,
        names: tuple[str, ...],
        uri: str | None,
        agent: str | None,
        note: Callable[[str], None],
    ) -> None:
        self._h, self._agent = h, agent
        config = TrackerConfig(h.repo.tracking, uri)
        built: dict[str, Tracker] = {}
        for name in names:
            try:
                built[name] = load_tracker(name, config)
                note(f"tracker {name}: mirroring each iteration into {built[name].location}")
            except Exception as exc:  # noqa: BLE001 – a tracker's failure is never the run's
                note(failure_note(name, exc))
        self._mirror = Mirror(built, note)

    def sync(self) -> None:
        self._h.refresh()
        self._mirror.sync(tracked_run(self._h.run, self._agent), self._after)

    def end(self, improvement: Interval | None, significant: bool) -> None:
        self._h.refresh()
        run = self._h.run
        ended = tracked_end(run, improvement, significant)
        self._mirror.end(tracked_run(run, self._agent), ended, self._after)

    def _after(self, iteration: int) -> list[IterationRecord]:
        return iteration_records.iterations_after(self._h.journal, self._h.run_id, iteration)


class Shown(LaneObserver, Protocol):
    """What a loop's progress is (supervisor/drive.Progress, which imports this module)."""

    def header(self, run_id: str, agent: str, worktree: str, lanes: int = 0) -> None: ...

    def close(self) -> None: ...


class TrackedProgress:
    """A loop's progress that also mirrors each recorded step into the run's trackers."""

    def __init__(self, inner: Shown, trackers: RunTrackers) -> None:
        self._inner, self._trackers = inner, trackers

    def header(self, run_id: str, agent: str, worktree: str, lanes: int = 0) -> None:
        self._inner.header(run_id, agent, worktree, lanes)
        self._trackers.sync()  # a resumed run's iterations the tracker lacks, the baseline

    def session_started(self, iteration: int, lane: int = 0) -> None:
        self._inner.session_started(iteration, lane)

    def evaluation_started(self, iteration: int, lane: int = 0) -> None:
        self._inner.evaluation_started(iteration, lane)

    def step_recorded(self, result: StepResult, agent: AgentResult | None, lane: int = 0) -> None:
        self._inner.step_recorded(result, agent, lane)
        self._trackers.sync()

    def lanes_changed(self, lanes: list[LaneRecord]) -> None:
        self._inner.lanes_changed(lanes)

    def note(self, message: str) -> None:
        self._inner.note(message)

    def close(self) -> None:
        self._inner.close()


def tracked_progress(
    h: RunHandle,
    names: tuple[str, ...],
    uri: str | None,
    agent: str | None,
    progress: Shown,
    note: Callable[[str], None],
) -> tuple[Shown, RunTrackers | None]:
    """The progress a loop shows, mirroring into the run's trackers when it has any."""
    if not names:
        return progress, None
    trackers = RunTrackers(h, names, uri, agent, note)
    return TrackedProgress(progress, trackers), trackers


def end_tracking(h: RunHandle, trackers: RunTrackers | None) -> None:
    """Tell the trackers how the loop ended: a run still running (a signal stopped its
    driver) is only caught up; an ended one gets its end and its certification, if any."""
    if trackers is None:
        return
    h.refresh()
    if h.run.status == RunStatus.RUNNING:
        trackers.sync()
        return
    found = last_certification(h.context, h.run)
    improvement = found.improvement if found is not None else None
    trackers.end(improvement, bool(found and found.significant))
