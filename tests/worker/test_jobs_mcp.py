"""Delegation jobs from the planning agent's side: the real MCP client against the in-memory
server, fake `cmd:` agents that behave like real ones (edit, stray, fail, hang)."""

from __future__ import annotations

import shlex
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import anyio
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "mcp"))

from mcp_helpers import Reply, Tools, connect
from worker_helpers import agent, group_members, job_repo, wait_for_file

from autoresearch.mcp.server import build_server
from autoresearch.paths import job_paths
from helpers import Repo, pid_alive

pytestmark = pytest.mark.anyio

CHECK_VALUE = {
    "name": "value set",
    "command": "grep -q 'VALUE = 2' src/app.py",
    "timeout_seconds": 30,
}


@pytest.fixture
def repo(tmp_path: Path) -> Repo:
    return job_repo(tmp_path / "repo")


def modifying(**extra: Any) -> dict[str, Any]:
    args: dict[str, Any] = {
        "prompt": "Set VALUE to 2 in src/app.py.",
        "verification_policy": {"task_kind": "modifying"},
        "agent": agent("edit", "src/app.py", "VALUE = 2"),
        "scoped_patch": {"paths": ["src"]},
        "checks": [CHECK_VALUE],
    }
    args.update(extra)
    return args


async def run_job(t: Tools, args: dict[str, Any]) -> Reply:
    started = await t.ok("job_start", args)
    assert started.data["state"] == "queued" and started.data["outcome"]["status"] == "running"
    done = await t.ok("job_wait", {"job_id": started.data["job_id"], "timeout_ms": 30_000})
    assert done.data["state"] != "queued" and done.data["outcome"]["status"] != "running", done.text
    return done


async def test_modifying_job_with_scope_and_check_is_accepted_with_evidence(repo: Repo) -> None:
    async with connect(build_server(repo.root)) as t:
        done = await run_job(t, modifying(include_diff=True))
    outcome = done.data["outcome"]
    assert done.data["contract_version"] == "outcome.v1"
    assert outcome["status"] == "accepted" and outcome["reason_codes"] == ["verification_passed"]
    assert outcome["retryable"] is False
    assert outcome["verification"] == {
        "executor": "passed",
        "scope": "passed",
        "checks": "passed",
        "workspace": "complete",
    }
    evidence = outcome["evidence"]
    assert evidence["changed_files"] == ["src/app.py"]
    [check] = evidence["checks"]
    assert check["command"] == CHECK_VALUE["command"] and check["exit_code"] == 0
    assert (
        check["status"] == "passed"
        and check["duration_ms"] >= 0
        and len(check["output_sha256"]) == 64
    )
    assert "+VALUE = 2" in evidence["diff"] and evidence["diff_truncated"] is False
    names = {a["name"] for a in evidence["artifacts"]}
    assert {"agent.log", "changes.patch", "check-01.log"} <= names
    for ref in evidence["artifacts"]:  # artifacts live in the repository, not in a temp dir
        assert Path(ref["path"]).is_relative_to(repo.root / ".autoresearch" / "jobs")
    assert (repo.root / "src/app.py").read_text() == "VALUE = 2\n"
    assert "accepted (verification_passed)" in done.text


async def test_read_only_job_that_edits_is_rejected_and_the_edit_is_left_for_the_caller(
    repo: Repo,
) -> None:
    async with connect(build_server(repo.root)) as t:
        done = await run_job(
            t,
            {
                "prompt": "Summarise src/app.py.",
                "verification_policy": {"task_kind": "read_only"},
                "agent": agent("edit", "src/app.py", "VALUE = 3"),
            },
        )
    assert done.data["outcome"]["status"] == "rejected"
    assert done.data["outcome"]["reason_codes"] == ["read_only_modified"]
    assert done.data["outcome"]["evidence"]["changed_files"] == ["src/app.py"]
    assert (repo.root / "src/app.py").read_text() == "VALUE = 3\n"  # reported, never reverted


async def test_read_only_job_that_only_reads_is_accepted(repo: Repo) -> None:
    async with connect(build_server(repo.root)) as t:
        done = await run_job(
            t,
            {
                "prompt": "Read.",
                "verification_policy": {"task_kind": "read_only"},
                "agent": agent("edit"),
            },
        )
    assert done.data["outcome"]["status"] == "accepted", done.text


