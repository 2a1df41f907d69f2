"""`--executor ray`: agent sessions and evaluations on a cluster's nodes.

Each runs on a warm worker of its node (`NodeWorker`, a Ray actor made once per run and node
and reused, `ray_pool.WarmPool`), or, when it asks a GPU or a custom resource, as a Ray task
that holds what it asks (`warmable`). Below, "task" is either.

The driver keeps the journal, the run branch and every decision; a node gets plain data and
returns plain data (`supervisor/remote.py`). What moves where:
* code: git bundles. The first task of a base carries its history as one bundle in Ray's
  object store (a chain's root); a later commit travels as one bundle past that root, and a
  node fetches only what its cache lacks: that bundle, and the root if it lacks that too. A
  session's new commits come back as a bundle (base → head), fetched into the driver's
  repository;
* instructions, the placeholder artifact and the verified sealed harness go out as bytes;
  the artifact, the uncommitted rest (a patch), the logs and the usage or evaluation record
  come back, and land where a local session would have left them (executor.py, rule 5).

Every task is submitted with `max_retries=0` (an actor with `max_restarts=0`): Ray never
re-runs one behind our back (an evaluation counted twice, an agent paid twice). A task whose
node or worker died raises
`TaskLost` on its future; the lane scheduler restarts it or records it interrupted. A lost
evaluation's evaluator outlives its worker (it runs in its own process group): its slot, and
the loss, wait until it is gone (`RayExecutor._settle_lost`), or the retry would run beside it.
Cancelling is cooperative: the task asks a small stop board (a Ray actor that holds the
question until a stop comes, a long poll) and stops its process group as a local session
would, so an interrupted session still returns its work.
The board is no single point of failure: it lives on the driver's node (it dies only with the
driver), Ray restarts it if its process dies, and a board a task cannot reach says nothing
(only its "stop" stops a task; the driver repeats a stop until the task has ended).
Evaluation slots are per node: the driver counts the evaluations running on each live node
and sends one only to a node whose resources cover what it asks (`ray.nodes()`) and that runs
fewer than `slots` of them, pinned there (`NodeAffinitySchedulingStrategy`, not soft: a pinned
task never spills onto a node whose slot is taken, and one pinned to a node that died fails and
is taken again). Of the nodes with a free slot, one whose CPUs (and the rest of the ask) are
free now goes first: a pinned task waits for its own node, and four lanes' sessions on two
2-CPU nodes left readings pinned behind two sessions while the other node had a CPU free.
Ray's own means do not fit: a custom resource per slot is fixed when a node starts
(`ray start --resources`), and a placement group per node holds the evaluation's
resources for the whole run (sessions could not use them) and, rescheduled after a node's
loss, may land beside another on one node.

Importing this module does not import Ray (`pip install '.[ray]'` in a clone adds it).
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import socket
import threading
import time
import uuid
from collections.abc import Callable, Collection, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any, NotRequired, TypedDict

from autoresearch import git
from autoresearch.contracts.sandbox import EvaluationSlots
from autoresearch.errors import AutoresearchError, ContractError
from autoresearch.evaluate import EvaluationRecord
from autoresearch.jsonshape import mapping, number
from autoresearch.settings import kill_grace, ray_node_dir
from autoresearch.states import ExecutorKind
from autoresearch.supervisor import ray_quiet, remote
from autoresearch.supervisor.executor import (
    AgentOutcome,
    AgentTask,
    EvaluationTask,
    OnSpawn,
    TaskLost,
)
from autoresearch.supervisor.ray_pool import ActorMeans, WarmPool, least_busy, less_ours
from autoresearch.supervisor.watcher import WATCH_SECONDS

MSG_NO_RAY = (
    "--executor ray needs Ray on this machine and on every node: "
    "pip install '.[ray]' in a clone of autoresearch"
)
# How often a task asks the stop board, and how long a cancelled task may take to stop
# before its worker is killed (its process group goes with the next task's reaper).
STOP_POLL_SECONDS = 1.0
STOP_PATIENCE_SECONDS = 30.0
# How long the board holds a task's question before it answers "no stop" (`StopBoard`), and
# how many questions and stops it serves at once.
BOARD_PATIENCE_SECONDS = 30.0
BOARD_CONCURRENCY = 100_000
LOST = "Ray task"  # TaskLost reads "Ray task lost: <why>"
# Links past one root bundle (each carries every commit since the root) before a commit's
# whole history is bundled as a new root.
MAX_CHAIN = 8
# A cold Ray worker takes seconds to start (more on a loaded machine) and every node starts
# its own: the executor starts a node's workers at once, before the first task, and waits
# for them up to WARM_SECONDS; each warm-up task lasts WARM_PAUSE so that those of a node
# overlap (one that ended at once would hand its worker to the next instead).
WARM_SECONDS = 60.0
# How long the driver waits for the head's GCS port to answer before it refuses the address:
# Ray's own client retries an unreachable GCS for minutes, printing its errors meanwhile.
CONNECT_SECONDS = 5.0
WARM_PAUSE = 0.3
# How long the cluster's nodes, as asked once, are taken as current (`RayExecutor._offers`);
# an evaluation waiting for a slot asks again every SLOT_WAIT_SECONDS: a node may have joined.
RESOURCES_SECONDS = 10.0
SLOT_WAIT_SECONDS = 1.0
MAX_WARM_PER_NODE = 16
# A lost evaluation keeps its slot until its evaluator is known gone (`_settle_lost`). On a
# live node a reaper task stops it and says so: REAP_PATIENCE_SECONDS there (each stop is a
# SIGTERM, the kill grace, then SIGKILL), REAP_SECONDS in all (a worker may have to start
# first). A dead node cannot be asked: its watcher stops its tasks' processes once their
# worker is gone (the worker leaves with its raylet), within WATCH_SECONDS and one stop;
# `lost_node_seconds` is that with a margin for a loaded machine.
REAP_PATIENCE_SECONDS = 20.0
REAP_SECONDS = 60.0
LOST_NODE_SLACK_SECONDS = 3.0


def lost_node_seconds(grace: float) -> float:
    """How long after a node's loss is known its watcher may still be stopping a lost task's
    processes, the kill grace (AUTORESEARCH_KILL_GRACE_SECONDS) being `grace`: its next look
    (WATCH_SECONDS) and the SIGTERM's grace, doubled for a loaded machine, and the worker's
    own end after its raylet's (LOST_NODE_SLACK_SECONDS). 10 s at the default grace of 3 s,
    the fixed wait this replaced; a cluster given a shorter grace frees a lost slot sooner."""
    return 2 * (WATCH_SECONDS + grace) + LOST_NODE_SLACK_SECONDS


def import_ray() -> ModuleType:
    """Ray, or the one-line error that says how to install it."""
    try:
        return importlib.import_module("ray")
    except ImportError as exc:
        raise ContractError(MSG_NO_RAY) from exc


class RayOptions(TypedDict):
    """The options of a Ray task we start (`fn.options(**options)`), Ray's own names."""

    num_cpus: float
    max_retries: int
    num_gpus: NotRequired[float]
    resources: NotRequired[dict[str, float]]  # custom resources: fpga, a node's label
    scheduling_strategy: NotRequired[object]  # "SPREAD", or Ray's node affinity (`_pinned`)


