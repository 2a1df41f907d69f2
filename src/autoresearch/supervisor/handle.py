"""An open run: the journal, the run's paths, its record and the driver lock.

Whoever holds a RunHandle is the run's one driver (supervisor.md §7): the OS lock is taken when
the handle is made and released by `close` or by the kernel when the process dies.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from autoresearch.children import ChildTag, run_tag
from autoresearch.confine import DEFAULT_MODE, Box, SandboxMode, choose, machine_support
from autoresearch.contracts.frozen import FrozenMission
from autoresearch.contracts.sandbox import ChecksSpec, EvaluatorSpec
from autoresearch.journal import runs
from autoresearch.journal.db import Journal
from autoresearch.locks import FileLock, take_or_refuse
from autoresearch.noise import NoisePolicy
from autoresearch.paths import (
    RESULTS_FILE,
    RepoPaths,
    RunPaths,
)
from autoresearch.reset import RuntimeRule, run_dirt
from autoresearch.states import Direction, KeepPolicy
from autoresearch.supervisor.run_read import load_run, read_run

if TYPE_CHECKING:  # the executor (threads, agents) only for types: `status` reads runs here
    from autoresearch.evaluate import EvaluationRecord
    from autoresearch.supervisor.executor import EvaluationTask


def msg_active_run(run_id: str, driven: bool = True) -> str:
    """The refusal code first (scripts match it), then what the user can do."""
    if driven:
        hint = (
            f"another process drives run {run_id} right now; stop it "
            f"(autoresearch stop {run_id}) or wait for it to end"
        )
    else:
        hint = (
            f"run {run_id} is not finished and nobody drives it; resume it "
            f"(autoresearch resume {run_id}) or stop it (autoresearch stop {run_id})"
        )
    return f"autoresearch_active_run_exists:{run_id} – {hint}"


# One reading taken through an executor: the task, and when to give up (an interrupt).
MeasureWith = Callable[["EvaluationTask", Callable[[], bool] | None], "EvaluationRecord"]


def lane_branch(run_branch: str, lane: int) -> str:
    """`autoresearch/<slug>/<tag>` → `autoresearch-lanes/<slug>/<tag>/<lane>`: a namespace of
    its own, so that no run's branch can ever be a lane's."""
    return f"autoresearch-lanes/{run_branch.removeprefix('autoresearch/')}/{lane}"


def driver_lock(repo: RepoPaths, run_id: str) -> FileLock:
    """Take the run's driver lock or refuse with `autoresearch_active_run_exists:<id>`."""
    return take_or_refuse(repo.run(run_id).driver_lock, msg_active_run(run_id))


def lock_run(
    repo_root: Path, run_id: str, admit: Callable[[runs.RunRecord], None] | None = None
) -> RunHandle:
    """The run's handle with its driver lock taken, refused in this order: an unknown run
    (`read_run`), what `admit` refuses of the run as recorded, another live driver."""
    journal, run = read_run(repo_root, run_id)
    try:
        if admit is not None:
            admit(run)
        lock = driver_lock(RepoPaths(repo_root), run_id)
    except BaseException:
        journal.close()
        raise
    # another driver may have changed the run before the lock was ours: read it again
    return RunHandle.of(journal, RepoPaths(repo_root), load_run(journal, run_id), lock)


