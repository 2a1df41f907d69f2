"""`autoresearch mcp --idle-exit SECONDS` as a real stdio process, driven by the real MCP client:
it ends by itself (exit 0, one line on stderr) once nobody asked anything for SECONDS, and never
while a job it started runs. `--max-running-jobs N` caps this server's live jobs with the
retryable `worker_busy` error."""

from __future__ import annotations

import os
import sys
import time
import uuid
from pathlib import Path

import anyio
import pytest
from mcp import StdioServerParameters, stdio_client
from mcp_helpers import connect

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "worker"))

from worker_helpers import agent, job_repo

from autoresearch.mcp.idle import IdleRule
from helpers import Repo

MARKER = "AUTORESEARCH_TEST_SERVER"
START_BOUND = 60.0  # a loaded 2-core machine starts python and the SDK slowly


@pytest.mark.parametrize(
    ("now", "in_flight", "due"),
    [
        (104.0, 0, False),  # quiet for 4 s of 5
        (105.0, 0, True),
        (200.0, 1, False),  # a request is being answered (a long job_wait)
        (200.0, 0, True),
    ],
)
def test_idle_rule(now: float, in_flight: int, due: bool) -> None:
    assert IdleRule(5.0).due(now, quiet_since=100.0, in_flight=in_flight) is due


def test_the_rule_polls_often_enough_for_short_and_long_limits() -> None:
    assert IdleRule(1.0).poll == 0.25 and IdleRule(600.0).poll == 1.0


def server_pids(marker: str) -> list[int]:
    """Live (not zombie) `autoresearch mcp` processes started with this test's marker."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            environ = (entry / "environ").read_bytes().split(b"\0")
            argv = (entry / "cmdline").read_bytes().split(b"\0")
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue
        if f"{MARKER}={marker}".encode() in environ and b"mcp" in argv and state != "Z":
            found.append(int(entry.name))
    return found


async def gone_within(marker: str, limit: float) -> float:
    """Seconds until no server of `marker` lives (fails past `limit`)."""
    began = time.monotonic()
    while server_pids(marker):
        assert time.monotonic() - began < limit, "the idle server never exited"
        await anyio.sleep(0.1)
    return time.monotonic() - began


def params(repo: Repo, marker: str, *options: str) -> StdioServerParameters:
    return StdioServerParameters(
        command=sys.executable,
        args=["-m", "autoresearch", "mcp", *options],
        cwd=repo.root,
        env={**os.environ, MARKER: marker},
    )


@pytest.fixture
def repo(tmp_path: Path) -> Repo:
    return job_repo(tmp_path / "repo")


@pytest.mark.anyio
async def test_an_idle_server_exits_by_itself(repo: Repo, tmp_path: Path) -> None:
    marker, log = uuid.uuid4().hex, tmp_path / "stderr.log"
    with log.open("w") as errlog:
        # the shortest idle time the option takes (its polls every 0.25 s)
        async with connect(stdio_client(params(repo, marker, "--idle-exit", "1"), errlog)) as t:
            await t.ok("job_list")
            answered = time.monotonic()
            await anyio.sleep(0.5)
            assert server_pids(marker), "exited before its idle time"
            await gone_within(marker, START_BOUND)
            assert time.monotonic() - answered >= 0.95  # the server timed from just before
    text = log.read_text()
    assert "autoresearch mcp: no request for 1 s and no job running: exiting" in text
    assert "Traceback" not in text


@pytest.mark.anyio
async def test_a_server_with_a_running_job_stays_then_exits(repo: Repo, tmp_path: Path) -> None:
    marker, gate = uuid.uuid4().hex, tmp_path / "gate"
    job = {
        "prompt": "Set VALUE to 2.",
        "agent": agent("wait", str(gate), "src/app.py", "VALUE = 2"),
        "sandbox": "none",  # the agent waits for a gate file outside the repository
    }
    options = ("--idle-exit", "1", "--max-running-jobs", "1")
    with (tmp_path / "stderr.log").open("w") as errlog:
        async with connect(stdio_client(params(repo, marker, *options), errlog)) as t:
            await t.ok("job_start", job)
            message = await t.error("job_start", job)
            assert message == (
                "worker_busy (retryable): this server already has 1 live jobs "
                "(--max-running-jobs 1); retry later"
            )
            await anyio.sleep(2.5)  # 2.5 idle periods with no request: the job keeps it up
            assert server_pids(marker)
            gate.touch()  # the job ends; a second later the server does
            await gone_within(marker, START_BOUND)
    assert (repo.root / "src/app.py").read_text() == "VALUE = 2\n"


@pytest.mark.anyio
async def test_a_host_that_closes_stdin_still_ends_the_server_at_once(
    repo: Repo, tmp_path: Path
) -> None:
    marker = uuid.uuid4().hex
    with (tmp_path / "stderr.log").open("w") as errlog:
        async with connect(stdio_client(params(repo, marker, "--idle-exit", "600"), errlog)) as t:
            await t.ok("job_list")
            assert server_pids(marker)
    assert await gone_within(marker, 10.0) < 10.0  # long before its idle time
    assert "Traceback" not in (tmp_path / "stderr.log").read_text()