def ray_options(resources: dict[str, float], default_cpus: float = 1.0) -> RayOptions:
    """Ray task options for what a sandbox asks (`{GPU: 1, CPU: 2, fpga: 1}`): Ray takes CPUs
    and GPUs as their own options, every other name as a custom resource."""
    options: RayOptions = {"num_cpus": default_cpus, "max_retries": 0}
    custom = {}
    for name, amount in resources.items():
        if name.upper() == "CPU":
            options["num_cpus"] = float(amount)
        elif name.upper() == "GPU":
            options["num_gpus"] = float(amount)
        else:
            custom[name] = float(amount)
    if custom:
        options["resources"] = custom
    return options


def missing_resources(asked: RayOptions, offered: Mapping[str, float]) -> list[str]:
    """The resources of `ray_options` that `offered` (a node's) has less of (pure)."""
    wanted = {"CPU": asked.get("num_cpus", 0.0), "GPU": asked.get("num_gpus", 0.0)}
    wanted.update(asked.get("resources", {}))
    return sorted(f"{k}: {v:g}" for k, v in wanted.items() if v and offered.get(k, 0.0) < v)


@dataclass(frozen=True)
class NodeOffer:
    """A live node of the cluster and the resources it has in all (not what is free now)."""

    node_id: str
    resources: Mapping[str, float]


def live_offers(nodes: list[Mapping[str, object]]) -> tuple[NodeOffer, ...]:
    """The live nodes of `ray.nodes()`, in its order (pure)."""
    return tuple(NodeOffer(str(n["NodeID"]), _node_resources(n)) for n in nodes if n.get("Alive"))


def _node_resources(node: Mapping[str, object]) -> dict[str, float]:
    """A node's resources in all, from `ray.nodes()` (checked: Ray's, not ours)."""
    return {k: number(v) for k, v in mapping(node.get("Resources")).items()}


def able_nodes(asked: RayOptions, offers: Sequence[NodeOffer]) -> tuple[str, ...]:
    """The nodes that have all a task of `ray_options` asks: no other ever runs it (pure)."""
    return tuple(o.node_id for o in offers if not missing_resources(asked, o.resources))


def unoffered(asked: RayOptions, offers: Sequence[NodeOffer]) -> list[str]:
    """What to name when no node is able (pure): the asks no node has as much of, else (each
    is somewhere, never all on one node) every ask."""
    most: dict[str, float] = {}
    for offer in offers:
        for name, amount in offer.resources.items():
            most[name] = max(most.get(name, 0.0), amount)
    return missing_resources(asked, most) or missing_resources(asked, {})