async def test_out_of_scope_edit_is_a_scope_violation_and_is_kept(repo: Repo) -> None:
    stray = agent("edit", "src/app.py", "VALUE = 2", "docs/readme.md", "changed")
    async with connect(build_server(repo.root)) as t:
        done = await run_job(t, modifying(agent=stray))
    outcome = done.data["outcome"]
    assert outcome["status"] == "rejected" and outcome["reason_codes"] == ["scope_violation"]
    assert outcome["evidence"]["out_of_scope_files"] == ["docs/readme.md"]
    assert (repo.root / "docs/readme.md").read_text() == "changed\n"


async def test_diff_larger_than_allowed_is_a_scope_violation(repo: Repo) -> None:
    async with connect(build_server(repo.root)) as t:
        done = await run_job(t, modifying(scoped_patch={"paths": ["src"], "max_diff_bytes": 10}))
    assert done.data["outcome"]["reason_codes"] == ["scope_violation"]
    assert done.data["outcome"]["evidence"]["diff_bytes"] > 10


async def test_failing_check_and_failing_agent(repo: Repo) -> None:
    async with connect(build_server(repo.root)) as t:
        bad_check = {"command": "echo 'assert failed' >&2; exit 1", "timeout_seconds": 30}
        done = await run_job(t, modifying(checks=[bad_check]))
        outcome = done.data["outcome"]
        assert outcome["status"] == "failed" and outcome["reason_codes"] == ["check_failed"]
        assert outcome["retryable"] is True
        [check] = outcome["evidence"]["checks"]
        assert check["exit_code"] == 1 and "assert failed" in check["tail"]
        broken = await run_job(t, modifying(agent=agent("fail", "src/app.py", "VALUE = 2")))
    assert broken.data["outcome"]["reason_codes"] == ["executor_failed"]
    assert broken.data["outcome"]["evidence"]["executor"]["exit_code"] == 3
    assert broken.data["outcome"]["evidence"]["checks"] == []  # not run after a broken session


async def test_missing_scope_checks_and_policy_need_evidence(repo: Repo) -> None:
    async with connect(build_server(repo.root)) as t:
        done = await run_job(t, modifying(scoped_patch=None, checks=None))
        assert done.data["outcome"]["status"] == "needs_evidence"
        assert done.data["outcome"]["reason_codes"] == ["checks_missing", "scope_missing"]
        repo.git("checkout", "-q", "--", "src/app.py")
        nopolicy = await run_job(t, modifying(verification_policy=None))
    assert nopolicy.data["outcome"]["reason_codes"] == ["verification_policy_missing"]


async def test_changes_present_before_the_job_are_attributed(repo: Repo) -> None:
    repo.write("docs/readme.md", "the user's own edit\n")  # dirty before the job starts
    async with connect(build_server(repo.root)) as t:
        done = await run_job(t, modifying())
        evidence = done.data["outcome"]["evidence"]
        assert done.data["outcome"]["status"] == "accepted", done.text
        assert evidence["changed_files"] == ["src/app.py"]
        assert evidence["preexisting_files"] == ["docs/readme.md"]
        # The job touches the file the user had already changed: it cannot be attributed.
        touch = agent("edit", "src/app.py", "VALUE = 2", "docs/readme.md", "both")
        mixed = await run_job(t, modifying(agent=touch, scoped_patch={"paths": ["src", "docs"]}))
    assert mixed.data["outcome"]["reason_codes"] == ["preexisting_changes_unattributed"]
    assert mixed.data["outcome"]["evidence"]["unattributed_files"] == ["docs/readme.md"]


async def test_cancel_kills_the_whole_process_group_and_leaves_nothing(
    repo: Repo, tmp_path: Path
) -> None:
    pidfile = tmp_path / "hang.pids"
    async with connect(build_server(repo.root)) as t:
        started = await t.ok(
            "job_start", modifying(agent=agent("hang", str(pidfile)), sandbox="none")
        )
        job_id = started.data["job_id"]
        agent_pid, child_pid, pgid = map(int, wait_for_file(pidfile).split())
        assert group_members(pgid)  # the agent and its grandchild run
        polled = await t.ok("job_wait", {"job_id": job_id, "timeout_ms": 300})
        assert polled.data["outcome"]["status"] == "running"  # a poll timeout never cancels
        assert pid_alive(agent_pid)
        tail = await t.ok("job_tail", {"job_id": job_id})
        assert "hanging" in tail.data["text"]
        cancelled = await t.ok("job_cancel", {"job_id": job_id})
        assert cancelled.data["state"] == "cancelled"
        assert cancelled.data["outcome"]["status"] == "cancelled"
        assert group_members(pgid) == []
        assert not pid_alive(child_pid) and not pid_alive(agent_pid)
        runner = _runner_pid(repo, job_id)
        _until(lambda: not pid_alive(runner))
        again = await t.ok("job_get", {"job_id": job_id})
    assert again.data["outcome"]["reason_codes"] == ["job_cancelled"]


