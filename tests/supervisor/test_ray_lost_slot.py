"""A lost Ray evaluation gives its slot back only once its evaluator is gone (issue 14: "a node
lost mid-task → the iteration is retried ... never doubled"; slots: "benchmarks that time
things must not run concurrently"). The lost reading's evaluator outlives its Ray worker: it
ignores SIGTERM (a slow stop: only the node's SIGKILL, seconds later, ends it), so a retry
started as soon as the loss is known ran beside it. Each evaluator notes its own span (start,
then a heartbeat every 50 ms: a SIGKILL leaves its last one as its end) in the test's folder;
no two spans may overlap, and when the loss is reported the lost evaluator is gone.

The retry is taken as the driver takes it (`measure_through`: again at once on `TaskLost`),
on the shared cluster with two nodes of this module's offering `spare`, where the evaluations
run (`slots: 1`)."""

from __future__ import annotations

import json
import os
import signal
import textwrap
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

ray = pytest.importorskip("ray")

from autoresearch.supervisor.executor import EvaluationTask, TaskLost, measure_through  # noqa: E402
from autoresearch.supervisor.handle import RunHandle  # noqa: E402
from autoresearch.supervisor.prepare import prepare  # noqa: E402
from autoresearch.supervisor.ray_executor import RayExecutor  # noqa: E402
from helpers import make_repo, pid_alive, sandbox_text, until  # noqa: E402
from ray_cluster import LocalCluster  # noqa: E402

pytestmark = pytest.mark.ray

PATIENCE = 120.0
SPARE = {"spare": 1.0}

# On a node only (the baseline, on the driver, passes through): the first reading holds until
# the test's `release` exists and says its pid; every reading beats its span meanwhile.
SPAN_SCRIPT = textwrap.dedent(
    """\
    import json, os, signal, sys, time, uuid
    from pathlib import Path
    folder = Path(sys.argv[1])
    if not Path(os.getcwd()).is_relative_to(folder.parent / "nodes"):
        sys.exit(0)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    span = folder / "spans" / f"{uuid.uuid4().hex}.json"
    start = time.time()
    def beat():
        tmp = span.with_suffix(".tmp")
        tmp.write_text(json.dumps({"pid": os.getpid(), "start": start, "end": time.time()}))
        tmp.rename(span)
    beat()
    try:
        (folder / "held").mkdir()
        first = True
        note = folder / "held" / "pid.tmp"
        note.write_text(json.dumps({"pid": os.getpid(), "cwd": os.getcwd()}))
        note.rename(folder / "held" / "pid.json")
    except FileExistsError:
        first = False
    deadline = time.monotonic() + (150 if first else 0.5)
    while time.monotonic() < deadline and not (folder / "release").exists():
        beat()
        time.sleep(0.05)
    beat()
    """
)


SPARE_NODES = {"spare-1": SPARE, "spare-2": SPARE}


@pytest.fixture
def run(spare_cluster: LocalCluster, tmp_path: Path) -> Iterator[tuple[RunHandle, Path]]:
    folder = spare_cluster.base / f"spans-{tmp_path.name}"  # beside `nodes`: the script finds it
    (folder / "spans").mkdir(parents=True)
    repo = make_repo(tmp_path / "repo")
    repo.write("scripts/span.py", SPAN_SCRIPT)
    repo.commit("the span probe")
    command = f"python3 scripts/span.py {folder} && python3 scripts/eval.py"
    h = prepare(repo.mission(sandbox=sandbox_text(command)), run_tag="LOST")
    try:
        yield h, folder
    finally:
        (folder / "release").touch()  # a held reading a failed test left ends now
        h.close()


def reading(h: RunHandle) -> EvaluationTask:
    return EvaluationTask(
        run_id=h.run_id,
        lane=0,
        iteration=1,
        commit=h.run.last_kept_commit or "",
        tree=h.worktree,
        relative_dir=h.run.sandbox.relative_dir,
        evaluator=h.evaluator,
        log_path=h.paths.evaluator_log(1, 0),
        resources=SPARE,
    )


def held(folder: Path) -> dict[str, Any]:
    note = folder / "held" / "pid.json"
    until(note.exists, timeout=PATIENCE, what="the first reading is held")
    data: dict[str, Any] = json.loads(note.read_text())
    return data


def spans(folder: Path) -> list[dict[str, Any]]:
    found = [json.loads(p.read_text()) for p in (folder / "spans").glob("*.json")]
    return sorted(found, key=lambda s: float(s["start"]))