def pick_node(
    able: Sequence[str], busy: Mapping[str, int], slots: int, ready: Collection[str] = ()
) -> str | None:
    """The node an evaluation takes a slot on (pure): of the able nodes running fewer than
    `slots` evaluations, one that has what it asks free now (`ready`) first, then the one
    running fewest (the first on a tie); None when all are full. A pinned task waits for its
    node's resources: sent to a node whose CPUs the sessions hold while another node's were
    free, a reading waited for a session to end there (up to a session's length)."""
    free = [node for node in able if busy.get(node, 0) < slots]
    return min(free, key=lambda node: (node not in ready, busy.get(node, 0)), default=None)


def ready_nodes(asked: RayOptions, available: Mapping[str, Mapping[str, float]]) -> frozenset[str]:
    """The nodes whose free resources (`available`, by node id) cover the ask (pure)."""
    return frozenset(node for node, free in available.items() if not missing_resources(asked, free))


# --- what runs on a node -------------------------------------------------------------------


class StopBoard:
    """The ids of tasks the driver wants stopped (a Ray actor: one per executor).

    An asyncio actor: a task's question waits on the board until its stop comes or
    `patience` passes (a long poll), so a task asks once per BOARD_PATIENCE_SECONDS instead of
    once per STOP_POLL_SECONDS. Each question was a call through Ray on the task's worker and
    on the board: about 5 CPU ms per second of every task, measured (bench/cluster_cpu.py)."""

    def __init__(self) -> None:
        self._stopped: set[str] = set()
        self._waiting: dict[str, asyncio.Event] = {}

    async def stop(self, task_id: str) -> None:
        self._stopped.add(task_id)
        event = self._waiting.pop(task_id, None)
        if event is not None:
            event.set()

    async def stopped(self, task_id: str, patience: float = 0.0) -> bool:
        """Whether `task_id` is to stop, once it is or after `patience` seconds."""
        if task_id not in self._stopped and patience > 0:
            event = self._waiting.setdefault(task_id, asyncio.Event())
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(event.wait(), patience)
            if self._waiting.get(task_id) is event and not event.is_set():
                del self._waiting[task_id]  # nobody waits for it now: not kept for ever
        return task_id in self._stopped


def _pinned_board(ray: ModuleType) -> Any:
    """The executor's stop board, on the driver's own node and restarted by Ray if its
    process dies. Placed anywhere (Ray's default), it sat on any node, and that node's death
    took it: every task then read "stop" (see `_BoardPoll`) and a run never ended. On the
    driver's node it dies only with the driver, whose tasks Ray ends anyway (their job ends
    with it). A restarted board has forgotten its stops: `RayExecutor._await` repeats them."""
    here = _pinned(ray.get_runtime_context().get_node_id())
    # every task's question stays open up to BOARD_PATIENCE_SECONDS, a finished task's too:
    # Ray's default of 1000 calls at once would queue a stop behind them at ~33 tasks a second
    actor = ray.remote(StopBoard).options(
        num_cpus=0,
        scheduling_strategy=here,
        max_restarts=-1,
        max_task_retries=-1,
        max_concurrency=BOARD_CONCURRENCY,
    )
    return actor.remote()


def _pinned(node_id: str) -> Any:
    """Ray's strategy that runs a task or actor on the node `node_id` or fails it: never on
    another node, not even when that one is gone."""
    strategy = importlib.import_module("ray.util.scheduling_strategies")
    return strategy.NodeAffinitySchedulingStrategy(node_id, soft=False)


class _BoardPoll:
    """`should_cancel` on a node: one question at a time to the board, which answers at a
    stop or after BOARD_PATIENCE_SECONDS (`StopBoard.stopped`); whether it answered is looked
    at, without waiting, at most once per STOP_POLL_SECONDS (the task's process is watched
    meanwhile).

    Only the board's "yes" stops the task. A board that has not answered yet, or cannot be
    reached, says nothing: it lives on the driver's node (`_pinned_board`), so it is either
    restarting (its calls are retried on the new one) or gone with the driver, whose tasks Ray
    ends itself (the node's watcher stops their processes). Reading "unreachable" as "stop"
    made every task after a board's loss stop at once, and a stopped reading is taken again:
    lanes measured the same candidate for ever."""

    def __init__(self, board: Any, task_id: str) -> None:
        self._board, self._task_id = board, task_id
        self._next, self._stop = 0.0, False
        self._asked: Any = None  # the question in flight (an ObjectRef)

    def __call__(self) -> bool:
        now = time.monotonic()
        if self._stop or now < self._next:
            return self._stop
        self._next = now + STOP_POLL_SECONDS
        ray = import_ray()
        if self._asked is not None:
            ready, _ = ray.wait([self._asked], timeout=0)
            if not ready:
                return False
            asked, self._asked = self._asked, None
            with contextlib.suppress(ray.exceptions.RayError):  # no board just now: no stop
                self._stop = bool(ray.get(asked))
        if not self._stop:
            self._asked = self._board.stopped.remote(self._task_id, BOARD_PATIENCE_SECONDS)
        return self._stop


