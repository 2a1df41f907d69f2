"""The job features of part 3 with the real Claude Code and codex CLIs (pinned, installed by
`.ci/run`), seen from the MCP client, against the scripted model server on 127.0.0.1: a revise
pass that fixes a failing check, a two-stage job whose second stage is shown the first one's
evidence, and a semantic gate whose reviewer (the same server, over Chat Completions) rejects a
change that passes its check but is not what the prompt asked.

Each scenario scripts the agent's model by what the session is told (its first, revise or
stage instructions); the agent runs its own tools for real. Every job is bounded by its
`timeout_seconds` and the wait by `timeout_ms`."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "agents"))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "mcp"))

from mcp_helpers import connect
from test_jobs_real_agents import agent_env
from test_jobs_real_agents import agent_homes as agent_homes  # a fixture, used by name
from test_real_agents import require
from worker_helpers import job_repo

from autoresearch.mcp.server import build_server
from helpers import Repo
from model_server import MODEL, Exchange, ModelServer, Reply, ToolCall

pytestmark = [pytest.mark.anyio, pytest.mark.parametrize("name", ["claude", "codex"])]
APP = "src/app.py"
REVIEWER = "reviewer-model"
JOB_SECONDS = 120

Content = Callable[[Exchange], str]  # what the session writes into src/app.py


def edit_steps(name: str, ex: Exchange, content: str) -> list[ToolCall]:
    """Read src/app.py, then write `content` into it, with the agent's own tools."""
    if name == "claude":  # Claude Code's Write refuses a file the session has not read
        path = f"{ex.cwd}/{APP}"
        return [ToolCall("Read", {"file_path": path}), ToolCall("Write", {"file_path": path,
                "content": content})]  # fmt: skip
    printf = content.replace("\n", "\\n")
    return [
        ToolCall("exec_command", {"cmd": f"cat {APP}"}),
        ToolCall("exec_command", {"cmd": f"printf '{printf}' > {APP}"}),
    ]


def agent_plan(name: str, content: Content) -> Callable[[Exchange], Reply]:
    """The job agent's model: read and write src/app.py, then say it is done."""

    def plan(ex: Exchange) -> Reply:
        steps = edit_steps(name, ex, content(ex))
        done = len(ex.tool_results)
        return Reply(tool_calls=(steps[done],)) if done < len(steps) else Reply(text="done")

    return plan


def with_reviewer(plan: Callable[[Exchange], Reply], verdict: str) -> Callable[[Exchange], Reply]:
    """The agent's plan, and the semantic reviewer's scripted answer to Chat Completions."""
    return lambda ex: Reply(text=verdict) if ex.api == "chat" else plan(ex)


async def run_job(
    name: str, tmp_path: Path, homes: Path, monkeypatch: pytest.MonkeyPatch, repo: Repo,
    plan: Callable[[Exchange], Reply], args: dict[str, Any],
) -> tuple[dict[str, Any], ModelServer]:  # fmt: skip
    """Start the job over MCP with the real `name` CLI on the scripted server; its verdict."""
    require(name)
    with ModelServer(plan) as server:
        env = agent_env(name, server, tmp_path, homes)
        env.update(
            AUTORESEARCH_GATEWAY_URL=f"{server.url}/v1",
            AUTORESEARCH_GATEWAY_MODELS=MODEL,
            AUTORESEARCH_GATEWAY_SEMANTIC_MODEL=REVIEWER,
            AUTORESEARCH_GATEWAY_MAX_ATTEMPTS="1",
            XDG_CONFIG_HOME=str(tmp_path / "config"),
        )
        for key, value in env.items():  # the job's runner inherits the server's environment
            monkeypatch.setenv(key, value)
        job = {"agent": name, "model": MODEL, "timeout_seconds": JOB_SECONDS, **args}
        async with connect(build_server(repo.root)) as t:
            started = await t.ok("job_start", job)
            wait = {"job_id": started.data["job_id"], "timeout_ms": JOB_SECONDS * 1000}
            done = await t.ok("job_wait", wait)
    assert not server.errors, server.errors
    return done.data["outcome"], server


