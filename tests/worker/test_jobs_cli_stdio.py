"""Jobs through the other doors: `autoresearch job …` for people, `autoresearch mcp` over stdio
(what Claude Code and Codex launch) restarted mid-job, and a runner killed mid-job."""

from __future__ import annotations

import json
import os
import signal
import sys
import time
from pathlib import Path

import pytest
from mcp import StdioServerParameters

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "mcp"))

from mcp_helpers import connect
from worker_helpers import UNBOXED, agent, group_members, job_repo, wait_for_file

from autoresearch.children import job_tag
from autoresearch.journal import jobs as store
from autoresearch.journal.children import children
from autoresearch.journal.db import Journal
from autoresearch.worker.jobs import open_journal
from helpers import Repo, cli, pid_alive

CHECK = "grep -q 'VALUE = 2' src/app.py"


@pytest.fixture
def repo(tmp_path: Path) -> Repo:
    return job_repo(tmp_path / "repo")


def start(repo: Repo, *args: str) -> str:
    done = cli("job", "start", "Set VALUE to 2.", "--json", *args, cwd=repo.root)
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["state"] == "queued"
    return str(data["job_id"])


def test_cli_start_wait_get_list_tail(repo: Repo) -> None:
    edit = agent("edit", "src/app.py", "VALUE = 2")
    job_id = start(
        repo, "--task-kind", "modifying", "--agent", edit, "--scope", "src", "--check", CHECK
    )
    waited = cli("job", "wait", job_id, "--json", cwd=repo.root)
    assert waited.returncode == 0, waited.stdout + waited.stderr
    outcome = json.loads(waited.stdout)["outcome"]
    assert outcome["status"] == "accepted" and outcome["evidence"]["checks"][0]["command"] == CHECK
    text = cli("job", "get", job_id, cwd=repo.root).stdout
    assert f"job {job_id}: accepted (verification_passed)" in text and "changed: src/app.py" in text
    assert "wrote src/app.py" in cli("job", "tail", job_id, cwd=repo.root).stdout
    # A read-only job that edits: the verdict is not accepted, so `wait` exits 1.
    ro = start(repo, "--task-kind", "read_only", "--agent", agent("edit", "docs/readme.md", "x"))
    rejected = cli("job", "wait", ro, "--json", cwd=repo.root)
    assert rejected.returncode == 1
    assert json.loads(rejected.stdout)["outcome"]["reason_codes"] == ["read_only_modified"]
    listed = json.loads(cli("job", "list", "--json", cwd=repo.root).stdout)["jobs"]
    assert [j["job_id"] for j in listed] == [ro, job_id]
    bad = cli("job", "start", "x", "--dir", "/", cwd=repo.root)
    assert bad.returncode == 2 and bad.stderr.startswith(
        "autoresearch: autoresearch_path_outside_sandbox: "
    )
    missing = cli("job", "get", "job_missing", cwd=repo.root)
    assert missing.returncode == 2 and "autoresearch_job_not_found" in missing.stderr


def test_a_job_whose_agent_is_not_installed_is_refused_before_it_is_queued(repo: Repo) -> None:
    # as `run` refuses it: before, the job was accepted and ended failed later
    done = cli(
        "job", "start", "x", "--agent", "codex", cwd=repo.root, env={"PATH": "/usr/bin:/bin"}
    )
    assert (done.returncode, done.stderr) == (
        2,
        "autoresearch: agent codex is not installed: no 'codex' executable on PATH "
        "(/usr/bin:/bin)\n",
    )
    assert json.loads(cli("job", "list", "--json", cwd=repo.root).stdout)["jobs"] == []


def test_cli_apply_says_where_the_change_is_not_a_removed_branch(repo: Repo) -> None:
    edit = agent("edit", "src/app.py", "VALUE = 2")
    job_id = start(repo, "--task-kind", "modifying", "--agent", edit, "--isolation", "worktree")
    assert cli("job", "wait", job_id, cwd=repo.root).returncode in (0, 1)
    result = json.loads(cli("job", "get", job_id, "--json", cwd=repo.root).stdout)["result"]
    assert f"  result: pending on branch {result['branch']}" in (
        cli("job", "get", job_id, cwd=repo.root).stdout
    )
    applied = cli("job", "apply", job_id, cwd=repo.root)
    assert applied.returncode == 0, applied.stderr
    assert repo.git("branch", "--list", result["branch"]) == ""
    assert f"on branch {result['branch']}" not in applied.stdout, applied.stdout
    assert (
        f"  result: applied – the changes of {result['commit'][:12]} are uncommitted edits in "
        f"{repo.root} now; branch {result['branch']} and its worktree are removed"
    ) in applied.stdout, applied.stdout


def test_cli_wait_timeout_does_not_cancel_and_cancel_leaves_no_process(
    repo: Repo, tmp_path: Path
) -> None:
    pidfile = tmp_path / "pids"
    job_id = start(
        repo, "--task-kind", "modifying", "--agent", agent("hang", str(pidfile)), *UNBOXED
    )
    _, _, pgid = map(int, wait_for_file(pidfile).split())
    waited = cli("job", "wait", job_id, "--timeout", "0.3", "--json", cwd=repo.root)
    assert waited.returncode == 124 and json.loads(waited.stdout)["outcome"]["status"] == "running"
    assert group_members(pgid)
    cancelled = cli("job", "cancel", job_id, "--json", cwd=repo.root)
    assert cancelled.returncode == 0, cancelled.stderr
    assert json.loads(cancelled.stdout)["state"] == "cancelled"
    assert group_members(pgid) == []