@dataclass(frozen=True)
class RunContext:
    """A run as one of its lanes sees it, fixed while a driver holds it: its journal, where
    its files are and the mission frozen at prepare. What changes (the run's status, its
    iteration, the incumbent) is the record, a value read from the journal; what a process did
    (its pointer, its reaps, how it takes readings) is the driver's `DriverState`."""

    journal: Journal
    repo: RepoPaths
    run_id: str
    run_worktree: Path  # the run's own worktree (a lane's is `worktree`)
    run_branch: str
    run_mission_dir: Path
    mission_slug: str
    evaluator: EvaluatorSpec
    sandbox: FrozenMission
    repo_root: Path  # as the run recorded it (its sandbox's root)
    # The sandbox asked for: `--sandbox` as recorded, else sandbox.md's, else the default.
    sandbox_mode: SandboxMode
    keep_policy: KeepPolicy  # the rule that decides a candidate, frozen at prepare
    # A lane (1..K) of `run --lanes K`: its own worktree, branch, handoff files and logs; the
    # journal, the lock and the run record are the run's (supervisor/lanes.py).
    lane: int = 0

    @classmethod
    def of(
        cls, journal: Journal, repo: RepoPaths, run: runs.RunRecord, lane: int = 0
    ) -> RunContext:
        given = run.loop_settings.sandbox or run.sandbox.isolation.sandbox
        return cls(
            journal, repo, run.run_id, Path(run.worktree_path), run.branch_name,
            Path(run.mission_dir), run.mission_slug, run.evaluator, run.sandbox,
            Path(run.repo_root), SandboxMode(given or DEFAULT_MODE), run.keep_policy, lane,
        )  # fmt: skip

    def for_lane(self, lane: int) -> RunContext:
        return replace(self, lane=lane)

    @property
    def direction(self) -> Direction:
        """Which way the mission's score improves."""
        return self.evaluator.direction

    @property
    def paths(self) -> RunPaths:
        paths = self.repo.run(self.run_id)
        return RunPaths(paths.root, self.lane) if self.lane else paths

    @property
    def worktree(self) -> Path:
        return self.repo.lane_worktree(self.run_id, self.lane) if self.lane else self.run_worktree

    @property
    def branch_name(self) -> str:
        """The branch checked out in `worktree`: the run's, or the lane's."""
        return lane_branch(self.run_branch, self.lane) if self.lane else self.run_branch

    @property
    def mission_dir(self) -> Path:
        """The mission folder inside `worktree`."""
        if not self.lane:
            return self.run_mission_dir
        return self.worktree / self.sandbox.relative_dir

    @property
    def results_file(self) -> Path:
        return self.run_worktree / RESULTS_FILE  # the run's, whichever lane writes

    @property
    def links(self) -> tuple[str, ...]:
        return self.sandbox.shared_links

    @property
    def noise(self) -> NoisePolicy:
        """The noise policy frozen at prepare (a run prepared before it: the single rule)."""
        return self.sandbox.noise_policy

    @property
    def sealed(self) -> tuple[str, ...]:
        return self.sandbox.sealed

    @property
    def checks(self) -> ChecksSpec | None:
        return self.sandbox.checks

    @property
    def incumbent_tree(self) -> Path:
        """Where the kept commit is checked out to be re-measured (paths.RunPaths.incumbent)."""
        return self.paths.incumbent

    @property
    def runtime(self) -> tuple[str, ...]:
        return self.sandbox.runtime

    @property
    def dirt(self) -> RuntimeRule:
        """What may be untracked in the worktree without being work (reset.RuntimeRule)."""
        return run_dirt(self.links, self.runtime)

    @property
    def tag(self) -> ChildTag:
        """What every child of this run carries in its environment (to find strays safely)."""
        return run_tag(self.run_id, self.worktree)

    def box(self, agent: bool) -> Box | None:
        """The OS sandbox of this run's sessions (`agent`) or of its evaluations and checks;
        None where none is used. Both may write the shared links (.venv, node_modules, caches);
        an evaluation reads the sealed harness copy."""
        used = choose(self.sandbox_mode, machine_support())
        if used.bwrap is None:
            return None
        isolation = self.sandbox.isolation
        sealed = (self.paths.sealed,) if self.sealed and not agent else ()
        return Box(
            bwrap=used.bwrap,
            repo_root=self.repo_root,
            writable=tuple(self.repo_root / link for link in self.links),
            readable=sealed,
            network=isolation.agent_network if agent else isolation.evaluator_network,
        )


