"""The Ray executor on a real local cluster: a head and two more nodes started by this module
(each its own raylet, object store and node folder, so "another machine" is real), custom
resources that decide placement, a node killed mid-task. Every Ray process is stopped at the
end and checked gone."""

from __future__ import annotations

import dataclasses
import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import pytest

ray = pytest.importorskip("ray")

from autoresearch import git  # noqa: E402
from autoresearch.agents import AgentConfig  # noqa: E402
from autoresearch.demo import DEMO_MISSION, LANES_MISSION, create_demo_repo  # noqa: E402
from autoresearch.errors import ContractError  # noqa: E402
from autoresearch.paths import RepoPaths  # noqa: E402
from autoresearch.states import DecisionKind  # noqa: E402
from autoresearch.supervisor.executor import AgentTask, EvaluationTask, TaskLost  # noqa: E402
from autoresearch.supervisor.handle import RunHandle  # noqa: E402
from autoresearch.supervisor.prepare import prepare  # noqa: E402
from autoresearch.supervisor.ray_executor import RayExecutor  # noqa: E402
from autoresearch.supervisor.step import step  # noqa: E402
from helpers import GIT_ENV, cli, host_pid, make_repo, pid_alive, sandbox_text  # noqa: E402
from ray_cluster import LocalCluster, SharedCluster, actors_of, connected, stop_boards  # noqa: E402

pytestmark = pytest.mark.ray
T = TypeVar("T")

CMD_AGENT = Path(__file__).parents[1] / "agents/fakes/cmd_agent.py"


def agent(plan: str) -> AgentConfig:
    return AgentConfig(f"cmd:FAKE_PLAN={plan} {sys.executable} {CMD_AGENT}")


@pytest.fixture(scope="module")
def cluster(shared_cluster: SharedCluster) -> Iterator[LocalCluster]:
    with connected(shared_cluster.get()) as c:
        yield c


@pytest.fixture
def run(tmp_path: Path) -> Iterator[RunHandle]:
    repo = make_repo(tmp_path / "repo")
    # the evaluator says where it ran: its checkout lies in the node's own folder
    h = prepare(repo.mission(sandbox=sandbox_text("pwd; python3 scripts/eval.py")), run_tag="RAY")
    try:
        yield h
    finally:
        h.close()


def agent_task(h: RunHandle, plan: str, tmp_path: Path) -> AgentTask:
    return AgentTask(
        run_id=h.run_id,
        lane=0,
        iteration=h.run.iteration + 1,
        base_commit=h.run.last_kept_commit or "",
        worktree=h.worktree,
        branch=h.run.branch_name,
        instructions_file=h.paths.instructions,
        candidate_file=h.paths.candidate,
        log_path=h.paths.agent_log(h.run.iteration + 1),
        leftover_patch=tmp_path / "leftover.patch",
        agent=agent(plan),
        timeout=120,
        sandbox=h.run.sandbox,
    )


def evaluation_task(h: RunHandle, commit: str, resources: dict[str, float]) -> EvaluationTask:
    return EvaluationTask(
        run_id=h.run_id,
        lane=0,
        iteration=1,
        commit=commit,
        tree=h.worktree,
        relative_dir=h.run.sandbox.relative_dir,
        evaluator=h.evaluator,
        log_path=h.paths.evaluator_log(1, 9),
        resources=resources,
    )


def test_a_session_runs_on_a_node_and_its_candidate_is_judged_by_the_driver(
    cluster: LocalCluster, run: RunHandle, tmp_path: Path
) -> None:
    executor = RayExecutor(cluster.address, agent_resources={"node_b": 1})
    try:
        outcome = executor.submit_agent(
            agent_task(run, "improve", tmp_path), threading.Event(), lambda _: None
        ).result(timeout=120)
    finally:
        executor.shutdown()
    assert outcome.result.exit_code == 0
    # the commit was made on node b and came back as a bundle onto the run branch
    assert outcome.head is not None and outcome.head != run.run.last_kept_commit
    assert git.head(run.worktree) == outcome.head
    assert git.current_branch(run.worktree) == run.run.branch_name
    assert (run.worktree / "value.txt").read_text() == "2\n"
    assert Path(outcome.result.log_file or "") == run.paths.agent_log(1)
    assert cluster.node_dir("node-b").joinpath(run.run_id, "cache.git").is_dir()
    assert not cluster.node_dir("head").joinpath(run.run_id).exists()
    judged = step(run)
    assert judged.decision == DecisionKind.KEEP and judged.last_kept_commit == outcome.head