def test_stdio_server_restarted_mid_job_loses_nothing(repo: Repo, tmp_path: Path) -> None:
    import anyio

    gate = tmp_path / "finish"
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "autoresearch", "mcp"],
        cwd=repo.root,
        env=dict(os.environ),
    )
    args = {
        "prompt": "Set VALUE to 2.",
        "verification_policy": {"task_kind": "modifying"},
        "agent": agent("wait", str(gate), "src/app.py", "VALUE = 2"),
        "scoped_patch": {"paths": ["src"]},
        "checks": [{"command": CHECK}],
        "sandbox": "none",  # the `wait` fake waits for a file outside the repository
    }

    async def first() -> str:
        async with connect(params) as t:
            started = await t.ok("job_start", args)
            return str(started.data["job_id"])

    async def second(job_id: str) -> dict:
        async with connect(params) as t:
            done = await t.ok("job_wait", {"job_id": job_id, "timeout_ms": 30_000})
            return done.data

    job_id = anyio.run(first)  # the server exits with its client, mid-job
    midway = json.loads(cli("job", "get", job_id, "--json", cwd=repo.root).stdout)
    assert midway["state"] in ("queued", "running"), midway
    gate.touch()
    data = anyio.run(second, job_id)
    assert data["state"] == "completed" and data["outcome"]["status"] == "accepted", data


def test_a_runner_killed_mid_job_is_reported_lost_and_its_agent_stopped(
    repo: Repo, tmp_path: Path
) -> None:
    pidfile = tmp_path / "pids"
    job_id = start(
        repo, "--task-kind", "modifying", "--agent", agent("hang", str(pidfile)), *UNBOXED
    )
    agent_pid, _, pgid = map(int, wait_for_file(pidfile).split())
    runner = json.loads(cli("job", "get", job_id, "--json", cwd=repo.root).stdout)
    assert runner["state"] == "running"
    with open_journal(repo.root) as journal:
        record = store.get_job(journal, job_id)
        # The agent's group is in the one child registry, under the job's owner.
        deadline = time.monotonic() + 10
        while (pgid, "agent") not in _registered(journal, job_id):
            assert time.monotonic() < deadline, _registered(journal, job_id)
            time.sleep(0.05)
    assert record is not None and record.runner_pid is not None
    os.kill(record.runner_pid, signal.SIGKILL)
    for _ in range(100):
        if not pid_alive(record.runner_pid):
            break
        time.sleep(0.05)
    got = cli("job", "get", job_id, "--json", cwd=repo.root)
    data = json.loads(got.stdout)
    assert data["state"] == "lost" and "died" in data["error"]
    assert data["outcome"]["status"] == "failed" and data["outcome"]["reason_codes"] == [
        "executor_failed"
    ]
    assert data["outcome"]["verification"]["executor"] == "lost"
    assert group_members(pgid) == [] and not pid_alive(agent_pid)
    with open_journal(repo.root) as journal:
        assert _registered(journal, job_id) == set()


def _registered(journal: Journal, job_id: str) -> set[tuple[int, str]]:
    return {(c.pgid, c.role) for c in children(journal, job_tag(job_id).owner)}


def test_mcp_help_names_every_tool(repo: Repo) -> None:
    from mcp_helpers import TOOL_NAMES

    text = " ".join(cli("mcp", "--help", cwd=repo.root).stdout.split())
    assert [name for name in sorted(TOOL_NAMES) if name not in text] == []


SECRET = "supersecretvalue123"


def test_cli_text_views_mask_secrets(repo: Repo) -> None:
    env = {"MY_API_KEY": SECRET}
    done = cli(
        "job", "start", f"fix {SECRET}", "--agent", agent("edit", "src/app.py", "VALUE = 2"),
        cwd=repo.root, env=env,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    job_id = done.stdout.strip()
    assert cli("job", "wait", job_id, cwd=repo.root, env=env).returncode in (0, 1)
    for args in (("list",), ("get", job_id), ("tail", job_id, "--log", "runner")):
        shown = cli("job", *args, cwd=repo.root, env=env)
        assert shown.returncode == 0, shown.stderr
        assert SECRET not in shown.stdout + shown.stderr
    assert job_id in cli("job", "list", cwd=repo.root, env=env).stdout


def test_runner_crash_takes_the_internal_error_path(tmp_path: Path) -> None:
    # The secret is in the repository's path, so it is in the crash's message too.
    repo = job_repo(tmp_path / f"repo-{SECRET}")
    env = {"MY_API_KEY": SECRET, "AUTORESEARCH_WORKER_MAX_JOBS": "1"}
    pidfile = tmp_path / "pids"
    hang = cli(
        "job", "start", "hang", "--agent", agent("hang", str(pidfile)), *UNBOXED,
        cwd=repo.root, env=env,
    ).stdout.strip()  # fmt: skip
    wait_for_file(pidfile)
    queued = cli(
        "job", "start", "queued", "--agent", agent("edit", "a", "b"), cwd=repo.root, env=env
    )
    crashing = queued.stdout.strip()
    # The prompt's place taken by a folder: writing it fails with an OSError the engine does
    # not name, as a full disk would.
    (repo.root / ".autoresearch" / "jobs" / crashing / "prompt.md").mkdir(parents=True)
    assert cli("job", "cancel", hang, cwd=repo.root, env=env).returncode == 0
    cli("job", "wait", crashing, "--timeout", "30", cwd=repo.root, env=env)
    with open_journal(repo.root) as journal:
        job = store.get_job(journal, crashing)
    assert job is not None and job.state == "failed"
    error = job.error or ""
    assert error.startswith("internal error (IsADirectoryError: "), error
    assert SECRET not in error
    # The line names the log with the secret masked, like every view.
    log = Path(error.rsplit("(details in ", 1)[1].rstrip(")").replace("[REDACTED]", SECRET))
    assert log.parent == repo.root / ".autoresearch" / "crash"
    assert "Traceback" in log.read_text()