@dataclass(frozen=True)
class _Loader:
    """Loads one bundle from the object store on the node; the ref sits in a list so that Ray
    does not fetch it with the task's arguments (a node that has the commits never does)."""

    refs: list[Any]

    def __call__(self) -> bytes:
        data: bytes = import_ray().get(self.refs[0])
        return data


def warm_worker(pause: float) -> str:
    """A Ray task that only readies a worker of a node (it has imported this module)."""
    time.sleep(pause)
    return remote.node_name()


def warm_counts(nodes: list[Mapping[str, object]], wanted: int) -> dict[str, int]:
    """How many workers to start on each live node (pure): one per CPU, at most `wanted` and
    MAX_WARM_PER_NODE; nodes without CPUs run none of our tasks."""
    counts = {}
    for node in nodes:
        count = min(int(_node_resources(node).get("CPU", 0)), wanted, MAX_WARM_PER_NODE)
        if node.get("Alive") and count > 0:
            counts[str(node["NodeID"])] = count
    return counts


def _node_root(root: str | None) -> Path:
    return Path(root) if root else ray_node_dir()


def agent_on_node(
    session: remote.NodeSession, board: Any, root: str | None
) -> remote.SessionOutcome:
    """The Ray task of one agent session."""
    poll = _BoardPoll(board, session.task_id)
    return remote.run_session(_node_root(root), session, poll)


def reap_on_node(root: str | None, run_id: str, task_id: str) -> bool:
    """The Ray task that reaps a lost evaluation on its node (`remote.reap_task`)."""
    return remote.reap_task(_node_root(root), run_id, task_id, REAP_PATIENCE_SECONDS)


def evaluation_on_node(
    evaluation: remote.NodeEvaluation, board: Any, root: str | None
) -> remote.EvaluationOutcome:
    """The Ray task of one evaluation."""
    poll = _BoardPoll(board, evaluation.task_id)
    return remote.run_evaluation(_node_root(root), evaluation, poll)


class NodeWorker:
    """A warm worker of one node (a Ray actor, `ray_pool.WarmPool`): runs one task of the run
    at a time, as the Ray task of that kind would."""

    def __init__(self, root: str | None) -> None:
        self._root = root

    def ready(self) -> str:
        return remote.node_name()

    def agent(self, session: remote.NodeSession, board: Any) -> remote.SessionOutcome:
        return agent_on_node(session, board, self._root)

    def evaluation(self, evaluation: remote.NodeEvaluation, board: Any) -> remote.EvaluationOutcome:
        return evaluation_on_node(evaluation, board, self._root)


def warmable(options: RayOptions) -> bool:
    """Whether a warm actor may run a task of `options` (pure): only one that asks CPUs
    alone. An actor holds no resources (it would hold them for the whole run, from the
    sessions too); a GPU is handed out (CUDA_VISIBLE_DEVICES) and a custom resource counted
    only for a Ray task that asks it, so such a task stays one."""
    return "num_gpus" not in options and "resources" not in options


# --- the driver ----------------------------------------------------------------------------


