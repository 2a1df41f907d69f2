"""The far end of a remote executor, without any executor: a session and an evaluation run in
a node folder from bundles, and what they return lands in the driver's run (real git, real
processes, the `cmd:` fake agent)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from autoresearch import git
from autoresearch.agents import AgentConfig
from autoresearch.children import run_tag
from autoresearch.errors import ContractError
from autoresearch.states import DecisionKind
from autoresearch.supervisor import remote, watcher
from autoresearch.supervisor.executor import AgentTask, EvaluationTask
from autoresearch.supervisor.handle import RunHandle
from autoresearch.supervisor.prepare import prepare
from autoresearch.supervisor.ray_executor import BundleChains
from autoresearch.supervisor.step import step
from autoresearch.supervisor.watcher import MSG_WATCHING
from helpers import Repo, not_a_subreaper, sandbox_text, until

CMD_AGENT = f"cmd:{sys.executable} {Path(__file__).parents[1] / 'agents/fakes/cmd_agent.py'}"


def _code(h: RunHandle, commit: str) -> remote.Code:
    data = remote.bundle_of(h.repo.repo_root, commit)
    assert data is not None
    return remote.Code(commit, ((commit, lambda: data),))


def _session(h: RunHandle, spec: str = CMD_AGENT) -> remote.NodeSession:
    base = h.run.last_kept_commit or ""
    iteration = h.run.iteration + 1
    task = AgentTask(
        run_id=h.run_id,
        lane=0,
        iteration=iteration,
        base_commit=base,
        worktree=h.worktree,
        branch=h.run.branch_name,
        instructions_file=h.paths.instructions,
        candidate_file=h.paths.candidate,
        log_path=h.paths.agent_log(iteration),
        leftover_patch=h.paths.patch(iteration, "leftover"),
        agent=AgentConfig(spec),
        timeout=60,
        sandbox=h.run.sandbox,
    )
    return remote.NodeSession(
        task=task,
        task_id=uuid.uuid4().hex,
        code=_code(h, base),
        instructions=h.paths.instructions.read_bytes(),
        placeholder=h.paths.candidate.read_bytes(),
    )


@pytest.fixture(autouse=True)
def _not_a_subreaper() -> Iterator[None]:
    """A node's Ray worker is a plain parent, as on a cluster: what its tasks detach is not
    adopted by a subreaper test worker (after an in-process run_loop)."""
    with not_a_subreaper():
        yield


@pytest.fixture
def run(mission_dir: Path) -> RunHandle:
    return prepare(mission_dir, run_tag="REMOTE")


def test_a_remote_session_lands_in_the_driver_as_if_it_had_run_there(
    run: RunHandle, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAKE_PLAN", "improve")
    node = tmp_path / "node"
    session = _session(run)
    outcome = remote.run_session(node, session)
    assert outcome.result.exit_code == 0 and outcome.on_branch
    assert outcome.bundle is not None and outcome.head != session.code.commit
    # nothing of the task is left on the node but the run's commit cache and its watcher (a
    # detached process: its lock file appears when it starts, which may be after the task)
    until(lambda: (node / run.run_id / "watcher.lock").exists(), what="the run's watcher")
    assert sorted(p.name for p in (node / run.run_id).iterdir()) == [
        "cache.git",
        "cache.lock",
        "tasks",
        "watch.log",
        "watcher.lock",
    ]
    assert list((node / run.run_id / "tasks").iterdir()) == []
    assert _registered_checkouts(node / run.run_id / "cache.git") == []  # none left behind
    landed = remote.land_session(session.task, outcome)
    assert git.head(run.worktree) == outcome.head == landed.head
    assert git.current_branch(run.worktree) == run.run.branch_name
    assert landed.result.log_file == str(run.paths.agent_log(1))
    judged = step(run)
    assert judged.decision == DecisionKind.KEEP and judged.last_kept_commit == outcome.head


def test_uncommitted_work_of_a_remote_session_comes_back_as_a_patch(
    run: RunHandle, tmp_path: Path
) -> None:
    script = "echo 7 > value.txt; echo idea > notes.txt; echo said so"
    session = _session(run, f"cmd:{script}")
    outcome = remote.run_session(tmp_path / "node", session)
    assert outcome.bundle is None and outcome.head == run.run.last_kept_commit
    remote.land_session(session.task, outcome)
    # nothing is lost: the uncommitted work is the task's leftover patch, the log is here
    patch = session.task.leftover_patch.read_text()
    assert "+7" in patch and "notes.txt" in patch and "+idea" in patch
    assert b"said so" in session.task.log_path.read_bytes()
    assert git.head(run.worktree) == run.run.last_kept_commit


def test_a_remote_evaluation_measures_the_commit_with_the_sealed_harness(
    repo: Repo, tmp_path: Path
) -> None:
    sandbox = sandbox_text(
        'python3 "$AUTORESEARCH_SEALED_DIR/scripts/eval.py"', extra="sealed: [scripts/eval.py]\n"
    )
    h = prepare(repo.mission(sandbox=sandbox), run_tag="RSEAL")
    commit = h.run.last_kept_commit or ""
    task = EvaluationTask(
        run_id=h.run_id,
        lane=0,
        iteration=1,
        commit=commit,
        tree=h.worktree,
        relative_dir=h.run.sandbox.relative_dir,
        evaluator=h.evaluator,
        log_path=h.paths.evaluator_log(1),
        sealed_dir=h.paths.sealed,
    )
    evaluation = remote.NodeEvaluation(
        task, uuid.uuid4().hex, _code(h, commit), remote.pack_sealed(h.paths.sealed)
    )
    outcome = remote.run_evaluation(tmp_path / "node", evaluation)
    assert outcome.record.status == "pass" and outcome.record.score == 1.0
    assert b"progress line" in outcome.log
    landed = remote.land_evaluation(outcome, h.paths.evaluator_log(1))
    assert Path(landed.log_file).read_bytes() == outcome.log


def test_a_sealed_copy_damaged_in_transit_is_refused(tmp_path: Path) -> None:
    (tmp_path / "h").mkdir()
    (tmp_path / "h/eval.py").write_text("print(1)\n")
    copy = remote.pack_sealed(tmp_path / "h")
    damaged = remote.SealedCopy(copy.archive, {"eval.py": "0" * 64})
    with pytest.raises(ContractError, match="damaged in transit: eval.py"):
        remote.unpack_sealed(damaged, tmp_path / "node")


def test_a_session_that_only_staged_a_file_brings_it_back_and_leaves_no_checkout(
    run: RunHandle, tmp_path: Path
) -> None:
    """A staged new file is uncommitted work too (the clean-checkout shortcut must see it), and
    each task's checkout is unregistered from the node's cache once it is gone, however many
    tasks ran."""
    node = tmp_path / "node"
    for n in range(2):
        session = _session(run, f"cmd:echo staged > new{n}.txt && git add new{n}.txt")
        outcome = remote.run_session(node, session)
        remote.land_session(session.task, outcome)
        assert f"new{n}.txt" in session.task.leftover_patch.read_text()
    assert _registered_checkouts(node / run.run_id / "cache.git") == []


def test_a_session_that_left_head_detached_lands_detached_with_its_commit(
    run: RunHandle, tmp_path: Path
) -> None:
    script = (
        "git checkout -q --detach && echo 9 > value.txt && git commit -qam detached && "
        "echo note > notes.txt"
    )
    session = _session(run, f"cmd:{script}")
    outcome = remote.run_session(tmp_path / "node", session)
    assert not outcome.on_branch and outcome.head not in (None, session.code.commit)
    assert outcome.bundle is not None and b"notes.txt" in outcome.patch
    remote.land_session(session.task, outcome)
    assert git.head(run.worktree) == outcome.head
    assert git.head_branch(run.worktree) is None  # detached, as the session left it


@pytest.mark.parametrize(
    ("raw", "state"),
    [
        (b"# branch.oid abc\0# branch.head main\0", git.CheckoutState("abc", "main", False)),
        (b"# branch.oid abc\0# branch.head (detached)\0", git.CheckoutState("abc", None, False)),
        (b"# branch.oid (initial)\0# branch.head main\0", git.CheckoutState(None, "main", False)),
        (b"# branch.oid abc\0# branch.head m\0? new.txt\0", git.CheckoutState("abc", "m", True)),
        (b"# branch.oid a\0# branch.head m\0" b"2 R. N... 100644 100644 100644 x y R100 b\0a\0",
         git.CheckoutState("a", "m", True)),
    ],
)  # fmt: skip
def test_one_status_reads_head_its_branch_and_whether_anything_is_uncommitted(
    raw: bytes, state: git.CheckoutState
) -> None:
    assert git.parse_checkout_state(raw) == state


def _registered_checkouts(cache: Path) -> list[str]:
    """The checkouts the cache still lists besides itself (`git worktree list`)."""
    listed = subprocess.run(
        ["git", "worktree", "list", "--porcelain"], cwd=cache, capture_output=True, text=True
    ).stdout
    return [line for line in listed.splitlines() if line.startswith("worktree ")][1:]


def test_a_dead_task_s_processes_and_folder_are_gone_before_the_next_task(
    run: RunHandle, tmp_path: Path
) -> None:
    """A worker killed mid-task leaves its folder unlocked and its agent running (its own
    process group): the next task of the run on that node stops it and removes the folder."""
    node = tmp_path / "node"
    dead = node / run.run_id / "tasks" / "dead-task"
    (dead / "tree").mkdir(parents=True)
    stray = _tagged_sleep(run.run_id, dead / "tree")
    try:
        outcome = remote.run_session(node, _session(run, "cmd:true"))
        assert outcome.result.exit_code == 0
        _wait_exit(stray)
        assert not dead.exists()
    finally:
        _kill(stray)


def test_the_watcher_stops_a_task_s_processes_when_its_worker_dies(
    run: RunHandle, tmp_path: Path
) -> None:
    """The task's lock is held by its worker; once it is free the run's watcher stops the
    task's processes, without waiting for another task on the node."""
    run_root = tmp_path / "node" / run.run_id
    folder = run_root / "tasks" / "t1"
    (folder / "tree").mkdir(parents=True)
    worker = subprocess.Popen(  # stands for the Ray worker: holds the task's lock
        [sys.executable, "-c", LOCK_HOLDER, str(folder / "task.lock")],
        stdout=subprocess.PIPE,
    )
    assert worker.stdout is not None and worker.stdout.readline() == b"locked\n"
    stray = _tagged_sleep(run.run_id, folder / "tree")
    try:
        remote.start_watcher(run.run_id, run_root)
        log = run_root / "watch.log"
        until(lambda: MSG_WATCHING in log.read_text(), what="the watcher saw the lock held")
        assert stray.poll() is None, "the watcher stopped a live task's process"
        worker.kill()
        worker.wait()
        _wait_exit(stray)
    finally:
        _kill(stray)
        worker.kill()
        worker.wait()