@pytest.mark.parametrize("node", ["head", "node-b"])
def test_an_evaluation_runs_where_its_resources_are(
    cluster: LocalCluster, run: RunHandle, node: str
) -> None:
    commit = run.run.last_kept_commit or ""
    executor = RayExecutor(cluster.address)
    try:
        record = executor.submit_evaluation(
            evaluation_task(run, commit, {node.replace("-", "_"): 1}),
            threading.Event(),
            lambda _: None,
        ).result(timeout=120)
    finally:
        executor.shutdown()
    assert record.status == "pass" and record.score == 1.0
    assert record.stdout.startswith(str(cluster.node_dir(node)))
    assert record.log_file == str(run.paths.evaluator_log(1, 9))
    assert "progress line" in Path(record.log_file).read_text()


def test_a_stop_reaches_a_reading_through_a_restarted_board(
    cluster: LocalCluster, run: RunHandle
) -> None:
    """The stop board's process dies while a reading runs: Ray restarts it where the driver
    is, the reading goes on meanwhile (a board that cannot answer says nothing), and a stop
    the driver asks afterwards reaches it: its evaluator is stopped, the reading comes back
    cancelled (not lost, not after the patience that kills a worker)."""
    (run.worktree / "mode.txt").write_text("hang\n")  # the test evaluator sleeps a minute
    for argv in (["add", "mode.txt"], ["commit", "-qm", "hang"]):
        subprocess.run(["git", *argv], cwd=run.worktree, env={**os.environ, **GIT_ENV}, check=True)
    executor = RayExecutor(cluster.address)
    cancel = threading.Event()
    try:
        future = executor.submit_evaluation(
            evaluation_task(run, git.head(run.worktree), {}), cancel, lambda _: None
        )
        pid_file = wait_for(
            lambda: next(
                cluster.base.glob(f"nodes/*/{run.run_id}/tasks/*/tree/.autoresearch/evaluator.pid"),
                None,
            )
        )
        evaluator = host_pid(wait_for(pid_file.read_text))
        job = ray.get_runtime_context().get_job_id()
        # the board is made at once but its process may start after a warm worker's reading
        ((board_id, board),) = wait_for(lambda: list(stop_boards(job).items()))
        os.kill(int(board["Pid"]), signal.SIGKILL)
        restarted = wait_for(
            lambda: stop_boards(job).get(board_id, {}).get("Pid") not in (None, board["Pid"])
        )
        assert restarted and pid_alive(evaluator)  # no stop was asked: the reading goes on
        cancel.set()
        record = future.result(timeout=60)
    finally:
        executor.shutdown()
    assert record.cancelled
    wait_for(lambda: not pid_alive(evaluator))


def test_resources_no_node_offers_are_refused_at_once(
    cluster: LocalCluster, run: RunHandle
) -> None:
    executor = RayExecutor(cluster.address)
    try:
        with pytest.raises(ContractError, match="no node of the Ray cluster offers GPU: 4"):
            executor.submit_evaluation(
                evaluation_task(run, run.run.last_kept_commit or "", {"GPU": 4}),
                threading.Event(),
                lambda _: None,
            )
    finally:
        executor.shutdown()


def test_a_node_lost_mid_session_is_lost_once_leaves_nothing_running_and_retries_elsewhere(
    cluster: LocalCluster, run: RunHandle, tmp_path: Path
) -> None:
    cluster.add_node("doomed", {"doomed": 1})
    base = run.run.last_kept_commit or ""
    placeholder = run.paths.candidate.read_bytes()
    task = agent_task(run, "hang", tmp_path)
    doomed = RayExecutor(cluster.address, agent_resources={"doomed": 1})
    try:
        future = doomed.submit_agent(task, threading.Event(), lambda _: None)
        started = wait_for(
            lambda: next(
                cluster.node_dir("doomed").glob(
                    f"{run.run_id}/tasks/*/tree/.autoresearch/agent-1.started"
                ),
                None,
            )
        )
        agent_pid = host_pid(started.read_text())
        cluster.remove_node("doomed")
        with pytest.raises(TaskLost, match="Ray task lost: NodeDiedError"):
            future.result(timeout=60)
    finally:
        doomed.shutdown()
        if "doomed" in cluster.nodes:  # failed before the loss: the shared cluster's next
            cluster.remove_node("doomed")  # modules must not inherit the node
    # the agent of the dead node does not outlive it (the task's watcher stopped it)
    wait_for(lambda: not pid_alive(agent_pid))
    # nothing half came back: the run's worktree and artifact are as they were
    assert git.head(run.worktree) == base
    assert run.paths.candidate.read_bytes() == placeholder
    # the driver restarts the session: it runs on a live node and lands once
    retry = RayExecutor(cluster.address)
    try:
        outcome = retry.submit_agent(
            dataclasses.replace(task, agent=agent("improve")), threading.Event(), lambda _: None
        ).result(timeout=120)
    finally:
        retry.shutdown()
    assert outcome.head is not None
    assert len(git.commits_between(run.worktree, base, outcome.head)) == 1
    assert step(run).decision == DecisionKind.KEEP


