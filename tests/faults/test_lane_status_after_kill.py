"""Kill -9 of a real `run --lanes 2` driver right after it committed a lane's keep (failpoint
`step.after_decided@2`: the 1st decision is the baseline's), before it published its lanes:
`status RUN` (table and --json) and the MCP tool `run_status` (the real client) show each lane
consistent with the journal at that instant – its last decision and its counts are the
journal's, a judged lane is between sessions, and with no driver no lane claims to be in a
session or a reading – and `resume` then finishes the run soundly."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
from test_lane_tree_kills import BONUS_AGENT, assert_lanes_sound, details, lane_mission

from autoresearch.mcp.server import build_server
from helpers import GIT_ENV, Repo, cli, resume_detached, run_children

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "mcp"))

from mcp_helpers import connect

RUN_ID = "missions-demo-s1"


def _row(table: str, lane: int) -> list[str]:
    line = next(x for x in table.splitlines() if x.startswith(f"{lane}  "))
    return [cell.strip() for cell in line.split("  ") if cell.strip()]


def _run_status(repo: Path) -> dict[str, Any]:
    async def ask() -> dict[str, Any]:
        async with connect(build_server(repo)) as t:
            return dict((await t.ok("run_status", {"run_id": RUN_ID})).data)

    return anyio.run(ask, backend="asyncio")


def assert_lanes_agree_with_the_journal(d: dict[str, Any]) -> None:
    """Each lane row's last decision and counts are those of its iterations in the journal."""
    judged: dict[int, list[dict[str, Any]]] = {}
    for it in d["iterations"][1:]:
        judged.setdefault(it["agent"]["lane"], []).append(it)
    for row in d["lanes"]:
        mine = judged.get(row["lane"], [])
        last = mine[-1] if mine else None
        assert row["last_iteration"] == (last and last["iteration"]), (row, mine)
        assert row["last_decision"] == (last and last["decision"]), (row, mine)
        assert row["iterations"] == len(mine), (row, mine)
        assert row["keeps"] == sum(it["decision"] == "keep" for it in mine), (row, mine)


def test_status_of_lanes_whose_driver_was_killed_after_a_keep_agrees_with_the_journal(
    repo: Repo,
) -> None:
    lane_mission(repo)
    # lane 1 commits at once and is kept; lane 2 is still in its session when the kill comes
    env = {**os.environ, **GIT_ENV, "LANE_PLAN": "1:bonus:0,2:bonus:30",
           "AUTORESEARCH_FAILPOINTS": "step.after_decided@2"}  # fmt: skip
    argv = [sys.executable, "-m", "autoresearch", "run", "missions/demo", "--agent",
            BONUS_AGENT, "--run-tag", "S1", "--lanes", "2", "--max-iterations", "2"]  # fmt: skip
    killed = subprocess.run(argv, cwd=repo.root, env=env, capture_output=True, text=True,
                            timeout=180, start_new_session=True)  # fmt: skip
    try:
        assert killed.returncode == -signal.SIGKILL, killed.stderr
        check_after_the_kill(repo.root)
    finally:
        for pid in run_children(repo.root):  # lane 2's agent outlives its killed driver
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
    done = resume_detached(repo.root, RUN_ID)
    assert done.returncode == 0, done.stderr
    d = assert_lanes_sound(repo.root, RUN_ID, 2)
    assert [it["decision"] for it in d["iterations"]] == ["baseline", "keep", "interrupted"]
    assert_lanes_agree_with_the_journal(d)
    assert {x["state"] for x in d["lanes"]} == {"stopped"}


def check_after_the_kill(repo: Path) -> None:
    d = details(repo, RUN_ID)
    assert (d["status"], d["driver_alive"]) == ("running", False)
    assert [it["decision"] for it in d["iterations"]] == ["baseline", "keep"]
    assert_lanes_agree_with_the_journal(d)
    one, two = d["lanes"]
    assert (one["state"], one["last_decision"], one["detail"]) == ("idle", "keep", None), one
    # lane 2's session was cut off with the driver: nothing of it runs, resume takes it up
    assert (two["state"], two["last_decision"]) == ("waiting", None), two
    assert two["detail"].startswith("no driver: resume takes it up (it was agent: session 1"), two
    assert _run_status(repo)["lanes"] == d["lanes"]
    table = cli("status", RUN_ID, cwd=repo).stdout
    assert _row(table, 1)[1:4] == ["idle", "keep #1", "1 (1 kept)"], table
    assert _row(table, 2)[1:4] == ["waiting", "-", "0 (0 kept)"], table
