"""`autoresearch serve --session ID`: an experiment session's report, live (the server itself
and the page in Chromium are tested over a run in tests/report/test_serve*.py)."""

from __future__ import annotations

import json
import urllib.request
from functools import partial

from exp_helpers import cycle

from autoresearch.report import session_data
from autoresearch.report.serve import Serving
from autoresearch.report.serve import serve_report as start
from helpers import Repo, cli


def _state(serving: Serving) -> dict[str, object]:
    with urllib.request.urlopen(serving.url + "state", timeout=10) as answer:
        found: dict[str, object] = json.loads(answer.read())
        return found


def test_a_session_served_follows_its_logged_runs(session: Repo) -> None:
    cycle(session, "100", "keep", "baseline")
    serving = start(partial(session_data, session.root, 1))
    try:
        before = _state(serving)
        assert (before["kind"], before["id"], before["iterations"]) == ("session", "1", 0)
        cycle(session, "90", "keep", "ninety")
        after = _state(serving)
        assert after["version"] != before["version"] and after["iterations"] == 1
        with urllib.request.urlopen(serving.url, timeout=10) as answer:
            assert "ninety" in answer.read().decode()
    finally:
        serving.stop()


def test_an_unknown_session_is_refused_in_one_line(session: Repo) -> None:
    done = cli("serve", "--session", "7", cwd=session.root, timeout=30)
    assert (done.returncode, done.stderr.strip()) == (2, "autoresearch: unknown session: #7")
    assert done.stdout == ""


def test_a_run_and_a_session_together_are_refused(session: Repo) -> None:
    done = cli("serve", "some-run", "--session", "1", cwd=session.root, timeout=30)
    assert done.returncode == 2 and "give RUN_ID or --session, not both" in done.stderr