@dataclass
class DriverState:
    """What this process did to a run it drives and how it takes readings: per process, owned
    by the driver (supervisor/loop.Driver, or the verb of a one-shot `step`/`resume`), never
    part of the run's facts (`RunContext`)."""

    lock: FileLock  # the run's driver lock, held while this process drives it
    # The run's record as this process last read or wrote it (`RunHandle.run`). A cache of the
    # journal's row, kept here because only the driver changes the row while it holds the
    # lock: each writer hands back exactly what it wrote (`saw`), so a step reads the run once
    # instead of after every write. Per process: a lane's state has its own copy.
    record: runs.RunRecord
    pointer_written: bool = False  # active-run.json names this driver already
    reaped: bool = False  # a crashed driver's children were looked for (once per lock)
    # recovery.recover ran: only its first run follows a crashed driver. Separate from
    # `reaped`, which resume sets first (strays stop before the tree is looked at), so that a
    # resume still counts as the first repair.
    recovered: bool = False
    # How a run with lanes takes a reading: through its executor, in an evaluation slot
    # (None: the evaluator runs right here, as a run without lanes does).
    measure_with: MeasureWith | None = None

    def for_lane(self) -> DriverState:
        """A lane's own state under the same lock: its driver has written the pointer, reaped
        and recovered for it already."""
        return DriverState(self.lock, self.record, True, True, True, self.measure_with)

    def saw(self, run: runs.RunRecord) -> runs.RunRecord:
        """Remember `run` as the run's record now (just read, or exactly what was written)."""
        self.record = run
        return run


@dataclass(frozen=True)
class RunHandle:
    """A run this process drives: what the run is, fixed (`context`), and what this process
    did to it and last read of it (`state`, the driver's). Frozen: a change of the run's facts
    (a resume's runtime globs or sandbox) makes a new handle (`renewed`)."""

    context: RunContext
    state: DriverState

    @classmethod
    def of(
        cls, journal: Journal, repo: RepoPaths, run: runs.RunRecord, lock: FileLock
    ) -> RunHandle:
        return cls(RunContext.of(journal, repo, run), DriverState(lock, run))

    def for_lane(self, lane: int) -> RunHandle:
        """The same run seen from lane `lane` (the same journal and lock: one driver)."""
        return RunHandle(self.context.for_lane(lane), self.state.for_lane())

    def renewed(self) -> RunHandle:
        """This handle with its facts made anew from the record as last read (a resume that
        changed the run's runtime globs or sandbox); the same state, lock and journal."""
        ctx = self.context
        return RunHandle(RunContext.of(ctx.journal, ctx.repo, self.run, ctx.lane), self.state)

    @property
    def run(self) -> runs.RunRecord:
        """The run's record as this process last read or wrote it (`DriverState.record`)."""
        return self.state.record

    @property
    def journal(self) -> Journal:
        return self.context.journal

    @property
    def repo(self) -> RepoPaths:
        return self.context.repo

    @property
    def lane(self) -> int:
        return self.context.lane

    @property
    def run_id(self) -> str:
        return self.context.run_id

    @property
    def paths(self) -> RunPaths:
        return self.context.paths

    @property
    def worktree(self) -> Path:
        return self.context.worktree

    @property
    def branch_name(self) -> str:
        return self.context.branch_name

    @property
    def mission_dir(self) -> Path:
        return self.context.mission_dir

    @property
    def results_file(self) -> Path:
        return self.context.results_file

    @property
    def evaluator(self) -> EvaluatorSpec:
        return self.context.evaluator

    @property
    def sandbox(self) -> FrozenMission:
        return self.context.sandbox

    @property
    def keep_policy(self) -> KeepPolicy:
        return self.context.keep_policy

    @property
    def direction(self) -> Direction:
        return self.context.direction

    @property
    def links(self) -> tuple[str, ...]:
        return self.context.links

    @property
    def noise(self) -> NoisePolicy:
        return self.context.noise

    @property
    def sealed(self) -> tuple[str, ...]:
        return self.context.sealed

    @property
    def checks(self) -> ChecksSpec | None:
        return self.context.checks

    @property
    def incumbent_tree(self) -> Path:
        return self.context.incumbent_tree

    @property
    def runtime(self) -> tuple[str, ...]:
        return self.context.runtime

    @property
    def dirt(self) -> RuntimeRule:
        return self.context.dirt

    @property
    def tag(self) -> ChildTag:
        return self.context.tag

    @property
    def sandbox_mode(self) -> SandboxMode:
        return self.context.sandbox_mode

    def box(self, agent: bool) -> Box | None:
        return self.context.box(agent)

    def refresh(self) -> runs.RunRecord:
        """Read the run's record from the journal again (another process may have written
        it: a stop request, a pause)."""
        return self.state.saw(load_run(self.journal, self.run_id))

    def close(self) -> None:
        self.state.lock.release()
        self.journal.close()

    def __enter__(self) -> RunHandle:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def pid_host() -> tuple[int, str]:
    return os.getpid(), os.uname().nodename
