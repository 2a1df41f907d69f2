"""Where a run's agent sessions and evaluations execute: the `Executor` protocol and the
default `LocalExecutor` (issue 14, parallel lanes).

The lane scheduler (the driver) owns the journal, the run branch and every decision. It hands
an executor two kinds of task and gets `concurrent.futures.Future`s back, so the scheduler is
the same whatever runs the work (threads here, Ray tasks in `RayExecutor`):

* `AgentTask` → `AgentOutcome`: one agent session of one lane, starting from `base_commit`.
* `EvaluationTask` → `evaluate.EvaluationRecord`: one reading of the frozen evaluator on one
  commit. Each reading of a noise-aware decision is its own task, so each takes a slot.

Rules every executor keeps (the driver relies on them):

1. `submit_*` never blocks on the work: it queues and returns a future at once. The driver
   waits with `wait_any`, which is `concurrent.futures.wait(FIRST_COMPLETED)`; a Ray
   `ObjectRef.future()` is such a future.
2. Evaluation slots: at most sandbox.md's `evaluation.slots` evaluations run at once on one
   machine (default 1: timed benchmarks never overlap there); the executor's `slots` is that
   over all its machines (the local one has one, `RayExecutor` counts each node). Each
   evaluation task also says what it needs (`resources`, e.g. `{"GPU": 1}`); a remote executor
   runs it only on a machine that has it, the local one has no GPUs to hand out and only
   enforces the slots. Agents are not slot-bound.
3. Cancelling: every task comes with a `threading.Event` (`cancel`). When it is set, the
   session or evaluator is stopped as `run_supervised` stops it (process group, grace) and the
   future resolves normally with `cancelled=True` in the result. A remote executor watches the
   event and cancels its task (`ray.cancel`), resolving the future with a cancelled result or
   `TaskLost`.
4. A task whose worker went away (a node died, an actor was killed, the object was lost) makes
   its future raise `TaskLost`. Nothing else means "lost": an agent that crashed or an
   evaluator that failed is an ordinary result. On `TaskLost` the driver restarts the session
   or evaluation, or records the iteration interrupted; it is never counted twice.
5. Where the result lands. For an `AgentOutcome` the driver reads the lane's worktree on ITS
   machine once the future resolved: the candidate artifact in `task.candidate_file`, the
   session log in `task.log_path`, the commits `base_commit..head` on the lane branch checked
   out in `task.worktree`. The local executor runs the session right there. A remote one runs it
   in a checkout on its node and, before resolving the future, brings the commits back as a git
   bundle (base → head, fetched into the driver's repository and checked out on the lane branch
   in `task.worktree`), writes the artifact bytes and the log to those paths, and saves any
   uncommitted work the session left as a patch at `task.leftover_patch` (nothing is lost).
   For an evaluation, the record's `log_file` is `task.log_path` on the driver (a remote
   executor writes the log text there); `task.tree` is a checkout of `task.commit` on the
   driver's machine (a remote executor ships the commit as a bundle instead).
6. Executors never open the journal and never move the run branch: `on_spawn` (a process
   group started by a local task) is only called from worker threads with a thread-safe
   callback given by the driver; remote executors do not call it.

`AgentTask` and `EvaluationTask` are frozen dataclasses of plain values (paths, strings,
dicts, `AgentConfig`, `EvaluatorSpec`, `PastIteration` tuples): picklable for Ray.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from concurrent.futures import TimeoutError as FuturesTimeout
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, TypeVar

from autoresearch import git
from autoresearch.agents import AgentConfig, make_agent
from autoresearch.agents.base import AgentResult, PastIteration, SessionRequest
from autoresearch.confine import Box
from autoresearch.contracts.frozen import FrozenMission
from autoresearch.contracts.sandbox import EvaluationSlots, EvaluatorSpec
from autoresearch.errors import GitError
from autoresearch.evaluate import EvaluationRecord, evaluator_env, run_evaluator
from autoresearch.settings import kill_grace
from autoresearch.states import ExecutorKind

# A process group a local task started (thread-safe, given by the driver).
OnSpawn = Callable[[int], None]

T = TypeVar("T")


class TaskLost(Exception):
    """The worker that ran a task went away (node died, actor killed): the task's result is
    unknown. The driver restarts the task or records the iteration interrupted."""

    def __init__(self, what: str, detail: str = "") -> None:
        super().__init__(f"{what} lost" + (f": {detail}" if detail else ""))
        self.what = what
        self.detail = detail


@dataclass(frozen=True)
class AgentTask:
    """One agent session of one lane.

    `iteration` is what the session sees as AUTORESEARCH_ITERATION (the lane's own count; the
    journal numbers iterations when they are decided). `history` is a snapshot of the recorded
    iterations at submit time (agents never see the journal).
    """

    run_id: str
    lane: int
    iteration: int
    base_commit: str
    worktree: Path  # the lane's worktree on the driver's machine
    branch: str  # the lane branch checked out in `worktree`
    instructions_file: Path
    candidate_file: Path
    log_path: Path
    leftover_patch: Path  # where a remote executor saves uncommitted work the session left
    agent: AgentConfig
    timeout: float | None = None
    sandbox: FrozenMission = field(default_factory=FrozenMission)
    history: tuple[PastIteration, ...] = ()
    lanes: int = 0  # how many lanes the run has (K)
    box: Box | None = None  # the OS sandbox here (a remote executor runs without one)

    def request(self) -> SessionRequest:
        """The session request for a back-end running in `worktree` (a remote executor builds
        its own with the node-side paths)."""
        snapshot = self.history
        return SessionRequest(
            run_id=self.run_id,
            iteration=self.iteration,
            worktree=self.worktree,
            instructions_file=self.instructions_file,
            candidate_file=self.candidate_file,
            base_commit=self.base_commit,
            log_path=self.log_path,
            timeout=self.timeout,
            sandbox=self.sandbox,
            history=lambda after: [p for p in snapshot if p.iteration > after],
            lane=self.lane,
            lanes=self.lanes,
            box=self.box,
        )


@dataclass(frozen=True)
class AgentOutcome:
    """How a session ended and the lane HEAD it left (None: HEAD unreadable). The artifact,
    the log and the commits are on the driver's machine (rule 5 of the module docstring)."""

    task: AgentTask
    result: AgentResult
    head: str | None


