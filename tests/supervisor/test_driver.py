"""One driver (issue 32): the single loop is the one-lane case of the driver that runs K
lanes. Every iteration goes through `loop.Driver`, and the same scripted agent gives the same
journal rows, the same observer events and the same outcome alone and as `--lanes 1`."""

from __future__ import annotations

import ast
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from autoresearch.agents import AgentConfig, make_agent
from autoresearch.journal import iteration_records
from autoresearch.journal.lanes import LaneRecord
from autoresearch.supervisor import lanes, loop
from autoresearch.supervisor.lanes import run_lanes
from autoresearch.supervisor.loop import LoopLimits, LoopOutcome, StopSignal, run_loop
from autoresearch.supervisor.prepare import prepare
from helpers import make_repo, sandbox_text

AGENT = f"cmd:{sys.executable} {Path(__file__).parent / 'fakes/lane_agent.py'}"
EVALUATOR = textwrap.dedent(
    """\
    import glob, json
    score = float(open("value.txt").read()) + len(glob.glob("bonus-*.txt"))
    print(json.dumps({"pass": True, "score": score}))
    """
)
# what decides a run's course, called only by the driver
DRIVER_CALLS = {"next_action", "loop_state", "finalize_run", "refuse_without_comparable_baseline"}


def _callers(module: Any) -> dict[str, set[str]]:
    """Each of DRIVER_CALLS → the classes (or top-level functions) of `module` calling it."""
    found: dict[str, set[str]] = {}
    tree = ast.parse(Path(module.__file__).read_text())
    for top in tree.body:
        if not isinstance(top, ast.ClassDef | ast.FunctionDef):
            continue
        for node in ast.walk(top):
            name = (
                node.func.id
                if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                else ""
            )
            if name in DRIVER_CALLS:
                found.setdefault(name, set()).add(top.name)
    return found


def test_only_the_driver_decides_a_runs_course() -> None:
    assert _callers(lanes) == {}
    assert _callers(loop) == {name: {"Driver"} for name in DRIVER_CALLS}


class _Recorder:
    def __init__(self) -> None:
        self.events: list[tuple[str, int]] = []  # (event, iteration or session): lanes aside

    def session_started(self, iteration: int, lane: int = 0) -> None:
        self.events.append(("session", iteration))

    def evaluation_started(self, iteration: int, lane: int = 0) -> None:
        self.events.append(("evaluation", iteration))

    def step_recorded(self, result: Any, agent: Any, lane: int = 0) -> None:
        self.events.append((f"step {result.decision}", result.iteration))

    def note(self, message: str) -> None: ...

    def lanes_changed(self, lanes: list[LaneRecord]) -> None: ...


def _drive(tmp: Path, with_lanes: bool, limits: LoopLimits) -> tuple[Any, ...]:
    repo = make_repo(tmp)
    repo.write("scripts/score.py", EVALUATOR)
    mission = repo.mission(sandbox=sandbox_text("python3 scripts/score.py"))
    recorder = _Recorder()
    with prepare(mission, run_tag="T1") as h:
        outcome: LoopOutcome
        if with_lanes:
            one = LoopLimits(**{**limits.__dict__, "lanes": 1})
            outcome = run_lanes(h, AgentConfig(AGENT), one, None, recorder, StopSignal())
        else:
            agent = make_agent(AgentConfig(AGENT))
            outcome = run_loop(h, agent, limits, recorder, StopSignal())
        rows = [
            (it.iteration, it.kind, it.state, it.decision, it.decision_reason,
             it.evaluator.to_dict().get("score") if it.evaluator else None)
            for it in iteration_records.all_iterations(h.journal, h.run_id)
        ]  # fmt: skip
    ended = (outcome.status, outcome.stop_reason, outcome.interrupted, outcome.sessions)
    return rows, recorder.events, ended


@pytest.mark.parametrize(
    ("plan", "limits"),
    [
        ("0:bonus:0,1:bonus:0", LoopLimits(max_iterations=3)),  # keeps up to the limit
        ("0:noop:0,1:noop:0", LoopLimits(max_iterations=9, max_noops=2)),  # the noop limit
    ],
)
def test_the_single_loop_and_one_lane_record_the_same_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, plan: str, limits: LoopLimits
) -> None:
    monkeypatch.setenv("LANE_PLAN", plan)
    single = _drive(tmp_path / "single", False, limits)
    one_lane = _drive(tmp_path / "lanes", True, limits)
    assert single == one_lane
    assert single[2][3] == (3 if "bonus" in plan else 2)