class RayExecutor:
    """Runs a run's tasks on a Ray cluster (`address`; None starts or joins the local one)."""

    name = ExecutorKind.RAY

    def __init__(
        self,
        address: str | None,
        slots: int = 1,
        node_dir: Path | None = None,
        agent_resources: dict[str, float] | None = None,
        warm: int = MAX_WARM_PER_NODE,
        evaluation_resources: dict[str, float] | None = None,
    ) -> None:
        self._ray = import_ray()
        self._owns_ray = not self._ray.is_initialized()
        if self._owns_ray:
            _connect(self._ray, address)
        self._slots = max(1, slots)  # on each node
        # what the run's evaluations ask: the nodes that count for `slots`
        self._eval_options = ray_options(dict(evaluation_resources or {}))
        self._busy: dict[str, int] = {}  # node id -> evaluations of ours running there
        self._freed = threading.Condition()  # a slot was given back
        self._root = str(node_dir) if node_dir else None
        self._agent_resources = dict(agent_resources or {})
        self._threads = ThreadPoolExecutor(64, thread_name_prefix="ray-task")
        self._board = _pinned_board(self._ray)
        self._agent_fn = self._ray.remote(agent_on_node)
        self._eval_fn = self._ray.remote(evaluation_on_node)
        self._reap_fn = self._ray.remote(reap_on_node)
        self._pool = WarmPool(self._actor_means())
        self._running: dict[str, int] = {}  # node id -> tasks of ours on its warm actors
        self._bundles = BundleChains(self._put)
        self._lock = threading.Lock()
        self._offered: tuple[float, tuple[NodeOffer, ...]] | None = None  # (when, nodes)
        self._offered_lock = threading.Lock()  # not `_lock`: no wait behind a bundle's making
        self._stopped = False
        if warm > 0:
            self.warm_up(warm)

    @property
    def slots(self) -> int:
        """Evaluations at once over the cluster: `slots` on each live node able to run the
        run's evaluations (the lane scheduler starts that many; each still waits here for a
        slot on its node). At least one node's worth: with none able, a reading is submitted
        and refused (`_checked`) instead of waited for."""
        able = able_nodes(self._eval_options, self._offers(RESOURCES_SECONDS))
        return self._slots * max(1, len(able))

    def submit_agent(
        self, task: AgentTask, cancel: threading.Event, on_spawn: OnSpawn
    ) -> Future[AgentOutcome]:
        options = ray_options(self._agent_resources)
        self._checked(options)
        session = remote.NodeSession(
            task=task,
            task_id=uuid.uuid4().hex,
            code=self._code(task.worktree, task.base_commit),
            instructions=task.instructions_file.read_bytes(),
            placeholder=task.candidate_file.read_bytes(),
        )

        def drive() -> AgentOutcome:
            outcome: remote.SessionOutcome
            if warmable(options):
                pick = self._session_node(options)
                outcome = self._on_actor(pick, "agent", session, session.task_id, cancel)
            else:
                spread: RayOptions = {**options, "scheduling_strategy": "SPREAD"}
                ref = self._agent_fn.options(**spread).remote(session, self._board, self._root)
                outcome = self._await(ref, session.task_id, cancel, self._force_cancel(ref))
            return remote.land_session(task, outcome)

        return self._threads.submit(drive)

    def submit_evaluation(
        self, task: EvaluationTask, cancel: threading.Event, on_spawn: OnSpawn
    ) -> Future[EvaluationRecord]:
        options = ray_options(task.resources)
        self._checked(options)
        sealed = remote.pack_sealed(task.sealed_dir) if task.sealed_dir is not None else None
        evaluation = remote.NodeEvaluation(
            task=task,
            task_id=uuid.uuid4().hex,
            code=self._code(task.tree, task.commit),
            sealed=sealed,
        )

        def drive() -> EvaluationRecord:
            node = self._take_slot(options)  # a free slot on an able node first
            try:
                try:
                    outcome = self._evaluate_on(node, options, evaluation, cancel)
                except TaskLost:
                    # its evaluator may run on (its worker died, not it): the slot, and the
                    # loss that starts the retry, wait until it is gone
                    self._settle_lost(node, task.run_id, evaluation.task_id)
                    raise
            finally:
                self._give_slot(node)
            return remote.land_evaluation(outcome, task.log_path)

        return self._threads.submit(drive)

    def _evaluate_on(
        self,
        node: str,
        options: RayOptions,
        evaluation: remote.NodeEvaluation,
        cancel: threading.Event,
    ) -> remote.EvaluationOutcome:
        """The evaluation on `node`: on a warm actor there, or as a Ray task pinned there."""
        if warmable(options):
            here = lambda _running: node  # noqa: E731 - the slot's node, taken already
            return self._on_actor(here, "evaluation", evaluation, evaluation.task_id, cancel)  # type: ignore[no-any-return]
        place: RayOptions = {**options, "scheduling_strategy": _pinned(node)}
        ref = self._eval_fn.options(**place).remote(evaluation, self._board, self._root)
        return self._await(ref, evaluation.task_id, cancel, self._force_cancel(ref))  # type: ignore[no-any-return]

    def _session_node(self, options: RayOptions) -> Callable[[Mapping[str, int]], str | None]:
        """How a session picks its node: the able one running fewest of our tasks (sessions at
        once go to different nodes). Idle actors of nodes that left are dropped first. The
        nodes are asked again after a second (not the ten of `_checked`): Ray's SPREAD knew
        a node had died at once, and a session sent to its actor would be lost."""
        offers = self._offers(SLOT_WAIT_SECONDS)
        self._pool.keep_nodes({offer.node_id for offer in offers})
        able = able_nodes(options, offers)
        return lambda running: least_busy(able, running)

    def _on_actor(
        self,
        pick: Callable[[Mapping[str, int]], str | None],
        method: str,
        payload: object,
        task_id: str,
        cancel: threading.Event,
    ) -> Any:
        """`method` of a warm actor with `payload` on the node `pick` names from our running
        tasks by node (picked and counted at once: two sessions never both see a node free):
        its result. A lost task's actor is killed and forgotten (the next task on the node gets
        a new one); any other ending gives it back."""
        with self._freed:
            node = pick(self._running)
            if node is None:
                raise TaskLost(LOST, "no node of the cluster left can run it")
            self._running[node] = self._running.get(node, 0) + 1
        try:
            return self._call_actor(node, method, payload, task_id, cancel)
        finally:
            with self._freed:
                self._running[node] -= 1

    def _call_actor(
        self, node: str, method: str, payload: object, task_id: str, cancel: threading.Event
    ) -> Any:
        actor = self._pool.take(node)
        try:
            ref = getattr(actor, method).remote(payload, self._board)
            return self._await(ref, task_id, cancel, lambda: self._pool.drop(actor))
        except TaskLost:
            self._pool.drop(actor)
            raise
        finally:
            self._pool.give(node, actor)  # a no-op for one dropped

    def _force_cancel(self, ref: Any) -> Callable[[], None]:
        """How a Ray task that would not stop is ended: its worker is killed."""
        return lambda: self._ray.cancel(ref, force=True)

    def _actor_means(self) -> ActorMeans:
        ray = self._ray
        worker = ray.remote(NodeWorker)

        def spawn(node: str) -> Any:
            # no CPUs held: sessions and readings share the node as Ray tasks of theirs did
            # (the driver counts its own, `_running`); never restarted: a lost one is lost
            pinned = worker.options(num_cpus=0, scheduling_strategy=_pinned(node), max_restarts=0)
            return pinned.remote(self._root)

        def wait(refs: list[Any], patience: float) -> list[Any]:
            ready, _ = ray.wait(refs, num_returns=len(refs), timeout=patience)
            return list(ready)

        return ActorMeans(
            spawn=spawn,
            ready=lambda actor: actor.ready.remote(),
            wait=wait,
            get=ray.get,
            kill=lambda actor: ray.kill(actor, no_restart=True),
        )

    def stage(self, tree: Path, commit: str) -> None:
        """Bundle `commit` into the object store now (its reading's submit finds it there):
        the driver's bundle of a candidate was ~30 ms on the evaluation slot's path."""
        self._code(tree, commit)

    def check_resources(self, resources: dict[str, float]) -> None:
        """Refuse now what no node offers an evaluation (sandbox.md's resources)."""
        self._checked(ray_options(resources))

    def shutdown(self) -> None:
        """Stop the executor's threads and board (and Ray, if it started it); idempotent: a run
        stops it on every path, the lane scheduler too."""
        if self._stopped:
            return
        self._stopped = True
        self._threads.shutdown(wait=True, cancel_futures=True)
        self._pool.close()
        self._ray.kill(self._board)
        if self._owns_ray:
            self._ray.shutdown()

    def warm_up(self, wanted: int) -> None:
        """Start up to `wanted` warm actors on every node, and as many plain workers for the
        Ray tasks of asks an actor does not run (`warmable`), and wait (bounded) until they
        are ready: the workers' start-up is paid once, together, instead of by the first
        sessions and readings of each node (a reading's would hold the evaluation slot). A
        node that does not answer in time only starts later; nothing here fails the run."""
        counts = warm_counts(self._ray.nodes(), wanted)
        if warmable(ray_options(self._agent_resources)) or warmable(self._eval_options):
            self._pool.warm(counts, WARM_SECONDS)
        if not (warmable(ray_options(self._agent_resources)) and warmable(self._eval_options)):
            self._warm_task_workers(counts)

    def _warm_task_workers(self, counts: Mapping[str, int]) -> None:
        ray = self._ray
        warm = ray.remote(warm_worker)
        refs = []
        for node_id, count in counts.items():
            options: RayOptions = {
                "num_cpus": 1,
                "max_retries": 0,
                "scheduling_strategy": _pinned(node_id),
            }
            refs += [warm.options(**options).remote(WARM_PAUSE) for _ in range(count)]
        if refs:
            ray.wait(refs, num_returns=len(refs), timeout=WARM_SECONDS)

    def _code(self, repo: Path, commit: str) -> remote.Code:
        with self._lock:
            return self._bundles.code(repo, commit)

    def _put(self, data: bytes) -> remote.BundleLoader:
        return _Loader([self._ray.put(data)])

    def _offers(self, max_age: float) -> tuple[NodeOffer, ...]:
        """The cluster's live nodes, asked again when the answer is older than `max_age` (a
        round trip to its GCS per task otherwise, on the evaluation slot's path) or after a
        lost task (its node may be gone)."""
        now = time.monotonic()
        with self._offered_lock:
            if self._offered is None or now - self._offered[0] > max_age:
                self._offered = (now, live_offers(self._ray.nodes()))
            return self._offered[1]

    def _checked(self, options: RayOptions) -> None:
        """Refuse at submit a task of `options` no live node can run: Ray would wait for it
        forever (a task's retry after its node's loss is refused if no node left can run it)."""
        offers = self._offers(RESOURCES_SECONDS)
        if not able_nodes(options, offers):
            raise ContractError(
                f"no node of the Ray cluster offers {', '.join(unoffered(options, offers))}; "
                f"start one with `ray start --address ... --resources ...` or change "
                f"sandbox.md's resources"
            )

    def _take_slot(self, options: RayOptions) -> str:
        """A slot on a node able to run the evaluation: the node's id, once one is free; of the
        free ones, one that has the evaluation's resources free now (`pick_node`). While
        every able node's slots are taken, the cluster is asked again each SLOT_WAIT_SECONDS:
        a node that joined offers its slots, one that left (no task of ours lost yet) stops
        counting. With no able node left the evaluation is lost: the driver's retry is then
        refused at submit (`_checked`), as after a node's loss mid-reading."""
        max_age = RESOURCES_SECONDS
        while True:
            able = able_nodes(options, self._offers(max_age))
            if not able:
                raise TaskLost(LOST, "no node of the cluster left can run it")
            available = self._available()  # asked outside the lock
            with self._freed:
                ready = ready_nodes(options, less_ours(available, self._running))
                node = pick_node(able, self._busy, self._slots, ready)
                if node is not None:
                    self._busy[node] = self._busy.get(node, 0) + 1
                    return node
                self._freed.wait(SLOT_WAIT_SECONDS)
            max_age = SLOT_WAIT_SECONDS

    def _settle_lost(self, node: str, run_id: str, task_id: str) -> None:
        """Return once the lost evaluation `task_id`'s processes on `node` are gone: confirmed
        by a reaper task there while the node lives, else (the node is dead, or its reaper
        did not answer) after `lost_node_seconds` from the loss, the time the node's watcher
        takes to stop them (the driver's kill grace taken for the node's). Which of the two
        it was cannot always be known from here: a node the cluster declared dead may still
        be running (its raylet stalled rather than killed); then its worker and evaluator
        live on and only that node's own end stops them, and the retry runs on another node,
        whose slot it is."""
        ray = self._ray
        since = time.monotonic()
        self._offered = None  # a node may have gone with the task: ask the cluster again
        try:
            if node in {offer.node_id for offer in self._offers(0.0)}:
                options = {"num_cpus": 0, "max_retries": 0, "scheduling_strategy": _pinned(node)}
                reaper = self._reap_fn.options(**options).remote(self._root, run_id, task_id)
                with contextlib.suppress(ray.exceptions.RayError):
                    if ray.get(reaper, timeout=REAP_SECONDS):
                        return
            time.sleep(max(0.0, lost_node_seconds(kill_grace()) - (time.monotonic() - since)))
        finally:
            # and again once settled: a task is lost as soon as its raylet dies, but the
            # cluster declares the node dead only after its health checks fail; the nodes
            # asked above may still have listed it, and the next evaluation was sent there
            self._offered = None

    def _available(self) -> Mapping[str, Mapping[str, float]]:
        """What each node has free now, as the cluster's GCS last heard (a raylet reports
        about every 0.1 s; ~1 ms to ask). Ray has it only as a developer API: without it (a
        Ray that moved it) no node counts as free and the slot alone decides, as before."""
        try:
            state = importlib.import_module("ray._private.state")
            found: dict[str, dict[str, float]] = state.available_resources_per_node()
        except (ImportError, AttributeError):
            return {}
        return found

    def _give_slot(self, node: str) -> None:
        """The evaluation on `node` ended, or was lost and its processes are gone
        (`_settle_lost`)."""
        with self._freed:
            self._busy[node] -= 1
            if not self._busy[node]:
                del self._busy[node]
            self._freed.notify_all()

    def _await(
        self, ref: Any, task_id: str, cancel: threading.Event, kill: Callable[[], None]
    ) -> Any:
        """The task's result; TaskLost when its node or worker went away or it would not stop
        (then `kill` ended its worker)."""
        ray = self._ray
        asked_at: float | None = None
        told_at = 0.0
        while True:
            ready, _ = ray.wait([ref], timeout=0.2)
            if ready:
                break
            now = time.monotonic()
            if cancel.is_set() and now - told_at >= STOP_POLL_SECONDS:
                # told again each poll until it ends: a board restarted meanwhile forgot it
                asked_at = now if asked_at is None else asked_at
                told_at = now
                self._board.stop.remote(task_id)
            if asked_at is not None and now - asked_at > STOP_PATIENCE_SECONDS:
                kill()
                raise TaskLost(LOST, "it did not stop when asked; its worker was killed")
        try:
            return ray.get(ref)
        except ray.exceptions.RayTaskError as exc:
            cause = exc.cause
            if isinstance(cause, AutoresearchError):
                raise cause from exc
            raise
        except ray.exceptions.RayError as exc:
            self._offered = None  # a node may have gone with the task: ask the cluster again
            raise TaskLost(LOST, _lost_detail(exc)) from exc