@dataclass(frozen=True)
class EvaluationTask:
    """One reading of the frozen evaluator on `commit`, checked out at `tree`.

    The evaluator runs with `evaluate.evaluator_env(run_id, iteration, tree, mission_dir,
    sealed_dir)`: AUTORESEARCH_SEALED_DIR names `sealed_dir` when the run seals its harness
    (the driver has verified the sealed copy just before submitting; a remote executor ships
    that folder and points the variable at its copy). The child tag names `tree`: the reaper
    finds a stray evaluator of a lane by its lane worktree.
    """

    run_id: str
    lane: int
    iteration: int
    commit: str
    tree: Path
    relative_dir: str  # the mission folder inside the tree
    evaluator: EvaluatorSpec
    log_path: Path
    sealed_dir: Path | None = None
    resources: dict[str, float] = field(default_factory=dict)
    grace_seconds: float = field(default_factory=kill_grace)  # the driver's, shipped
    box: Box | None = None  # the OS sandbox here (a remote executor runs without one)

    def env(self, tree: Path | None = None, sealed_dir: Path | None = None) -> dict[str, str]:
        """The evaluator's environment where it runs (defaults: the driver-side paths)."""
        where = tree or self.tree
        sealed = sealed_dir or self.sealed_dir
        return evaluator_env(self.run_id, self.iteration, where, where / self.relative_dir, sealed)


class Executor(Protocol):
    """Runs tasks off the driver's thread; see the module docstring for the rules."""

    @property
    def name(self) -> ExecutorKind: ...

    @property
    def slots(self) -> int:
        """How many evaluations run at once, over all machines (sandbox.md's slots on each
        machine that can run one; the driver starts at most that many)."""
        ...

    def submit_agent(
        self, task: AgentTask, cancel: threading.Event, on_spawn: OnSpawn
    ) -> Future[AgentOutcome]: ...

    def submit_evaluation(
        self, task: EvaluationTask, cancel: threading.Event, on_spawn: OnSpawn
    ) -> Future[EvaluationRecord]: ...

    def stage(self, tree: Path, commit: str) -> None:
        """`commit` (of the repository at `tree`) is likely to be measured next: a remote
        executor may ship it now, while the slot is busy, instead of on the slot's path."""
        ...

    def shutdown(self) -> None:
        """Release the workers; tasks still running were cancelled by the driver first."""
        ...


def wait_any(futures: Iterable[Future[Any]], timeout: float | None) -> set[Future[Any]]:
    """The futures that are done, waiting up to `timeout` for the first one."""
    done, _ = wait(list(futures), timeout=timeout, return_when=FIRST_COMPLETED)
    return done


