"""The report's lane column and spend per lane: shown for `run --lanes K`, absent for a run
without lanes (whose iterations the journal records as lane 0)."""

from __future__ import annotations

import sys
from pathlib import Path

from autoresearch.supervisor.handle import RunHandle
from helpers import Repo, cli, sandbox_text

LANE_AGENT = f"cmd:{sys.executable} {Path(__file__).parents[1] / 'supervisor/fakes/lane_agent.py'}"


def _page(run_id: str, cwd: Path, out: Path) -> str:
    done = cli("report", run_id, "--out", str(out), cwd=cwd)
    assert done.returncode == 0, done.stderr
    return (out / "report.html").read_text()


def test_a_run_without_lanes_has_no_lane_column(finished_run: RunHandle, tmp_path: Path) -> None:
    page = _page(finished_run.run_id, finished_run.worktree, tmp_path)
    assert ">lane</button></th>" not in page and "spend per lane" not in page
    assert ">time</button></th>" in page  # the iterations table itself is there


def test_a_lanes_run_shows_each_iterations_lane_and_spend_per_lane(
    repo: Repo, tmp_path: Path
) -> None:
    repo.write("scripts/score.py", 'import glob, json\nprint(json.dumps({"pass": True, '
               '"score": 1 + len(glob.glob("bonus-*.txt"))}))\n')  # fmt: skip
    repo.mission(sandbox=sandbox_text("python3 scripts/score.py"))
    done = cli("run", "missions/demo", "--agent", LANE_AGENT, "--run-tag", "L", "--lanes", "2",
               "--max-iterations", "2", cwd=repo.root, timeout=180)  # fmt: skip
    assert done.returncode == 0, done.stderr
    page = _page("missions-demo-l", repo.root, tmp_path)
    assert ">lane</button></th>" in page and "spend per lane" in page
    assert "<td>1</td>" in page and "<td>2</td>" in page