def test_sessions_and_readings_run_on_warm_actors_made_once_at_start_and_reused(
    cluster: LocalCluster, run: RunHandle, tmp_path: Path
) -> None:
    """Tasks that ask CPUs alone run on the executor's warm actors: made when it starts (one
    per node here), reused by session after session and reading after reading with none made
    meanwhile, all killed when it shuts down."""
    job = ray.get_runtime_context().get_job_id()
    before = set(actors_of("NodeWorker", job))
    base = run.run.last_kept_commit or ""
    executor = RayExecutor(cluster.address, warm=1)
    try:
        made = set(actors_of("NodeWorker", job)) - before
        assert len(made) == len([n for n in ray.nodes() if n["Alive"]])
        for _ in range(2):
            outcome = executor.submit_agent(
                agent_task(run, "improve", tmp_path), threading.Event(), lambda _: None
            ).result(timeout=120)
            assert outcome.head is not None and outcome.head != base
            git.checkout_branch_at(run.worktree, run.run.branch_name, base)
            record = executor.submit_evaluation(
                evaluation_task(run, base, {}), threading.Event(), lambda _: None
            ).result(timeout=120)
            assert record.status == "pass"
        assert set(actors_of("NodeWorker", job)) - before == made  # none made meanwhile
    finally:
        executor.shutdown()
    wait_for(lambda: all(actors_of("NodeWorker", job)[a]["State"] == "DEAD" for a in made))


def test_a_node_lost_under_a_warm_actor_s_session_is_lost_once_and_the_next_runs_elsewhere(
    cluster: LocalCluster, run: RunHandle, tmp_path: Path
) -> None:
    """Sessions at once spread over the nodes' warm actors, one on each; the node under one
    of them dies: that session alone is lost (once, nothing landed), and the next session runs
    on a live node's actor (the dead node's are not taken again)."""
    cluster.add_node("doomed-warm", {})
    doomed = cluster.nodes["doomed-warm"].node_id
    base = run.run.last_kept_commit or ""
    executor = RayExecutor(cluster.address, warm=1)
    try:
        count = len([n for n in ray.nodes() if n["Alive"]])
        cancels = [threading.Event() for _ in range(count)]
        futures = [
            executor.submit_agent(agent_task(run, "hang", tmp_path), cancel, lambda _: None)
            for cancel in cancels
        ]
        started = f"{run.run_id}/tasks/*/tree/.autoresearch/agent-1.started"
        marker = wait_for(lambda: next(cluster.node_dir("doomed-warm").glob(started), None))
        agent_pid = host_pid(wait_for(marker.read_text))
        cluster.remove_node("doomed-warm")
        lost = wait_for(lambda: [f for f in futures if f.done()])
        assert len(lost) == 1
        with pytest.raises(TaskLost, match="Ray task lost"):
            lost[0].result()
        for cancel in cancels:
            cancel.set()
        outcomes = [f.result(timeout=120) for f in futures if f is not lost[0]]
        assert all(o.result.cancelled for o in outcomes)
        assert git.head(run.worktree) == base
        again = executor.submit_agent(
            agent_task(run, "improve", tmp_path), threading.Event(), lambda _: None
        ).result(timeout=120)
    finally:
        executor.shutdown()
    assert again.head is not None and again.head != base
    wait_for(lambda: not pid_alive(agent_pid))  # the dead node's agent did not outlive it
    assert doomed not in {n["NodeID"] for n in ray.nodes() if n["Alive"]}


