"""A Stop without a session is answered at a glance (journal/peek.py): "no session" only when
git's files and the sessions table plainly say so, else the journal is opened in full, so a
session's Stop still reads a verified journal (issue 36)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from exp_helpers import cycle

from autoresearch.experiments.hooks import HookEvent, answer_hook, no_session_at_a_glance
from autoresearch.experiments.session import close_session
from autoresearch.journal.peek import Glance, open_session_on
from autoresearch.paths import RepoPaths
from helpers import Repo, git


def journal_of(repo: Repo) -> Path:
    return RepoPaths(repo.root).journal


def test_an_open_session_on_the_branch_is_never_settled_at_a_glance(session: Repo) -> None:
    branch = git(session.root, "branch", "--show-current")
    assert open_session_on(journal_of(session), branch) is Glance.UNSURE
    assert not no_session_at_a_glance(session.root)


def test_no_session_here_is_settled_at_a_glance(session: Repo, tmp_path: Path) -> None:
    journal = journal_of(session)
    assert open_session_on(journal, "another-branch") is Glance.NONE_OPEN
    assert open_session_on(journal, None) is Glance.NONE_OPEN  # a detached HEAD
    assert open_session_on(tmp_path / "none.sqlite3", "main") is Glance.NONE_OPEN
    branch = git(session.root, "branch", "--show-current")
    close_session(session.root)
    assert open_session_on(journal, branch) is Glance.NONE_OPEN
    assert no_session_at_a_glance(session.root)


def test_what_a_glance_cannot_read_is_left_to_the_full_open(tmp_path: Path) -> None:
    garbage = tmp_path / "garbage.sqlite3"
    garbage.write_bytes(b"not a database at all" * 100)
    assert open_session_on(garbage, "main") is Glance.UNSURE
    older = tmp_path / "older.sqlite3"  # a journal from before sessions: the open migrates it
    sqlite3.connect(older).execute("CREATE TABLE runs (run_id TEXT)").connection.close()
    assert open_session_on(older, "main") is Glance.UNSURE


def test_a_session_stop_still_reads_the_verified_journal(session: Repo) -> None:
    cycle(session, "100", "keep", "baseline")
    answer = answer_hook(HookEvent.STOP, "{}", session.root)
    assert answer.output is not None and answer.output["decision"] == "block"
    # the same session behind a damaged journal: the full open refuses it, the agent stops
    journal = journal_of(session)
    with sqlite3.connect(journal) as conn:
        conn.execute("UPDATE session_runs SET status = 'no such verdict'")
    answer = answer_hook(HookEvent.STOP, "{}", session.root)
    assert answer.output is None and "hook error" in answer.log
