"""The journal: one SQLite database per repository, the single source of truth.

Invariants:
* WAL mode; every write runs in one `BEGIN IMMEDIATE` transaction (`Journal.tx`).
* Migrations are an ordered list of named functions, each applied once and recorded by name;
  a journal that knows a migration this code does not is refused (written by a newer version).
* sqlite3 errors never escape as tracebacks: they become JournalError with what to do next.
  A file that is not a database is never written to.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from autoresearch.clock import utc_now_iso
from autoresearch.errors import JournalError
from autoresearch.fsutil import make_private, private_fd
from autoresearch.journal.schema import MIGRATIONS

DEFAULT_BUSY_TIMEOUT = 10.0


class Journal:
    """An open journal connection (autocommit; explicit transactions via `tx`)."""

    def __init__(self, path: Path, conn: sqlite3.Connection, busy_timeout: float) -> None:
        self.path = path
        self._conn = conn
        self._busy_timeout = busy_timeout
        self._in_tx = False

    @classmethod
    def open(cls, path: Path, busy_timeout: float = DEFAULT_BUSY_TIMEOUT) -> Journal:
        """Open (creating if needed) and migrate the journal at `path`."""
        try:
            _create_private(path)
            conn = sqlite3.connect(path, timeout=busy_timeout, isolation_level=None)
        except (sqlite3.Error, OSError) as exc:
            raise JournalError(f"cannot open journal {path}: {exc}") from exc
        conn.row_factory = sqlite3.Row
        journal = cls(path, conn, busy_timeout)
        try:
            with journal._guard():
                # Reading the header first: a non-database file fails here, before any write.
                conn.execute("PRAGMA schema_version").fetchone()
                conn.execute("PRAGMA journal_mode=WAL").fetchone()
                conn.execute("PRAGMA synchronous=NORMAL")
                conn.execute("PRAGMA foreign_keys=ON")
            journal._migrate()
        except BaseException:
            conn.close()
            raise
        return journal

    def close(self) -> None:
        self._conn.close()

    def __enter__(self) -> Journal:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @contextmanager
    def _guard(self) -> Iterator[None]:
        try:
            yield
        except sqlite3.DatabaseError as exc:
            raise self._translate(exc) from exc

    def _translate(self, exc: sqlite3.DatabaseError) -> JournalError:
        text = str(exc)
        if "locked" in text or "busy" in text:
            return JournalError(
                f"journal {self.path} is locked by another process "
                f"(waited {self._busy_timeout:g}s); try again when it has finished"
            )
        if "not a database" in text or "malformed" in text or "corrupt" in text:
            return JournalError(
                f"journal {self.path} is not a valid SQLite database ({text}); nothing was "
                "changed. Restore it from a backup, or move it aside to start a new journal"
            )
        return JournalError(f"journal {self.path}: {text}")

    @contextmanager
    def tx(self) -> Iterator[sqlite3.Connection]:
        """One write transaction; commits on success, rolls back on any exception."""
        if self._in_tx:
            raise RuntimeError("nested journal transaction")
        with self._guard():
            self._conn.execute("BEGIN IMMEDIATE")
            self._in_tx = True
            try:
                yield self._conn
                self._conn.execute("COMMIT")
            except BaseException:
                if self._conn.in_transaction:
                    self._conn.execute("ROLLBACK")
                raise
            finally:
                self._in_tx = False

    def rows(self, sql: str, params: Sequence[Any] = ()) -> list[sqlite3.Row]:
        with self._guard():
            return list(self._conn.execute(sql, params).fetchall())

    def row(self, sql: str, params: Sequence[Any] = ()) -> sqlite3.Row | None:
        with self._guard():
            found: sqlite3.Row | None = self._conn.execute(sql, params).fetchone()
            return found

    def _migrate(self) -> None:
        with self.tx() as conn:
            conn.execute(
                "CREATE TABLE IF NOT EXISTS migrations (name TEXT PRIMARY KEY, applied_at TEXT)"
            )
            done = {r[0] for r in conn.execute("SELECT name FROM migrations")}
            known = {name for name, _ in MIGRATIONS}
            unknown = sorted(done - known)
            if unknown:
                raise JournalError(
                    f"journal {self.path} was written by a newer autoresearch "
                    f"(unknown migrations: {', '.join(unknown)}); upgrade autoresearch"
                )
            for name, migrate in MIGRATIONS:
                if name not in done:
                    migrate(conn)
                    conn.execute(
                        "INSERT INTO migrations (name, applied_at) VALUES (?, ?)",
                        (name, utc_now_iso()),
                    )


Migration = Callable[[sqlite3.Connection], None]


def _create_private(path: Path) -> None:
    """Make the journal file 0600 before SQLite opens it: SQLite gives its -wal and -shm files
    the database file's mode, so all three stay the user's alone."""
    os.close(private_fd(path, os.O_RDWR))
    for suffix in ("-wal", "-shm"):
        side = path.with_name(path.name + suffix)
        if side.exists():
            make_private(side)  # left by an older version
