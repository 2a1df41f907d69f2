"""Every view of a session says the best's change as `exp status` does (#34): `exp list`, the
resume message and the MCP status JSON show the paired figure once pairs exist, never the
pooled one of readings taken at other moments; an unpaired change is said to be unpaired.
Real repositories, a real harness whose level drops by 30 % after its 5th reading."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from exp_helpers import cycle, exp_repo, init, log, run
from test_exp_drift import DRIFTING_HARNESS

from autoresearch.experiments import list_sessions, resume_message, session_status
from autoresearch.experiments.report import render_sessions, render_status
from autoresearch.report import session_data
from autoresearch.report.model import improvement
from helpers import Repo

PAIRED_FIGURE = re.compile(r"\(paired against the baseline: [^)]*\)")


def test_list_and_resume_show_the_paired_figure_of_status_through_a_drift(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DRIFT_STATE", str(tmp_path / "drift-counter"))
    repo = exp_repo(tmp_path / "repo", value="100")
    repo.write("autoresearch.sh", DRIFTING_HARNESS)
    init(repo.root, name="drift", metric="ms")  # lower is better
    run(repo.root, repeats=3)  # readings 0-2 at the machine's first level
    log(repo.root, "keep", "baseline")
    repo.write("notes.txt", "a comment, nothing faster\n")
    run(repo.root, repeats=3)  # paired with the baseline; the level drops during it
    log(repo.root, "keep", "null, kept anyway")

    report = session_status(repo.root)
    (figure,) = PAIRED_FIGURE.findall(render_status(report))
    (row,) = render_sessions(list_sessions(repo.root)).splitlines()
    assert figure in row and "%)" not in row
    resume = resume_message(repo.root)
    assert PAIRED_FIGURE.findall(resume) == [figure]
    (kept,) = [line for line in resume.splitlines() if line.startswith("  #2 ")]
    assert "%)" not in kept  # its pooled Δ % against the baseline's older readings is gone

    # the JSON of exp list, exp status and the MCP status carry the same figure
    assert report.best is not None and report.best.paired is not None
    assert report.best.delta_pct is not None and report.best.delta_pct < -10  # pooled: drift
    assert abs(report.best.paired.mean) < 1  # paired: nothing
    (summary,) = list_sessions(repo.root).sessions
    assert summary.paired == report.best.paired
    assert report.to_dict()["best"]["paired"] == report.best.paired.to_dict()
    # exp report's headline improvement (and its --json `improvement`) is the paired one too
    found = improvement(session_data(repo.root)[0])
    assert found is not None and found.change == report.best.paired.mean
    assert found.interval == report.best.paired and found.paired


def test_an_unpaired_change_is_said_to_be_unpaired_in_every_view(session: Repo) -> None:
    cycle(session, "100", "keep", "baseline")
    cycle(session, "90", "keep", "faster")
    report = session_status(session.root)
    assert report.best is not None and report.best.paired is None
    (best,) = [line for line in render_status(report).splitlines() if "best kept:" in line]
    assert best == "best kept:   #2 90 (-10.00%, unpaired)"
    (row,) = render_sessions(list_sessions(session.root)).splitlines()
    assert row.endswith("baseline 100, best 90 (-10.00%, unpaired)")
    assert "best kept:   #2 90 (-10.00%, unpaired)" in resume_message(session.root)
