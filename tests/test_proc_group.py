"""A supervised child's process group: the /proc scan and the wait (proc_group)."""

from __future__ import annotations

import contextlib
import itertools
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from autoresearch.confine import Box, machine_support
from autoresearch.proc_group import (
    box_emptied,
    group_running,
    poll_delays,
    running_member,
    wait_group_gone,
)

linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc")
BWRAP = machine_support()
needs_bwrap = pytest.mark.skipif(
    BWRAP.bwrap is None, reason=f"Bubblewrap cannot run here: {BWRAP.reason}"
)


@pytest.mark.parametrize(
    ("first", "cap", "expected"),
    [
        (0.001, 0.02, [0.001, 0.002, 0.004, 0.008, 0.016, 0.02, 0.02]),
        (0.001, 0.01, [0.001, 0.002, 0.004, 0.008, 0.01, 0.01, 0.01]),
        (0.05, 0.02, [0.02, 0.02, 0.02, 0.02, 0.02, 0.02, 0.02]),
    ],
)
def test_a_wait_polls_soon_then_less_often(first: float, cap: float, expected: list[float]) -> None:
    assert list(itertools.islice(poll_delays(first, cap), 7)) == pytest.approx(expected)


def _leader_with_straggler(tmp_path: Path, name: str) -> tuple[subprocess.Popen[bytes], Path]:
    """A group leader that started a long-running member (its own copy of `sleep`, named
    `name`) and exited; returns the leader, reaped, and the member's pid file."""
    program = tmp_path / name
    shutil.copy(shutil.which("sleep") or "/bin/sleep", program)
    pid_file = tmp_path / "member.pid"
    script = f'"$0" 30 & echo $! > "{pid_file}"'
    leader = subprocess.Popen(["sh", "-c", script, str(program)], start_new_session=True)
    leader.wait()
    return leader, pid_file


@linux_only
def test_a_member_running_after_its_leader_is_found_whatever_its_name(tmp_path: Path) -> None:
    # the command name holds ") " and a lone Z: the fields are read after the last ')'
    leader, pid_file = _leader_with_straggler(tmp_path, "odd) 1 Z (name")
    assert pid_file.read_text().strip()
    try:
        assert group_running(leader.pid)
    finally:
        os.killpg(leader.pid, signal.SIGKILL)
    assert wait_group_gone(leader.pid, 5.0)  # killed: a zombie at most, until init reaps it


@linux_only
def test_a_group_of_zombies_runs_nothing() -> None:
    # the leader exits and stays unreaped: a zombie is a member that runs no code
    leader = subprocess.Popen(["true"], start_new_session=True)
    deadline = time.monotonic() + 5
    while not _zombie(leader.pid) and time.monotonic() < deadline:
        time.sleep(0.001)
    try:
        assert _zombie(leader.pid)
        assert not group_running(leader.pid)
    finally:
        leader.wait()
    assert not group_running(leader.pid)  # reaped: no member at all


def test_a_wait_for_a_group_that_never_ends_gives_up_at_its_limit() -> None:
    leader = subprocess.Popen(["sleep", "30"], start_new_session=True)
    try:
        started = time.monotonic()
        assert not wait_group_gone(leader.pid, 0.05)
        assert time.monotonic() - started < 2
    finally:
        os.killpg(leader.pid, signal.SIGKILL)
        leader.wait()


