"""The real Codex CLI (pinned by `.ci/agents.sh`) with `exp hooks install --codex` in an
experiment session, against the scripted Responses model server on 127.0.0.1: codex's Stop hook
re-prompts the agent with the resume message after every turn that logged an experiment, lets
an idle turn stop, and `--max-iterations` ends the loop by itself; after codex's own
compaction the SessionStart hook adds the journal's summary.

Codex runs project hooks only in a trusted project whose hooks are trusted: the test trusts the
project with `codex exec --trust` and the hooks for this invocation with
`--dangerously-bypass-hook-trust` (what docs/experiments.md tells unattended users to do).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from session_hooks import RESUME, assert_resumed_each_turn, hooks_log, logged, session_repo
from test_real_agents import AGENT_BIN, require

from helpers import GIT_ENV, Repo, cli
from model_server import Exchange, ModelServer, Reply, Tokens, ToolCall, codex_env

PY = sys.executable


def experiment_plan(turns: int):
    """Turn k (k = resume prompts seen so far) runs and logs one experiment with one
    exec_command call, then ends the turn; turn `turns` only answers (it logs nothing)."""

    def plan(ex: Exchange) -> Reply:
        k = ex.prompt.count(RESUME)
        if k >= turns:
            return Reply(text="nothing more to try")
        if len(ex.tool_results) <= k:  # this turn has not run its experiment yet
            cmd = (
                f"printf '{100 - k - 1}\\n' > value.txt && {PY} -m autoresearch exp run "
                f"> /dev/null; {PY} -m autoresearch exp log --status keep -d 'turn {k}'"
            )
            return Reply(tool_calls=(ToolCall("exec_command", {"cmd": cmd}),))
        return Reply(text=f"logged turn {k}")

    return plan


def codex(repo: Repo, plan, tmp_path: Path) -> tuple[subprocess.CompletedProcess[str], ModelServer]:
    require("codex")
    with ModelServer(plan, max_requests=60) as server:
        env = {**os.environ, **GIT_ENV, **codex_env(server, tmp_path / "codex-home")}
        env["PATH"] = f"{AGENT_BIN}{os.pathsep}{env['PATH']}"
        # the session commits and resets: git writes need more than workspace-write
        done = subprocess.run(
            ["codex", "exec", "--json", "--trust", "--dangerously-bypass-hook-trust",
             "--sandbox", "danger-full-access", "-C", str(repo.root), "Run the experiment loop."],
            cwd=repo.root, env=env, capture_output=True, text=True, timeout=300,
            stdin=subprocess.DEVNULL,
        )  # fmt: skip
    assert not server.errors, server.errors
    return done, server


def test_codex_is_re_prompted_after_each_logged_turn_and_stops_when_idle(
    outside_tmp: Path, tmp_path: Path
) -> None:
    repo = session_repo(outside_tmp, "codex")
    turns = 3
    done, server = codex(repo, experiment_plan(turns), tmp_path)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert_resumed_each_turn(repo, server.exchanges[-1].prompt, turns)
    status = json.loads(cli("exp", "status", "--json", cwd=repo.root).stdout)
    assert status["hooks"]["resumed_turns"] == turns


def test_max_iterations_ends_the_codex_loop_with_a_notice(
    outside_tmp: Path, tmp_path: Path
) -> None:
    repo = session_repo(outside_tmp, "codex", max_iterations="3")
    done, _server = codex(repo, experiment_plan(10), tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    assert len(logged(repo)) == 3
    log = hooks_log(repo)
    assert log.count("stop: continue") == 1, log
    assert "Maximum experiments reached (3). Auto-resume stopped." in log


def test_codex_compaction_adds_the_journal_summary(outside_tmp: Path, tmp_path: Path) -> None:
    """Codex compacts on its own once a turn's usage passes `model_auto_compact_token_limit`;
    the SessionStart hook (source compact) then puts the journal's summary, byte for byte,
    into the next request."""
    from autoresearch.experiments.hooks import compaction_summary

    repo = session_repo(outside_tmp, "codex")
    summary = compaction_summary(repo.root)
    assert summary is not None
    encoded = json.dumps(summary)[1:-1]
    bodies: list[str] = []

    def plan(ex: Exchange) -> Reply:
        bodies.append(json.dumps(ex.body))
        if len(bodies) == 1:  # a big first turn: codex compacts before it goes on
            return Reply(
                tool_calls=(ToolCall("exec_command", {"cmd": "echo hi"}),),
                tokens=Tokens(input=5000, output=50),
            )
        return Reply(text="done")

    require("codex")
    with ModelServer(plan, max_requests=20) as server:
        env = {**os.environ, **GIT_ENV, **codex_env(server, tmp_path / "codex-home")}
        config = tmp_path / "codex-home" / "config.toml"
        config.write_text("model_auto_compact_token_limit = 1000\n" + config.read_text())
        env["PATH"] = f"{AGENT_BIN}{os.pathsep}{env['PATH']}"
        done = subprocess.run(
            ["codex", "exec", "--json", "--trust", "--dangerously-bypass-hook-trust",
             "-C", str(repo.root), "Hello."],
            cwd=repo.root, env=env, capture_output=True, text=True, timeout=120,
            stdin=subprocess.DEVNULL,
        )  # fmt: skip
    assert not server.errors, server.errors
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "session-start: summary added" in hooks_log(repo)
    assert encoded not in bodies[0]  # before the compaction: not there
    assert encoded in bodies[-1]