def test_a_lost_task_is_reaped_gone_only_once_its_processes_and_its_worker_are(
    run: RunHandle, tmp_path: Path
) -> None:
    """`reap_task` (the driver's reaper of a lost evaluation on a live node) stops the task's
    processes at once, but says they are gone only once no worker holds the task's lock
    either (a live one could start another); a task without a folder is gone."""
    node = tmp_path / "node"
    folder = node / run.run_id / "tasks" / "lost"
    (folder / "tree").mkdir(parents=True)
    worker = subprocess.Popen(  # stands for the Ray worker: holds the task's lock
        [sys.executable, "-c", LOCK_HOLDER, str(folder / "task.lock")],
        stdout=subprocess.PIPE,
    )
    assert worker.stdout is not None and worker.stdout.readline() == b"locked\n"
    stray = _tagged_sleep(run.run_id, folder / "tree")
    try:
        assert remote.reap_task(node, run.run_id, "lost", patience=0.3) is False
        _wait_exit(stray)  # stopped even so: the driver gave the task up
        worker.kill()
        worker.wait()
        assert remote.reap_task(node, run.run_id, "lost", patience=5.0) is True
        assert remote.reap_task(node, run.run_id, "never-started", patience=0.0) is True
    finally:
        _kill(stray)
        worker.kill()
        worker.wait()


