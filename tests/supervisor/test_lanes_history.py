"""What a lane's session is told of the run (`AgentTask.history`): every iteration recorded
before it was launched, exactly as the journal has it, though the driver reads only the rows
recorded since its last launch (`loop.RunHistory`) – in a resumed run too, and when the
journal changes below what it holds."""

from __future__ import annotations

import sqlite3
import sys
import textwrap
import threading
from concurrent.futures import Future
from pathlib import Path

import pytest

from autoresearch.agents import AgentConfig
from autoresearch.agents.base import PastIteration
from autoresearch.decide import IterationLimit
from autoresearch.supervisor.executor import AgentOutcome, AgentTask, LocalExecutor, OnSpawn
from autoresearch.supervisor.handle import RunHandle
from autoresearch.supervisor.lanes import run_lanes
from autoresearch.supervisor.lifecycle import continue_run
from autoresearch.supervisor.loop import LoopLimits, RunHistory, StopSignal, history
from autoresearch.supervisor.prepare import prepare
from helpers import QuietLanes, Repo, sandbox_text

AGENT = f"cmd:{sys.executable} {Path(__file__).parent / 'fakes/lane_agent.py'}"
EVALUATOR = textwrap.dedent(
    """\
    import glob, json
    score = float(open("value.txt").read()) + len(glob.glob("bonus-*.txt"))
    print(json.dumps({"pass": True, "score": score}))
    """
)
# lane 1 is quick, lane 2 slow: lane 1's iterations are recorded while lane 2's session runs
PLAN = "1:bonus:0.2,2:bonus:1"


class _Recording(LocalExecutor):
    """The local executor, noting for every session it is given the history it was shipped
    beside the whole history read from the journal at that moment (what a launch read before
    the cache)."""

    def __init__(self, h: RunHandle, lanes: int) -> None:
        super().__init__(lanes, 1)
        self.h = h
        self.sessions: list[tuple[int, tuple[PastIteration, ...], tuple[PastIteration, ...]]] = []

    def submit_agent(
        self, task: AgentTask, cancel: threading.Event, on_spawn: OnSpawn
    ) -> Future[AgentOutcome]:
        self.sessions.append((task.lane, task.history, tuple(history(self.h, 0))))
        return super().submit_agent(task, cancel, on_spawn)


def _drive(h: RunHandle, total: int) -> _Recording:
    executor = _Recording(h, 2)
    limits = LoopLimits(max_iterations=total, max_noops=0, lanes=2)
    run_lanes(h, AgentConfig(AGENT), limits, executor, QuietLanes(), StopSignal())
    return executor


def _numbers(past: tuple[PastIteration, ...]) -> list[int]:
    return [p.iteration for p in past]


def test_each_session_sees_every_iteration_recorded_before_it_also_after_a_resume(
    repo: Repo, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LANE_PLAN", PLAN)
    repo.write("scripts/score.py", EVALUATOR)
    mission = repo.mission(sandbox=sandbox_text("python3 scripts/score.py"))
    with prepare(mission, run_tag="T1") as h:
        first = _drive(h, 7)
        run_id = h.run_id
    for _, shipped, journal in first.sessions:
        assert shipped == journal
    assert _numbers(first.sessions[0][1]) == []  # the baseline is no iteration of the history
    # lane 2's second session was launched after its first, during which lane 1's iterations
    # were recorded: it sees them (and its own), each once, in order
    lane2 = [shipped for lane, shipped, _ in first.sessions if lane == 2]
    assert len(lane2) >= 2
    grown = set(_numbers(lane2[1])) - set(_numbers(lane2[0]))
    assert len(grown) >= 2, first.sessions
    for shipped in lane2:
        assert _numbers(shipped) == list(range(1, len(shipped) + 1))

    # a resumed run's driver starts with nothing cached: its first session sees the seven
    # iterations of before, its later ones those recorded since too
    outcome = continue_run(repo.root, run_id, IterationLimit(3, relative=True))
    with outcome.handle as h:
        again = _drive(h, 10)
    assert _numbers(again.sessions[0][1]) == [1, 2, 3, 4, 5, 6, 7]
    for _, shipped, journal in again.sessions:
        assert shipped == journal
    assert max(len(shipped) for _, shipped, _ in again.sessions) >= 8


def test_a_journal_changed_below_what_is_held_is_read_anew(
    repo: Repo, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LANE_PLAN", "1:bonus:0,2:bonus:0")
    repo.write("scripts/score.py", EVALUATOR)
    mission = repo.mission(sandbox=sandbox_text("python3 scripts/score.py"))
    with prepare(mission, run_tag="T1") as h:
        _drive(h, 3)
        past = RunHistory(h)
        assert _numbers(past.snapshot()) == [1, 2, 3]
        # an iteration below the newest one held goes away (never done by a run: the cache
        # must not hide it if it ever happens)
        conn = sqlite3.connect(h.repo.journal)
        with conn:
            conn.execute("DELETE FROM iterations WHERE run_id = ? AND iteration = 2", (h.run_id,))
        conn.close()
        assert _numbers(past.snapshot()) == [1, 3] == _numbers(tuple(history(h, 0)))
