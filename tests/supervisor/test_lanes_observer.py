"""Lanes tell the loop observer what the single-lane loop tells it (a session started, an
evaluation started, a step recorded), naming the lane; the live display shows it per lane."""

from __future__ import annotations

import re
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from autoresearch.agents import AgentConfig
from autoresearch.journal.lanes import LaneRecord
from autoresearch.supervisor.lanes import run_lanes
from autoresearch.supervisor.loop import LoopLimits, StopSignal
from autoresearch.supervisor.prepare import prepare
from helpers import Repo, cli, sandbox_text

AGENT = f"cmd:{sys.executable} {Path(__file__).parent / 'fakes/lane_agent.py'}"
# both lanes write value.txt: lane 1's candidate is measured and kept, lane 2's cannot be
# replayed onto it and is judged without a reading
CONFLICT = "1:value=5:0.6,2:value=9:1.5"
EVALUATOR = textwrap.dedent(
    """\
    import glob, json, os, time
    time.sleep(float(os.environ.get("EVAL_SLEEP", "0")))
    score = float(open("value.txt").read()) + len(glob.glob("bonus-*.txt"))
    print(json.dumps({"pass": True, "score": score}))
    """
)
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def _mission(repo: Repo) -> Path:
    repo.write("scripts/score.py", EVALUATOR)
    return repo.mission(sandbox=sandbox_text("python3 scripts/score.py"))


class _Recorder:
    def __init__(self) -> None:
        self.events: list[tuple[str, int, int]] = []  # (event, lane, session or iteration)

    def session_started(self, iteration: int, lane: int = 0) -> None:
        self.events.append(("session", lane, iteration))

    def evaluation_started(self, iteration: int, lane: int = 0) -> None:
        self.events.append(("evaluation", lane, iteration))

    def step_recorded(self, result: Any, agent: Any, lane: int = 0) -> None:
        self.events.append(("step", lane, result.iteration))

    def note(self, message: str) -> None: ...

    def lanes_changed(self, lanes: list[LaneRecord]) -> None: ...


def test_each_lane_reports_its_session_its_evaluation_and_its_step(
    repo: Repo, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LANE_PLAN", CONFLICT)
    recorder = _Recorder()
    limits = LoopLimits(max_iterations=2, lanes=2)
    with prepare(_mission(repo), run_tag="T1") as h:
        outcome = run_lanes(h, AgentConfig(AGENT), limits, None, recorder, StopSignal())
    assert outcome.sessions == 2
    for lane in (1, 2):
        # what the single-lane loop says of an iteration, in its order, for each lane
        mine = [event for event, k, _ in recorder.events if k == lane]
        assert mine == ["session", "evaluation", "step"], recorder.events
        assert [n for event, k, n in recorder.events if k == lane][:2] == [1, 1]  # session 1
    steps = [(k, n) for event, k, n in recorder.events if event == "step"]
    assert steps == [(1, 1), (2, 2)]  # lane 1 kept first; lane 2 was judged as iteration 2


def test_the_live_display_shows_what_each_lane_runs(repo: Repo) -> None:
    _mission(repo)
    # FORCE_COLOR makes rich treat the pipe as a terminal: the spinner is drawn
    env = {"LANE_PLAN": CONFLICT, "EVAL_SLEEP": "0.5", "FORCE_COLOR": "1", "COLUMNS": "200"}
    done = cli("run", "missions/demo", "--agent", AGENT, "--lanes", "2", "--max-iterations", "2",
               cwd=repo.root, env=env, timeout=180)  # fmt: skip
    assert done.returncode == 0, done.stderr
    text = ANSI.sub("", done.stderr).replace("\r", "\n")
    assert "lane 1 session 1: agent cmd running · lane 2 session 1: agent cmd running" in text
    assert "lane 1 session 1: evaluator running" in text
    rows = [line for line in text.splitlines() if re.match(r"\s+\d+\s+(keep|discard)", line)]
    assert len(rows) == 2
    assert "lane 1: lane 1 session 1: value=5" in rows[0]  # whose candidate each row judged
    assert "lane 2: lane 2 session 1: value=9" in rows[1]
