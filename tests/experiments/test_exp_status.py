"""status / resume-message: read-only, and the history in run order."""

from __future__ import annotations

from pathlib import Path

import pytest
from exp_helpers import cycle

from autoresearch.errors import NotFoundError
from autoresearch.experiments import resume_message, session_status
from autoresearch.journal import sessions
from autoresearch.journal.db import Journal
from helpers import Repo, make_repo


def test_status_of_a_repository_without_a_session_writes_nothing(tmp_path: Path) -> None:
    fresh = make_repo(tmp_path / "fresh")
    for call in (session_status, resume_message):
        with pytest.raises(NotFoundError, match="^no active experiment session on branch main"):
            call(fresh.root)
    assert not (fresh.root / ".autoresearch").exists()
    assert fresh.git("status", "--porcelain", "--ignored") == ""


def test_history_is_in_run_order_whatever_the_timestamps_say(session: Repo) -> None:
    for value, status in (("100", "keep"), ("90", "keep"), ("95", "discard")):
        cycle(session, value, status)
    with Journal.open(session.root / ".autoresearch" / "journal.sqlite3") as journal:
        runs = sessions.logged_runs(journal, 1, 1)
        with journal.tx() as conn:
            # Equal and reversed stamps, as a coarse or stepped-back clock would write them.
            for run in runs:
                stamp = "2024-01-01T00:00:00Z" if run.number < 3 else "2023-01-01T00:00:00Z"
                sessions.update_run(conn, run.run_id, started_at=stamp, logged_at=stamp)
    status = session_status(session.root, last=2)
    assert [h["run"] for h in status.history] == [2, 3]
    assert [h["run"] for h in session_status(session.root).history] == [1, 2, 3]
