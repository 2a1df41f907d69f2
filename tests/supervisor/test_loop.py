"""The loop: its transition table, limits, signals, timeouts and operator stops, resumes."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from autoresearch.agents.base import AgentResult, Usage
from autoresearch.contracts.candidate import MSG_NOTES
from autoresearch.states import DecisionKind
from autoresearch.supervisor.loop import (
    Action,
    LoopLimits,
    LoopState,
    next_action,
    session_failure,
    trailing_noops,
)
from helpers import (
    GIT_ENV,
    Repo,
    cli,
    decisions,
    git,
    host_pid,
    kill_tree,
    pid_alive,
    until,
)

CMD_AGENT = f"cmd:{sys.executable} {Path(__file__).parents[1] / 'agents/fakes/cmd_agent.py'}"
RUN_ID = "missions-demo-t1"


def state(**kw: object) -> LoopState:
    base = dict(status="running", stop_requested=None, iteration=3, trailing_noops=0,
                agent_failures=0, pending_artifact=False)  # fmt: skip
    base.update(kw)
    return LoopState(**base)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("kw", "limits", "expected"),
    [
        ({"status": "failed"}, LoopLimits(), Action("exit")),
        ({"stop_requested": "operator stop"}, LoopLimits(), Action("finish", "stopped", "operator stop")),
        ({"pending_artifact": True}, LoopLimits(max_iterations=3), Action("process_pending")),
        ({}, LoopLimits(max_iterations=3), Action("finish", "completed", "max iterations reached (3)")),
        ({}, LoopLimits(max_iterations=4), Action("launch")),
        ({"trailing_noops": 3}, LoopLimits(), Action("finish", "stopped", "repeated noop limit reached (3)")),
        ({"trailing_noops": 9}, LoopLimits(max_noops=0), Action("launch")),
        ({"agent_failures": 2, "last_failure": "agent exited with code 1"},
         LoopLimits(max_agent_failures=2),
         Action("finish", "failed", "repeated agent failure limit reached (2)",
                "agent exited with code 1")),
        # failed sessions record noops too: the failure limit wins, the run failed
        ({"agent_failures": 3, "trailing_noops": 3, "last_failure": "agent could not start: x"},
         LoopLimits(),
         Action("finish", "failed", "repeated agent failure limit reached (3)",
                "agent could not start: x")),
        ({"agent_failures": 2, "trailing_noops": 3}, LoopLimits(),
         Action("finish", "stopped", "repeated noop limit reached (3)")),
        ({"agent_failures": 5}, LoopLimits(max_agent_failures=0), Action("launch")),
        # the last of --max-iterations sessions failed too: a broken agent is no completed run
        ({"iteration": 3, "agent_failures": 3, "last_failure": "agent exited with code 2"},
         LoopLimits(max_iterations=3),
         Action("finish", "failed", "repeated agent failure limit reached (3)",
                "agent exited with code 2")),
        ({"iteration": 3, "agent_failures": 2}, LoopLimits(max_iterations=3),
         Action("finish", "completed", "max iterations reached (3)")),
        # the latest failure a malformed artifact (issue 38): its message ends the run (§4)
        ({"agent_failures": 3, "last_failure": MSG_NOTES, "failure_stop": MSG_NOTES},
         LoopLimits(),
         Action("finish", "failed", MSG_NOTES, "repeated agent failure limit reached (3)")),
        ({"agent_failures": 2, "failure_stop": MSG_NOTES}, LoopLimits(), Action("launch")),
    ],
)  # fmt: skip
def test_next_action(kw: dict, limits: LoopLimits, expected: Action) -> None:
    assert next_action(state(**kw), limits) == expected


NOOP, KEEP, DISCARD, INTERRUPTED = (DecisionKind.NOOP, DecisionKind.KEEP, DecisionKind.DISCARD,
                                     DecisionKind.INTERRUPTED)  # fmt: skip


@pytest.mark.parametrize(
    ("newest_first", "expected"),
    [
        ([], 0),
        ([NOOP], 1),
        ([NOOP, NOOP, NOOP], 3),
        ([KEEP, NOOP, NOOP], 0),  # the latest session changed something: counted afresh
        ([NOOP, NOOP, DISCARD, NOOP], 2),
        ([NOOP, INTERRUPTED, NOOP], 1),  # an interrupted session is no noop
    ],
)
def test_trailing_noops_counts_the_latest_noops_in_a_row(
    newest_first: list[DecisionKind], expected: int
) -> None:
    """The one count the single loop and the lanes give the noop limit (`loop_state`)."""
    assert trailing_noops(newest_first) == expected
    assert trailing_noops(iter(newest_first)) == expected


def agent_result(**kw: Any) -> AgentResult:
    usage = Usage(success=kw.pop("success", None), error=kw.pop("error", None),
                  denials=kw.pop("denials", []))  # fmt: skip
    return AgentResult(agent="codex", exit_code=kw.pop("exit_code", 0), duration_ms=1200,
                       usage=usage, **kw)  # fmt: skip


@pytest.mark.parametrize(
    ("result", "decision", "wrote", "expected"),
    [
        (agent_result(), "keep", True, None),
        (agent_result(), "noop", True, None),  # an agent without ideas is no failure
        (agent_result(), "noop", False, "agent session wrote no candidate artifact"),
        (agent_result(exit_code=None, spawn_error="[Errno 2] No such file"), "noop", False,
         "agent could not start: [Errno 2] No such file"),
        (agent_result(exit_code=127), "noop", False, "agent exited with code 127"),
        (agent_result(success=False, error="API Error: 529 overloaded"), "noop", False,
         "agent exited with code 0: API Error: 529 overloaded"),
        (agent_result(denials=["Bash: git commit -qam x"]), "noop", False,
         "agent was denied: Bash: git commit -qam x"),
        (agent_result(exit_code=None, timed_out=True), "interrupted", True,
         "agent timed out after 1 s"),
        (agent_result(exit_code=None, cancelled=True), "interrupted", True, None),
        # a crash that still left a candidate which was judged is not a failed session
        (agent_result(exit_code=1), "discard", True, None),
        (agent_result(denials=["Write: /x"]), "keep", True, None),
    ],
)  # fmt: skip
def test_session_failure(
    result: AgentResult, decision: str, wrote: bool, expected: str | None
) -> None:
    assert session_failure(result, decision, wrote) == expected


def start_run(repo: Repo, plan: str, *extra: str) -> subprocess.Popen[str]:
    env = {**os.environ, **GIT_ENV, "FAKE_PLAN": plan}
    return subprocess.Popen(
        [sys.executable, "-m", "autoresearch", "run", "missions/demo", "--agent", CMD_AGENT,
         "--run-tag", "T1", "--json", *extra],
        cwd=repo.root, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip


def wait_for(path: Path, timeout: float = 30) -> None:
    """Until `path` has something in it: write_text creates the file before it writes, and a
    test that reads a pid note the moment it exists may read nothing."""
    until(lambda: path.exists() and path.read_text().strip(), timeout, f"{path} written")


def status(repo: Repo) -> dict:
    return json.loads(cli("status", RUN_ID, "--json", cwd=repo.root).stdout)


def worktree(repo: Repo) -> Path:
    return repo.root / ".autoresearch/worktrees" / RUN_ID


def test_max_iterations_completes(repo: Repo, mission_dir: Path) -> None:
    proc = start_run(repo, "improve,worse,improve", "--max-iterations", "3")
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    summary = json.loads(out)
    assert (summary["status"], summary["stop_reason"]) == (
        "completed",
        "max iterations reached (3)",
    )
    assert summary["counts"] == {"keep": 2, "discard": 1}
    assert summary["baseline_score"] == 1.0 and summary["best_score"] == 3.0
    assert "keep" in err  # progress lines on stderr


def test_noop_limit_stops(repo: Repo, mission_dir: Path) -> None:
    proc = start_run(repo, "improve,noop", "--max-noops", "2")
    out, _ = proc.communicate(timeout=120)
    summary = json.loads(out)
    assert (summary["status"], summary["stop_reason"]) == (
        "stopped",
        "repeated noop limit reached (2)",
    )
    assert [it["decision"] for it in status(repo)["iterations"]] == [
        "baseline",
        "keep",
        "noop",
        "noop",
    ]


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_ctrl_c_or_sigterm_interrupts_saves_the_work_and_resumes(
    repo: Repo, mission_dir: Path, sig: signal.Signals
) -> None:
    proc = start_run(repo, "improve,hang", "--max-iterations", "3")
    wait_for(worktree(repo) / ".autoresearch/agent-2.started")
    agent_pid = host_pid((worktree(repo) / ".autoresearch/agent-2.started").read_text())
    # The signal comes once the agent's edit (2 -> 3) is on disk: it is the work to save.
    value = worktree(repo) / "value.txt"
    until(lambda: value.read_text().strip() == "3", what="the agent's edit")
    proc.send_signal(sig)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err  # a script tells the stop from `completed`
    assert f"autoresearch resume {RUN_ID}" in err
    assert not pid_alive(agent_pid)
    summary = json.loads(out)
    assert summary["status"] == "running" and summary["interrupted"] is True
    its = status(repo)["iterations"]
    assert [it["decision"] for it in its] == ["baseline", "keep", "interrupted"]
    patch = Path(summary["logs_dir"]) / "iteration-0002-interrupted.patch"
    assert "+3" in patch.read_text()  # the agent's unsaved edit (2 -> 3) was kept
    assert git(worktree(repo), "status", "--porcelain") == ""
    done = cli("resume", RUN_ID, "--json", cwd=repo.root, env={"FAKE_PLAN": "improve"})
    assert done.returncode == 0, done.stderr
    final = json.loads(done.stdout)  # resume --json: the manifest, the loop summary inside
    assert (final["status"], final["stop_reason"]) == ("completed", "max iterations reached (3)")
    assert final["run_id"] == RUN_ID and final["last_kept_score"] == 3.0
    assert final["loop"]["best_score"] == 3.0 and final["loop"]["sessions"] == 1


def test_agent_timeout_saves_the_work_and_continues(repo: Repo, mission_dir: Path) -> None:
    proc = start_run(repo, "hang,improve", "--max-iterations", "2", "--agent-timeout", "1")
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    its = status(repo)["iterations"]
    assert [it["decision"] for it in its] == ["baseline", "interrupted", "keep"]
    assert its[1]["agent"]["timed_out"] is True
    assert any("agent timed out" in n for n in its[1]["notes"])
    assert (
        "+2" in (Path(json.loads(out)["logs_dir"]) / "iteration-0001-timed-out.patch").read_text()
    )


def test_operator_stop_from_another_process(repo: Repo, mission_dir: Path) -> None:
    proc = start_run(repo, "improve,hang", "--max-iterations", "5")
    wait_for(worktree(repo) / ".autoresearch/agent-2.started")
    done = cli("stop", "--reason", "lunch", cwd=repo.root)
    assert done.returncode == 0 and "stop requested" in done.stdout
    out, _ = proc.communicate(timeout=60)
    summary = json.loads(out)
    assert (summary["status"], summary["stop_reason"]) == ("stopped", "operator stop")
    assert status(repo)["manifest"]["stop_note"] == "lunch"
    assert [it["decision"] for it in status(repo)["iterations"]] == [
        "baseline",
        "keep",
        "interrupted",
    ]


def test_a_long_session_does_not_hold_back_the_backup_the_last_decision_owes(
    repo: Repo, mission_dir: Path
) -> None:
    """The first keep comes within the backup throttle's second of prepare's backup: its
    backup is skipped and owed, and taken while the next session works (the driver's stop
    poll), not once that session ends (before: the backup held the baseline alone for the
    whole session)."""
    proc = start_run(repo, "improve,hang", "--max-iterations", "3")
    try:
        wait_for(worktree(repo) / ".autoresearch/agent-2.started")
        assert decisions(repo.root) == [(0, "baseline"), (1, "keep")]
        until(
            lambda: decisions(repo.root, backup=True) == [(0, "baseline"), (1, "keep")],
            timeout=5,  # due a second after prepare's backup; the stop poll reads every second
            what="the keep in the newest backup",
        )
        assert cli("stop", cwd=repo.root).returncode == 0
        proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            kill_tree(proc.pid, repo.root)  # the hanging agent leads its own group
            proc.kill()
            proc.communicate()


def test_crashing_agent_is_a_noop_with_a_note(repo: Repo, mission_dir: Path) -> None:
    proc = start_run(repo, "crash", "--max-iterations", "2", "--max-agent-failures", "0")
    proc.communicate(timeout=120)
    its = status(repo)["iterations"]
    assert [it["decision"] for it in its] == ["baseline", "noop", "noop"]
    assert its[1]["agent"]["exit_code"] == 3
    assert "agent exited with code 3" in its[1]["notes"]


def demo_history(directory: Path) -> tuple[list[tuple[str, str]], float]:
    listing = json.loads(cli("--repo", str(directory), "status", "--json", cwd=directory).stdout)
    run_id = listing["runs"][0]["run_id"]
    details = json.loads(
        cli("--repo", str(directory), "status", run_id, "--json", cwd=directory).stdout
    )
    history = [(it["decision"], it["description"]) for it in details["iterations"]]
    return history, details["last_kept_score"]


def test_a_killed_run_resumes_to_the_same_result(tmp_path: Path) -> None:
    straight, killed = tmp_path / "straight", tmp_path / "killed"
    assert cli("demo", str(straight), "--iterations", "8", cwd=tmp_path).returncode == 0
    done = cli("demo", str(killed), "--iterations", "8", cwd=tmp_path,
               env={"AUTORESEARCH_FAILPOINTS": "step.after_decided@4"})  # fmt: skip
    assert done.returncode == -signal.SIGKILL
    listing = json.loads(cli("--repo", str(killed), "status", "--json", cwd=tmp_path).stdout)
    run_id = listing["runs"][0]["run_id"]
    done = cli("--repo", str(killed), "resume", run_id, "--json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["status"] == "completed"
    assert demo_history(killed) == demo_history(straight)