def test_one_watcher_per_run_and_node_and_it_leaves_once_idle(
    run: RunHandle, tmp_path: Path
) -> None:
    """Tasks start a watcher only when none runs; a second one leaves at once, and the
    watcher leaves once no live task has held its lock for its idle time (the folder a dead
    task left, its processes stopped, keeps it no longer: a shut-down cluster leaves no
    watcher behind)."""
    run_root = tmp_path / "node" / run.run_id
    for n in (1, 2):
        with remote.scratch(tmp_path / "node", run.run_id, f"t{n}", _code(run, _base(run))):
            until(lambda: watcher.watching(run_root), what="a watcher")
    watchers = _watchers(run_root)
    assert len(watchers) == 1, watchers  # the second task found the first one's watcher
    remote.start_watcher(run.run_id, run_root)  # a second watcher of the run leaves at once
    until(lambda: len(_watchers(run_root)) == 1, what="the second watcher left")
    for pid in watchers:
        os.kill(pid, 9)
    until(lambda: not watcher.watching(run_root), what="the killed watcher's lock free")
    dead = run_root / "tasks" / "dead-task"
    dead.mkdir(parents=True)
    (dead / "task.lock").touch()  # its holder is gone
    remote.start_watcher(run.run_id, run_root, idle_seconds=0.5)  # no live task: it leaves
    until(lambda: watcher.watching(run_root), what="the idle watcher started")
    until(lambda: not watcher.watching(run_root) and not _watchers(run_root), what="it left")


