"""Evaluation slots on a real two-node Ray cluster (issue 14: "benchmarks that time things must
not run concurrently on one machine ... default 1 per machine"): with `slots: 1` each node runs
one evaluation at a time and the nodes run theirs at once; a resource only one node has keeps
the evaluations there; a node that joins mid-run gets evaluations, one that dies loses its
reading (retried by the driver) and gets no more.

Each evaluator writes its own node, start and end (the wall clock: every node is this
machine) into the test's folder, so the overlaps are read from the evaluators themselves."""

from __future__ import annotations

import json
import textwrap
import threading
import time
from collections.abc import Iterator
from concurrent.futures import Future
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

ray = pytest.importorskip("ray")

from autoresearch.evaluate import EvaluationRecord  # noqa: E402
from autoresearch.supervisor.executor import EvaluationTask, TaskLost  # noqa: E402
from autoresearch.supervisor.handle import RunHandle  # noqa: E402
from autoresearch.supervisor.prepare import prepare  # noqa: E402
from autoresearch.supervisor.ray_executor import RayExecutor, live_offers  # noqa: E402
from helpers import make_repo, pid_alive, sandbox_text, until  # noqa: E402
from ray_cluster import NODE_CPUS, LocalCluster, SharedCluster, connected  # noqa: E402

pytestmark = pytest.mark.ray

PATIENCE = 120.0  # every wait is bounded: a slot that never frees fails the test

# The evaluator: notes its node, pid and start, then holds until the test's `release` file exists
# (at most 60 s), then notes its end. `release` may be made before it starts (no hold).
SLOT_SCRIPT = textwrap.dedent(
    """\
    import json, os, sys, time, uuid
    from pathlib import Path
    folder = Path(sys.argv[1])
    node = Path(os.getcwd()).relative_to(folder.parent / "nodes").parts[0]
    me = uuid.uuid4().hex
    start = time.time()
    note = folder / f"{me}.tmp"
    note.write_text(str(os.getpid()))
    note.rename(folder / "started" / f"{node}-{me}")
    deadline = time.monotonic() + 60
    while not (folder / "release").exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(float(sys.argv[2]))  # some time on the node: an overlap has room to show
    end = time.time()
    note = folder / "done" / f"{me}.tmp"
    note.write_text(json.dumps({"node": node, "start": start, "end": end}))
    note.rename(note.with_suffix(".json"))
    """
)


@pytest.fixture(scope="module")
def cluster(shared_cluster: SharedCluster) -> Iterator[LocalCluster]:
    """The shared cluster: `pin` only on node-b, four of it (ray_cluster.SHARED_NODES). The
    node a test adds (node-c) it removes: the modules after find the cluster as it was."""
    with connected(shared_cluster.get()) as c:
        yield c


def slot_run(cluster: LocalCluster, tmp_path: Path, hold: float) -> tuple[RunHandle, Path]:
    folder = cluster.base / f"slots-{tmp_path.name}"  # beside `nodes`: the script finds it
    for sub in ("started", "done"):
        (folder / sub).mkdir(parents=True)
    repo = make_repo(tmp_path / "repo")
    repo.write("scripts/slot.py", SLOT_SCRIPT)
    repo.commit("the slot probe")
    command = f"python3 scripts/slot.py {folder} {hold} && python3 scripts/eval.py"
    return prepare(repo.mission(sandbox=sandbox_text(command)), run_tag="SLOTS"), folder


@pytest.fixture
def run(cluster: LocalCluster, tmp_path: Path) -> Iterator[tuple[RunHandle, Path]]:
    h, folder = slot_run(cluster, tmp_path, 0.3)
    try:
        yield h, folder
    finally:
        (folder / "release").touch()  # nothing the test left waits its minute out
        h.close()


@contextmanager
def executor_of(
    cluster: LocalCluster, folder: Path, resources: dict[str, float] | None = None
) -> Iterator[RayExecutor]:
    """An executor with `slots: 1`; at the end every held reading is let go first (a failed
    test does not wait out their holds), then the executor stops."""
    executor = RayExecutor(cluster.address, slots=1, evaluation_resources=resources)
    try:
        yield executor
    finally:
        (folder / "release").touch()
        executor.shutdown()


