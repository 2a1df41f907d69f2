"""`proc.kill_marked` finds a process by whole entries of its environment (real processes):
the scan every Ray task on a node ends with reads each environment raw and looks for the
markers as substrings first, which must neither match a mere prefix nor miss the end of a
long environment."""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from autoresearch import proc
from helpers import until

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")


Spawn = Callable[..., subprocess.Popen[bytes]]


@pytest.fixture
def spawn() -> Iterator[Spawn]:
    """Starts `sleep 60` with extra environment entries; every one is killed at the end."""
    started: list[subprocess.Popen[bytes]] = []

    def start(extra: dict[str, str], own_group: bool = True) -> subprocess.Popen[bytes]:
        child = subprocess.Popen(
            ["sleep", "60"], env={**os.environ, **extra}, start_new_session=own_group
        )
        started.append(child)
        return child

    try:
        yield start
    finally:
        for child in started:
            child.kill()
            child.wait()


def _marker() -> tuple[str, str]:
    """A fresh (name, value): no other process of the machine carries it."""
    return "AUTORESEARCH_RUN_ID", f"km-{uuid.uuid4().hex}"


def _environ_read(child: subprocess.Popen[bytes]) -> None:
    """Wait until the child has exec'd sleep: before, /proc shows its parent's environment."""
    path = Path(f"/proc/{child.pid}/cmdline")
    until(lambda: path.read_bytes().startswith(b"sleep"), what="the child's exec")


def test_a_marked_group_is_stopped_and_named(spawn: Spawn) -> None:
    name, value = _marker()
    child = spawn({name: value})
    _environ_read(child)
    assert proc.kill_marked([f"{name}={value}"]) == [child.pid]
    assert child.wait(timeout=10) != 0


def test_a_marker_is_a_whole_entry_not_a_prefix(spawn: Spawn) -> None:
    name, value = _marker()
    child = spawn({name: value + "0"})
    _environ_read(child)
    assert proc.kill_marked([f"{name}={value}"]) == []
    assert child.poll() is None


def test_every_marker_must_be_there(spawn: Spawn) -> None:
    name, value = _marker()
    child = spawn({name: value})
    _environ_read(child)
    assert proc.kill_marked([f"{name}={value}", "AUTORESEARCH_WORKTREE=/nowhere"]) == []
    assert child.poll() is None


def test_a_marker_past_a_long_environment_is_found(spawn: Spawn) -> None:
    name, value = _marker()
    padding = {f"AUTORESEARCH_PADDING_{n}": "x" * 100_000 for n in range(3)}  # 128 kB at most each
    child = spawn({**padding, name: value})
    _environ_read(child)
    assert proc.kill_marked([f"{name}={value}"]) == [child.pid]


def test_our_own_group_is_spared(spawn: Spawn) -> None:
    name, value = _marker()
    child = spawn({name: value}, own_group=False)
    _environ_read(child)
    assert proc.kill_marked([f"{name}={value}"]) == []
    assert child.poll() is None