def modifying(prompt: str, check: str, **extra: Any) -> dict[str, Any]:
    return {
        "prompt": prompt,
        "verification_policy": {"version": 1, "task_kind": "modifying"},
        "scoped_patch": {"paths": ["src"]},
        "checks": [{"command": check, "timeout_seconds": 30}],
        **extra,
    }


async def test_a_revise_pass_fixes_the_failing_check(
    name: str, tmp_path: Path, agent_homes: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = job_repo(tmp_path / "repo")

    def content(ex: Exchange) -> str:  # wrong first; right once told what failed
        return "VALUE = 2\n" if "--- Revise pass 1 of 1" in ex.prompt else "VALUE = 3\n"

    args = modifying("Set VALUE to 2 in src/app.py.", "grep -q 'VALUE = 2' src/app.py",
                     auto_revise=True, revise_passes=1)  # fmt: skip
    outcome, server = await run_job(
        name, tmp_path, agent_homes, monkeypatch, repo, agent_plan(name, content), args
    )
    assert (outcome["status"], outcome["reason_codes"]) == ("accepted", ["verification_passed"])
    assert outcome["evidence"]["revisions"] == 1
    assert outcome["evidence"]["changed_files"] == [APP]
    assert (repo.root / APP).read_text() == "VALUE = 2\n"
    # the revise session was told which check failed, with its exit code
    revise = [ex for ex in server.exchanges if "--- Revise pass 1 of 1" in ex.prompt]
    assert revise and "`grep -q 'VALUE = 2' src/app.py`: failed, exit code 1" in revise[0].prompt


async def test_a_second_stage_sees_the_first_stages_work_and_evidence(
    name: str, tmp_path: Path, agent_homes: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = job_repo(tmp_path / "repo")
    first_check = "grep -q 'VALUE = 2' src/app.py"

    def content(ex: Exchange) -> str:
        return "VALUE = 2\nNAME = 1\n" if "--- Stage 2 of 2" in ex.prompt else "VALUE = 2\n"

    args = modifying(
        "Set VALUE to 2, then add NAME = 1 to src/app.py.",
        "grep -q 'NAME = 1' src/app.py",
        stages=[
            {"prompt": "Set VALUE to 2.", "checks": [{"command": first_check}]},
            {"prompt": "Add NAME = 1.", "checks": [{"command": "grep -q NAME src/app.py"}]},
        ],
    )
    outcome, server = await run_job(
        name, tmp_path, agent_homes, monkeypatch, repo, agent_plan(name, content), args
    )
    assert (outcome["status"], outcome["reason_codes"]) == ("accepted", ["verification_passed"])
    stages = outcome["evidence"]["stages"]
    assert [(s["stage"], s["complete"]) for s in stages] == [(1, True), (2, True)]
    assert (repo.root / APP).read_text() == "VALUE = 2\nNAME = 1\n"
    second = [ex for ex in server.exchanges if "--- Stage 2 of 2" in ex.prompt]
    # stage 2 is told stage 1's evidence, and its own read of the file shows stage 1's edit
    assert f"- stage 1: complete; passed `{first_check}`" in second[0].prompt
    assert "VALUE = 2" in second[-1].tool_results[0]


async def test_the_semantic_gate_rejects_a_change_that_is_not_the_task(
    name: str, tmp_path: Path, agent_homes: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = job_repo(tmp_path / "repo")
    verdict = json.dumps({"verdict": "fail", "reason": "src/app.py:1 sets VALUE to 3, not 2"})
    plan = with_reviewer(agent_plan(name, lambda ex: "VALUE = 3\n"), verdict)
    args = modifying("Set VALUE to 2 in src/app.py.", "grep -q 'VALUE = ' src/app.py",
                     semantic_gate="required")  # fmt: skip
    outcome, server = await run_job(name, tmp_path, agent_homes, monkeypatch, repo, plan, args)
    assert (outcome["status"], outcome["reason_codes"]) == ("failed", ["semantic_failed"])
    assert outcome["verification"]["checks"] == "passed"
    assert outcome["evidence"]["semantic"]["answered_by"] == REVIEWER
    reviews = [ex for ex in server.exchanges if ex.api == "chat"]
    assert [ex.body["model"] for ex in reviews] == [REVIEWER]  # one call, the pinned reviewer
    assert "Set VALUE to 2" in reviews[0].prompt and "+VALUE = 3" in reviews[0].prompt
