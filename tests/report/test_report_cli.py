"""`autoresearch report`, the summary and `status` pointing to it, through the real CLI."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from urllib.parse import unquote

import pytest
from report_helpers import submit_and_step

from autoresearch.report import build_run_report
from autoresearch.supervisor.handle import RunHandle
from autoresearch.supervisor.prepare import prepare
from helpers import Repo, cli

CMD_AGENT = f"cmd:{sys.executable} {Path(__file__).parents[1] / 'agents/fakes/cmd_agent.py'}"


@pytest.mark.plot
def test_run_summary_and_status_point_to_the_report_it_wrote(repo: Repo, mission_dir: Path) -> None:
    done = cli(
        "run", "missions/demo", "--agent", CMD_AGENT, "--max-iterations", "3", "--run-tag", "R",
        cwd=repo.root, env={"FAKE_PLAN": "improve,worse,improve"},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    page = repo.root / ".autoresearch/runs/missions-demo-r/report/report.html"
    assert f"report       {page}" in done.stdout.splitlines()
    text = page.read_text()
    assert "improve to 3" in text and "worse to 1.5" in text and "cmd" in text
    assert (page.parent / "progress.png").read_bytes()[:4] == b"\x89PNG"

    status = cli("status", "missions-demo-r", cwd=repo.root)
    assert f"report:     {page}" in status.stdout.splitlines()
    as_json = json.loads(cli("status", "missions-demo-r", "--json", cwd=repo.root).stdout)
    assert as_json["report_file"] == str(page)


def test_report_json_and_out_folder(finished_run: RunHandle, tmp_path: Path) -> None:
    out = tmp_path / "elsewhere"
    done = cli(
        "report", finished_run.run_id, "--out", str(out), "--json", cwd=finished_run.worktree
    )
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["report_file"] == str(out / "report.html")
    assert (data["baseline"], data["best"], data["improvement"]) == (1, 12, 11)
    assert data["counts"] == {"baseline": 1, "kept": 3, "discarded": 2, "error": 1, "other": 0}
    assert data["live"] is True and data["status"] == "running"
    page = (out / "report.html").read_text()
    assert "This run is still going" in page
    # links are relative to the report's folder and lead to the real log files
    hrefs = re.findall(r'href="([^"]+)"', page)
    log = next(h for h in hrefs if h.endswith("iteration-0001-evaluator.log"))
    assert not log.startswith("/")
    assert (out / unquote(log)).resolve() == finished_run.paths.evaluator_log(1).resolve()
    assert (out / unquote(log)).is_file()


def test_report_of_an_unknown_run_is_one_line(repo: Repo, finished_run: RunHandle) -> None:
    done = cli("report", "nope", cwd=repo.root)
    assert (done.returncode, done.stderr) == (2, "autoresearch: unknown run: nope\n")


@pytest.mark.plot
def test_report_says_how_to_get_the_plot_when_matplotlib_is_missing(
    finished_run: RunHandle, tmp_path: Path
) -> None:
    blocker = tmp_path / "no-matplotlib"
    (blocker / "matplotlib").mkdir(parents=True)
    (blocker / "matplotlib" / "__init__.py").write_text(
        "raise ImportError('blocked by the test')\n"
    )
    done = cli(
        "report", finished_run.run_id, cwd=finished_run.repo.repo_root,
        env={"PYTHONPATH": str(blocker)},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stderr == (
        "autoresearch: no plot: the plot needs matplotlib: pip install 'autoresearch[report]'\n"
    )
    assert "plot      (none)" in done.stdout
    assert not (finished_run.paths.report / "progress.png").exists()


def test_the_demo_summary_ends_with_the_report(tmp_path: Path) -> None:
    done = cli("demo", str(tmp_path / "demo"), "--iterations", "3", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    last = Path(done.stdout.strip().splitlines()[-1].strip())
    assert last.name == "report.html" and last.is_file()
    assert last.is_relative_to((tmp_path / "demo").resolve() / ".autoresearch" / "runs")


def test_the_report_masks_secrets_in_what_people_read(
    mission_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    key = "sk-" + "a1" * 12
    monkeypatch.setenv("MY_SERVICE_TOKEN", "hunter2-hunter2")
    with prepare(mission_dir, run_tag="S") as h:
        submit_and_step(
            h, {"value.txt": "5\n", "notes.txt": f"{key} hunter2-hunter2\n"}, f"used {key}"
        )
        run_id = h.run_id
    result = build_run_report(mission_dir.parent.parent, run_id, tmp_path / "out")
    page = result.report_file.read_text()
    assert key not in page and "hunter2-hunter2" not in page
    assert "used [REDACTED]" in page  # the description
    assert "+[REDACTED] [REDACTED]" in page  # the kept diff
