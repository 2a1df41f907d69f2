"""`autoresearch mcp` as a real process: stdio (what agent hosts launch) and streamable HTTP."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx2
import pytest
from mcp import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp_helpers import TOOL_NAMES, Progress, Tools, connect, mcp_repo, settle

from helpers import Repo

pytestmark = pytest.mark.anyio
HTTP_TOKEN = "a-test-token-for-the-http-transport-0123456789"


@pytest.fixture
def repo(tmp_path: Path) -> Repo:
    return mcp_repo(tmp_path / "repo")


async def drive_a_session(t: Tools, repo: Repo) -> Progress:
    """init → run (with progress) → log → status: what an agent does on its first turn."""
    assert set(t.schemas) == TOOL_NAMES
    await t.ok("init_experiment", {"name": "speed up", "metric": "score", "direction": "lower"})
    repo.write("delay.txt", "2.2\n")
    progress = Progress()
    run = await t.ok("run_experiment", {"timeout_seconds": 60}, progress_callback=progress)
    await settle()
    assert run.data["status"] == "pass" and run.data["metric"] == 100
    log = await t.ok("log_experiment", {"status": "keep", "description": "baseline"})
    assert log.data["baseline"] == {
        "run": 1,
        "metric": 100,
        "commit": log.data["git"]["kept_commit"],
        "delta_pct": None,
        "paired": None,
    }
    status = await t.ok("experiment_status")
    assert status.data["counts"]["keep"] == 1 and status.data["pending"] is None
    return progress


async def test_stdio_end_to_end(repo: Repo) -> None:
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "autoresearch", "mcp"],
        cwd=repo.root,
        env=dict(os.environ),
    )
    async with connect(params) as t:
        progress = await drive_a_session(t, repo)
    assert progress.events and any("warming up" in (m or "") for _, _, m in progress.events)
    assert all(total == 60 + 300 for _, total, _ in progress.events)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture
def http_server(repo: Repo, tmp_path: Path) -> Iterator[str]:
    port = _free_port()
    log = (tmp_path / "server.log").open("w")
    argv = ["--repo", str(repo.root), "mcp", "--transport", "http", "--port", str(port)]
    proc = subprocess.Popen(
        [sys.executable, "-m", "autoresearch", *argv],
        cwd=tmp_path,
        env={**os.environ, "AUTORESEARCH_MCP_TOKEN": HTTP_TOKEN},
        stdin=subprocess.DEVNULL,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    try:
        _wait_for_port(proc, port, tmp_path / "server.log")
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        proc.terminate()
        proc.wait(timeout=20)
        log.close()


def _wait_for_port(proc: subprocess.Popen[bytes], port: int, log: Path) -> None:
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        assert proc.poll() is None, log.read_text()
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return
        except OSError:
            time.sleep(0.05)
    raise AssertionError(f"the server never listened: {log.read_text()}")


async def test_streamable_http_on_loopback(http_server: str, repo: Repo) -> None:
    http = httpx2.AsyncClient(
        headers={"Authorization": f"Bearer {HTTP_TOKEN}"}, timeout=httpx2.Timeout(30, read=300)
    )
    async with http, connect(streamable_http_client(http_server, http_client=http)) as t:
        progress = await drive_a_session(t, repo)
        listed = await t.ok("run_list")
        assert listed.data["repo_root"] == str(repo.root)
    assert progress.events
