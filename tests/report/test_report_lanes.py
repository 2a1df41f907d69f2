"""The report's lane column and spend per lane: shown for `run --lanes K`, absent for a run
without lanes (whose iterations the journal records as lane 0)."""

from __future__ import annotations

from pathlib import Path

from report_helpers import lanes_run

from autoresearch.supervisor.handle import RunHandle
from helpers import Repo, cli


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
    page = _page(lanes_run(repo, "L"), repo.root, tmp_path)
    assert ">lane</button></th>" in page and "spend per lane" in page
    assert "<td>1</td>" in page and "<td>2</td>" in page
