"""A host that goes away is not a crash: `autoresearch mcp` over stdio, a real process on real
pipes, whose client closes its stdin (EOF), stops reading its stdout (a broken pipe), or both,
idle or in the middle of run_experiment. The server ends quietly – no line, no traceback, no
crash log – the benchmark it started is stopped, and the journal is whole with the session free
for the next run (the cancelled run is not left waiting for a log).

The JSON-RPC lines are written by hand: the SDK's client would close both pipes together and
then kill the server, which hides what the server does on its own."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import IO, Any

import anyio
import pytest
from mcp import StdioServerParameters
from mcp_helpers import connect, mcp_repo

from autoresearch.crash import EXIT_CLOSED_PIPE
from helpers import Repo, pid_alive, until


class Host:
    """The client end of a stdio server: requests written to its stdin, replies read from its
    stdout."""

    def __init__(self, repo: Repo, tmp: Path, pidfile: Path) -> None:
        env = {**os.environ, "TMPDIR": str(tmp), "PIDFILE": str(pidfile)}
        env.pop("PYTHONUNBUFFERED", None)  # as hosts start it
        self.stderr = tmp / "server-stderr.txt"
        with self.stderr.open("w") as err:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "autoresearch", "mcp"],
                cwd=repo.root, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                stderr=err,
            )  # fmt: skip
        self.stdin: IO[bytes] = self.proc.stdin  # type: ignore[assignment]
        self.stdout: IO[bytes] = self.proc.stdout  # type: ignore[assignment]
        self.next_id = 0

    def send(self, method: str, params: dict[str, Any] | None = None, notify: bool = False) -> int:
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method, "params": params or {}}
        if not notify:
            self.next_id += 1
            message["id"] = self.next_id
        self.stdin.write(json.dumps(message).encode() + b"\n")
        self.stdin.flush()
        return self.next_id

    def reply(self, request_id: int) -> dict[str, Any]:
        while True:
            line = self.stdout.readline()
            assert line, "the server closed its stdout"
            message: dict[str, Any] = json.loads(line)
            if message.get("id") == request_id:
                return message

    def start_session(self) -> None:
        init = {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "host", "version": "0"},
        }
        self.reply(self.send("initialize", init))
        self.send("notifications/initialized", notify=True)
        args = {"name": "n", "metric": "score"}
        done = self.reply(self.send("tools/call", {"name": "init_experiment", "arguments": args}))
        assert not done["result"].get("isError"), done

    def start_run(self) -> None:
        """run_experiment with progress (a notification a second) on a benchmark that hangs."""
        call = {"name": "run_experiment", "arguments": {}, "_meta": {"progressToken": "p"}}
        self.send("tools/call", call)


def _whole_and_free(repo: Repo) -> None:
    doctor = subprocess.run(
        [sys.executable, "-m", "autoresearch", "doctor"], cwd=repo.root, capture_output=True
    )
    assert doctor.returncode == 0, doctor.stdout
    status = subprocess.run(
        [sys.executable, "-m", "autoresearch", "exp", "status", "--json"],
        cwd=repo.root, capture_output=True, text=True, check=True,
    )  # fmt: skip
    assert json.loads(status.stdout)["pending"] is None


def _harness_pids(pidfile: Path) -> list[int]:
    until(lambda: pidfile.exists() and len(pidfile.read_text().split()) == 2, what="harness")
    return [int(p) for p in pidfile.read_text().split()]


@pytest.mark.parametrize(
    ("mid_call", "gone", "codes"),
    [
        (False, "stdin", {0}),  # EOF: the host ended the session
        (True, "stdin", {0}),
        (True, "stdout", {EXIT_CLOSED_PIPE}),  # the reader left; stdin closes after
        (True, "both", {0, EXIT_CLOSED_PIPE}),  # the host died: which end is seen first varies
    ],
)
def test_a_host_that_goes_away_ends_the_server_quietly(
    tmp_path: Path, mid_call: bool, gone: str, codes: set[int]
) -> None:
    repo = mcp_repo(tmp_path / "repo")
    tmp, pidfile = tmp_path / "tmp", tmp_path / "pids"
    tmp.mkdir()
    host = Host(repo, tmp, pidfile)
    host.start_session()
    pids: list[int] = []
    if mid_call:
        repo.write("slow.flag", "")
        host.start_run()
        pids = _harness_pids(pidfile)
    if gone in ("stdout", "both"):
        host.stdout.close()
    if gone == "stdout":
        # the next progress notification meets the broken pipe: the call is cancelled then,
        # while the host still holds stdin open
        until(lambda: not any(pid_alive(p) for p in pids), what="harness stopped")
    host.stdin.close()
    assert host.proc.wait(timeout=60) in codes
    assert host.stderr.read_text() == ""
    assert not (repo.root / ".autoresearch/crash").exists()
    assert not (tmp / f"autoresearch-crash-{os.getuid()}").exists()
    assert not any(pid_alive(p) for p in pids)
    _whole_and_free(repo)


@pytest.mark.anyio
async def test_the_sdk_client_leaving_mid_call_stops_the_benchmark(tmp_path: Path) -> None:
    """The SDK's own stdio client leaving while run_experiment runs (it closes the server's
    stdin, then terminates it if it lingers): the benchmark stops, nothing crashed."""
    repo = mcp_repo(tmp_path / "repo")
    tmp, pidfile = tmp_path / "tmp", tmp_path / "pids"
    tmp.mkdir()
    env = {**os.environ, "TMPDIR": str(tmp), "PIDFILE": str(pidfile)}
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "autoresearch", "mcp"], cwd=repo.root, env=env
    )
    async with connect(params) as t:
        await t.ok("init_experiment", {"name": "n", "metric": "score"})
        repo.write("slow.flag", "")
        async with anyio.create_task_group() as tg:
            tg.start_soon(t.client.call_tool, "run_experiment", {})
            pids = await anyio.to_thread.run_sync(_harness_pids, pidfile)
            tg.cancel_scope.cancel()
    until(lambda: not any(pid_alive(p) for p in pids), what="harness stopped")
    assert not (repo.root / ".autoresearch/crash").exists()
    assert not (tmp / f"autoresearch-crash-{os.getuid()}").exists()
    _whole_and_free(repo)
