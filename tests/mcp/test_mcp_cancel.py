"""A host that cancels run_experiment stops the benchmark; status never writes a fresh repo."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

import anyio
import pytest
from mcp_helpers import connect, mcp_repo

from autoresearch.locks import FileLock
from autoresearch.mcp.server import build_server
from autoresearch.paths import session_paths
from helpers import Repo, make_repo, pid_alive

pytestmark = pytest.mark.anyio


async def wait_until(predicate: Callable[[], bool], limit: float = 10.0) -> None:
    end = time.monotonic() + limit
    while not predicate():
        assert time.monotonic() < end, "condition not reached"
        await anyio.sleep(0.05)


def pids_in(pidfile: Path) -> list[int]:
    return [int(p) for p in pidfile.read_text().split()] if pidfile.exists() else []


async def test_a_cancelled_run_experiment_stops_the_harness_and_frees_the_session(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = mcp_repo(tmp_path / "repo")
    pidfile = tmp_path / "pids"
    monkeypatch.setenv("PIDFILE", str(pidfile))
    async with connect(build_server(repo.root)) as t:
        await t.ok("init_experiment", {"name": "n", "metric": "score"})
        repo.write("slow.flag", "")
        async with anyio.create_task_group() as tg:
            tg.start_soon(t.client.call_tool, "run_experiment", {})
            await wait_until(lambda: len(pids_in(pidfile)) == 2)
            tg.cancel_scope.cancel()  # the host gives up on the call
        pids = pids_in(pidfile)
        await wait_until(lambda: not any(pid_alive(p) for p in pids))  # not the 30 s sleep
        lock = FileLock(session_paths(repo.root, 1).lock)
        await wait_until(lambda: not lock.held_elsewhere())
        status = await t.ok("experiment_status")
        assert status.data["pending"] is None  # cancelled, not waiting for a log
        repo.root.joinpath("slow.flag").unlink()
        run = await t.ok("run_experiment", {})
        assert (run.data["run"], run.data["status"], run.data["abandoned_run"]) == (2, "pass", None)


async def test_experiment_status_in_a_repository_without_a_session_writes_nothing(
    tmp_path: Path,
) -> None:
    fresh: Repo = make_repo(tmp_path / "fresh")
    async with connect(build_server(fresh.root)) as t:
        for resume in (False, True):
            message = await t.error("experiment_status", {"resume": resume})
            assert message.startswith("no active experiment session on branch main")
    assert not (fresh.root / ".autoresearch").exists()
    assert fresh.git("status", "--porcelain", "--ignored") == ""
