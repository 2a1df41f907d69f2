"""Each agent back-end drives a real multi-iteration run through fake CLIs on PATH that
behave like the real ones (flags, event streams, commits, artifact)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from autoresearch.agents.base import SessionRequest
from autoresearch.agents.claude import claude_argv
from autoresearch.agents.codex import codex_argv
from autoresearch.contracts.candidate import is_placeholder
from helpers import Repo, cli, git

FAKES = Path(__file__).parent / "fakes"


def run_with(
    repo: Repo, agent: str, plan: str, *extra: str, env: dict[str, str] | None = None
) -> dict:
    env = {"PATH": f"{FAKES}{os.pathsep}{os.environ['PATH']}", "FAKE_PLAN": plan, **(env or {})}
    done = cli(
        "run", "missions/demo", "--agent", agent, "--run-tag", "T1", "--max-iterations", "5",
        "--max-noops", "0", "--json", *extra, cwd=repo.root, env=env,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def iterations(repo: Repo) -> list[dict]:
    status = cli("status", "missions-demo-t1", "--json", cwd=repo.root)
    return json.loads(status.stdout)["iterations"]


@pytest.mark.parametrize("agent", ["codex", "claude", "aider"])
def test_backend_completes_a_run_with_keeps_discards_and_noops(
    repo: Repo, mission_dir: Path, agent: str
) -> None:
    summary = run_with(repo, agent, "improve,worse,noop,improve,fail")
    assert (summary["status"], summary["stop_reason"]) == (
        "completed", "max iterations reached (5)",
    )  # fmt: skip
    its = iterations(repo)
    decisions = [it["decision"] for it in its]
    assert decisions == ["baseline", "keep", "discard", "noop", "keep", "noop"]
    assert summary["last_kept_score"] == 3.0 and summary["best_score"] == 3.0
    usage = its[1]["agent"]
    assert usage["agent"] == agent and usage["exit_code"] == 0
    # aider prints nothing machine-readable about success: it is not invented
    assert usage.get("success") is (None if agent == "aider" else True)
    if agent == "codex":
        assert (usage["input_tokens"], usage["cached_tokens"], usage["output_tokens"]) == (
            1200, 1000, 80,
        )  # fmt: skip
        assert usage["session_id"] == "session-1"
    elif agent == "claude":
        assert (usage["input_tokens"], usage["output_tokens"], usage["cost_usd"]) == (
            420, 45, 0.0125,
        )  # fmt: skip
        assert usage["turns"] == 3 and usage["model"] == "fake-model"
    else:
        assert (usage["input_tokens"], usage["output_tokens"], usage["cost_usd"]) == (
            2300, 440, 0.00061,
        )  # fmt: skip
        assert "artifact derived from git" in " ".join(its[1]["notes"])
    # the summary adds up what every session reported
    totals = summary["totals"]
    for key in ("input_tokens", "output_tokens"):
        assert totals[key] == sum(it.get("agent", {}).get(key) or 0 for it in its) > 0
    if agent != "codex":
        assert totals["cost_usd"] == pytest.approx(
            sum(it.get("agent", {}).get("cost_usd") or 0 for it in its)
        )
    failed = its[5]["agent"]
    if agent != "aider":  # aider reports no failure: it has no machine-readable output
        assert failed["success"] is False and failed["exit_code"] == 1
        assert any("agent exited with code 1" in n for n in its[5]["notes"])
    # the worktree is at the kept commit, clean
    worktree = Path(summary["worktree_path"])
    assert (worktree / "value.txt").read_text().strip() == "3"


def test_uncommitted_leftovers_of_a_candidate_are_saved_not_evaluated(
    repo: Repo, mission_dir: Path
) -> None:
    summary = run_with(repo, "codex", "dirty,noop")
    its = iterations(repo)
    assert its[1]["decision"] == "keep"
    assert any("uncommitted changes were not evaluated" in n for n in its[1]["notes"])
    patch = next(Path(summary["logs_dir"]).glob("iteration-0001-uncommitted.patch"))
    assert "stray.txt" in patch.read_text()
    assert not (Path(summary["worktree_path"]) / "stray.txt").exists()


def test_unknown_agent_is_refused_before_anything_happens(repo: Repo, mission_dir: Path) -> None:
    done = cli("run", "missions/demo", "--agent", "gpt", cwd=repo.root)
    assert done.returncode == 2
    assert done.stderr.strip() == (
        "autoresearch: unknown agent 'gpt': use aider, claude, codex, offline or cmd:<shell command>"
    )
    assert not (repo.root / ".autoresearch/worktrees").exists()


def test_missing_agent_executable_is_refused_before_prepare(repo: Repo, mission_dir: Path) -> None:
    done = cli("run", "missions/demo", "--agent", "codex", cwd=repo.root,
               env={"PATH": "/usr/bin:/bin"})  # fmt: skip
    assert done.returncode == 2
    assert done.stderr.splitlines() == [
        "autoresearch: agent codex is not installed: no 'codex' executable on PATH (/usr/bin:/bin)"
    ]
    assert not (repo.root / ".autoresearch/worktrees").exists()
    prepared(repo)  # resume refuses it too, before re-arming anything
    done = cli("resume", "missions-demo-t1", "--agent", "claude", cwd=repo.root,
               env={"PATH": "/usr/bin:/bin"})  # fmt: skip
    assert done.returncode == 2
    assert done.stderr.splitlines() == [
        "autoresearch: agent claude is not installed: no 'claude' executable on PATH (/usr/bin:/bin)"
    ]


@pytest.mark.parametrize(
    ("agent", "plan", "reason"),
    [
        ("codex", "fail", "agent exited with code 1: You've hit your usage limit."),
        ("claude", "fail", "agent exited with code 1: error_max_turns: Reached maximum number "
                           "of turns (3)"),
        ("cmd:no-such-agent-program", "", "agent exited with code 127"),
        ("cmd:true", "", "agent session wrote no candidate artifact"),
    ],
)  # fmt: skip
def test_an_agent_failing_three_times_in_a_row_fails_the_run(
    repo: Repo, mission_dir: Path, agent: str, plan: str, reason: str
) -> None:
    env = {"PATH": f"{FAKES}{os.pathsep}{os.environ['PATH']}", "FAKE_PLAN": plan}
    done = cli(
        "run",
        "missions/demo",
        "--agent",
        agent,
        "--run-tag",
        "T1",
        "--json",
        cwd=repo.root,
        env=env,
    )  # fmt: skip (default limits: 3 noops, 3 failures)
    assert done.returncode == 1, done.stderr
    summary = json.loads(done.stdout)
    assert (summary["status"], summary["stop_reason"], summary["stop_note"]) == (
        "failed", "repeated agent failure limit reached (3)", reason,
    )  # fmt: skip
    assert done.stderr.splitlines()[-1] == (
        f"autoresearch: run failed: repeated agent failure limit reached (3): {reason}"
    )
    assert done.stderr.count(reason) >= 3  # each failed session says why as it ends
    its = iterations(repo)
    assert [it["decision"] for it in its] == ["baseline", "noop", "noop", "noop"]
    assert reason in its[1]["notes"] and its[1]["agent"]["failure"] == reason
    if agent == "cmd:true":  # not the placeholder's text: the session wrote nothing
        assert its[1]["description"] == "agent session wrote no candidate artifact"


def test_aider_commits_neither_its_own_files_nor_runtime_files(repo: Repo) -> None:
    from helpers import sandbox_text

    repo.mission(sandbox=sandbox_text(extra="worktree:\n  runtime: [scratch.out]\n"))
    env = {"PATH": f"{FAKES}{os.pathsep}{os.environ['PATH']}", "FAKE_PLAN": "improve",
           "FAKE_SCRATCH": "1"}  # fmt: skip
    done = cli("run", "missions/demo", "--agent", "aider", "--run-tag", "T1",
               "--max-iterations", "1", "--json", cwd=repo.root, env=env)  # fmt: skip
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert summary["counts"] == {"keep": 1}

    worktree = Path(summary["worktree_path"])
    files = git(worktree, "show", "--name-only", "--format=", "HEAD")
    assert files.splitlines() == ["value.txt"]  # neither aider's files nor the runtime file
    assert (worktree / ".gitignore").read_text() == "__pycache__/\n"  # not edited
    assert not list(worktree.glob(".aider*"))
    chat = Path(summary["logs_dir"]) / "iteration-0001-agent-aider-chat.md"
    assert chat.read_text().startswith("# aider chat started")  # its history kept, in the logs


@pytest.mark.parametrize(
    ("agent", "extra", "expected"),
    [
        ("claude", ["--model", "sonnet", "--max-turns", "7", "--agent-arg", "--append-system-prompt",
                    "--agent-arg", "be brief"],
         ["--max-turns", "7", "--model", "sonnet", "--append-system-prompt", "be brief"]),
        ("codex", ["--model", "gpt-5-codex", "--agent-arg", "--skip-git-repo-check"],
         ["--model", "gpt-5-codex", "--skip-git-repo-check"]),
        ("aider", ["--model", "gpt-4.1", "--agent-arg", "--no-git"], ["--model", "gpt-4.1", "--no-git"]),
    ],
)  # fmt: skip
def test_model_and_extra_arguments_reach_the_agent(
    repo: Repo, mission_dir: Path, tmp_path: Path, agent: str, extra: list[str], expected: list[str]
) -> None:
    argv_file = tmp_path / "argv.json"
    env = {"PATH": f"{FAKES}{os.pathsep}{os.environ['PATH']}", "FAKE_PLAN": "improve",
           "FAKE_ARGV_FILE": str(argv_file)}  # fmt: skip
    # --sandbox none: the fake writes its argv outside the repository, which a sandbox forbids
    done = cli("run", "missions/demo", "--agent", agent, "--max-iterations", "1", "--sandbox",
               "none", *extra, cwd=repo.root, env=env)  # fmt: skip
    assert done.returncode == 0, done.stderr
    argv = json.loads(argv_file.read_text())
    position = [argv.index(token) for token in expected]
    assert position == sorted(position), argv  # in order, after the back-end's own flags


def test_a_cmd_agent_gets_all_six_variables(repo: Repo, mission_dir: Path) -> None:
    script = (
        "env | grep '^AUTORESEARCH_' | sort > .autoresearch/agent-env.txt; "
        'printf \'{"status":"noop","candidate_commit":null,"base_commit":"%s","description":"x",'
        '"notes":[],"created_at":"2026-01-01T00:00:00Z"}\' "$AUTORESEARCH_BASE_COMMIT" '
        '> "$AUTORESEARCH_CANDIDATE_FILE"'
    )
    repo.write("agent.sh", "mkdir -p .autoresearch\n" + script + "\n")
    repo.commit("agent")
    done = cli("run", "missions/demo", "--agent", "cmd:sh agent.sh", "--max-iterations", "1",
               "--run-tag", "T1", "--json", cwd=repo.root)  # fmt: skip
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    worktree = Path(summary["worktree_path"])
    env = dict(
        line.split("=", 1)
        for line in (worktree / ".autoresearch/agent-env.txt").read_text().splitlines()
    )
    run_dir = repo.root / ".autoresearch/runs/missions-demo-t1"
    assert env["AUTORESEARCH_RUN_ID"] == "missions-demo-t1"
    assert env["AUTORESEARCH_ITERATION"] == "1"
    assert env["AUTORESEARCH_WORKTREE"] == str(worktree)
    assert env["AUTORESEARCH_INSTRUCTIONS_FILE"] == str(run_dir / "instructions.md")
    assert env["AUTORESEARCH_CANDIDATE_FILE"] == str(run_dir / "candidate.json")
    assert env["AUTORESEARCH_BASE_COMMIT"] == summary["last_kept_commit"]
    assert summary["counts"] == {"noop": 1}


def prepared(repo: Repo) -> dict:
    done = cli("prepare", "missions/demo", "--run-tag", "T1", "--json", cwd=repo.root)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def run_fake(agent: str, argv: list[str], manifest: dict, plan: str) -> tuple[dict, list[dict]]:
    """The fake CLI on its own, with the given command line, for iteration 1."""
    run_dir = Path(manifest["candidate_file"]).parent
    done = subprocess.run(
        [str(FAKES / agent), *argv], input=(run_dir / "instructions.md").read_text(),
        cwd=manifest["worktree_path"], env={**os.environ, "FAKE_PLAN": plan},
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    events = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    artifact = json.loads(Path(manifest["candidate_file"]).read_text())
    return artifact, events


def request_for(manifest: dict) -> SessionRequest:
    run_dir = Path(manifest["candidate_file"]).parent
    return SessionRequest(
        run_id=manifest["run_id"], iteration=1, worktree=Path(manifest["worktree_path"]),
        instructions_file=run_dir / "instructions.md", candidate_file=run_dir / "candidate.json",
        base_commit=manifest["last_kept_commit"], log_path=run_dir / "x.log", timeout=None,
    )  # fmt: skip


def test_the_fake_codex_denies_what_workspace_write_denies(repo: Repo, mission_dir: Path) -> None:
    manifest = prepared(repo)
    worktree = Path(manifest["worktree_path"])
    bare = ["exec", "--json", "--sandbox", "workspace-write", "-C", str(worktree), "-"]
    artifact, _ = run_fake("codex", bare, manifest, "improve")
    assert is_placeholder(artifact)  # the commit failed: .git is read-only
    assert git(worktree, "rev-parse", "HEAD") == manifest["last_kept_commit"]
    git(worktree, "checkout", "--", "value.txt")
    shipped = codex_argv(request_for(manifest), None, ())[1:]
    artifact, _ = run_fake("codex", shipped, manifest, "improve")
    assert artifact["status"] == "candidate"
    assert artifact["candidate_commit"] == git(worktree, "rev-parse", "HEAD")


def test_the_fake_claude_denies_what_accept_edits_denies(repo: Repo, mission_dir: Path) -> None:
    manifest = prepared(repo)
    worktree = Path(manifest["worktree_path"])
    bare = ["-p", "--output-format", "stream-json", "--verbose", "--permission-mode",
            "acceptEdits"]  # fmt: skip
    artifact, events = run_fake("claude", bare, manifest, "improve")
    assert is_placeholder(artifact)
    denied = events[-1]["permission_denials"]
    assert [d["tool_name"] for d in denied] == ["Bash"]
    assert denied[0]["tool_input"]["command"].startswith("git commit")
    git(worktree, "checkout", "--", "value.txt")
    shipped = claude_argv(request_for(manifest), None, (), None)[1:]
    artifact, events = run_fake("claude", shipped, manifest, "unread")  # Write before Read
    assert is_placeholder(artifact) and events[-1]["permission_denials"] == []
    git(worktree, "reset", "-q", "--hard", manifest["last_kept_commit"])
    artifact, events = run_fake("claude", shipped, manifest, "improve")
    assert artifact["candidate_commit"] == git(worktree, "rev-parse", "HEAD")


@pytest.mark.parametrize(
    ("agent", "error"),
    [("codex", "scripted: the model is unavailable for this key"),
     ("claude", "API Error: 400 scripted: the model is unavailable for this key"),
     ("aider", "litellm.InternalServerError: InternalServerError: OpenAIException - "
               "Internal Server Error")],
)  # fmt: skip
def test_an_api_failure_is_recorded_with_its_own_text(
    repo: Repo, mission_dir: Path, agent: str, error: str
) -> None:
    run_with(repo, agent, "api_error", "--max-iterations", "1")
    failed = iterations(repo)[1]
    assert failed["agent"]["success"] is False and failed["agent"]["error"] == error
    code = 0 if agent == "aider" else 1  # aider retries, prints its errors and exits 0
    assert f"agent exited with code {code}: {error}" in failed["notes"]
    if agent != "aider":  # aider's artifact comes from git: an unchanged tree is a noop
        assert "agent session wrote no candidate artifact" in failed["notes"]


@pytest.mark.parametrize("agent", ["codex", "claude", "aider"])
def test_sessions_whose_model_calls_failed_fail_the_run(
    repo: Repo, mission_dir: Path, agent: str
) -> None:
    env = {"PATH": f"{FAKES}{os.pathsep}{os.environ['PATH']}", "FAKE_PLAN": "api_error"}
    done = cli(
        "run", "missions/demo", "--agent", agent, "--run-tag", "T1", "--max-iterations", "5",
        "--max-agent-failures", "2", "--json", cwd=repo.root, env=env,
    )  # fmt: skip
    assert done.returncode == 1, done.stderr
    assert json.loads(done.stdout)["status"] == "failed"
    assert [it["agent"]["success"] for it in iterations(repo)[1:]] == [False, False]


def test_a_claude_permission_denial_is_a_note_and_a_failure_reason(
    repo: Repo, mission_dir: Path
) -> None:
    run_with(repo, "claude", "escape", "--max-iterations", "1")
    it = iterations(repo)[1]
    outside = Path(it["agent"]["denials"][0].removeprefix("Write: "))
    assert outside.name == "escaped.txt" and not outside.exists()
    assert it["decision"] == "noop"
    assert f"agent was denied: Write: {outside}" in it["notes"]


@pytest.mark.parametrize(
    ("agent", "override", "ours"),
    [("codex", ["--sandbox", "danger-full-access"], "--sandbox"),
     ("claude", ["--permission-mode", "bypassPermissions"], "--permission-mode")],
)  # fmt: skip
def test_a_users_own_permission_flag_replaces_ours(
    repo: Repo, mission_dir: Path, tmp_path: Path, agent: str, override: list[str], ours: str
) -> None:
    argv_file = tmp_path / "argv.json"
    extra = [arg for flag in override for arg in ("--agent-arg", flag)]
    # --sandbox none: the fake writes its argv outside the repository, which a sandbox forbids
    summary = run_with(repo, agent, "improve", "--max-iterations", "1", "--sandbox", "none",
                       *extra, env={"FAKE_ARGV_FILE": str(argv_file)})  # fmt: skip
    assert summary["counts"] == {"keep": 1}
    argv = json.loads(argv_file.read_text())
    assert argv.count(ours) == 1 and argv[argv.index(ours) + 1] == override[1]
