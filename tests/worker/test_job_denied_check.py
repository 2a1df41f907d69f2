"""A session that ended normally but had a tool call denied is no executor failure: the job
is judged by its own checks, run by the worker (F4 of issue 37). The fake `claude` on PATH
makes the right change, is denied running the check itself, then ends with a success result."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "mcp"))

from mcp_helpers import connect
from worker_helpers import job_repo

from autoresearch.mcp.server import build_server

pytestmark = pytest.mark.anyio

DENIED_BIN = Path(__file__).resolve().parent / "fakes" / "denied_bin"
CHECK = "python3 -c 'import app; assert app.add(2, 3) == 5'"


async def test_a_denied_check_command_does_not_fail_a_right_change(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", f"{DENIED_BIN}{os.pathsep}{os.environ['PATH']}")
    repo = job_repo(tmp_path / "repo")
    repo.write("app.py", "def add(a, b):\n    return a - b\n")
    repo.commit("wrong add")
    async with connect(build_server(repo.root)) as t:
        started = await t.ok(
            "job_start",
            {
                "prompt": "Fix add in app.py.",
                "agent": "claude",
                "verification_policy": {"task_kind": "modifying"},
                "scoped_patch": {"paths": ["app.py"]},
                "checks": [{"command": CHECK, "timeout_seconds": 60}],
            },
        )
        done = await t.ok("job_wait", {"job_id": started.data["job_id"], "timeout_ms": 60_000})
    outcome = done.data["outcome"]
    assert (outcome["status"], outcome["reason_codes"]) == ("accepted", ["verification_passed"])
    assert outcome["verification"]["executor"] == "passed"
    assert [c["exit_code"] for c in outcome["evidence"]["checks"]] == [0]
    # the denial is still reported, as evidence beside the verdict
    assert outcome["evidence"]["executor"]["denials"] == [f"Bash: {CHECK}"]