async def test_job_deadline_times_out_and_stops_the_agent(repo: Repo, tmp_path: Path) -> None:
    pidfile = tmp_path / "hang.pids"
    async with connect(build_server(repo.root)) as t:
        done = await run_job(
            t, modifying(agent=agent("hang", str(pidfile)), timeout_seconds=1.5, sandbox="none")
        )
    assert done.data["state"] == "timed_out"
    assert done.data["outcome"]["status"] == "timed_out" and done.data["outcome"]["retryable"]
    _, _, pgid = map(int, pidfile.read_text().split())
    assert group_members(pgid) == []


async def test_worktree_job_keeps_its_branch_until_applied_or_discarded(repo: Repo) -> None:
    async with connect(build_server(repo.root)) as t:
        done = await run_job(t, modifying(isolation="worktree"))
        assert done.data["outcome"]["status"] == "accepted", done.text
        result = done.data["result"]
        assert result["state"] == "pending" and result["branch"].startswith("autoresearch-job/")
        assert (repo.root / "src/app.py").read_text() == "VALUE = 1\n"  # main tree untouched
        assert repo.git("show", f"{result['branch']}:src/app.py") == "VALUE = 2"
        applied = await t.ok("job_apply", {"job_id": done.data["job_id"]})
        assert applied.data["result"]["state"] == "applied"
        assert (repo.root / "src/app.py").read_text() == "VALUE = 2\n"
        assert repo.git("branch", "--list", result["branch"]) == ""
        assert not Path(result["worktree"]).exists()
        assert Path(result["patch"]).is_file()  # the patch is kept
        # the text says where the change is now, never a branch that apply removed
        commit = result["commit"][:12]
        assert (
            f"  result: applied – the changes of {commit} are uncommitted edits in {repo.root} "
            f"now; branch {result['branch']} and its worktree are removed (the patch stays at "
            f"{result['patch']})"
        ) in applied.text, applied.text
        again = await t.error("job_apply", {"job_id": done.data["job_id"]})
        assert "nothing to apply" in again
        other = await run_job(
            t, modifying(isolation="worktree", agent=agent("edit", "src/app.py", "VALUE = 5"))
        )
        discarded = await t.ok("job_discard", {"job_id": other.data["job_id"]})
    assert discarded.data["result"]["state"] == "discarded"
    gone = discarded.data["result"]
    assert (
        f"  result: discarded – branch {gone['branch']} and its worktree are removed (commit "
        f"{gone['commit'][:12]} is on no branch now; the patch stays at {gone['patch']})"
    ) in discarded.text, discarded.text
    assert repo.git("branch", "--list", other.data["result"]["branch"]) == ""
    assert (repo.root / "src/app.py").read_text() == "VALUE = 2\n"


COMPILE_APP = f"{shlex.quote(sys.executable)} -m py_compile src/app.py"  # writes src/__pycache__/


async def test_a_worktree_jobs_patch_leaves_caches_out_and_applies_over_the_users(
    repo: Repo,
) -> None:
    repo.write(".gitignore", "")  # a project that does not ignore Python's caches
    repo.commit("no ignores")
    subprocess.run(COMPILE_APP, shell=True, cwd=repo.root, check=True)  # the user ran it too
    users_cache = next((repo.root / "src/__pycache__").iterdir())
    users_bytes = users_cache.read_bytes()
    compiled = {"name": "compiles", "command": COMPILE_APP, "timeout_seconds": 30}
    async with connect(build_server(repo.root)) as t:
        done = await run_job(t, modifying(isolation="worktree", checks=[CHECK_VALUE, compiled]))
        assert done.data["outcome"]["status"] == "accepted", done.text
        patch = Path(done.data["result"]["patch"]).read_text()
        assert "src/app.py" in patch and "__pycache__" not in patch
        applied = await t.ok("job_apply", {"job_id": done.data["job_id"]})
    assert applied.data["result"]["state"] == "applied"
    assert (repo.root / "src/app.py").read_text() == "VALUE = 2\n"
    assert users_cache.read_bytes() == users_bytes  # the user's own cache is left as it was


