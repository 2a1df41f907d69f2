"""One child tag and one reaper: what a crashed driver left is found and stopped, strays of
other owners are left alone (real processes, a real journal)."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from autoresearch import proc
from autoresearch.children import ChildTag, harness_tag, job_tag, reap, register, run_tag
from autoresearch.journal.children import children
from autoresearch.journal.db import Journal
from helpers import pid_alive


def _orphan(env: dict[str, str]) -> tuple[int, int]:
    """A `sleep` in its own group whose parent has exited, like a crashed driver's child:
    (its process group, its pid)."""
    shell = subprocess.run(
        ["sh", "-c", "sleep 60 >/dev/null 2>&1 & echo $!"],
        env=env,
        start_new_session=True,
        capture_output=True,
        text=True,
        check=True,
    )
    pid = int(shell.stdout)
    return os.getpgid(pid), pid


def _gone(pid: int, limit: float = 10.0) -> bool:
    deadline = time.monotonic() + limit
    while pid_alive(pid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


@pytest.mark.parametrize(
    ("mine", "other"),
    [
        (run_tag("run-a", Path("/wt")), run_tag("run-b", Path("/wt"))),
        (job_tag("job_a"), job_tag("job_b")),  # a delegation job: the same registry and reaper
    ],
    ids=["run", "job"],
)
def test_reap_stops_registered_and_unregistered_children_of_its_owner_only(
    tmp_path: Path, mine: ChildTag, other: ChildTag
) -> None:
    (group, registered), (stray_group, stray) = _orphan(mine.env()), _orphan(mine.env({"X": "1"}))
    _, foreign = _orphan(other.env())
    try:
        with Journal.open(tmp_path / "journal.sqlite3") as journal:
            register(journal, mine, group, "agent")
            stopped = reap(journal, mine)
            assert {(r.pgid, r.role) for r in stopped} == {(group, "agent"), (stray_group, None)}
            assert children(journal, mine.owner) == []
        assert _gone(registered) and _gone(stray)
        assert pid_alive(foreign)
    finally:
        for pid in (registered, stray, foreign):
            if pid_alive(pid):
                os.kill(pid, signal.SIGKILL)


def test_each_owner_has_one_tag() -> None:
    assert harness_tag(1, 2, "/d").env()["AUTORESEARCH_EXP_RUN"] == "1-2"
    job = job_tag("job_a")
    assert job.env()["AUTORESEARCH_JOB_ID"] == "job_a" and job.owner == "job:job_a"
    assert job.marker == "AUTORESEARCH_JOB_ID=job_a"


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc")
def test_a_process_runs_while_it_lives_and_carries_its_marker() -> None:
    """`process_running` (a job runner's liveness): the marker guards a recycled pid, and a
    zombie or a process gone is not running."""
    child = subprocess.Popen(["sleep", "60"], env={**os.environ, "AUTORESEARCH_JOB_ID": "j1"})
    try:
        _wait_exec(child.pid)
        alive = [proc.process_running(child.pid, m) for m in ("AUTORESEARCH_JOB_ID=j1", "X=1")]
        child.kill()
        _wait_zombie(child.pid)
        zombie = proc.process_running(child.pid, "AUTORESEARCH_JOB_ID=j1")
    finally:
        child.kill()
        child.wait()
    gone = proc.process_running(child.pid, "AUTORESEARCH_JOB_ID=j1")
    assert (alive, zombie, gone) == ([True, False], False, False)


def test_a_runner_asked_about_in_the_midst_of_its_exec_is_running() -> None:
    """Right after its spawn a process reads an empty environment while its exec is under
    way (a reconcile racing job_start): asked as one just started, it runs, at once after
    each of 30 spawns; a process with an empty environment long after is not ours."""
    answers = []
    for _ in range(30):
        child = subprocess.Popen(["sleep", "60"], env={**os.environ, "AUTORESEARCH_JOB_ID": "j"})
        try:
            answers.append(proc.process_running(child.pid, "AUTORESEARCH_JOB_ID=j", starting=True))
        finally:
            child.kill()
            child.wait()
    no_environment = subprocess.Popen(["sleep", "60"], env={})
    try:
        _wait_exec(no_environment.pid)
        told = [proc.process_running(no_environment.pid, "X=1", starting=s) for s in (True, False)]
    finally:
        no_environment.kill()
        no_environment.wait()
    assert (answers, told) == ([True] * 30, [True, False])


def _wait_exec(pid: int) -> None:
    """Until the child's exec is done: in between, its environment reads empty."""
    deadline = time.monotonic() + 10
    while not Path(f"/proc/{pid}/cmdline").read_bytes():
        assert time.monotonic() < deadline, "the child never finished its exec"
        time.sleep(0.01)


def _wait_zombie(pid: int) -> None:
    deadline = time.monotonic() + 10
    while Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z":
        assert time.monotonic() < deadline, "the killed child never became a zombie"
        time.sleep(0.01)
