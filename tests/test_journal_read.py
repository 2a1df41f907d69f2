"""A read of the journal (`status`, `status RUN`, a session's status) takes no write lock: it
answers while a driver holds a write transaction, and writes nothing; a damaged, tampered or
swapped journal is still refused to it, never obeyed."""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from autoresearch.errors import JournalError
from autoresearch.journal.db import open_journal
from autoresearch.supervisor.prepare import prepare
from helpers import cli

RUN_ID = "missions-demo-t1"
QUICK = {"AUTORESEARCH_JOURNAL_TIMEOUT": "0.5"}  # a read that waited would fail in 0.5 s


@contextmanager
def write_held(journal: Path) -> Iterator[None]:
    """Another connection in a write transaction, as a driver deciding an iteration is."""
    conn = sqlite3.connect(journal, isolation_level=None)
    try:
        conn.execute("BEGIN IMMEDIATE")
        yield
        conn.execute("ROLLBACK")
    finally:
        conn.close()


def prepared(mission_dir: Path) -> Path:
    with prepare(mission_dir, run_tag="T1") as h:
        return h.repo.repo_root


@pytest.mark.parametrize("args", [("status",), ("status", RUN_ID), ("status", "missions-")])
def test_status_answers_while_a_driver_holds_the_write_lock(
    mission_dir: Path, args: tuple[str, ...]
) -> None:
    root = prepared(mission_dir)
    with write_held(root / ".autoresearch/journal.sqlite3"):
        t0 = time.monotonic()
        done = cli(*args, cwd=root, env=QUICK)
    assert done.returncode == 0, done.stderr
    assert RUN_ID in done.stdout
    assert time.monotonic() - t0 < 30  # answered, not timed out on the lock


def test_a_journal_opened_to_read_refuses_a_write(mission_dir: Path) -> None:
    root = prepared(mission_dir)
    with open_journal(root, to_read=True) as journal:
        with pytest.raises(RuntimeError, match="opened to read"), journal.tx():
            pass
        with pytest.raises(JournalError):  # the connection itself is query-only
            journal.rows("DELETE FROM runs")
        assert journal.identity is not None


def test_a_tampered_journal_is_refused_to_a_reader(mission_dir: Path) -> None:
    root = prepared(mission_dir)
    with sqlite3.connect(root / ".autoresearch/journal.sqlite3") as conn:
        conn.execute("UPDATE runs SET last_kept_commit = 'f00d' WHERE run_id = ?", (RUN_ID,))
    with pytest.raises(JournalError, match="changed outside autoresearch|tamper"):
        open_journal(root, to_read=True)
    done = cli("status", cwd=root)
    assert done.returncode == 2 and "Traceback" not in done.stderr


def test_a_journal_from_a_newer_version_is_refused_to_a_reader(mission_dir: Path) -> None:
    root = prepared(mission_dir)
    with sqlite3.connect(root / ".autoresearch/journal.sqlite3") as conn:
        conn.execute("INSERT INTO migrations VALUES ('9999_from_the_future', 'x')")
    with pytest.raises(JournalError, match="newer autoresearch"):
        open_journal(root, to_read=True)
