"""The executor protocol's local implementation: non-blocking submits, evaluation slots,
cancelling, agent sessions in a lane worktree (real git, real processes)."""

from __future__ import annotations

import itertools
import threading
import time
from pathlib import Path

from autoresearch.agents import AgentConfig
from autoresearch.contracts.sandbox import EvaluatorSpec
from autoresearch.states import EvalStatus
from autoresearch.supervisor.executor import (
    AgentTask,
    EvaluationTask,
    Executor,
    LocalExecutor,
    wait_any,
)
from helpers import Repo, git, until

# Sleeps, then prints its start and end time: overlapping evaluations are visible.
SLEEPY = (
    'python3 -c "import json,time; t=time.time(); time.sleep(0.3); '
    "print(json.dumps({'pass': True, 'score': 1.0, 'start': t, 'end': time.time()}))\""
)


def _eval_task(tmp: Path, n: int, command: str = SLEEPY) -> EvaluationTask:
    spec = EvaluatorSpec.from_dict({"command": command, "format": "json", "timeout_seconds": 30})
    return EvaluationTask(
        run_id="r", lane=n, iteration=n, commit="c", tree=tmp, relative_dir=".",
        evaluator=spec, log_path=tmp / f"eval-{n}.log",
    )  # fmt: skip


def _spans(records: list[object]) -> list[tuple[float, float]]:
    return sorted((r.extra["start"], r.extra["end"]) for r in records)  # type: ignore[attr-defined]


def test_one_slot_never_overlaps_and_submit_does_not_block(tmp_path: Path) -> None:
    executor: Executor = LocalExecutor(lanes=3, slots=1)
    t0 = time.monotonic()
    futures = [executor.submit_evaluation(_eval_task(tmp_path, n), threading.Event(), print) for n in range(3)]  # fmt: skip
    assert time.monotonic() - t0 < 0.2  # queued, not run
    pending = set(futures)
    while pending:
        pending -= wait_any(pending, timeout=10)
    executor.shutdown()
    spans = _spans([f.result() for f in futures])
    assert all(a_end <= b_start for (_, a_end), (b_start, _) in itertools.pairwise(spans))


def test_two_slots_overlap(tmp_path: Path) -> None:
    executor = LocalExecutor(lanes=2, slots=2)
    futures = [executor.submit_evaluation(_eval_task(tmp_path, n), threading.Event(), print) for n in range(2)]  # fmt: skip
    spans = _spans([f.result(timeout=10) for f in futures])
    executor.shutdown()
    assert spans[1][0] < spans[0][1]  # the control: two slots do run at once


def test_cancel_stops_the_evaluator(tmp_path: Path) -> None:
    executor = LocalExecutor(lanes=1)
    cancel = threading.Event()
    started: list[int] = []  # the evaluator's process group, once it runs
    future = executor.submit_evaluation(_eval_task(tmp_path, 1, "sleep 30"), cancel, started.append)
    until(lambda: started, what="the evaluator started")
    cancel.set()
    record = future.result(timeout=10)
    executor.shutdown()
    assert record.cancelled and record.status == EvalStatus.ERROR


def test_agent_task_runs_in_the_lane_worktree(repo: Repo, tmp_path: Path) -> None:
    base = repo.git("rev-parse", "HEAD")
    lane = tmp_path / "lane"
    git(repo.root, "worktree", "add", "-q", "-b", "lane-1", str(lane), base)
    script = "echo 2 > value.txt && git commit -qam lane && echo $AUTORESEARCH_LANE > lane.txt"
    task = AgentTask(
        run_id="r", lane=1, iteration=1, base_commit=base, worktree=lane, branch="lane-1",
        instructions_file=tmp_path / "i.md", candidate_file=tmp_path / "c.json",
        log_path=tmp_path / "agent.log", leftover_patch=tmp_path / "left.patch",
        agent=AgentConfig(f"cmd:{script}"),
    )  # fmt: skip
    executor = LocalExecutor(lanes=1)
    outcome = executor.submit_agent(task, threading.Event(), lambda pgid: None).result(timeout=30)
    executor.shutdown()
    assert outcome.result.exit_code == 0
    assert outcome.head == git(lane, "rev-parse", "HEAD") != base
    assert (lane / "lane.txt").read_text().strip() == "1"
