"""The journal: one SQLite database per repository, the single source of truth.

Invariants:
* WAL mode; every write runs in one `BEGIN IMMEDIATE` transaction (`Journal.tx`).
* Migrations are an ordered list of named functions, each applied once and recorded by name;
  a journal that knows a migration this code does not is refused (written by a newer version).
* sqlite3 errors never escape as tracebacks: they become JournalError with what to do next.
  A file that is not a database is never written to.
* Before anything is written (journal/integrity.py): the file is whole (`quick_check`), it is
  the journal that belongs here (its identity matches the marker beside it, so a truncated,
  deleted or swapped journal is refused instead of started afresh), and every transaction
  first checks that the file on disk is still the one this connection opened (a journal
  deleted or replaced mid-run is never written on as an orphan).
"""

from __future__ import annotations

import os
import sqlite3
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, NamedTuple

from autoresearch.clock import SYSTEM_CLOCK, Clock, utc_now_iso
from autoresearch.errors import AutoresearchError, DiskFullError, JournalError
from autoresearch.fsutil import FileRefused, make_private, private_fd
from autoresearch.journal import checked, domains, integrity, seals
from autoresearch.journal.schema import MIGRATIONS
from autoresearch.paths import RepoPaths
from autoresearch.settings import DEFAULT_BUSY_TIMEOUT, journal_timeout

# Throttled backups wait this many times their own duration: at most ~1/10 of the time.
BACKUP_SHARE_INVERSE = 9.0
# ...and at least this many seconds: a fast loop (a backup of a small journal takes ~3 ms, a
# step ~10 ms) would otherwise take one at nearly every keep, ~20 % of the step's overhead.
# An iteration of a second or more (any real agent) still gets one after each decision.
BACKUP_MIN_INTERVAL = 1.0


# a NamedTuple: every command that opens a journal imports it, and a frozen dataclass
# compiles its methods at import
class BackupThrottle(NamedTuple):
    """When the last backup of this process ended and how long it took (None: none yet)."""

    ended: float | None = None
    took: float = 0.0

    def due(self, now: float) -> bool:
        """Whether a throttled backup asked for at `now` is taken."""
        if self.ended is None:
            return True
        wait = max(BACKUP_MIN_INTERVAL, BACKUP_SHARE_INVERSE * self.took)
        return now - self.ended >= wait


