"""The real codex, Claude Code and aider CLIs, pinned and installed by `.ci/run`, driven through
`autoresearch run --max-iterations 2` against a scripted model server on 127.0.0.1.

The CLIs are found in AUTORESEARCH_AGENT_BIN (set by `.ci/run`), else in the cache folder
`.ci/run` installs them into. Without them the tests skip, saying so – except under CI, where
a missing CLI is a failure.

The repository lives outside /tmp: codex's sandbox lets every session write /tmp, which would
hide a missing grant for the run folder.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from agent_plans import API_ERROR, DELTAS, session_plan

from autoresearch.confine import machine_support
from helpers import Repo, cli, git, make_repo
from model_server import MODEL, ModelServer, Tokens, aider_env, claude_env, codex_env

CACHE_BIN = Path.home() / ".cache/autoresearch-ci/bin"
AGENT_BIN = Path(os.environ.get("AUTORESEARCH_AGENT_BIN") or CACHE_BIN)
TOKENS = Tokens(input=1000, output=50, cached=400, cache_write=30, reasoning=7)


def require(agent: str) -> None:
    if (AGENT_BIN / agent).exists():
        return
    reason = f"the real {agent} CLI is not installed in {AGENT_BIN} (`.ci/run` installs it)"
    if os.environ.get("CI"):
        pytest.fail(reason)
    pytest.skip(reason)


def with_tokens(plan):  # every scripted reply reports the same, known usage
    from dataclasses import replace

    return lambda ex: replace(plan(ex), tokens=TOKENS)


def drive(
    agent: str, actions: dict[int, str], root: Path, tmp_path: Path, *options: str
) -> tuple[dict, list]:
    summary, status = drive_status(agent, actions, root, tmp_path, *options)
    return summary, status["iterations"]


def drive_status(
    agent: str, actions: dict[int, str], root: Path, tmp_path: Path, *options: str
) -> tuple[dict, dict]:
    """`run` with the real `agent` for as many iterations as `actions` has; its summary (with
    the model requests of each iteration) and `status --json`."""
    require(agent)
    repo: Repo = make_repo(root / "repo")
    repo.mission()
    with ModelServer(with_tokens(session_plan(agent, actions))) as server:
        home = tmp_path / f"{agent}-home"
        if agent == "codex":
            env = codex_env(server, home)
        elif agent == "claude":
            env = claude_env(server, home)
        else:  # litellm would fetch a price list from the network first
            env = {**aider_env(server), "HOME": str(home), "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
        model = f"openai/{MODEL}" if agent == "aider" else MODEL
        scratch = tmp_path / "agent-tmp"
        scratch.mkdir()
        env.update(PATH=f"{AGENT_BIN}{os.pathsep}{os.environ['PATH']}", TMPDIR=str(scratch))
        done = cli("run", "missions/demo", "--agent", agent, "--model", model, "--run-tag", "T1",
                   "--max-iterations", str(len(actions)), "--json", *options, cwd=repo.root, env=env,
                   timeout=300)  # fmt: skip
    assert not server.errors, server.errors
    assert done.returncode in (0, 1), done.stderr
    status = json.loads(cli("status", "missions-demo-t1", "--json", cwd=repo.root).stdout)
    per_iteration = [
        sum(1 for ex in server.exchanges if ex.field("Iteration") == str(n)) for n in actions
    ]
    return {**json.loads(done.stdout), "requests": per_iteration}, status


def expected_tokens(agent: str, requests: int) -> dict[str, int]:
    if agent == "codex":  # the turn's running total, as the Responses API reports it
        return {"input_tokens": 1000 * requests, "cached_tokens": 400 * requests,
                "output_tokens": 50 * requests, "reasoning_tokens": 7 * requests}  # fmt: skip
    # Claude Code: fresh + cache reads + cache writes is the session's input
    return {"input_tokens": 1430 * requests, "cached_tokens": 400 * requests,
            "cache_write_tokens": 30 * requests, "output_tokens": 50 * requests}  # fmt: skip


@pytest.mark.parametrize("sandbox", ["none", "bwrap"])
@pytest.mark.parametrize("agent", ["codex", "claude"])
def test_real_agent_keeps_an_improvement_and_discards_a_worse_one(
    agent: str, sandbox: str, outside_tmp: Path, tmp_path: Path
) -> None:
    if sandbox == "bwrap" and machine_support().bwrap is None:
        pytest.skip(f"Bubblewrap cannot run here: {machine_support().reason}")
    # in the sandbox the agent's home stays outside /tmp too: codex's own sandbox, nested,
    # would cover a CODEX_HOME under the box's /tmp (docs/operations.md: Security)
    scratch = tmp_path if sandbox == "none" else outside_tmp / "scratch"
    scratch.mkdir(exist_ok=True)
    actions = {1: "improve", 2: "worse"}
    summary, its = drive(agent, actions, outside_tmp, scratch, "--sandbox", sandbox)
    assert (summary["status"], summary["stop_reason"]) == (
        "completed", "max iterations reached (2)",
    )  # fmt: skip
    assert [it["decision"] for it in its] == ["baseline", "keep", "discard"]
    assert [it["description"] for it in its[1:]] == ["improve value", "worse value"]
    assert summary["last_kept_score"] == 2.0
    for it, requests in zip(its[1:], summary["requests"], strict=True):
        usage = it["agent"]
        assert (usage["agent"], usage["exit_code"], usage["success"]) == (agent, 0, True)
        assert usage["model"] == MODEL
        assert "denials" not in usage and "failure" not in usage, usage
        shown = {key: usage.get(key) for key in expected_tokens(agent, requests)}
        assert shown == expected_tokens(agent, requests)
    worktree = Path(summary["worktree_path"])
    assert (worktree / "value.txt").read_text().strip() == "2"


@pytest.mark.parametrize("agent", ["codex", "claude"])
def test_real_agent_works_from_the_elite_the_frontier_chose_for_each_session(
    agent: str, outside_tmp: Path
) -> None:
    """Issue 33 end to end: each real session starts in a checkout of the elite the frontier
    chose, its candidate is judged against that parent, and the branch ends at the best."""
    actions = {1: "improve", 2: "improve", 3: "worse"}
    summary, status = drive_status(
        agent, actions, outside_tmp, _scratch(outside_tmp), "--strategy", "frontier"
    )
    worktree = Path(summary["worktree_path"])

    def value(commit: str) -> float:
        return float(git(worktree, "show", f"{commit}:value.txt"))

    its = status["iterations"]
    assert [it["iteration"] for it in its] == [0, 1, 2, 3]
    for it in its[1:]:
        action = actions[it["iteration"]]
        assert it["parent"] == it["base_commit"], it  # the session started from an elite
        assert value(it["candidate_commit"]) == value(it["parent"]) + DELTAS[action]
        if action == "worse":
            assert it["decision"] == "discard", it
        else:  # better than its parent: an elite, unless an earlier session made the same tree
            reason = it["decision_reason"] or ""
            assert it["decision"] == "keep" or reason.startswith("duplicate of iteration"), it
    archive = status["archive"]
    assert len(archive) >= 2 and archive == sorted(archive, key=lambda e: -e["score"])
    assert archive[0]["commit"] == status["last_kept_commit"] == git(worktree, "rev-parse", "HEAD")
    assert summary["archive"][0]["commit"] == archive[0]["commit"]
    assert summary["last_kept_score"] == value(archive[0]["commit"]) >= 2.0


def _scratch(outside_tmp: Path) -> Path:
    """The agents' home for a run in the default sandbox: outside /tmp, which codex's own
    sandbox, nested, would cover (README: Security)."""
    scratch = outside_tmp / "scratch"
    scratch.mkdir(exist_ok=True)
    return scratch


@pytest.mark.parametrize("agent", ["codex", "claude"])
def test_real_agent_noop_and_api_error_are_recorded_with_the_reason(
    agent: str, outside_tmp: Path, tmp_path: Path
) -> None:
    summary, its = drive(agent, {1: "noop", 2: "api_error"}, outside_tmp, _scratch(outside_tmp))
    assert summary["status"] == "completed"
    assert [it["decision"] for it in its] == ["baseline", "noop", "noop"]
    assert its[1]["description"] == "nothing worth trying"
    assert its[1]["agent"]["success"] is True
    failed = its[2]["agent"]
    assert failed["success"] is False and API_ERROR in failed["error"], failed
    assert (
        failed["failure"].startswith("agent exited with code 1: ")
        and API_ERROR in failed["failure"]
    )
    assert any(API_ERROR in note for note in its[2]["notes"]), its[2]["notes"]
    assert "agent session wrote no candidate artifact" in its[2]["notes"]


@pytest.mark.real_aider
@pytest.mark.parametrize("sandbox", ["none", "bwrap"])
def test_real_aider_keeps_and_discards_and_commits_none_of_its_own_files(
    sandbox: str, outside_tmp: Path, tmp_path: Path
) -> None:
    if sandbox == "bwrap" and machine_support().bwrap is None:
        pytest.skip(f"Bubblewrap cannot run here: {machine_support().reason}")
    if sandbox == "bwrap":  # aider writes a missing git identity into the repository's
        # config, which the sandbox keeps read-only: the user's ~/.gitconfig names one
        home = tmp_path / "aider-home"
        home.mkdir()
        (home / ".gitconfig").write_text("[user]\n\tname = a\n\temail = a@example.com\n")
    actions = {1: "improve", 2: "worse"}
    summary, its = drive("aider", actions, outside_tmp, tmp_path, "--sandbox", sandbox)
    assert [it["decision"] for it in its] == ["baseline", "keep", "discard"]
    assert summary["last_kept_score"] == 2.0
    for it in its[1:]:
        usage = it["agent"]
        assert (usage["agent"], usage["exit_code"], usage["model"]) == (
            "aider", 0, f"openai/{MODEL}",
        )  # fmt: skip
        # one scripted reply per session (aider does not count its background summaries)
        assert (usage["input_tokens"], usage["output_tokens"]) == (1000, 50)
    worktree = Path(summary["worktree_path"])
    kept = git(worktree, "show", "--name-only", "--format=", "HEAD").splitlines()
    assert kept == ["value.txt"]
    assert git(worktree, "status", "--porcelain", "--untracked-files=all") == ""
    assert (worktree / ".gitignore").read_text() == "__pycache__/\n"
    assert list(Path(summary["logs_dir"]).glob("iteration-000*-agent-aider-chat.md"))


@pytest.mark.parametrize("agent", ["codex", "claude"])
def test_real_agent_cannot_write_outside_what_the_iteration_needs(
    agent: str, outside_tmp: Path, tmp_path: Path
) -> None:
    _, its = drive(agent, {1: "escape", 2: "improve"}, outside_tmp, _scratch(outside_tmp))
    repo = outside_tmp / "repo"
    config = (repo / ".git/config").read_text()
    assert not (repo / "escaped.txt").exists() and not (repo / ".git/hooks/post-checkout").exists()
    assert not config.endswith("x\n")
    assert [it["decision"] for it in its] == ["baseline", "noop", "keep"]
    if agent == "claude":  # codex reports no denials: its commands just fail in the sandbox
        denied = its[1]["agent"]["denials"]
        assert denied == [f"Write: {repo / 'escaped.txt'}",
                          f"Bash: touch {repo / '.git/hooks/post-checkout'}"]  # fmt: skip
        assert its[1]["agent"]["failure"] == "agent was denied: " + "; ".join(denied)