def overlaps(found: list[dict[str, Any]]) -> list[tuple[int, int]]:
    return [
        (a["pid"], b["pid"])
        for i, a in enumerate(found)
        for b in found[i + 1 :]
        if a["start"] < b["end"] and b["start"] < a["end"]
    ]


def ray_worker_of(pid: int) -> int:
    """The Ray worker process that started the evaluator `pid` (through `sh -c`)."""
    for _ in range(4):
        pid = int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
        if b"ray::" in Path(f"/proc/{pid}/cmdline").read_bytes():
            return pid
    raise AssertionError("no Ray worker above the evaluator")


def watch_loss(executor: RayExecutor, pid_file: Path) -> list[bool]:
    """Whether the lost evaluator (its pid in `pid_file`) ran when the loss was reported."""
    alive: list[bool] = []
    original = executor.submit_evaluation

    def watched(*args: Any) -> Any:
        future = original(*args)

        def seen(f: Any) -> None:
            if isinstance(f.exception(), TaskLost):
                pid = int(json.loads(pid_file.read_text())["pid"])
                alive.append(pid_alive(pid))

        future.add_done_callback(seen)
        return future

    executor.submit_evaluation = watched  # type: ignore[method-assign]
    return alive


def take(executor: RayExecutor, task: EvaluationTask) -> tuple[threading.Thread, list[Any]]:
    """The reading as the driver takes it (`measure_through`), in a thread."""
    out: list[Any] = []
    measure = measure_through(executor, poll_seconds=0.2)
    thread = threading.Thread(target=lambda: out.append(measure(task, None)), daemon=True)
    thread.start()
    return thread, out


def assert_one_at_a_time(folder: Path, alive_at_loss: list[bool], out: list[Any]) -> None:
    found = spans(folder)
    assert alive_at_loss == [False], f"the loss was reported while its evaluator ran: {found}"
    assert [r.status for r in out] == ["pass"]
    assert len(found) == 2, found  # the lost one and its retry
    assert overlaps(found) == [], f"two evaluations at once with slots: 1: {found}"


def test_a_reading_whose_worker_died_frees_its_slot_only_once_its_evaluator_is_gone(
    spare_cluster: LocalCluster, run: tuple[RunHandle, Path]
) -> None:
    """The Ray worker running a reading is SIGKILLed, its node alive: its evaluator runs on
    (until the node's watcher SIGKILLs it). The loss is reported, and the slot given back,
    once the executor has stopped it on that node and seen it gone; the retry starts after."""
    h, folder = run
    executor = RayExecutor(spare_cluster.address, slots=1, evaluation_resources=SPARE)
    try:
        alive_at_loss = watch_loss(executor, folder / "held" / "pid.json")
        thread, out = take(executor, reading(h))
        lost = int(held(folder)["pid"])
        os.kill(ray_worker_of(lost), signal.SIGKILL)
        thread.join(PATIENCE)
        assert not thread.is_alive(), "the retried reading never came back"
    finally:
        (folder / "release").touch()
        executor.shutdown()
    assert_one_at_a_time(folder, alive_at_loss, out)
    until(lambda: not pid_alive(lost), timeout=60, what="the lost reading stops")


def test_a_reading_whose_node_died_frees_its_slot_only_after_its_evaluator_is_stopped(
    spare_cluster: LocalCluster, run: tuple[RunHandle, Path]
) -> None:
    """The node running a reading dies (raylet and workers killed; the machine, and the
    evaluator on it, live on until the node's watcher SIGKILLs it). Nothing of the cluster
    can reach that node to confirm: the loss is reported after the bounded wait in which its
    watcher stops it, and the retry, on the node left, starts after that."""
    h, folder = run
    executor = RayExecutor(spare_cluster.address, slots=1, evaluation_resources=SPARE)
    try:
        alive_at_loss = watch_loss(executor, folder / "held" / "pid.json")
        thread, out = take(executor, reading(h))
        note = held(folder)
        where = Path(note["cwd"]).relative_to(spare_cluster.base / "nodes").parts[0]
        assert where in SPARE_NODES, where
        spare_cluster.remove_node(where)
        thread.join(PATIENCE)
        assert not thread.is_alive(), "the retried reading never came back"
    finally:
        (folder / "release").touch()
        executor.shutdown()
    assert_one_at_a_time(folder, alive_at_loss, out)
    until(lambda: not pid_alive(int(note["pid"])), timeout=60, what="the lost reading stops")