def for_mission(mission_dir: Path, address: str | None, lanes: int) -> RayExecutor:
    """The checked executor of a new run of the mission at `mission_dir` (`for_evaluation`)."""
    from autoresearch.mission import load_mission

    return for_evaluation(load_mission(mission_dir).sandbox.evaluation, address, lanes)


def for_evaluation(evaluation: EvaluationSlots, address: str | None, lanes: int) -> RayExecutor:
    """The executor for a sandbox's `evaluation` settings, checked: a cluster that cannot be
    reached or that offers no node with the evaluation's resources is refused here, before a
    run exists (a new run builds it before prepare, and measures its baseline through it)."""
    slots, resources = evaluation.slots, dict(evaluation.resources)
    # warmed once checked: a refusal does not wait for every node's workers to start (~3 s)
    executor = RayExecutor(address, slots, warm=0, evaluation_resources=resources)
    try:
        executor.check_resources(resources)
        executor.warm_up(tasks_per_node(lanes, slots))
    except BaseException:
        executor.shutdown()
        raise
    return executor


def tasks_per_node(lanes: int, slots: int) -> int:
    """The most tasks of a run one node runs at once (pure): a lane runs its session or its
    readings, never both, and a node at most `slots` readings; so one lane's readings, or a
    session of every lane but one beside the node's readings. `lanes + slots` warmed, and
    kept idle through the run, a worker more than that on each node (two of the bench's four
    with one lane), about a CPU second each to start."""
    return max(1, lanes) - 1 + max(1, slots)