def _zombie(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat[stat.rfind(")") + 2 :].split()[0] == "Z"


@linux_only
def test_a_wait_follows_a_straggler_until_it_ends(tmp_path: Path) -> None:
    # the leader leaves two members: the wait watches one, then scans again for the other
    script = "sleep 1 & sleep 2 &"  # long enough to be running still on a loaded machine
    started = time.monotonic()  # before the start: no member can end sooner than 2 s after
    leader = subprocess.Popen(["sh", "-c", script], start_new_session=True)
    leader.wait()
    assert group_running(leader.pid)
    assert wait_group_gone(leader.pid, 10.0)
    assert 2 <= time.monotonic() - started < 15
    assert not group_running(leader.pid)


HOPPER = """\
import os, signal, sys, time
signal.signal(signal.SIGTERM, signal.SIG_IGN)
beat, n = sys.argv[1], 0
while True:
    if os.fork():
        os._exit(0)  # the member the group had a moment ago is gone; its child runs on
    n += 1
    if n % 10 == 0:
        open(beat, "w").write(str(n))
    time.sleep(0.002)
"""


@linux_only
def test_a_member_that_forks_away_from_every_scan_is_still_killed(tmp_path: Path) -> None:
    """A /proc scan can miss a member that forks and exits in a loop; the group must still
    get its SIGKILL, which no fork escapes (review of proc_group: red when a clean scan
    skipped the final kill)."""
    from autoresearch import proc

    (tmp_path / "hopper.py").write_text(HOPPER)
    beat = tmp_path / "beat"
    argv = ["sh", "-c", f'"{sys.executable}" hopper.py "{beat}" >/dev/null 2>&1 </dev/null & '
            "sleep 0.3; exit 0"]  # fmt: skip
    for attempt in range(3):
        pids: list[int] = []
        spec = proc.SupervisedSpec(argv=argv, cwd=tmp_path, env=dict(os.environ),
                                   log_path=tmp_path / f"log{attempt}", grace_seconds=0.5,
                                   on_spawn=pids.append)  # fmt: skip
        try:
            proc.run_supervised(spec)
            before = beat.read_text() if beat.exists() else None
            time.sleep(0.4)
            after = beat.read_text() if beat.exists() else None
        finally:
            for _ in range(5):  # whatever the outcome, no fork loop outlives the test
                with contextlib.suppress(OSError):
                    os.killpg(pids[0], signal.SIGKILL)
        assert after == before, "a member of the evaluator's group outlived it"


def _boxed_leader(tmp_path: Path, script: str) -> subprocess.Popen[bytes]:
    """A sandbox (the command line confine.Box gives) that ran `script` and exited, reaped."""
    assert BWRAP.bwrap is not None
    argv = Box(BWRAP.bwrap, tmp_path).wrap(["sh", "-c", script], tmp_path, dict(os.environ))
    leader = subprocess.Popen(argv, cwd=tmp_path, start_new_session=True)
    leader.wait()
    return leader


def _until(condition: Callable[[], bool], limit: float = 10.0) -> bool:
    deadline = time.monotonic() + limit
    while not condition() and time.monotonic() < deadline:
        time.sleep(0.001)
    return condition()


@needs_bwrap
def test_an_exited_sandbox_is_seen_empty_without_a_scan(tmp_path: Path) -> None:
    """Bubblewrap's namespace init lingers as a zombie after the box exits: the wait tells
    that the box runs nothing from a few pids instead of a scan of /proc (issue 36)."""
    leader = _boxed_leader(tmp_path, "true")
    if not group_alive_now(leader.pid):
        pytest.skip("the namespace init was reaped before it could be looked at")
    assert _until(lambda: box_emptied(leader.pid) or not group_alive_now(leader.pid))
    assert running_member(leader.pid, boxed=True) is None
    assert wait_group_gone(leader.pid, 2.0, boxed=True)


@needs_bwrap
def test_a_sandbox_with_a_process_left_running_is_not_seen_empty(tmp_path: Path) -> None:
    # the box's init stays (not a zombie) while anything of the box runs: waited for
    leader = _boxed_leader(tmp_path, "sleep 1 & exit 0")
    try:
        assert not box_emptied(leader.pid)
        assert running_member(leader.pid, boxed=True)
        assert wait_group_gone(leader.pid, 10.0, boxed=True)
    finally:
        with contextlib.suppress(OSError):
            os.killpg(leader.pid, signal.SIGKILL)


def group_alive_now(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    return True
