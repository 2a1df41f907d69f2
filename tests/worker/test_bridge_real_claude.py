"""A Claude Code job on an OpenAI-compatible gateway: the real pinned Claude Code CLI talks to
the worker's bridge, which talks to the scripted Chat Completions server on 127.0.0.1; the job
writes a file, runs its check, and comes back accepted – seen from the MCP client."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "agents"))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "mcp"))

from mcp_helpers import connect
from test_real_agents import AGENT_BIN, require
from worker_helpers import NEW_PY_CHECK, job_repo, new_py_job

from autoresearch.mcp.server import build_server
from helpers import cli
from model_server import API_KEY, MODEL, Exchange, ModelServer, Reply, ToolCall, claude_env

pytestmark = pytest.mark.anyio
CHECK = NEW_PY_CHECK


async def test_a_claude_job_runs_on_the_gateway_through_the_bridge(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    require("claude")
    repo = job_repo(tmp_path / "repo")
    repo.write("scripts/check.sh", "grep -q 'VALUE = 2' src/new.py\n")
    repo.commit("check")

    def plan(ex: Exchange) -> Reply:
        if ex.api != "chat":  # anything but Chat Completions means the bridge was bypassed
            raise AssertionError(f"a {ex.api} request reached the gateway")
        steps = [
            ToolCall("Write", {"file_path": f"{repo.root}/src/new.py", "content": "VALUE = 2\n"}),
            ToolCall("Bash", {"command": CHECK, "description": "Run the job's check"}),
        ]
        done = len(ex.tool_results)
        return Reply(tool_calls=(steps[done],)) if done < len(steps) else Reply(text="done")

    prices = {"prices": {MODEL: {"prompt": 1.0, "completion": 2.0}}}  # $ per million tokens
    (tmp_path / "config" / "autoresearch").mkdir(parents=True)
    (tmp_path / "config" / "autoresearch" / "gateway.json").write_text(json.dumps(prices))
    with ModelServer(plan) as server:
        env = claude_env(server, tmp_path / "claude-home")
        # The agent must not reach the model by itself: its own base URL points nowhere.
        env["ANTHROPIC_BASE_URL"] = "http://127.0.0.1:9"
        scratch = tmp_path / "agent-tmp"
        scratch.mkdir()
        env.update(
            PATH=f"{AGENT_BIN}:{os.environ['PATH']}",
            TMPDIR=str(scratch),
            XDG_CONFIG_HOME=str(tmp_path / "config"),
            AUTORESEARCH_GATEWAY_URL=f"{server.url}/v1",
            AUTORESEARCH_GATEWAY_API_KEY=API_KEY,
            AUTORESEARCH_GATEWAY_MODELS=MODEL,
            AUTORESEARCH_GATEWAY_CLAUDE_JOBS="1",
        )
        for key, value in env.items():  # the job's runner inherits the server's environment
            monkeypatch.setenv(key, value)
        async with connect(build_server(repo.root)) as t:
            done = await new_py_job(t, "claude", MODEL)
    assert not server.errors, server.errors
    outcome = done.data["outcome"]
    assert outcome["status"] == "accepted", (outcome, done.text)
    assert outcome["evidence"]["changed_files"] == ["src/new.py"]
    chats = [ex for ex in server.exchanges if ex.body.get("tools")]
    assert chats, "the agent's turns reached the gateway as Chat Completions with tools"
    assert any(ex.body.get("stream") for ex in chats)  # Claude Code streams; so does the bridge
    assert {"Write", "Bash"} <= {t["function"]["name"] for t in chats[0].body["tools"]}
    results = [r for ex in server.exchanges for r in ex.tool_results]
    assert len(results) >= 2 and not any("denied" in r.lower() for r in results)
    rows = [
        json.loads(line)
        for line in (repo.root / ".autoresearch/worker/metrics.jsonl").read_text().splitlines()
    ]
    bridged = [r for r in rows if r["tool"] == "bridge"]
    assert len(bridged) == len(server.exchanges) and all(r["status"] == "ok" for r in bridged)
    # the job's cost is the gateway's usage at the configured prices (100 + 20 tokens each),
    # not Claude Code's own figure for a model it does not know
    executor = outcome["evidence"]["executor"]
    assert executor["gateway_requests"] == len(server.exchanges)
    assert executor["cost_usd"] == round(len(server.exchanges) * (100 * 1.0 + 20 * 2.0) / 1e6, 8)
    stats = json.loads(cli("worker", "stats", "--json", cwd=repo.root).stdout)
    assert {x["tool"]: x["calls"] for x in stats["tools"]}["bridge"] == len(bridged)