def _lost_detail(exc: Exception) -> str:
    first = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {first[0] if first else ''}"


def _errors_to_stderr(ray: ModuleType) -> None:
    """Ray's driver prints cluster errors (a worker that died, say) on stdout, the channel of
    `--json`; they go to stderr instead. Ray has no switch for it: its printer is wrapped, and
    a Ray without that printer simply prints as it does."""
    worker: Any = getattr(getattr(ray, "_private", None), "worker", None)
    original = getattr(worker, "print_to_stdstream", None)
    if original is None or getattr(original, "to_stderr", False):
        return

    def to_stderr(data: Mapping[str, object], ignore_prefix: bool) -> None:
        original({**data, "is_err": True}, ignore_prefix)

    to_stderr.to_stderr = True  # type: ignore[attr-defined]
    worker.print_to_stdstream = to_stderr


def _connect(ray: ModuleType, address: str | None) -> None:
    """Join the cluster at `address`, or start a local one, quietly."""
    _errors_to_stderr(ray)
    quiet: dict[str, object] = {"logging_level": "ERROR", "log_to_driver": False}
    if address is None:
        ray_quiet.start_local(ray, {"include_dashboard": False, **quiet})
    else:
        _probe(address)
        try:
            ray.init(address=address, **quiet)
        except (ConnectionError, ValueError, RuntimeError) as exc:
            raise ContractError(f"cannot reach the Ray cluster at {address}: {exc}") from exc