class Journal:
    """An open journal connection (autocommit; explicit transactions via `tx`)."""

    def __init__(
        self,
        path: Path,
        conn: sqlite3.Connection,
        busy_timeout: float,
        clock: Clock = SYSTEM_CLOCK,
    ) -> None:
        self.path = path
        self._conn = conn
        self._clock = clock  # times the backups (the throttle)
        self._throttle = BackupThrottle()
        # None: throttled backups are taken when asked; else whether one was asked meanwhile
        self._deferred: bool | None = None
        # a throttled backup was asked for and skipped (not due): taken once due
        # (`take_deferred_backup`) by the lane driver every round and by the single loop while
        # it waits (each turn, a pause's polls, a session's stop poll: supervisor/loop.py),
        # instead of at the next decision, which may be a long session or a pause away
        self._owed = False
        self._busy_timeout = busy_timeout
        self._in_tx = False
        self._read_only = False  # opened by `open_to_read`: a write is a bug, refused
        self._file = _file_id(path)
        self.identity: integrity.Identity | None = None
        self._seal_key = b""  # the key of the seals (`_load_seal_key`)

    @classmethod
    def open(
        cls, path: Path, busy_timeout: float = DEFAULT_BUSY_TIMEOUT, clock: Clock = SYSTEM_CLOCK
    ) -> Journal:
        """Open (creating if needed), verify and migrate the journal at `path`."""
        expected = integrity.read_marker(path)
        existed = integrity.has_content(path)
        if expected is not None and not existed:
            raise JournalError(
                integrity.msg_refused(
                    f"journal {path} is missing or empty, but this repository had journal "
                    f"{expected}: it was truncated, deleted or replaced"
                )
                + integrity.hint_start_afresh(path)
            )
        try:
            _create_private(path)
            conn = sqlite3.connect(path, timeout=busy_timeout, isolation_level=None)
        except (sqlite3.Error, OSError) as exc:
            raise JournalError(f"cannot open journal {path}: {exc}") from exc
        conn.row_factory = sqlite3.Row
        journal = cls(path, conn, busy_timeout, clock)
        try:
            fresh_key = journal._load_seal_key()
            with journal._guard():
                # Reading the header first: a non-database file fails here, before any write.
                conn.execute("PRAGMA schema_version").fetchone()
                if existed:
                    journal._verify(expected, seals_known=not fresh_key)
                conn.execute("PRAGMA journal_mode=WAL").fetchone()
                conn.execute("PRAGMA synchronous=NORMAL")
                conn.execute("PRAGMA foreign_keys=ON")
            journal._migrate()
            with journal._guard():
                seals.install_triggers(conn)
            with journal.tx() as tx:
                journal.identity = integrity.ensure_identity(tx, path)
                if fresh_key and existed:
                    seals.seal_all(tx)  # the key was lost: seal what is there (trust on first use)
            journal._mark(expected)
        except BaseException:
            conn.close()
            raise
        return journal

    @classmethod
    def open_to_read(
        cls,
        path: Path,
        busy_timeout: float = DEFAULT_BUSY_TIMEOUT,
        clock: Clock = SYSTEM_CLOCK,
        settle_seconds: float = checked.SETTLE_SECONDS,
    ) -> Journal:
        """Open the journal at `path` to read it: verified as `open` verifies it (damaged,
        tampered, swapped or newer journals are refused), but nothing is written and no write
        lock taken, so a read answers while a driver holds a write transaction. A journal that
        needs a write first (new, no marker or seal key, a migration to apply) goes to `open`.
        `settle_seconds`: how long the files must have been left alone to be noted
        (journal/checked.py)."""
        expected = integrity.read_marker(path)
        ready = path.exists() and integrity.has_content(path) and integrity.seal_key(path).exists()
        if expected is None or not ready:
            return cls.open(path, busy_timeout, clock)
        try:
            uri = path.absolute().as_uri() + "?mode=rw"  # never creates the file
            conn = sqlite3.connect(uri, timeout=busy_timeout, isolation_level=None, uri=True)
        except sqlite3.Error as exc:
            raise JournalError(f"cannot open journal {path}: {exc}") from exc
        conn.row_factory = sqlite3.Row
        journal = cls(path, conn, busy_timeout, clock)
        try:
            if not journal._read_verified(expected, settle_seconds):
                conn.close()
                return cls.open(path, busy_timeout, clock)
        except BaseException:
            conn.close()
            raise
        journal._read_only = True
        return journal

    def _read_verified(self, expected: str, settle_seconds: float) -> bool:
        """`open`'s checks, writing nothing to the journal; False when a migration is still to
        be applied. The whole check is skipped for a journal at rest that is, stat for stat, the
        one a whole check last found sound (journal/checked.py), and noted when it passes."""
        self._load_seal_key()
        with self._guard():
            # read once before the stat: SQLite plays a rollback journal left beside the
            # database back at its first read (review11), so one dropped there between the
            # stat and that read cannot slip past it (`at_rest` refuses one it sees)
            self._conn.execute("PRAGMA schema_version").fetchone()
        found, began = checked.at_rest(self.path), time.time_ns()
        note = integrity.checked_note(self.path)
        vouched = found is not None and checked.vouches_for(
            note, self._seal_key, self.path, expected, found
        )
        with self._guard():
            self._conn.execute("PRAGMA query_only=ON")  # a read connection refuses any write
            self._verify(expected, whole=not vouched)
            if _pending_migrations(self._conn):
                return False
            self.identity = integrity.read_identity(self._conn)
        # noted when settled and still at rest as before the check: the check saw that file
        now = None if vouched else checked.at_rest(self.path)
        if now is not None and now == found and checked.settled(now, began, settle_seconds):
            checked.write(note, self._seal_key, self.path, expected, now)
        return True

    def defer_backups(self, on: bool = True) -> None:
        """While on, a throttled backup asked for waits for `take_deferred_backup`: the lane
        driver's one thread judges a candidate, serves the lanes, then takes it (a backup is
        no lane's business, and a safe point stays one after the launches). Off: throttled
        backups are taken when asked again, one asked meanwhile is dropped (it was optional)."""
        self._deferred = False if on else None

    def backup_owed(self) -> Path | None:
        """The throttled backup skipped since the last one, taken now whatever the throttle
        (a run interrupted leaves every decision in a backup), or None: none is owed."""
        return self.backup() if self._owed else None

    def take_deferred_backup(self) -> Path | None:
        """The throttled backup asked for since the last call, or one skipped earlier and due
        now, if any."""
        if not self._deferred and not self._owed:
            return None
        deferring, self._deferred = self._deferred is not None, None
        try:
            return self.backup(throttled=True)
        finally:
            self._deferred = False if deferring else None  # the mode it was in, kept

    def _mark(self, expected: str | None) -> None:
        """Name this journal in its markers (the outside one too, for a journal made before)."""
        assert self.identity is not None
        try:
            if expected is None:
                integrity.write_marker(self.path, self.identity.journal_id)
            else:
                integrity.mirror_marker(self.path, self.identity.journal_id)
        except OSError as exc:
            raise JournalError(f"cannot write the marker of journal {self.path}: {exc}") from exc

    def _load_seal_key(self) -> bool:
        """Give the connection its seal function; whether the key had to be made."""
        try:
            key, made = seals.load_key(integrity.seal_key(self.path))
        except (OSError, FileRefused, UnicodeDecodeError, ValueError) as exc:
            raise JournalError(
                f"cannot read the seal key {integrity.seal_key(self.path)} of journal "
                f"{self.path}: {exc}"
            ) from exc
        seals.register(self._conn, key)
        self._seal_key = key
        return made

    def _verify(self, expected: str | None, seals_known: bool = True, whole: bool = True) -> None:
        """Refuse a damaged, foreign or tampered journal (`whole` False: its identity only, for
        a journal a whole check vouches for as it stands)."""
        problem = integrity.damage(self._conn) if whole else None
        if problem is not None:
            raise JournalError(integrity.msg_refused(f"journal {self.path} is damaged ({problem})"))
        found = integrity.identity_problem(self.path, integrity.read_identity(self._conn), expected)
        if found is not None:
            raise JournalError(integrity.msg_refused(found))
        tampered = seals.problem(self._conn) if seals_known and whole else None
        if tampered is not None:
            raise JournalError(seals.msg_tampered(self.path, tampered))

    def check_kept(self, run_id: str, kept: str | None, baseline: str | None) -> None:
        """Refuse to act on a run's kept state that is not the one autoresearch sealed (an
        agent rewrote the journal under a running driver): before any git effect."""
        with self._guard():
            tampered = seals.kept_problem(self._conn, run_id, kept, baseline)
        if tampered is not None:
            raise JournalError(seals.msg_tampered(self.path, tampered))

    def json_problem(self) -> str | None:
        """The deep check of `autoresearch doctor`, too slow for every open on a long run: a
        JSON value anywhere in the journal that does not parse, in one line (None: none)."""
        with self._guard():
            found, total = domains.json_problems(self._conn)
        return domains.describe_all(found, total) if total else None

    def backup(self, *, throttled: bool = False) -> Path | None:
        """A rotating online backup of the journal (a safe point: nothing is in flight).

        `throttled` (the per-iteration safe points): skipped while less than
        BACKUP_SHARE_INVERSE times the last backup's duration, and less than
        BACKUP_MIN_INTERVAL, has passed since it ended, so a long run spends at most ~10 % of
        its time on backups whatever the journal's size (a backup copies the whole file; the
        step overhead stays flat with 10,000 iterations) and a fast loop few of its steps.
        The first backup of a process, prepare and the end of a run are never skipped.
        """
        if throttled and self._deferred is not None:
            self._deferred = True
            return None
        now = self._clock.monotonic()
        if throttled and not self._throttle.due(now):
            self._owed = True
            return None
        self._check_same_file()
        with self._guard():
            # a rewritten journal is no way back: it must never rotate a good backup out
            tampered = seals.problem(self._conn)
            if tampered is not None:
                raise JournalError(seals.msg_tampered(self.path, tampered))
            try:
                made = integrity.rotate_backup(self._conn, self.path)
            except OSError as exc:
                raise JournalError(f"cannot back up journal {self.path}: {exc}") from exc
        ended = self._clock.monotonic()
        self._throttle = BackupThrottle(ended, ended - now)
        self._owed = False
        return made

    @property
    def in_transaction(self) -> bool:
        """Inside `tx`: what a read sees may still be rolled back."""
        return self._in_tx

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

    def _translate(self, exc: sqlite3.DatabaseError) -> AutoresearchError:
        text = str(exc)
        if "locked" in text or "busy" in text:
            return JournalError(
                f"journal {self.path} is locked by another process "
                f"(waited {self._busy_timeout:g}s); try again when it has finished"
            )
        if "disk is full" in text or ("disk I/O error" in text and _nearly_full(self.path)):
            # SQLite reports a full disk under its shared memory or WAL as an I/O error
            return DiskFullError(f"no space left on device for journal {self.path} ({text})")
        if seals.TAMPERED in text:  # a write of ours over a row someone else changed
            return JournalError(seals.msg_tampered(self.path, "a sealed row"))
        if "malformed JSON" in text:  # SQLite's json functions met a value that does not parse
            damaged = f"journal {self.path} is damaged (a JSON value does not parse: {text})"
            return JournalError(integrity.msg_refused(damaged + "; `autoresearch doctor` names it"))
        if "not a database" in text or "malformed" in text or "corrupt" in text:
            return JournalError(
                f"journal {self.path} is not a valid SQLite database ({text}); nothing was "
                f"changed. Restore the latest good backup with `{integrity.RESTORE_HINT}`, or "
                "move it aside to start a new journal"
            )
        return JournalError(f"journal {self.path}: {text}")

    @contextmanager
    def tx(self) -> Iterator[sqlite3.Connection]:
        """One write transaction; commits on success, rolls back on any exception."""
        if self._in_tx:
            raise RuntimeError("nested journal transaction")
        if self._read_only:
            raise RuntimeError("a write through a journal opened to read")
        self._check_same_file()
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

    def _check_same_file(self) -> None:
        """Refuse to write into a journal that is no longer the file at `path` (deleted, or
        replaced by another file): the writes would land in a file nobody will read."""
        if _file_id(self.path) != self._file:
            raise JournalError(
                f"journal {self.path} was deleted or replaced while this process had it "
                "open; nothing more was written. Restore the latest good backup with "
                f"`{integrity.RESTORE_HINT}`"
            )

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


