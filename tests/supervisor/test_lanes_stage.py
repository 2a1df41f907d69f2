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
# lane 1's candidate (value 5) is measured until the executor has staged lane 2's (STAGED
# exists; after 60 s in vain the reading fails, and so does the test); lane 2's session ends
# once that reading has started (READING): no guessed time on either side
EVALUATOR = textwrap.dedent(
    """\
    import glob, json, os, pathlib, time
    value, bonus = float(open("value.txt").read()), glob.glob("bonus-*.txt")
    if value != 1 and not bonus:
        pathlib.Path(os.environ["READING"]).touch()
        deadline = time.monotonic() + 60
        while not os.path.exists(os.environ["STAGED"]):
            if time.monotonic() > deadline:  # lane 1 discarded: the test fails, saying so
                raise SystemExit("nothing staged while this reading held the slot")
            time.sleep(0.02)
    print(json.dumps({"pass": True, "score": value + len(bonus)}))
    """
)


class _Staging(LocalExecutor):
    """The local executor, noting in order every commit staged and every reading submitted."""

    def __init__(self, staged: Path) -> None:
        super().__init__(2, 1)
        self.events: list[tuple[str, str]] = []
        self.staged = staged  # the mark the reading in the slot waits for

    def stage(self, tree: Path, commit: str) -> None:
        self.events.append(("stage", commit))
        self.staged.touch()

    def submit_evaluation(
        self, task: EvaluationTask, cancel: threading.Event, on_spawn: OnSpawn
    ) -> Future[EvaluationRecord]:
        self.events.append(("measure", task.commit))
        return super().submit_evaluation(task, cancel, on_spawn)


def test_the_candidate_next_in_line_is_staged_before_its_reading(
    repo: Repo, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    reading, staged = tmp_path / "reading", tmp_path / "staged"
    monkeypatch.setenv("LANE_PLAN", "1:value=5:0,2:bonus:0")
    monkeypatch.setenv("LANE_WAIT", f"2:{reading}")
    monkeypatch.setenv("READING", str(reading))
    monkeypatch.setenv("STAGED", str(staged))
    repo.write("scripts/score.py", EVALUATOR)
    extra = "evaluation:\n  slots: 1\n"
    # unboxed: the marks lie outside the repository, where a box would not show them
    sandbox = sandbox_text("python3 scripts/score.py", extra=extra, unboxed=True)
    mission = repo.mission(sandbox=sandbox)
    executor = _Staging(staged)
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
