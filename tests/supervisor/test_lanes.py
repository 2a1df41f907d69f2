"""`run --lanes K` end to end through the real CLI: lanes that conflict on purpose, replays
evaluated as replayed, one evaluation slot, budgets, status and kill -9 of the driver."""

from __future__ import annotations

import itertools
import json
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from autoresearch.agents.base import AgentResult, Usage
from autoresearch.supervisor import lifecycle
from autoresearch.supervisor.loop import LoopLimits, StopSignal, run_loop
from autoresearch.supervisor.prepare import prepare
from helpers import (
    GIT_ENV,
    Repo,
    artifact,
    cli,
    edit_and_commit,
    git,
    sandbox_text,
    until,
    write_artifact,
)

AGENT = f"cmd:{sys.executable} {Path(__file__).parent / 'fakes/lane_agent.py'}"
RUN_ID = "missions-demo-t1"

# score = value.txt + one per bonus file; each evaluation appends "start end" to EVAL_LOG
EVALUATOR = textwrap.dedent(
    """\
    import glob, json, os, time
    start = time.time()
    time.sleep(float(os.environ.get("EVAL_SLEEP", "0")))
    score = float(open("value.txt").read()) + len(glob.glob("bonus-*.txt"))
    end = time.time()
    if os.environ.get("EVAL_LOG"):
        with open(os.environ["EVAL_LOG"], "a") as f:
            f.write(f"{start} {end}\\n")
    print(json.dumps({"pass": True, "score": score}))
    """
)


def _mission(repo: Repo, extra: str = "") -> None:
    repo.write("scripts/score.py", EVALUATOR)
    # unboxed: the evaluator and the agents log to files outside the repository (sandboxed
    # lanes: tests/test_confine.py)
    repo.mission(sandbox=sandbox_text("python3 scripts/score.py", extra=extra, unboxed=True))


def _run(repo: Repo, *args: str, env: dict[str, str] | None = None) -> dict[str, Any]:
    done = cli("run", "missions/demo", "--agent", AGENT, "--run-tag", "T1", "--json", *args,
               cwd=repo.root, env=env, timeout=180)  # fmt: skip
    assert done.returncode == 0, done.stderr
    return {**json.loads(done.stdout), "stderr": done.stderr}


def _status(repo: Repo) -> dict[str, Any]:
    return dict(json.loads(cli("status", RUN_ID, "--json", cwd=repo.root).stdout))


def _run_branch_head(repo: Repo) -> str:
    return repo.git("rev-parse", "autoresearch/missions-demo/t1")


def test_conflicting_lanes_discard_with_the_pinned_reason(repo: Repo) -> None:
    _mission(repo)
    # both lanes start from the baseline and write value.txt: the second cannot be replayed
    plan = "1:value=5:0.2,2:value=9:1.5"
    summary = _run(repo, "--lanes", "2", "--max-iterations", "2", env={"LANE_PLAN": plan})
    assert summary["status"] == "completed"
    its = _status(repo)["iterations"][1:]
    assert [(it["decision"], it["decision_reason"]) for it in its] == [
        ("keep", "score improved over last kept score"),
        ("discard", "replay conflict"),
    ]
    assert its[1]["evaluator"] is None  # never measured
    # the live line's row says why, not a bare discard with no score
    (row,) = [line for line in summary["stderr"].splitlines() if line.startswith("    2  ")]
    assert "discard (replay conflict)" in row, summary["stderr"]
    assert _run_branch_head(repo) == summary["last_kept_commit"] == its[0]["candidate_commit"]
    assert summary["last_kept_score"] == 5.0
    lanes = {lane["lane"]: lane for lane in summary["lanes"]}
    assert lanes[1]["last_decision"] == "keep" and lanes[2]["last_decision"] == "discard"
    # the conflicting candidate stays reachable and is named in the ledger
    assert repo.git("cat-file", "-t", its[1]["candidate_commit"]) == "commit"


