"""The real Claude Code CLI (pinned by `.ci/agents.sh`) with `exp hooks install --claude` in an
experiment session, against the scripted model server on 127.0.0.1: the Stop hook resumes the
agent after every turn that logged an experiment, lets an idle turn stop, and the limits end
the loop by themselves."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from session_hooks import RESUME, assert_resumed_each_turn, hooks_log, logged, session_repo
from test_real_agents import AGENT_BIN, require

from helpers import GIT_ENV, Repo
from model_server import Exchange, ModelServer, Reply, ToolCall, claude_env

PY = sys.executable


def experiment_plan(status: str, turns: int):
    """Turn k (k = resume messages seen so far) edits value.txt, runs and logs it with one Bash
    call, then ends the turn; turn `turns` only answers (it logs nothing)."""

    def plan(ex: Exchange) -> Reply:
        k = ex.prompt.count(RESUME)
        if k >= turns:
            return Reply(text="nothing more to try")
        if len(ex.tool_results) <= k:  # this turn has not run its experiment yet
            value = 100 - k - 1 if status == "keep" else 200 + k
            cmd = (
                f"printf '{value}\\n' > value.txt && {PY} -m autoresearch exp run > /dev/null; "
                f"{PY} -m autoresearch exp log --status {status} -d 'turn {k}'"
            )
            return Reply(
                tool_calls=(ToolCall("Bash", {"command": cmd, "description": "one experiment"}),)
            )
        return Reply(text=f"logged turn {k}")

    return plan


def claude(
    repo: Repo, plan, tmp_path: Path
) -> tuple[subprocess.CompletedProcess[str], ModelServer]:
    require("claude")
    with ModelServer(plan, max_requests=80) as server:
        env = {**os.environ, **GIT_ENV, **claude_env(server, tmp_path / "claude-home")}
        env["PATH"] = f"{AGENT_BIN}{os.pathsep}{env['PATH']}"
        done = subprocess.run(
            ["claude", "-p", "Run the experiment loop.", "--model", "scripted-model",
             "--output-format", "stream-json", "--verbose", "--allowedTools", "Bash"],
            cwd=repo.root, env=env, capture_output=True, text=True, timeout=300,
        )  # fmt: skip
    assert not server.errors, server.errors
    return done, server


def test_claude_is_resumed_after_each_logged_turn_and_stops_when_idle(
    outside_tmp: Path, tmp_path: Path
) -> None:
    repo = session_repo(outside_tmp, "claude")
    turns = 3
    done, server = claude(repo, experiment_plan("keep", turns), tmp_path)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert_resumed_each_turn(repo, server.exchanges[-1].prompt, turns)


def test_max_iterations_ends_the_loop_with_a_notice(outside_tmp: Path, tmp_path: Path) -> None:
    repo = session_repo(outside_tmp, "claude", max_iterations="3")
    # the scripted agent would go on for 10 turns: the hook stops it at 3 logged runs
    done, _server = claude(repo, experiment_plan("keep", 10), tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    assert len(logged(repo)) == 3
    log = hooks_log(repo)
    assert log.count("stop: continue") == 1, log
    assert "stop: stop (max_iterations reached)" in log
    assert "Maximum experiments reached (3). Auto-resume stopped." in log


def test_the_turn_limit_fires_across_host_restarts(outside_tmp: Path, tmp_path: Path) -> None:
    import sqlite3

    from autoresearch.experiments.hooks import MAX_RESUMED_TURNS
    from autoresearch.journal.hooks import HookCounters, save_counters

    repo = session_repo(outside_tmp, "claude")
    with sqlite3.connect(repo.root / ".autoresearch/journal.sqlite3") as conn:  # 198 resumes ago
        save_counters(conn, 1, 1, HookCounters(MAX_RESUMED_TURNS - 2, last_logged_run=1))
    done, _server = claude(repo, experiment_plan("keep", 10), tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    assert len(logged(repo)) == 1 + 3  # turn 0 and 1 resumed (199, 200), turn 2 stopped
    assert "stop: stop (resumed-turn limit reached)" in hooks_log(repo)


def test_a_failure_streak_ends_the_loop(outside_tmp: Path, tmp_path: Path) -> None:
    from autoresearch.experiments import LogParams, RunParams, log_experiment, run_experiment

    repo = session_repo(outside_tmp, "claude")
    for i in range(18):  # 18 failures before the agent's session: its 3rd discard makes 21
        repo.write("value.txt", f"{300 + i}\n")
        run_experiment(repo.root, RunParams())
        log_experiment(repo.root, LogParams(status="discard", description=f"worse {i}"))
    done, _server = claude(repo, experiment_plan("discard", 10), tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    assert [r["status"] for r in logged(repo)][-3:] == ["discard"] * 3
    assert len(logged(repo)) == 1 + 18 + 3, hooks_log(repo)
    assert "stop: stop (failure streak)" in hooks_log(repo)
    assert "latest 21 results of the segment are all" in hooks_log(repo)


def test_compaction_adds_the_journal_summary(outside_tmp: Path, tmp_path: Path) -> None:
    """`/compact` in a continued session: the SessionStart hook (source compact) puts the
    journal's summary into the next request, byte for byte."""
    from autoresearch.experiments.hooks import compaction_summary

    repo = session_repo(outside_tmp, "claude")
    bodies: list[str] = []

    def plan(ex: Exchange) -> Reply:
        bodies.append(json.dumps(ex.body))
        return Reply(text="summary of the conversation")

    require("claude")
    with ModelServer(plan, max_requests=20) as server:
        env = {**os.environ, **GIT_ENV, **claude_env(server, tmp_path / "claude-home")}
        env["PATH"] = f"{AGENT_BIN}{os.pathsep}{env['PATH']}"
        for argv in (["Hello."], ["/compact", "--continue"], ["Go on.", "--continue"]):
            done = subprocess.run(
                ["claude", "-p", *argv, "--model", "scripted-model"],
                cwd=repo.root, env=env, capture_output=True, text=True, timeout=120,
            )  # fmt: skip
            assert done.returncode == 0, (argv, done.stdout[-2000:], done.stderr[-2000:])
    assert not server.errors, server.errors
    assert "session-start: summary added" in hooks_log(repo)
    summary = compaction_summary(repo.root)
    assert summary is not None and summary == compaction_summary(repo.root)
    assert summary.startswith("Context compacted: this is the autoresearch experiment session")
    encoded = json.dumps(summary)[1:-1]
    assert encoded not in "".join(bodies[:-1])  # before the compaction: not there
    assert encoded in bodies[-1]