def _base(h: RunHandle) -> str:
    return h.run.last_kept_commit or ""


def _watchers(run_root: Path) -> list[int]:
    """The watcher processes of this run root (their command line names it)."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if b"autoresearch.supervisor.watcher" in argv and str(run_root).encode() in argv:
            found.append(int(entry.name))
    return found


LOCK_HOLDER = """
import fcntl, os, sys, time
fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o600)
fcntl.flock(fd, fcntl.LOCK_EX)
print("locked", flush=True)
time.sleep(60)
"""


def _tagged_sleep(run_id: str, tree: Path) -> subprocess.Popen[bytes]:
    env = run_tag(run_id, tree).env()
    return subprocess.Popen(
        ["sleep", "60"], env=env, start_new_session=True, stdin=subprocess.DEVNULL
    )


def _wait_exit(proc: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 10
    while proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    assert proc.poll() is not None, "the dead task's process still runs"


def _kill(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        os.killpg(proc.pid, 9)
    proc.wait()


def test_a_node_fetches_only_the_bundles_past_the_newest_commit_its_cache_has(
    run: RunHandle, tmp_path: Path
) -> None:
    tree = run.worktree
    c1 = run.run.last_kept_commit or ""
    commits = [c1]
    for n in (2, 3):
        (tree / f"note-{n}.txt").write_text(f"{n}\n")
        git.commit_all(tree, f"note {n}")
        commits.append(git.head(tree))
    c2, c3 = commits[1:]
    data = {
        "b1": remote.bundle_of(tree, c1),
        "b2": remote.bundle_of(tree, c2, [c1]),
        "b3": remote.bundle_of(tree, c3, [c2]),
    }
    loaded: list[str] = []

    def bundle(name: str, head: str) -> tuple[str, remote.BundleLoader]:
        def load() -> bytes:
            loaded.append(name)
            got = data[name]
            assert got is not None
            return got

        return head, load

    chain = (bundle("b1", c1), bundle("b2", c2), bundle("b3", c3))
    node = tmp_path / "node"
    with remote.scratch(node, run.run_id, "first", remote.Code(c2, chain[:2])) as place:
        assert git.head(place.tree) == c2
    assert loaded == ["b1", "b2"]
    loaded.clear()
    with remote.scratch(node, run.run_id, "second", remote.Code(c3, chain)) as place:
        assert git.head(place.tree) == c3
    assert loaded == ["b3"]  # the cache has c2, hence c1
    loaded.clear()
    with remote.scratch(node, run.run_id, "third", remote.Code(c2, chain[:2])) as place:
        assert git.head(place.tree) == c2
    assert loaded == []


def test_the_driver_s_bundles_cost_a_node_at_most_two_fetches_whatever_it_lacks(
    run: RunHandle, tmp_path: Path
) -> None:
    """The driver's chains (ray_executor.BundleChains, its object store replaced by a list):
    a node that has only the run's first commit gets any of the next eight in one bundle, a
    node with nothing in two; a bundle each past the one before cost a node one fetch per
    commit it lacked."""
    tree = run.worktree
    commits = [run.run.last_kept_commit or ""]
    for n in range(2, 10):
        (tree / f"note-{n}.txt").write_text(f"{n}\n")
        git.commit_all(tree, f"note {n}")
        commits.append(git.head(tree))
    loaded: list[int] = []

    def store(data: bytes) -> remote.BundleLoader:
        number = len(stored)
        stored.append(data)
        return lambda: loaded.append(number) or stored[number]

    stored: list[bytes] = []
    chains = BundleChains(store)
    codes = [chains.code(tree, c) for c in commits]  # each bundled as a task would ask
    node = tmp_path / "node"
    with remote.scratch(node, run.run_id, "first", codes[0]) as place:
        assert git.head(place.tree) == commits[0]
    for n in (4, 8):  # past the first commit: one bundle each
        loaded.clear()
        with remote.scratch(node, run.run_id, f"to-{n}", codes[n]) as place:
            assert git.head(place.tree) == commits[n]
        assert len(loaded) == 1
    loaded.clear()
    with remote.scratch(tmp_path / "empty-node", run.run_id, "cold", codes[8]) as place:
        assert git.head(place.tree) == commits[8]
    assert len(loaded) == 2
