"""The candidate replayed onto the one in the slot (`lanes._Driver._speculate`) is handed to
the executor to stage (`Executor.stage`) before the slot is free: a remote executor ships its
commit then, instead of between one reading and the next."""

from __future__ import annotations

import sys
import textwrap
import threading
from concurrent.futures import Future
from pathlib import Path

import pytest

from autoresearch.agents import AgentConfig
from autoresearch.evaluate import EvaluationRecord
from autoresearch.supervisor.executor import EvaluationTask, LocalExecutor, OnSpawn
from autoresearch.supervisor.lanes import run_lanes
from autoresearch.supervisor.loop import LoopLimits, StopSignal
from autoresearch.supervisor.prepare import prepare
from helpers import QuietLanes, Repo, sandbox_text

AGENT = f"cmd:{sys.executable} {Path(__file__).parent / 'fakes/lane_agent.py'}"
# lane 1's candidate (value 5) is measured for 2.5 s; lane 2's session (1 s) ends meanwhile
EVALUATOR = textwrap.dedent(
    """\
    import glob, json, time
    value, bonus = float(open("value.txt").read()), glob.glob("bonus-*.txt")
    if value != 1 and not bonus:
        time.sleep(2.5)
    print(json.dumps({"pass": True, "score": value + len(bonus)}))
    """
)


class _Staging(LocalExecutor):
    """The local executor, noting in order every commit staged and every reading submitted."""

    def __init__(self) -> None:
        super().__init__(2, 1)
        self.events: list[tuple[str, str]] = []

    def stage(self, tree: Path, commit: str) -> None:
        self.events.append(("stage", commit))

    def submit_evaluation(
        self, task: EvaluationTask, cancel: threading.Event, on_spawn: OnSpawn
    ) -> Future[EvaluationRecord]:
        self.events.append(("measure", task.commit))
        return super().submit_evaluation(task, cancel, on_spawn)


def test_the_candidate_next_in_line_is_staged_before_its_reading(
    repo: Repo, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LANE_PLAN", "1:value=5:0,2:bonus:1")
    repo.write("scripts/score.py", EVALUATOR)
    extra = "evaluation:\n  slots: 1\n"
    mission = repo.mission(sandbox=sandbox_text("python3 scripts/score.py", extra=extra))
    executor = _Staging()
    with prepare(mission, run_tag="T1") as h:
        limits = LoopLimits(max_iterations=2, max_noops=0, lanes=2)
        run_lanes(h, AgentConfig(AGENT), limits, executor, QuietLanes(), StopSignal())
        h.refresh()
        kept = h.run.last_kept_commit
    measured = [commit for kind, commit in executor.events if kind == "measure"]
    assert len(measured) == 2 and measured[1] == kept  # lane 2's replayed candidate, kept
    staged_at = executor.events.index(("stage", kept))
    assert staged_at < executor.events.index(("measure", kept))
    # staged while lane 1's reading held the slot: after its submission
    assert executor.events.index(("measure", measured[0])) < staged_at