async def test_paths_outside_the_repository_are_refused(repo: Repo, tmp_path: Path) -> None:
    (tmp_path / "elsewhere").mkdir()
    (repo.root / "escape").symlink_to(tmp_path / "elsewhere")
    async with connect(build_server(repo.root)) as t:
        for bad in (
            ["../elsewhere"],
            [str(tmp_path / "elsewhere")],
            ["escape"],
            ["%2e%2e/elsewhere"],
        ):
            message = await t.error("job_start", modifying(allowed_dirs=bad))
            assert message.startswith("autoresearch_path_outside_sandbox: "), message
        message = await t.error("job_start", modifying(scoped_patch={"paths": ["src/../../x"]}))
        assert message.startswith("autoresearch_path_outside_sandbox: ")
        message = await t.error("job_start", modifying(allowed_dirs=[".autoresearch"]))
        assert "state folder" in message
        assert (await t.ok("job_list")).data["jobs"] == []
        assert "autoresearch_job_not_found" in await t.error("job_get", {"job_id": "job_nope"})


async def test_jobs_beyond_the_limit_queue_and_run_in_order(
    repo: Repo, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("AUTORESEARCH_WORKER_MAX_JOBS", "1")
    gate = tmp_path / "finish"
    async with connect(build_server(repo.root)) as t:
        first = await t.ok(
            "job_start",
            modifying(agent=agent("wait", str(gate), "src/a.py", "a"), checks=None, sandbox="none"),
        )
        second = await t.ok(
            "job_start", modifying(agent=agent("edit", "src/b.py", "b"), checks=None)
        )
        # Polled, not slept: on a loaded machine the first runner takes a while to start.
        deadline = time.monotonic() + 30
        a = await t.ok("job_get", {"job_id": first.data["job_id"]})
        while a.data["state"] == "queued" and time.monotonic() < deadline:
            await anyio.sleep(0.05)
            a = await t.ok("job_get", {"job_id": first.data["job_id"]})
        b = await t.ok("job_get", {"job_id": second.data["job_id"]})
        assert a.data["state"] == "running", _runner_said(repo, a)
        assert b.data["state"] == "queued", _runner_said(repo, b)
        assert b.data["outcome"]["reason_codes"] == ["job_queued"]
        listed = await t.ok("job_list", {"live_only": True})
        assert [j["job_id"] for j in listed.data["jobs"]] == [
            second.data["job_id"],
            first.data["job_id"],
        ]
        gate.touch()
        done_b = await t.ok("job_wait", {"job_id": second.data["job_id"], "timeout_ms": 30_000})
        done_a = await t.ok("job_get", {"job_id": first.data["job_id"]})
    assert done_a.data["finished_at"] <= done_b.data["started_at"]


def _runner_said(repo: Repo, job: Reply) -> str:
    """The job as the server gave it and its runner's log: why a job ended unlooked-for."""
    log = job_paths(repo.root, job.data["job_id"]).runner_log
    text = log.read_text(errors="replace") if log.exists() else "(no runner log)"
    return f"{job.text}\n--- runner log ---\n{text[-4000:]}"


def _runner_pid(repo: Repo, job_id: str) -> int:
    from autoresearch.journal import jobs as store
    from autoresearch.worker.jobs import open_journal

    with open_journal(repo.root) as journal:
        job = store.get_job(journal, job_id)
    assert job is not None and job.runner_pid is not None
    return job.runner_pid


def _until(condition: Any, limit: float = 10.0) -> None:
    end = time.monotonic() + limit
    while time.monotonic() < end:
        if condition():
            return
        time.sleep(0.05)
    raise AssertionError("condition never held")


async def test_secrets_are_redacted_from_evidence_and_tails(repo: Repo) -> None:
    leak = "sk-live0123456789abcdefXYZ"
    check = {"command": f"echo 'using {leak}'; exit 1", "timeout_seconds": 30}
    async with connect(build_server(repo.root)) as t:
        done = await run_job(t, modifying(checks=[check], agent=agent("edit", "src/app.py", leak)))
        tail = await t.ok("job_tail", {"job_id": done.data["job_id"], "log": "checks"})
    [ran] = done.data["outcome"]["evidence"]["checks"]
    assert leak not in ran["tail"] and "[REDACTED]" in ran["tail"]
    assert leak not in ran["command"]
    assert leak not in tail.data["text"] and "[REDACTED]" in tail.data["text"]
