"""Jobs with the real Claude Code and codex CLIs (pinned, installed by `.ci/run`) against the
scripted model server on 127.0.0.1: the back-ends `run` uses, with the grants a job's session
needs to edit and run the job's own check – seen from the MCP client."""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "agents"))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "mcp"))

from mcp_helpers import connect
from test_real_agents import AGENT_BIN, require
from worker_helpers import NEW_PY_CHECK, job_repo, new_py_job

from autoresearch.mcp.server import build_server
from model_server import MODEL, Exchange, ModelServer, Reply, ToolCall, claude_env, codex_env

pytestmark = pytest.mark.anyio
CHECK = NEW_PY_CHECK


def claude_plan(ex: Exchange) -> Reply:
    steps = [
        ToolCall("Write", {"file_path": f"{ex.cwd}/src/new.py", "content": "VALUE = 2\n"}),
        ToolCall("Bash", {"command": CHECK, "description": "Run the job's check"}),
    ]
    done = len(ex.tool_results)
    return Reply(tool_calls=(steps[done],)) if done < len(steps) else Reply(text="done")


def codex_plan(ex: Exchange) -> Reply:
    steps = ["printf 'VALUE = 2\\n' > src/new.py", CHECK]
    done = len(ex.tool_results)
    if done < len(steps):
        return Reply(tool_calls=(ToolCall("exec_command", {"cmd": steps[done]}),))
    return Reply(text="done")


@pytest.fixture
def agent_homes() -> Iterator[Path]:
    """The agents' homes outside /tmp: a job runs in the OS sandbox by default, where codex's
    own sandbox, nested, covers /tmp (README: Security)."""
    base = os.environ.get("AUTORESEARCH_AGENT_TEST_DIR") or "/var/tmp"
    path = Path(tempfile.mkdtemp(prefix="autoresearch-job-agents-", dir=base))
    yield path
    shutil.rmtree(path, ignore_errors=True)


def agent_env(name: str, server: ModelServer, tmp_path: Path, homes: Path) -> dict[str, str]:
    """The environment that points the real `name` CLI at `server`: its home under `homes`
    (outside /tmp, see `agent_homes`), a scratch TMPDIR under `tmp_path`, the pinned CLIs
    first on PATH."""
    home = homes / f"{name}-home"
    env = claude_env(server, home) if name == "claude" else codex_env(server, home)
    scratch = tmp_path / "agent-tmp"
    scratch.mkdir()
    env.update(PATH=f"{AGENT_BIN}{os.pathsep}{os.environ['PATH']}", TMPDIR=str(scratch))
    return env


@pytest.mark.parametrize("name", ["claude", "codex"])
async def test_real_agent_job_is_accepted(
    name: str, tmp_path: Path, agent_homes: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    require(name)
    repo = job_repo(tmp_path / "repo")
    repo.write("scripts/check.sh", "grep -q 'VALUE = 2' src/new.py\n")
    repo.commit("check")
    plan = claude_plan if name == "claude" else codex_plan
    with ModelServer(plan) as server:
        for key, value in agent_env(name, server, tmp_path, agent_homes).items():
            monkeypatch.setenv(key, value)  # the job's runner inherits the server's environment
        async with connect(build_server(repo.root)) as t:
            done = await new_py_job(t, name, MODEL)
    assert not server.errors, server.errors
    outcome = done.data["outcome"]
    assert outcome["status"] == "accepted", (outcome, done.text)
    assert outcome["evidence"]["changed_files"] == ["src/new.py"]
    assert outcome["evidence"]["executor"]["status"] == "passed"
    assert "denials" not in outcome["evidence"]["executor"]
    # the agent ran the check itself through its own tool, and was allowed to
    results = [r for ex in server.exchanges for r in ex.tool_results]
    assert len(set(results)) >= 2 and not any(
        "denied" in r.lower() or "permission" in r.lower() for r in results
    )
