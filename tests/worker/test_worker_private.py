"""A delegation job's state (journal rows, prompt, agent log, check logs, patch, worktree) is
the user's alone under a permissive umask, like the rest of `.autoresearch/`; what the job
tools hand back is redacted like every MCP result."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "mcp"))

from mcp_helpers import connect
from worker_helpers import agent, job_repo

from autoresearch.mcp.server import build_server
from helpers import loose_modes

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize("isolation", ["in_place", "worktree"])
async def test_job_state_is_private(tmp_path: Path, open_umask: None, isolation: str) -> None:
    repo = job_repo(tmp_path / "repo")
    args = {
        "prompt": "Set VALUE to 2 in src/app.py.",
        "verification_policy": {"task_kind": "modifying"},
        "agent": agent("edit", "src/app.py", "VALUE = 2"),
        "scoped_patch": {"paths": ["src"]},
        "checks": [{"name": "v", "command": "grep -q 'VALUE = 2' src/app.py"}],
        "isolation": isolation,
    }
    async with connect(build_server(repo.root)) as t:
        started = await t.ok("job_start", args)
        done = await t.ok("job_wait", {"job_id": started.data["job_id"], "timeout_ms": 30_000})
    assert done.data["outcome"]["status"] == "accepted", done.text
    state = repo.root / ".autoresearch"
    names = {p.name for p in state.rglob("*")}
    assert {"agent.log", "changes.patch", "check-01.log"} <= names, names
    assert loose_modes(state) == []


async def test_a_key_the_agent_wrote_is_masked_in_the_job_results(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    planted = "worker-planted-secret-0123456789"
    monkeypatch.setenv("SOME_SERVICE_API_KEY", planted)
    repo = job_repo(tmp_path / "repo")
    args = {
        "prompt": "Configure the key.",
        "verification_policy": {"task_kind": "modifying"},
        "agent": agent("edit", "src/app.py", f"KEY = '{planted}'"),
        "scoped_patch": {"paths": ["src"]},
        "include_diff": True,
    }
    async with connect(build_server(repo.root)) as t:
        started = await t.ok("job_start", args)
        job = {"job_id": started.data["job_id"]}
        done = await t.ok("job_wait", {**job, "timeout_ms": 30_000})
        tail = await t.ok("job_tail", job)
    shown = done.text + json.dumps(done.data) + tail.text + json.dumps(tail.data)
    assert planted not in shown
    assert "KEY = '[REDACTED]'" in done.data["outcome"]["evidence"]["diff"]
    assert planted in (repo.root / "src/app.py").read_text()  # the work itself is untouched
