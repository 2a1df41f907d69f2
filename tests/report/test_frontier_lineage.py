"""The report of a frontier run: each row's parent (the lineage), drawn beside the progress,
and a best line that a child kept against a lesser parent does not pull down."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from autoresearch.agents import AgentConfig, make_agent
from autoresearch.report import plot
from autoresearch.report.collect import run_report
from autoresearch.supervisor.loop import LoopLimits, StopSignal, run_loop
from autoresearch.supervisor.prepare import prepare
from helpers import QuietObserver, make_repo, sandbox_text

AGENT = f"cmd:{sys.executable} {Path(__file__).parents[1] / 'supervisor/fakes/frontier_agent.py'}"


def test_a_frontier_reports_lineage_and_a_best_line_that_never_falls(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FRONTIER_RULE", json.dumps({"1": [5, 2], "6": [-1], "3": [-1]}))
    monkeypatch.setenv("FRONTIER_STATE", str(tmp_path / "visits.json"))
    monkeypatch.setenv("FRONTIER_LOG", str(tmp_path / "log"))
    mission = make_repo(tmp_path / "repo").mission(sandbox=sandbox_text(unboxed=True))
    limits = LoopLimits(max_iterations=10, strategy="frontier")
    with prepare(mission, run_tag="L1") as h:
        run_loop(h, make_agent(AgentConfig(AGENT)), limits, QuietObserver(), StopSignal())
        data = run_report(h.journal, h.repo, h.run)
    parents = {r.number: r.parent for r in data.rows}
    assert parents[0] is None and parents[1] == 0 and parents[2] == 1
    assert parents[9] == 0 and parents[10] == 9  # the second hill: from the root, then from it
    _, ys = plot.best_steps(data)
    assert ys == sorted(ys) and ys[-1] == 6.0  # the kept 3 (iteration 9) is no new best
    image = plot.render(data)
    assert image.png.startswith(b"\x89PNG")