# Said once when a loop's evaluations run on this machine although sandbox.md asks for
# resources: nothing here hands them out (rule 2), a user counting on `{GPU: 1}` must know.
MSG_RESOURCES_UNSCHEDULED = (
    "sandbox.md's evaluation.resources {resources} are not scheduled by the local executor: "
    "every evaluation runs on this machine, at most {slots} at once, whatever it has; "
    "`--executor ray` runs each only where they are"
)


def unscheduled_resources(evaluation: EvaluationSlots) -> str | None:
    """The note for a loop on this machine whose sandbox asks each evaluation for resources
    (None: it asks for none)."""
    if not evaluation.resources:
        return None
    asked = ", ".join(f"{name}: {amount:g}" for name, amount in evaluation.resources.items())
    return MSG_RESOURCES_UNSCHEDULED.format(resources=f"{{{asked}}}", slots=evaluation.slots)


class LocalExecutor:
    """Threads on this machine: `lanes` agent sessions at once, `slots` evaluations at once.

    Sessions and evaluators are child processes (or, for the offline agent, quick in-process
    work), so threads only wait on them. A local task is never lost: the driver and its
    threads die together, and `resume` repairs what was in flight.
    """

    name = ExecutorKind.LOCAL

    def __init__(self, lanes: int, slots: int = 1) -> None:
        self._lanes = max(1, lanes)
        self._slots = max(1, slots)
        self._agents = ThreadPoolExecutor(self._lanes, thread_name_prefix="lane-agent")
        self._evals = ThreadPoolExecutor(self._slots, thread_name_prefix="lane-eval")

    @property
    def slots(self) -> int:
        return self._slots

    def submit_agent(
        self, task: AgentTask, cancel: threading.Event, on_spawn: OnSpawn
    ) -> Future[AgentOutcome]:
        return self._agents.submit(run_agent_task, task, cancel, on_spawn)

    def submit_evaluation(
        self, task: EvaluationTask, cancel: threading.Event, on_spawn: OnSpawn
    ) -> Future[EvaluationRecord]:
        # the pool has `slots` threads: a queued evaluation waits for a free slot
        return self._evals.submit(run_evaluation_task, task, cancel, on_spawn)

    def stage(self, tree: Path, commit: str) -> None:
        """Nothing to ship: a reading here runs on the driver's own checkout."""

    def shutdown(self) -> None:
        self._agents.shutdown(wait=True, cancel_futures=True)
        self._evals.shutdown(wait=True, cancel_futures=True)


def run_agent_task(task: AgentTask, cancel: threading.Event, on_spawn: OnSpawn) -> AgentOutcome:
    """Run one session in `task.worktree` (where it is; a remote executor calls this on its
    node with a task whose paths are the node's)."""
    agent = make_agent(task.agent)
    result = agent.run(task.request(), cancel.is_set, on_spawn)
    try:
        head: str | None = git.head(task.worktree)
    except GitError:  # a session may leave HEAD unborn or the worktree broken
        head = None
    return AgentOutcome(task, result, head)


def run_evaluation_task(
    task: EvaluationTask, cancel: threading.Event, on_spawn: OnSpawn
) -> EvaluationRecord:
    """Run one reading in `task.tree` (where it is)."""
    return run_evaluator(
        task.evaluator,
        task.tree,
        task.env(),
        task.log_path,
        on_spawn=on_spawn,
        grace_seconds=task.grace_seconds,
        should_cancel=cancel.is_set,
        box=task.box,
    )


def measure_through(
    executor: Executor, poll_seconds: float = 1.0
) -> Callable[[EvaluationTask, Callable[[], bool] | None], EvaluationRecord]:
    """A `DriverState.measure_with` that takes each reading as a task of `executor`, waiting for
    it: a run's baseline is measured where its candidates are (a Ray run: on the cluster, with
    the sandbox's resources), not on the driver. A lost task is taken again (a reading that
    never came back was never counted); `should_cancel` stops the task as rule 3 says."""

    def measure(task: EvaluationTask, should_cancel: Callable[[], bool] | None) -> EvaluationRecord:
        while True:
            cancel = threading.Event()
            future = executor.submit_evaluation(task, cancel, _unregistered)
            try:
                while True:
                    try:
                        return future.result(timeout=poll_seconds)
                    except FuturesTimeout:
                        if should_cancel is not None and should_cancel():
                            cancel.set()
            except TaskLost:
                continue

    return measure


def _unregistered(pgid: int) -> None:
    """An executor's children are not registered in the journal (rule 6)."""
