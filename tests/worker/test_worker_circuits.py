"""Circuit breakers: classified from structured failures, persisted with a checksum, a
corrupt state ignored; through the real MCP client with real shell timeouts."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "mcp"))

from mcp_helpers import connect
from worker_helpers import job_repo

from autoresearch.errors import ContractError, GitError, NotFoundError, ProcessError, RefusedError
from autoresearch.mcp.server import build_server
from autoresearch.worker.tools import circuits
from autoresearch.worker.tools.base import Workspace
from autoresearch.worker.tools.circuits import Breakers, Circuit, ErrorClass
from helpers import Repo


@pytest.mark.parametrize(
    ("exc", "cls"),
    [
        (ContractError("autoresearch_path_outside_sandbox: x"), None),
        (NotFoundError("no such file"), None),
        (RefusedError("timeout internal git"), None),  # words in a message never classify
        (GitError("git diff failed"), ErrorClass.GIT),
        (ProcessError("command not found: rg"), ErrorClass.UNAVAILABLE),
        (RuntimeError("timeout"), ErrorClass.INTERNAL),
    ],
)
def test_classify_exception(exc: BaseException, cls: ErrorClass | None) -> None:
    assert circuits.classify_exception(exc) is cls


def test_classify_result() -> None:
    assert circuits.classify_result({"failure_kind": "timeout"}) is ErrorClass.TIMEOUT
    assert circuits.classify_result({"failure_kind": "test_failure"}) is None
    assert circuits.classify_result({"stdout_tail": "timeout"}) is None


def test_state_roundtrip_and_damaged_files_are_ignored() -> None:
    state = {"shell/timeout": Circuit(5, 100.0), "search/git": Circuit(2, None)}
    text = circuits.encode(state)
    assert circuits.decode(text) == state
    data = json.loads(text)
    tampered = json.dumps({**data, "circuits": data["circuits"].replace("5", "1")})
    for damaged in [
        "",
        "{",
        text[: len(text) // 2],
        tampered,
        json.dumps({**data, "version": 99}),
        "[]",
        '{"version": 1}',
    ]:
        assert circuits.decode(damaged) == {}, damaged


@pytest.fixture
def repo(tmp_path: Path) -> Repo:
    return job_repo(tmp_path / "repo")


def test_open_half_open_and_closed(repo: Repo) -> None:
    now = [1000.0]
    b = Breakers(Workspace(repo.root), clock=lambda: now[0])
    for _ in range(circuits.THRESHOLD - 1):
        b.record("search", ErrorClass.GIT)
    b.check("search")  # below the threshold: still closed
    b.record("search", ErrorClass.GIT)
    with pytest.raises(
        RefusedError, match="autoresearch_circuit_open: search is paused after 5 git"
    ):
        b.check("search")
    b.check("read_pack")  # per tool
    now[0] += circuits.COOLDOWN_SECONDS + 1
    b.check("search")  # half-open: one trial goes through
    b.record("search", ErrorClass.GIT)  # it failed: open again
    with pytest.raises(RefusedError):
        b.check("search")
    now[0] += circuits.COOLDOWN_SECONDS + 1
    b.record("search", None)  # a trial that worked closes the tool's circuits
    b.check("search")
    assert json.loads((repo.root / ".autoresearch/worker/circuits.json").read_text())["sha256"]


@pytest.mark.anyio
async def test_repeated_shell_timeouts_open_the_circuit_with_an_alternative(repo: Repo) -> None:
    state = repo.root / ".autoresearch" / "worker" / "circuits.json"
    async with connect(build_server(repo.root)) as t:
        for _ in range(circuits.THRESHOLD):
            done = await t.ok("shell", {"command": "sleep 30", "timeout_seconds": 0.2})
            assert done.data["failure_kind"] == "timeout"
        refused = await t.error("shell", {"command": "echo hi"})
        assert refused.startswith("autoresearch_circuit_open: shell is paused after 5 timeout")
        assert "job_start" in refused
        assert (await t.ok("search", {"pattern": "VALUE"})).data["total_matches"] == 1
        state.write_text('{"version": 1, "sha256": "0", "circuits": "{}"}')  # damaged: ignored
        assert (await t.ok("shell", {"command": "echo hi"})).data["ok"]
    rows = [json.loads(x) for x in (state.parent / "metrics.jsonl").read_text().splitlines()]
    assert [r["error_kind"] for r in rows if r["tool"] == "shell"] == [
        *["timeout"] * 5,
        "autoresearch_circuit_open",
        None,
    ]