def task(h: RunHandle, number: int, resources: dict[str, float]) -> EvaluationTask:
    return EvaluationTask(
        run_id=h.run_id,
        lane=0,
        iteration=1,
        commit=h.run.last_kept_commit or "",
        tree=h.worktree,
        relative_dir=h.run.sandbox.relative_dir,
        evaluator=h.evaluator,
        log_path=h.paths.evaluator_log(1, number),
        resources=resources,
    )


def submit(
    executor: RayExecutor, h: RunHandle, count: int, resources: dict[str, float], first: int = 0
) -> list[Future[EvaluationRecord]]:
    """`count` readings at once (numbered from `first`): which of them takes a free slot
    first is the threads' race, not the submit order."""
    return [
        executor.submit_evaluation(task(h, n, resources), threading.Event(), lambda _: None)
        for n in range(first, first + count)
    ]


def readings(folder: Path) -> list[dict[str, Any]]:
    done = [json.loads(p.read_text()) for p in (folder / "done").glob("*.json")]
    return sorted(done, key=lambda d: float(d["start"]))


def nodes_started(folder: Path) -> set[str]:
    """The nodes a reading has started on (each note is `<node>-<hex>`)."""
    return {p.name.rsplit("-", 1)[0] for p in (folder / "started").iterdir()}


def overlapping(a: dict[str, Any], b: dict[str, Any]) -> bool:
    return bool(a["start"] < b["end"] and b["start"] < a["end"])


def overlaps(records: list[dict[str, Any]]) -> list[tuple[str, str]]:
    """The node pairs of every two readings that ran at once."""
    return [
        (a["node"], b["node"])
        for i, a in enumerate(records)
        for b in records[i + 1 :]
        if overlapping(a, b)
    ]


def test_with_one_slot_each_node_runs_one_evaluation_at_a_time_and_the_nodes_run_at_once(
    cluster: LocalCluster, run: tuple[RunHandle, Path]
) -> None:
    """Six readings at once, `slots: 1`, two nodes: the first two start on different nodes and
    are held until both have started (so they overlap, whatever the machine's load); after
    that no two on one node ever overlap. Before, one driver-side permit for the whole cluster
    held the second reading until the first ended: the first one's hold timed out alone."""
    h, folder = run
    with executor_of(cluster, folder) as executor:
        assert executor.slots == 2  # one per node of the cluster
        futures = submit(executor, h, 6, {})
        until(
            lambda: nodes_started(folder) == {"head", "node-b"},
            timeout=PATIENCE,
            what="a reading started on each node",
        )
        (folder / "release").touch()
        records = [f.result(timeout=PATIENCE) for f in futures]
    assert all(r.status == "pass" for r in records)
    done = readings(folder)
    assert len(done) == 6 and {d["node"] for d in done} == {"head", "node-b"}
    pairs = overlaps(done)
    assert pairs, "no two readings ran at once"
    assert all(a != b for a, b in pairs), f"two readings at once on one node: {pairs}"


def test_a_resource_only_one_node_has_keeps_every_evaluation_there_one_at_a_time(
    cluster: LocalCluster, run: tuple[RunHandle, Path]
) -> None:
    """`resources: {pin: 1}` and only node-b offers `pin` (four of it): the executor counts one
    node's slot, every reading runs on node-b, and never two at once there."""
    h, folder = run
    (folder / "release").touch()
    with executor_of(cluster, folder, {"pin": 1}) as executor:
        assert executor.slots == 1
        records = [f.result(timeout=PATIENCE) for f in submit(executor, h, 4, {"pin": 1})]
    assert all(r.status == "pass" for r in records)
    done = readings(folder)
    assert [d["node"] for d in done] == ["node-b"] * 4
    assert overlaps(done) == []


