"""Helpers for the worker tests: a repository, fake-agent specs, and process checks by group."""

from __future__ import annotations

import shlex
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from helpers import Repo, make_repo

FAKE = Path(__file__).resolve().parent / "fakes" / "job_agent.py"
# The `hang` fake notes its pids and group in a file outside the repository, and `wait` waits
# for a gate file there: neither is visible in the OS sandbox (and a boxed child's pids are its
# box's own), so such a job runs unboxed.
UNBOXED = ("--sandbox", "none")


def agent(*args: str) -> str:
    """A `cmd:` agent spec running the fake with `args`."""
    return "cmd:" + shlex.join([sys.executable, str(FAKE), *args])


def job_repo(path: Path) -> Repo:
    repo = make_repo(path)
    repo.write("src/app.py", "VALUE = 1\n")
    repo.write("docs/readme.md", "docs\n")
    repo.commit("layout")
    return repo


def group_members(pgid: int) -> list[int]:
    """Processes of group `pgid` that still run, as `ps` sees them (zombies left out)."""
    out = subprocess.run(
        ["ps", "-e", "-o", "pid=,pgid=,stat="], capture_output=True, text=True, check=True
    ).stdout
    rows = [line.split() for line in out.splitlines()]
    return [
        int(r[0]) for r in rows if len(r) >= 3 and int(r[1]) == pgid and not r[2].startswith("Z")
    ]


def wait_for_file(path: Path, limit: float = 20.0) -> str:
    end = time.monotonic() + limit
    while time.monotonic() < end:
        if path.exists() and path.read_text().strip():
            return path.read_text()
        time.sleep(0.05)
    raise AssertionError(f"{path} never appeared")


NEW_PY_CHECK = "sh scripts/check.sh"  # not read-only: Claude Code needs the job's grant


async def new_py_job(t: Any, agent: str, model: str) -> Any:
    """Start the job "create src/new.py with VALUE = 2, then run the check" through the MCP
    client `t` and wait for its verdict (the real-agent job tests)."""
    started = await t.ok(
        "job_start",
        {
            "prompt": "Create src/new.py with VALUE = 2, then run the check.",
            "verification_policy": {"task_kind": "modifying"},
            "agent": agent,
            "model": model,
            "scoped_patch": {"paths": ["src"]},
            "checks": [{"command": NEW_PY_CHECK, "timeout_seconds": 60}],
            "timeout_seconds": 240,
        },
    )
    return await t.ok("job_wait", {"job_id": started.data["job_id"], "timeout_ms": 240_000})
