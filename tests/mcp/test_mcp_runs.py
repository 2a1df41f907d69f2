"""run_list / run_status / run_stop over MCP on a real supervised run."""

from __future__ import annotations

from pathlib import Path

import pytest
from mcp_helpers import connect

from autoresearch.mcp.server import build_server
from autoresearch.supervisor.lifecycle import list_runs, stop
from autoresearch.supervisor.prepare import prepare
from helpers import Repo

pytestmark = pytest.mark.anyio


async def test_list_status_and_stop_a_run(repo: Repo, mission_dir: Path) -> None:
    async with connect(build_server(repo.root)) as t:
        empty = await t.ok("run_list")
        assert empty.data["runs"] == [] and "no runs yet" in empty.text
        assert await t.error("run_stop") == "no active run to stop"

        with prepare(mission_dir, run_tag="T1") as handle:
            run_id = handle.run_id
            listed = await t.ok("run_list")
            assert [r["run_id"] for r in listed.data["runs"]] == [run_id]
            assert listed.data["runs"][0]["status"] == "running" and run_id in listed.text

            live = await t.ok("run_status", {"run_id": run_id})
            assert live.data["driver_alive"] is True
            assert live.data["iterations_total"] == len(live.data["iterations"]) == 1
            assert live.data["baseline_score"] == 1 and "driver:     alive" in live.text
            none = await t.ok("run_status", {"run_id": run_id, "last_iterations": 0})
            assert none.data["iterations"] == [] and none.data["iterations_total"] == 1

            asked = await t.ok("run_stop", {"run_id": run_id, "reason": "enough"})
            assert asked.data == {
                "run_id": run_id,
                "status": "running",
                "stop_reason": "operator stop",
                "note": "enough",
                "requested": True,
            }
            assert asked.text.startswith(f"stop requested for {run_id}")

        stopped = await t.ok("run_stop", {"run_id": run_id})
        assert stopped.data["status"] == "stopped" and stopped.data["requested"] is False
        assert stopped.text == f"{run_id}: stopped (operator stop)"
        details = await t.ok("run_status", {"run_id": run_id})
        assert details.data["status"] == "stopped" and details.data["driver_alive"] is False

        again = await t.error("run_stop", {"run_id": run_id})
        assert again == f"run {run_id} is already stopped (operator stop)"
        assert await t.error("run_status", {"run_id": "nope"}) == "unknown run: nope"
        assert await t.error("run_stop", {"run_id": "nope"}) == "unknown run: nope"


async def test_run_tools_outside_a_repository_say_so(tmp_path: Path) -> None:
    async with connect(build_server(tmp_path)) as t:
        message = await t.error("run_list")
        assert message == f"not inside a git repository: {tmp_path}"


async def test_run_list_shows_only_the_newest_runs_when_asked(
    repo: Repo, mission_dir: Path
) -> None:
    """`last` as `status --last N` has it: the newest N, oldest first; 0 none; omitted, all."""
    ids = []
    for tag in ("T1", "T2", "T3"):
        with prepare(mission_dir, run_tag=tag) as handle:
            ids.append(handle.run_id)
        stop(repo.root, handle.run_id)
    async with connect(build_server(repo.root)) as t:
        every = await t.ok("run_list")
        assert [r["run_id"] for r in every.data["runs"]] == ids
        newest = await t.ok("run_list", {"last": 2})
        assert [r["run_id"] for r in newest.data["runs"]] == ids[1:]
        assert ids[0] not in newest.text and ids[2] in newest.text
        assert (await t.ok("run_list", {"last": 0})).data["runs"] == []
        assert (await t.ok("run_list", {"last": 9})).data["runs"] == every.data["runs"]
    assert [r.summary.run_id for r in list_runs(repo.root, last=1)] == ids[2:]
