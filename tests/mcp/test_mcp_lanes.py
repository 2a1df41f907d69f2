"""Each lane of `run --lanes K` – what it is doing, its last decision – and what a discard
without a reading came to (`not run: replay conflict`) read the same in every door: the run's
summary, `status`, `status --json` and the MCP tool `run_status` (the real MCP client)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from mcp_helpers import connect

from autoresearch.mcp.server import build_server
from helpers import GIT_ENV, Repo, cli, sandbox_text, until

pytestmark = pytest.mark.anyio

AGENT = f"cmd:{sys.executable} {Path(__file__).parents[1] / 'supervisor/fakes/lane_work_agent.py'}"
RUN_ID = "missions-demo-t1"
EVALUATOR = textwrap.dedent(
    """\
    import json
    print(json.dumps({"pass": True, "score": float(open("value.txt").read())}))
    """
)


def _json_status(repo: Repo) -> dict[str, Any]:
    done = cli("status", RUN_ID, "--json", cwd=repo.root)
    assert done.returncode == 0, done.stderr
    return dict(json.loads(done.stdout))


def _last_decision(repo: Repo, lane: int) -> str | None:
    done = cli("status", RUN_ID, "--json", cwd=repo.root)
    if done.returncode != 0:
        return None  # not prepared yet
    lanes = {x["lane"]: x for x in json.loads(done.stdout)["lanes"]}
    return lanes[lane]["last_decision"] if lane in lanes else None


def _row(table: str, lane: int) -> list[str]:
    """The cells of a lane's row in a lanes table (columns split by two spaces)."""
    line = next(x for x in table.splitlines() if x.startswith(f"{lane}  "))
    return [cell.strip() for cell in line.split("  ") if cell.strip()]


def _lanes(data: dict[str, Any]) -> dict[int, tuple[str, str | None, str | None]]:
    return {x["lane"]: (x["state"], x["last_decision"], x["last_reason"]) for x in data["lanes"]}


async def test_every_door_shows_each_lane_and_a_replay_conflict(repo: Repo, tmp_path: Path) -> None:
    repo.write("scripts/score.py", EVALUATOR)
    repo.mission(sandbox=sandbox_text("python3 scripts/score.py"))
    gate = tmp_path / "gate"
    # both lanes write value.txt: lane 1 (11) is kept at once; lane 2 (21) waits for the gate,
    # then cannot be replayed onto lane 1's keep
    env = {**os.environ, **GIT_ENV, "LANE_EDIT": "value", "LANE_SLEEP": "0",
           "LANE_GATED": "2", "LANE_GATE": str(gate)}  # fmt: skip
    argv = [sys.executable, "-m", "autoresearch", "run", "missions/demo", "--agent", AGENT,
            "--run-tag", "T1", "--lanes", "2", "--max-iterations", "2",
            "--sandbox", "none"]  # fmt: skip
    proc = subprocess.Popen(argv, cwd=repo.root, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)  # fmt: skip
    try:
        until(lambda: _last_decision(repo, 1) == "keep", 60, "lane 1's keep")
        async with connect(build_server(repo.root)) as t:
            # while lane 2's session runs: lane 1 is idle after its keep, lane 2 is an agent
            live = _json_status(repo)
            mcp = await t.ok("run_status", {"run_id": RUN_ID})
            text = cli("status", RUN_ID, cwd=repo.root).stdout
            expected = {1: ("idle", "keep", "score improved over last kept score"),
                        2: ("agent", None, None)}  # fmt: skip
            assert _lanes(live) == _lanes(mcp.data) == expected
            assert live["lanes"][1]["detail"].startswith("session 1 from ")
            for table in (text, mcp.text):
                assert _row(table, 1)[:3] == ["1", "idle", "keep #1"]
                assert _row(table, 2)[:3] == ["2", "agent", "-"]
                assert "session 1 from " in _row(table, 2)[-1]
            gate.touch()
            out, err = proc.communicate(timeout=120)
            assert proc.returncode == 0, err
            # the end: lane 2's candidate was discarded without a reading, and says so
            final = _json_status(repo)
            mcp = await t.ok("run_status", {"run_id": RUN_ID})
            text = cli("status", RUN_ID, cwd=repo.root).stdout
    finally:
        gate.touch()
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    expected = {1: ("stopped", "keep", "score improved over last kept score"),
                2: ("stopped", "discard", "replay conflict")}  # fmt: skip
    assert _lanes(final) == _lanes(mcp.data) == expected
    for data in (final, mcp.data):
        assert [it["evaluation"] for it in data["iterations"]] == [
            "pass", "pass", "not run: replay conflict"
        ]  # fmt: skip
        assert data["lanes"][1]["last_evaluation"] == "not run: replay conflict"
    for table in (text, mcp.text, out):  # status, run_status and the run's own summary
        assert _row(table, 1)[:3] == ["1", "stopped", "keep #1"], table
        assert _row(table, 2)[:3] == ["2", "stopped", "discard #2 (replay conflict)"], table
    for table in (text, mcp.text):  # the iterations table's eval column
        row = next(x for x in table.splitlines() if x.startswith("2  discard"))
        assert "not run: replay conflict" in row, table