def _pending_migrations(conn: sqlite3.Connection) -> bool:
    """Whether the journal lacks a migration this code knows (or knows one this code does
    not: `open` refuses it with its word)."""
    table = conn.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'migrations'"
    ).fetchone()
    if table is None:
        return True
    done = {str(r[0]) for r in conn.execute("SELECT name FROM migrations")}
    return done != {name for name, _ in MIGRATIONS}


def _nearly_full(path: Path) -> bool:
    try:
        info = os.statvfs(path.parent)
    except OSError:
        return False
    return info.f_bavail * info.f_frsize < 1 << 20


# What a store's read takes: the journal (each read under its guard), or the connection of a
# transaction the caller holds open (to read what it has just written).
Reader = Journal | sqlite3.Connection


def read_rows(src: Reader, sql: str, params: Sequence[Any] = ()) -> list[sqlite3.Row]:
    """The rows of one query, through the journal or inside the caller's transaction."""
    if isinstance(src, Journal):
        return src.rows(sql, params)
    return list(src.execute(sql, params).fetchall())


def open_journal(
    repo_root: Path, busy_timeout: float | None = None, *, to_read: bool = False
) -> Journal:
    """The repository's journal, opened (`Journal.open`: made, verified, migrated; `to_read`:
    `Journal.open_to_read`, verified without a write): the one way every engine opens it. A
    busy journal is waited for `busy_timeout` seconds, by default `settings.journal_timeout()`
    (AUTORESEARCH_JOURNAL_TIMEOUT)."""
    timeout = journal_timeout() if busy_timeout is None else busy_timeout
    opener = Journal.open_to_read if to_read else Journal.open
    return opener(RepoPaths(repo_root).journal, busy_timeout=timeout)


def journal_present(path: Path) -> bool:
    """Whether a journal is (or was) here: the file, or the marker of one that was deleted.
    Read paths that answer "no runs" without a journal ask this, not `path.exists()`."""
    return path.exists() or integrity.read_marker(path) is not None


def _file_id(path: Path) -> tuple[int, int] | None:
    try:
        info = os.stat(path)
    except OSError:
        return None
    return info.st_dev, info.st_ino


Migration = Callable[[sqlite3.Connection], None]


def _create_private(path: Path) -> None:
    """Make the journal file 0600 before SQLite opens it: SQLite gives its -wal and -shm files
    the database file's mode, so all three stay the user's alone."""
    os.close(private_fd(path, os.O_RDWR))
    for suffix in ("-wal", "-shm"):
        side = path.with_name(path.name + suffix)
        if side.exists():
            make_private(side)  # left by an older version