def test_a_node_that_joins_gets_the_waiting_evaluation_and_a_lost_one_gets_no_more(
    cluster: LocalCluster, run: tuple[RunHandle, Path]
) -> None:
    """One reading holds node-b's only slot (`pin` is node-b's alone); a second waits for it.
    A node offering `pin` joins: the waiting reading starts there while the first still holds.
    Then that node dies mid-reading: its reading is lost (the driver takes it again), and the
    next readings all go to node-b, the node left."""
    h, folder = run
    try:
        joined_and_lost(cluster, h, folder)
    finally:
        if "node-c" in cluster.nodes:  # failed before the loss: the shared cluster's next
            cluster.remove_node("node-c")  # modules must not inherit the node
    assert [d["node"] for d in readings(folder)] == ["node-b"] * 3


def joined_and_lost(cluster: LocalCluster, h: RunHandle, folder: Path) -> None:
    with executor_of(cluster, folder, {"pin": 1}) as executor:
        # one at a time: submitted together, either could take node-b's slot (the test then
        # waited for the holding one as if it were the lost one, till its 60 s hold ended)
        (first,) = submit(executor, h, 1, {"pin": 1})
        until(lambda: len(list((folder / "started").iterdir())) == 1, timeout=PATIENCE,
              what="the first reading started")  # fmt: skip
        (second,) = submit(executor, h, 1, {"pin": 1}, first=1)
        cluster.add_node("node-c", {"pin": 4})
        until(lambda: executor.slots == 2, timeout=PATIENCE, what="the new node is counted")
        until(
            lambda: "node-c" in nodes_started(folder),
            timeout=PATIENCE,
            what="the waiting reading started on the node that joined",
        )
        assert not first.done()  # it started beside the first one, not after it
        lost = int(next((folder / "started").glob("node-c-*")).read_text())
        cluster.remove_node("node-c")
        with pytest.raises(TaskLost, match="Ray task lost"):
            second.result(timeout=PATIENCE)
        until(lambda: not pid_alive(lost), timeout=PATIENCE, what="the lost reading stops")
        (folder / "release").touch()
        assert first.result(timeout=PATIENCE).status == "pass"
        after = submit(executor, h, 2, {"pin": 1})
        assert all(f.result(timeout=PATIENCE).status == "pass" for f in after)
        assert executor.slots == 1


def free_cpus(node_id: str) -> float:
    state = ray._private.state.available_resources_per_node()
    return float(state.get(node_id, {}).get("CPU", 0.0))


def test_a_reading_goes_to_a_free_slot_whose_node_has_its_cpu_free_not_behind_held_cpus(
    cluster: LocalCluster, run: tuple[RunHandle, Path]
) -> None:
    """Every CPU of the node a slot was given on first (the first live node) is held, as four
    lanes' sessions held both CPUs of a node in the lanes bench; the other node has both free
    and its slot too. The reading starts there while the CPUs stay held. Before, it was pinned
    to the first node (its slot was free, it ran fewest) and waited there for a CPU: the test
    timed out waiting for it."""
    h, folder = run
    (folder / "release").touch()  # the readings themselves do not hold
    names = {cluster.cluster.head_node.node_id: "head"}
    names.update({node.node_id: name for name, node in cluster.nodes.items()})
    first = live_offers(ray.nodes())[0].node_id
    freed = folder / "cpus-freed"

    def hold_cpus(until_exists: str) -> None:  # by value to the node: tests are not importable
        deadline = time.monotonic() + PATIENCE
        while not Path(until_exists).exists() and time.monotonic() < deadline:
            time.sleep(0.05)

    strategy = ray.util.scheduling_strategies.NodeAffinitySchedulingStrategy(first, soft=False)
    held = (
        ray.remote(hold_cpus)
        .options(num_cpus=NODE_CPUS, max_retries=0, scheduling_strategy=strategy)
        .remote(str(freed))
    )
    try:
        with executor_of(cluster, folder) as executor:
            until(lambda: free_cpus(first) == 0, timeout=PATIENCE, what="the CPUs held")
            (reading,) = submit(executor, h, 1, {})
            assert reading.result(timeout=PATIENCE).status == "pass"
            assert not ray.wait([held], timeout=0)[0]  # it ran while the CPUs were held
    finally:
        freed.touch()
        ray.get(held, timeout=PATIENCE)
    assert [d["node"] for d in readings(folder)] == [n for i, n in names.items() if i != first]