def test_a_lanes_evaluation_cell_is_masked_as_its_iteration_row_is(
    repo: Repo, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A lane's last evaluation is the iteration row's cell, built by one rule
    (`lifecycle._evaluation`): a discard's reason is masked in the core, not only by a door."""
    _mission(repo)
    plan = "1:value=5:0.2,2:value=9:1.5"
    _run(repo, "--lanes", "2", "--max-iterations", "2", env={"LANE_PLAN": plan})
    monkeypatch.setenv("AUTORESEARCH_REDACT", "conflict")  # a user's own pattern
    details = lifecycle.run_details(repo.root, RUN_ID)
    cell = details.iterations[-1].evaluation
    assert cell == "not run: replay [REDACTED]"
    assert {row.lane: row.last_evaluation for row in details.lanes} == {1: "pass", 2: cell}


def test_a_replayed_candidate_is_measured_as_replayed(repo: Repo) -> None:
    _mission(repo)
    # lane 1 raises value.txt, lane 2 adds a file: lane 2 is replayed onto lane 1's keep and
    # its score counts both (5 + 1); the run branch holds both commits
    plan = "1:value=5:0.2,2:bonus:1.5"
    summary = _run(repo, "--lanes", "2", "--max-iterations", "2", env={"LANE_PLAN": plan})
    its = _status(repo)["iterations"][1:]
    assert [it["decision"] for it in its] == ["keep", "keep"]
    assert [it["evaluator"]["score"] for it in its] == [5.0, 6.0]
    head = _run_branch_head(repo)
    assert head == summary["last_kept_commit"] == its[1]["candidate_commit"]
    assert git(repo.root, "rev-parse", f"{head}^") == its[0]["candidate_commit"]
    assert any("replayed onto" in n for n in its[1]["notes"])


def test_one_slot_evaluations_never_overlap_while_agents_run_in_parallel(
    repo: Repo, tmp_path: Path
) -> None:
    _mission(repo, extra="evaluation:\n  slots: 1\n")
    evals, starts = tmp_path / "evals.log", tmp_path / "agents.log"
    env = {"EVAL_LOG": str(evals), "EVAL_SLEEP": "0.2", "LANE_SLEEP": "0.3",
           "LANE_LOG": str(starts)}  # fmt: skip
    summary = _run(repo, "--lanes", "3", "--max-iterations", "4", env=env)
    assert summary["counts"].get("keep", 0) >= 1
    spans = sorted(tuple(map(float, line.split())) for line in evals.read_text().splitlines())
    assert len(spans) >= 4
    assert all(a[1] <= b[0] for a, b in itertools.pairwise(spans)), spans
    # agents did overlap: the first three sessions started before the first ended
    first = sorted(float(line.split()[3]) for line in starts.read_text().splitlines())[:3]
    assert first[2] - first[0] < 0.3


def test_budget_hours_stops_all_lanes(repo: Repo) -> None:
    _mission(repo)
    summary = _run(repo, "--lanes", "2", "--budget-hours", "0.001", env={"LANE_SLEEP": "0.5"})
    assert (summary["status"], summary["stop_reason"]) == ("stopped", "budget exhausted (hours)")
    assert summary["totals"]["wall_seconds"] >= 3.6
    assert {lane["lane"] for lane in summary["lanes"]} == {1, 2}


def test_status_and_resume_keep_the_lanes(repo: Repo) -> None:
    _mission(repo)
    _run(repo, "--lanes", "2", "--max-iterations", "1")
    text = cli("status", RUN_ID, cwd=repo.root).stdout
    assert "lane" in text and "last decision" in text
    done = cli("continue", RUN_ID, "--max-iterations", "+1", "--json", cwd=repo.root)
    assert done.returncode == 0, done.stderr
    final = json.loads(done.stdout)
    assert final["status"] == "completed" and final["iteration"] == 2
    assert len(final["loop"]["lanes"]) == 2  # the recorded --lanes 2 was used again
    assert cli("clean", RUN_ID, cwd=repo.root).returncode == 0
    assert not list((repo.root / ".autoresearch/worktrees/lanes" / RUN_ID).glob("*/.git"))
    assert repo.git("branch", "--list", "autoresearch-lanes/*") == ""


def test_kill_9_with_lanes_in_flight_then_resume(repo: Repo, tmp_path: Path) -> None:
    _mission(repo)
    starts = tmp_path / "agents.log"
    env = {**os.environ, **GIT_ENV, "LANE_PLAN": "1:bonus:0.2,2:bonus:30,3:bonus:30",
           "LANE_LOG": str(starts)}  # fmt: skip
    argv = [sys.executable, "-m", "autoresearch", "run", "missions/demo", "--agent", AGENT,
            "--run-tag", "T1", "--lanes", "3", "--max-iterations", "6"]  # fmt: skip
    proc = subprocess.Popen(argv, cwd=repo.root, env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)  # fmt: skip
    try:
        # lane 1 keeps at least once while lanes 2 and 3 are mid-session
        until(lambda: starts.exists() and len(starts.read_text().splitlines()) >= 4, 60)
        until(lambda: _status(repo)["counts"].get("keep", 0) >= 1, 60, "a keep")
    finally:
        os.killpg(proc.pid, signal.SIGKILL)  # the driver and every child it started
        proc.wait()
    before = _status(repo)
    kept_before = [
        it["candidate_commit"] for it in before["iterations"] if it["decision"] == "keep"
    ]
    done = cli("resume", RUN_ID, "--json", cwd=repo.root, env={"LANE_PLAN": "", "LANE_SLEEP": "0"},
               timeout=180)  # fmt: skip
    assert done.returncode == 0, done.stderr
    after = _status(repo)
    assert after["status"] == "completed" and after["iteration"] == 6
    head = _run_branch_head(repo)
    for commit in kept_before:  # no kept commit lost
        assert git(repo.root, "merge-base", "--is-ancestor", commit, head, check=False) == ""
    shas = [it["artifact_sha256"] for it in after["iterations"][1:] if it.get("artifact_sha256")]
    assert len(shas) == len(set(shas))  # every artifact judged once
    # the lanes killed mid-session were restarted; lanes 2 and 3 were killed before they
    # changed anything (their agents sleep first): no empty patch says they did
    assert done.stderr.count("was cut off by a crash: no changes past") >= 1, done.stderr
    logs = repo.root / ".autoresearch/runs" / RUN_ID / "lanes"
    assert all(p.stat().st_size for p in logs.glob("*/logs/*unfinished-session.patch"))


@pytest.mark.parametrize("lanes", [1])
def test_lanes_one_runs_through_the_lane_scheduler(repo: Repo, lanes: int) -> None:
    _mission(repo)
    summary = _run(repo, "--lanes", str(lanes), "--max-iterations", "2")
    assert summary["iteration"] == 2 and [lane["lane"] for lane in summary["lanes"]] == [1]


class _CostlyAgent:
    """An in-process agent that reports a cost per session, as claude and codex do."""

    name = "costly"
    artifact_from_git = False

    def run(self, request: Any, should_cancel: Any, on_spawn: Any) -> AgentResult:
        value = float((request.worktree / "value.txt").read_text()) + 1
        commit = edit_and_commit(request.worktree, {"value.txt": f"{value}\n"}, "more")
        data = artifact(candidate_commit=commit, base_commit=request.base_commit)
        write_artifact(request.candidate_file, data)
        return AgentResult("costly", 0, 1, usage=Usage(cost_usd=0.1, input_tokens=10,
                                                          output_tokens=5))  # fmt: skip


class _Quiet:
    def session_started(self, iteration: int) -> None: ...

    def evaluation_started(self, iteration: int) -> None: ...

    def step_recorded(self, result: Any, agent: Any) -> None: ...

    def note(self, message: str) -> None: ...


@pytest.mark.parametrize(
    ("limits", "reason", "sessions"),
    [
        (LoopLimits(budget_usd=0.25), "budget exhausted (usd)", 3),
        (LoopLimits(budget_tokens=30), "budget exhausted (tokens)", 2),
    ],
)
def test_a_spent_budget_stops_a_run_without_lanes(
    mission_dir: Path, limits: LoopLimits, reason: str, sessions: int
) -> None:
    with prepare(mission_dir, run_tag="T1") as h:
        outcome = run_loop(h, _CostlyAgent(), limits, _Quiet(), StopSignal())
        assert (outcome.status, outcome.stop_reason) == ("stopped", reason)
        assert outcome.sessions == sessions


def test_sandbox_budget_applies_and_a_flag_overrides_it(repo: Repo) -> None:
    repo.mission(sandbox=sandbox_text(extra="budget:\n  usd: 0.15\n"))
    with prepare(repo.root / "missions/demo", run_tag="T1") as h:
        assert run_loop(h, _CostlyAgent(), LoopLimits(), _Quiet(), StopSignal()).sessions == 2
    with prepare(repo.root / "missions/demo", run_tag="T2") as h:
        outcome = run_loop(h, _CostlyAgent(), LoopLimits(budget_usd=0.35), _Quiet(), StopSignal())
        assert (outcome.sessions, outcome.stop_reason) == (4, "budget exhausted (usd)")


NOISY = textwrap.dedent(
    """\
    import glob, json, os, random, time
    start = time.time()
    state = os.environ["NOISE_STATE"]
    n = int(open(state).read()) if os.path.exists(state) else 0
    open(state, "w").write(str(n + 1))
    time.sleep(0.05)
    score = float(open("value.txt").read()) + len(glob.glob("bonus-*.txt"))
    with open(os.environ["EVAL_LOG"], "a") as f:
        f.write(f"{start} {time.time()}\\n")
    print(json.dumps({"pass": True, "score": score + random.Random(n).gauss(0, 0.3)}))
    """
)


def test_noise_aware_readings_of_lanes_each_take_the_slot(repo: Repo, tmp_path: Path) -> None:
    repo.write("scripts/noisy.py", NOISY)
    noise = "noise:\n  mode: sequential\n  calibration: 3\n  max_evals: 8\n"
    repo.mission(sandbox=sandbox_text("python3 scripts/noisy.py", extra=noise, unboxed=True))
    evals = tmp_path / "evals.log"
    env = {"EVAL_LOG": str(evals), "NOISE_STATE": str(tmp_path / "counter"), "LANE_SLEEP": "0.2"}
    summary = _run(repo, "--lanes", "2", "--max-iterations", "2", env=env)
    assert summary["iteration"] == 2
    conn = sqlite3.connect(repo.root / ".autoresearch/journal.sqlite3")
    try:
        per_iteration = dict(
            conn.execute(
                "SELECT iteration, COUNT(*) FROM evaluations WHERE iteration > 0 GROUP BY iteration"
            ).fetchall()
        )
    finally:
        conn.close()
    assert max(per_iteration.values()) > 1  # the sequential test took more readings
    spans = sorted(tuple(map(float, line.split())) for line in evals.read_text().splitlines())
    assert len(spans) >= sum(per_iteration.values())
    assert all(a[1] <= b[0] for a, b in itertools.pairwise(spans)), spans
