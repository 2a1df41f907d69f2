"""`exp report`: the session's report from the journal, through the real CLI."""

from __future__ import annotations

import json

import pytest
from exp_helpers import cycle, log, run

from helpers import Repo, cli


@pytest.mark.plot
def test_exp_report_shows_every_logged_run_and_the_kept_diffs(session: Repo) -> None:
    cycle(session, "100", "keep", "baseline")
    cycle(session, "90", "keep", "ninety")
    cycle(session, "95", "discard", "ninety-five")
    session.write("crash.flag", "")
    session.write("value.txt", "1\n")
    run(session.root)
    log(session.root, "crash", "it crashed")
    (session.root / "crash.flag").unlink(missing_ok=True)
    cycle(session, "80", "keep", "eighty")

    done = cli("exp", "report", "--json", cwd=session.root)
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["kind"] == "session" and data["direction"] == "lower"
    assert (data["baseline"], data["best"]) == (100, 80)
    assert data["counts"] == {"baseline": 1, "kept": 2, "discarded": 1, "error": 1, "other": 0}
    assert len(data["kept_commits"]) == 2
    page = session.root / ".autoresearch" / "sessions" / "1" / "report" / "report.html"
    assert data["report_file"] == str(page)
    text = page.read_text()
    assert "session #1 &#x27;speed up&#x27;" in text
    assert "ninety-five" in text and "it crashed" in text
    assert "+90" in text  # the kept diff of run 2 (value.txt 100 → 90)
    assert "run-0003-discarded.patch" in text  # the saved patch of the discarded run is linked
    if data["plot_file"] is not None:
        assert (page.parent / "progress.png").read_bytes()[:4] == b"\x89PNG"


def test_exp_report_without_a_session_says_how_to_start_one(repo: Repo) -> None:
    done = cli("exp", "report", cwd=repo.root)
    assert done.returncode == 2
    assert done.stderr.startswith("autoresearch: no active experiment session")
    assert len(done.stderr.strip().splitlines()) == 1


def test_exp_report_of_an_unknown_session_is_refused(session: Repo) -> None:
    done = cli("exp", "report", "--session", "7", cwd=session.root)
    assert (done.returncode, done.stderr.strip()) == (2, "autoresearch: unknown session: #7")