def wait_for(probe: Callable[[], T | None], patience: float = 60.0) -> T:
    deadline = time.monotonic() + patience
    while time.monotonic() < deadline:
        got = probe()
        if got:
            return got
        time.sleep(0.1)
    raise AssertionError("timed out waiting")


def demo_on_ray(
    cluster: LocalCluster, tmp_path: Path, *limits: str, mission_name: str = DEMO_MISSION
) -> tuple[Path, Any]:
    """`run --executor ray --address` on a fresh demo repository: the repository and the
    summary."""
    mission = create_demo_repo(tmp_path / "demo", mission_name)
    repo = mission.parents[1]
    done = cli(
        "run", str(mission), "--agent", "offline", "--executor", "ray",
        "--address", cluster.address, *limits, "--json", cwd=repo, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    return repo, json.loads(done.stdout)


def test_the_demo_mission_runs_on_the_two_node_cluster_from_the_cli(
    cluster: LocalCluster, tmp_path: Path
) -> None:
    """The issue's "done when": `run --executor ray --address` drives the mission of
    `demo --lanes 4` with four lanes, as the two-node recipe of docs/supervisor.md does, its sessions and
    readings on the cluster's nodes."""
    summary = demo_on_ray(
        cluster, tmp_path, "--lanes", "4", "--max-iterations", "8", mission_name=LANES_MISSION
    )[1]
    assert summary["status"] == "completed", summary
    ledger = json.loads(Path(summary["ledger_file"]).read_text())["entries"]
    numbers = [e["iteration"] for e in ledger]
    assert numbers == list(range(len(numbers))) and numbers[-1] == 8  # each one once
    assert {row["lane"] for row in summary["lanes"]} == {1, 2, 3, 4}
    assert all(e["decision"] for e in ledger[1:])
    # sessions spread over both machines: each node has the run's commit cache
    run_id = summary["run_id"]
    for node in ("head", "node-b"):
        assert cluster.node_dir(node).joinpath(run_id, "cache.git").is_dir(), node
        assert list(cluster.node_dir(node).joinpath(run_id, "tasks").iterdir()) == []


def test_a_plain_continue_of_a_ray_run_runs_on_the_recorded_cluster(
    cluster: LocalCluster, tmp_path: Path
) -> None:
    """`continue` without --executor/--address goes on where the run was started: on the
    recorded cluster, not silently on this machine."""
    repo, first = demo_on_ray(cluster, tmp_path, "--max-iterations", "1")
    run_id = first["run_id"]
    caches = [cluster.node_dir(n) / run_id for n in ("head", "node-b")]
    for cache in caches:  # what the first leg left on the nodes goes
        subprocess.run(["rm", "-rf", str(cache)], check=True)
    again = cli("continue", run_id, "--max-iterations", "+1", "--json", cwd=repo, timeout=300)
    assert again.returncode == 0, again.stderr[-3000:]
    assert json.loads(again.stdout)["loop"]["status"] == "completed"
    assert any(cache.joinpath("cache.git").is_dir() for cache in caches)  # ran on a node


def test_a_worker_killed_mid_session_records_that_iteration_interrupted_once_and_the_run_goes_on(
    cluster: LocalCluster, tmp_path: Path
) -> None:
    """The Ray worker running a session (a warm actor) is SIGKILLed (its agent with it): the
    driver records that iteration as interrupted, once, and the next sessions are judged as
    usual (on a new actor: the dead one is not taken again)."""
    repo = make_repo(tmp_path / "repo")
    mission = repo.mission()
    agent_spec = f"cmd:FAKE_PLAN=hang,improve,improve {sys.executable} {CMD_AGENT}"
    argv = [
        sys.executable, "-m", "autoresearch", "run", str(mission), "--agent", agent_spec,
        "--executor", "ray", "--address", cluster.address, "--max-iterations", "3", "--json",
        "--run-tag", "killed",
    ]  # fmt: skip
    driver = subprocess.Popen(
        argv, cwd=repo.root, env={**os.environ, **GIT_ENV}, text=True,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )  # fmt: skip
    try:
        started = wait_for(
            lambda: next(
                cluster.base.glob("nodes/*/*-killed/tasks/*/tree/.autoresearch/agent-1.started"),
                None,
            )
        )
        agent_pid = host_pid(started.read_text())
        worker = ray_worker_of(agent_pid)
        os.kill(worker, signal.SIGKILL)
        out, err = driver.communicate(timeout=300)
    finally:
        if driver.poll() is None:
            driver.kill()
            driver.wait()
    assert driver.returncode == 0, err[-3000:]
    summary = json.loads(out)  # stdout is the JSON alone: Ray's notice went to stderr
    assert "A worker died" in err
    ledger = json.loads(Path(summary["ledger_file"]).read_text())["entries"]
    assert [e["iteration"] for e in ledger] == [0, 1, 2, 3]
    lost = ledger[1]
    assert lost["decision"] == "interrupted"
    assert "agent session Ray task lost: ActorDiedError" in json.dumps(lost)
    assert [e["decision"] for e in ledger[2:]] == ["keep", "keep"]
    wait_for(lambda: not pid_alive(agent_pid))


def ray_worker_of(pid: int) -> int:
    """The Ray worker process that started the agent `pid` (through `sh -c`)."""
    for _ in range(4):
        pid = int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
        if b"ray::" in Path(f"/proc/{pid}/cmdline").read_bytes():
            return pid
    raise AssertionError("no Ray worker above the agent")


def free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def ray_run(repo: Path, mission: Path, address: str, timeout: float = 300) -> Any:
    return cli(
        "run", str(mission), "--agent", f"cmd:FAKE_PLAN=improve {sys.executable} {CMD_AGENT}",
        "--lanes", "2", "--max-iterations", "1", "--executor", "ray", "--address", address,
        "--json", cwd=repo, timeout=timeout,
    )  # fmt: skip


def no_active_run(repo: Path, mission: Path) -> None:
    """A refused run left nothing: the next run (on this machine) is not refused as active."""
    again = cli("run", str(mission), "--agent", "offline", "--max-iterations", "1", cwd=repo)
    assert "autoresearch_active_run_exists" not in again.stderr, again.stderr[-2000:]


def test_an_unreachable_address_is_refused_at_once_and_leaves_no_run(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    mission = repo.mission(
        sandbox=sandbox_text(f"touch {tmp_path}/measured; python3 scripts/eval.py")
    )
    address = f"127.0.0.1:{free_port()}"  # nothing listens there
    started = time.monotonic()
    done = ray_run(repo.root, mission, address, timeout=90)
    assert time.monotonic() - started < 60
    assert done.returncode == 2, done.stderr[-2000:]
    assert f"cannot reach the Ray cluster at {address}" in done.stderr
    assert not (tmp_path / "measured").exists()  # no baseline was taken
    no_active_run(repo.root, mission)


def test_resources_no_node_offers_are_refused_before_the_baseline(
    cluster: LocalCluster, tmp_path: Path
) -> None:
    repo = make_repo(tmp_path / "repo")
    extra = "evaluation:\n  slots: 1\n  resources: {GPU: 1}\n"
    sandbox = sandbox_text(f"touch {tmp_path}/measured; python3 scripts/eval.py", extra=extra)
    mission = repo.mission(sandbox=sandbox)
    done = ray_run(repo.root, mission, cluster.address)
    assert done.returncode == 2, done.stderr[-2000:]
    assert "no node of the Ray cluster offers GPU: 1" in done.stderr
    assert not (tmp_path / "measured").exists()  # refused before any reading
    no_active_run(repo.root, mission)


def test_a_ray_runs_baseline_is_measured_on_the_cluster(
    cluster: LocalCluster, tmp_path: Path
) -> None:
    """The baseline's readings come from where every candidate's do: a node of the cluster
    (the evaluator prints its working directory, which lies in the node's folder)."""
    repo = make_repo(tmp_path / "repo")
    mission = repo.mission(sandbox=sandbox_text("pwd; python3 scripts/eval.py"))
    done = ray_run(repo.root, mission, cluster.address)
    assert done.returncode == 0, done.stderr[-3000:]
    run_id = json.loads(done.stdout)["run_id"]
    log = RepoPaths(repo.root).run(run_id).evaluator_log(0).read_text()
    assert str(cluster.base / "nodes") in log, log[:2000]


def run_state(repo: Path, run_id: str) -> tuple[Any, dict[str, bytes], str]:
    """All a refused command could have changed: the run as `status` shows it, the run's
    files, and its worktree (HEAD and what is uncommitted)."""
    shown = cli("status", run_id, "--json", cwd=repo)
    assert shown.returncode == 0, shown.stderr
    folder = RepoPaths(repo).run(run_id).root
    files = {str(p.relative_to(folder)): p.read_bytes() for p in folder.rglob("*") if p.is_file()}
    worktree = Path(json.loads(shown.stdout)["manifest"]["worktree_path"])
    porcelain = ["git", "status", "--porcelain", "--untracked-files=all"]
    tree = git.head(worktree) + subprocess.run(porcelain, cwd=worktree, capture_output=True,
                                               text=True, check=True).stdout  # fmt: skip
    return json.loads(shown.stdout), files, tree


def refused_in_one_line(done: Any, message: str) -> None:
    assert done.returncode == 2, done.stderr[-3000:]
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and message in lines[0], done.stderr[-3000:]


def test_a_continue_the_cluster_refuses_leaves_the_run_exactly_as_it_was(
    cluster: LocalCluster, tmp_path: Path
) -> None:
    """`continue --executor ray` is connected and its resources checked before the finished
    run is reopened: refused, the run is still completed, nothing of it touched."""
    repo = make_repo(tmp_path / "repo")
    extra = "evaluation:\n  slots: 1\n  resources: {GPU: 1}\n"
    mission = repo.mission(sandbox=sandbox_text("python3 scripts/eval.py", extra=extra))
    first = cli("run", str(mission), "--agent", "cmd:true", "--run-tag", "C1",
                "--max-iterations", "1", "--json", cwd=repo.root)  # fmt: skip
    assert first.returncode == 0, first.stderr[-3000:]
    run_id = json.loads(first.stdout)["run_id"]
    before = run_state(repo.root, run_id)
    assert before[0]["status"] == "completed"
    done = cli("continue", run_id, "--max-iterations", "+1", "--executor", "ray",
               "--address", cluster.address, cwd=repo.root, timeout=120)  # fmt: skip
    refused_in_one_line(done, "no node of the Ray cluster offers GPU: 1")
    assert run_state(repo.root, run_id) == before


def test_a_resume_on_an_unreachable_cluster_leaves_the_run_exactly_as_it_was(
    tmp_path: Path,
) -> None:
    """`resume --executor ray --address` is connected before the run is re-armed or its loop
    options recorded: refused in one line, the run as it was."""
    repo = make_repo(tmp_path / "repo")
    mission = repo.mission()
    prepared = cli("prepare", str(mission), "--run-tag", "R1", "--json", cwd=repo.root)
    assert prepared.returncode == 0, prepared.stderr[-3000:]
    run_id = json.loads(prepared.stdout)["run_id"]
    before = run_state(repo.root, run_id)
    address = f"127.0.0.1:{free_port()}"  # nothing listens there
    done = cli("resume", run_id, "--agent", "cmd:true", "--max-iterations", "1",
               "--executor", "ray", "--address", address, cwd=repo.root, timeout=90)  # fmt: skip
    refused_in_one_line(done, f"cannot reach the Ray cluster at {address}")
    assert run_state(repo.root, run_id) == before


def test_a_ray_run_cut_off_in_prepare_measures_its_baseline_on_the_cluster_on_resume(
    cluster: LocalCluster, tmp_path: Path
) -> None:
    """The driver dies before the baseline: `resume` finishes the prepare, and the baseline's
    readings come from the cluster the run was started on, as a new run's do."""
    repo = make_repo(tmp_path / "repo")
    mission = repo.mission(sandbox=sandbox_text("pwd; python3 scripts/eval.py"))
    env = {"AUTORESEARCH_FAILPOINTS": "prepare.after_worktree"}
    cut = cli("run", str(mission), "--agent", f"cmd:FAKE_PLAN=improve {sys.executable} {CMD_AGENT}",
              "--executor", "ray", "--address", cluster.address, "--max-iterations", "1",
              "--run-tag", "P1", "--json", cwd=repo.root, env=env, timeout=300)  # fmt: skip
    assert cut.returncode == -signal.SIGKILL, cut.stderr[-3000:]
    run_id = "missions-demo-p1"
    done = cli("resume", run_id, "--json", cwd=repo.root, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "finished the interrupted prepare" in done.stderr
    assert json.loads(done.stdout)["loop"]["status"] == "completed"
    log = RepoPaths(repo.root).run(run_id).evaluator_log(0).read_text()
    assert str(cluster.base / "nodes") in log, log[:2000]
