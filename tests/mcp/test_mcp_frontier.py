"""MCP run_status of a frontier run: its archive, best first, and each iteration's parent."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from mcp_helpers import connect

from autoresearch.agents import AgentConfig, make_agent
from autoresearch.mcp.server import build_server
from autoresearch.supervisor.loop import LoopLimits, StopSignal, run_loop
from autoresearch.supervisor.prepare import prepare
from helpers import QuietObserver, Repo

pytestmark = pytest.mark.anyio
AGENT = f"cmd:{sys.executable} {Path(__file__).parents[1] / 'supervisor/fakes/frontier_agent.py'}"


async def test_run_status_shows_a_frontier_runs_archive_and_parents(
    repo: Repo, mission_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FRONTIER_RULE", json.dumps({"1": [5], "6": [-1]}))
    monkeypatch.setenv("FRONTIER_STATE", str(tmp_path / "visits.json"))
    monkeypatch.setenv("FRONTIER_LOG", str(tmp_path / "log"))
    limits = LoopLimits(max_iterations=3, strategy="frontier")
    with prepare(mission_dir, run_tag="F1") as h:
        run_loop(h, make_agent(AgentConfig(AGENT)), limits, QuietObserver(), StopSignal())
        run_id, baseline = h.run_id, h.run.baseline_commit
    async with connect(build_server(repo.root)) as t:
        details = await t.ok("run_status", {"run_id": run_id})
    archive = details.data["archive"]
    assert [e["score"] for e in archive] == [6.0, 1.0]
    assert archive[0]["commit"] == details.data["last_kept_commit"]
    assert [it.get("parent") for it in details.data["iterations"]] == [
        None, baseline, archive[0]["commit"], archive[0]["commit"]
    ]  # fmt: skip
    assert "tries" in details.text and "from" in details.text