def gcs_endpoint(address: str) -> tuple[str, int] | None:
    """The host and port of a `--address` (pure): `host:port` or `ray://host:port`; None for
    what Ray resolves itself (`auto`, a bare host)."""
    rest = address.removeprefix("ray://").rstrip("/")
    host, sep, port = rest.rpartition(":")
    if not sep or not host or not port.isdigit():
        return None
    return host.strip("[]"), int(port)


def _probe(address: str) -> None:
    """Refuse an address whose port does not answer within CONNECT_SECONDS (bounded: Ray's
    client would retry for minutes and leave the run waiting)."""
    endpoint = gcs_endpoint(address)
    if endpoint is None:
        return
    try:
        socket.create_connection(endpoint, timeout=CONNECT_SECONDS).close()
    except OSError as exc:
        raise ContractError(
            f"cannot reach the Ray cluster at {address}: {exc.strerror or exc}"
        ) from exc


class BundleChains:
    """The bundles the driver put in the object store: a chain is a bundle of a whole history
    (its root) and, for a later commit, one bundle of that commit past the root. A node that
    has the root fetches one bundle whatever else it lacks, one without it two: a chain of
    bundles each past the one before cost a node one `git fetch` for every commit it had not
    seen (at four lanes on two nodes, 2.4 fetches per reading, on the evaluation slot's path).
    A link carries every commit since its root: after MAX_CHAIN links a root is started anew.

    `store` puts a bundle's bytes where a node can load them (Ray's object store)."""

    def __init__(self, store: Callable[[bytes], remote.BundleLoader]) -> None:
        self._store = store
        self._chains: dict[str, tuple[tuple[str, remote.BundleLoader], ...]] = {}
        self._order: list[str] = []  # newest last
        self._links: dict[str, int] = {}  # links bundled past each root

    def code(self, repo: Path, commit: str) -> remote.Code:
        if commit not in self._chains:
            self._chains[commit] = self._new_chain(repo, commit)
            self._order.append(commit)
        return remote.Code(commit, self._chains[commit])

    def _new_chain(self, repo: Path, commit: str) -> tuple[tuple[str, remote.BundleLoader], ...]:
        parent = next((c for c in reversed(self._order) if git.is_ancestor(repo, c, commit)), None)
        root = self._chains[parent][0] if parent is not None else None
        if root is not None and self._links[root[0]] < MAX_CHAIN:
            data = remote.bundle_of(repo, commit, [root[0]])
            if data is None:  # the commit is the root itself (never reached: it is known)
                return (root,)
            self._links[root[0]] += 1
            return (root, (commit, self._store(data)))
        whole = remote.bundle_of(repo, commit)
        assert whole is not None  # a commit's history holds at least the commit
        self._links[commit] = 0
        return ((commit, self._store(whole)),)
