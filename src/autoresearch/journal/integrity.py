"""Is this journal whole, and is it the one that belongs here? And the way back: backups.

Identity: every journal holds one random id (table `journal_identity`, with the repository it
was made in); the file `journal.sqlite3.id` beside it names the id of the journal that belongs
there. A journal truncated to nothing, deleted or swapped for another no longer matches the
marker, and is refused before anything is written into it.

Integrity: `PRAGMA quick_check` at open: a page overwritten anywhere is found before a write
could build on it, not only when a query happens to read that page; then every enum-valued
column is scanned for values no version wrote (journal/domains.py).

Backups: the SQLite online backup API copies a consistent snapshot while the journal is in
use, into a temporary file that is checked before it replaces the newest backup; older ones
rotate down (`backups/journal.1.sqlite3` is the newest). A kill at any instant leaves every
backup whole.

Outside the repository: the marker and the backups are kept twice, beside the journal and in
the user's state directory (`paths.user_records`, private), so `rm -rf .autoresearch` leaves a
marker that refuses a fresh journal in its place and the backups `doctor --restore` needs.
The outside copies are read first: they are the ones a session working in the repository
does not touch.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple, cast

from autoresearch.clock import utc_now_iso
from autoresearch.fsutil import FileRefused, atomic_write_text, private_dir, read_regular
from autoresearch.journal import domains, seals
from autoresearch.paths import (
    CHECKED_NOTE_FILE,
    JOURNAL_BACKUPS_KEPT,
    SEAL_KEY_FILE,
    STATE_DIR,
    USER_REPO_NOTE,
    journal_backup,
    journal_marker,
    user_journal,
)

MAX_MARKER_BYTES = 4096
RESTORE_HINT = "autoresearch doctor --restore"


# a NamedTuple: status imports it, and a frozen dataclass compiles its methods at import
class Identity(NamedTuple):
    journal_id: str
    repo_root: str
    created_at: str


def repo_of(journal: Path) -> str:
    """The repository a journal at `journal` serves (the folder around `.autoresearch`)."""
    folder = journal.absolute().parent
    return str(folder.parent if folder.name == STATE_DIR else folder)


def has_content(journal: Path) -> bool:
    """Whether a database is there to be read: a non-empty file or a non-empty WAL."""
    for path in (journal, journal.with_name(journal.name + "-wal")):
        with contextlib.suppress(OSError):
            if path.stat().st_size > 0:
                return True
    return False


def outside(journal: Path) -> Path:
    """The journal's place in the user's state directory (its outside marker and backups)."""
    return user_journal(journal, Path(repo_of(journal)))


def seal_key(journal: Path) -> Path:
    """The key of the journal's seals, outside the repository (journal/seals.py)."""
    return outside(journal).with_name(SEAL_KEY_FILE)


def checked_note(journal: Path) -> Path:
    """Where a whole check notes the journal it found sound, beside the seal key
    (journal/checked.py)."""
    return outside(journal).with_name(CHECKED_NOTE_FILE)


def copies(journal: Path) -> tuple[Path, Path]:
    """Where the journal's marker and backups are kept: outside first, then beside it."""
    return outside(journal), journal


def read_marker(journal: Path) -> str | None:
    """The journal id the marker names (the outside one first), or None when there is no
    usable marker."""
    for place in copies(journal):
        found = _read_marker_at(place)
        if found is not None:
            return found
    return None


def _read_marker_at(journal: Path) -> str | None:
    try:
        text = read_regular(journal_marker(journal), MAX_MARKER_BYTES).decode("ascii").strip()
    except (OSError, FileRefused, UnicodeDecodeError):
        return None
    return text or None


def write_marker(journal: Path, journal_id: str) -> None:
    """Name the journal that belongs here, outside the repository and beside the journal."""
    place = outside(journal)
    atomic_write_text(place.with_name(USER_REPO_NOTE), repo_of(journal) + "\n")
    for copy in (place, journal):
        atomic_write_text(journal_marker(copy), journal_id + "\n")


def mirror_marker(journal: Path, journal_id: str) -> None:
    """Give a journal made before the outside records its outside marker (once)."""
    if _read_marker_at(outside(journal)) is None:
        write_marker(journal, journal_id)


def read_identity(conn: sqlite3.Connection) -> Identity | None:
    """The identity row, or None in a journal that has none (new, or made before i11)."""
    table = conn.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'journal_identity'"
    ).fetchone()
    if table is None:
        return None
    row = conn.execute("SELECT journal_id, repo_root, created_at FROM journal_identity").fetchone()
    return Identity(str(row[0]), str(row[1]), str(row[2])) if row else None


def ensure_identity(conn: sqlite3.Connection, journal: Path) -> Identity:
    """The journal's identity, created on first use (inside the caller's transaction)."""
    found = read_identity(conn)
    if found is not None:
        return found
    made = Identity(uuid.uuid4().hex, repo_of(journal), utc_now_iso())
    conn.execute(
        "INSERT INTO journal_identity (journal_id, repo_root, created_at) VALUES (?, ?, ?)",
        (made.journal_id, made.repo_root, made.created_at),
    )
    return made


def quick_check(conn: sqlite3.Connection) -> str | None:
    """What SQLite finds wrong with the database (first lines), or None when it is whole."""
    rows = [str(r[0]) for r in conn.execute("PRAGMA quick_check(5)").fetchall()]
    if rows == ["ok"]:
        return None
    return "; ".join(rows) or "quick_check returned nothing"


def damage(conn: sqlite3.Connection) -> str | None:
    """What is damaged in the database, or None: its pages (`quick_check`), then its values
    (an enum column holding what no version wrote, journal/domains.py)."""
    return quick_check(conn) or domains.enum_problem(conn)


def identity_problem(journal: Path, found: Identity | None, expected: str | None) -> str | None:
    """Why the journal at `journal` is not the one that belongs there, or None."""
    if expected is not None:
        if found is None:
            return (
                f"journal {journal} is not the journal of this repository (it has no identity, "
                f"the marker {journal_marker(journal).name} names {expected}): it was replaced"
            )
        if found.journal_id != expected:
            return (
                f"journal {journal} is not the journal of this repository (it is "
                f"{found.journal_id} from {found.repo_root}, the marker names {expected}): "
                "it was swapped for another one"
            )
        return None
    if found is not None and found.repo_root != repo_of(journal):
        return (
            f"journal {journal} belongs to another repository ({found.repo_root}): it was "
            "copied here"
        )
    return None


def msg_refused(problem: str) -> str:
    return (
        f"{problem}; nothing was written. See what is wrong and restore the latest good "
        f"backup with `{RESTORE_HINT}`, or move the journal aside to start a new one"
    )


def hint_start_afresh(journal: Path) -> str:
    """The way to a new journal when the old one is gone for good: its markers name it."""
    markers = " and ".join(str(journal_marker(place)) for place in copies(journal))
    return f" (to start afresh instead, remove its markers {markers})"


# --- backups ------------------------------------------------------------------------------


def backup_into(
    conn: sqlite3.Connection, dest: Path, sync: Callable[[int], None] = os.fsync
) -> None:
    """Copy the database behind `conn` into `dest` atomically, as one self-contained file
    (rollback journal mode), checked whole and synced (`sync`, given its descriptor) before
    it appears under its name."""
    private_dir(dest.parent)
    tmp = dest.with_name(f".{dest.name}.{os.getpid()}.tmp")
    tmp.unlink(missing_ok=True)
    try:
        fd = os.open(tmp, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o600)
        os.close(fd)
        target = sqlite3.connect(tmp, isolation_level=None)
        try:
            # a temporary thrown away whole on any failure needs no rollback journal nor a
            # sync per transaction (8 fdatasyncs a backup): it is synced once, below
            target.execute("PRAGMA synchronous=OFF")
            target.execute("PRAGMA journal_mode=MEMORY").fetchone()
            conn.backup(target)
            target.execute("PRAGMA journal_mode=DELETE").fetchone()
            problem = quick_check(target)
        finally:
            target.close()
        if problem is not None:
            raise sqlite3.DatabaseError(f"database disk image is malformed ({problem})")
        _sync_file(tmp, sync)
        os.replace(tmp, dest)
    finally:
        for leftover in (tmp, tmp.with_name(tmp.name + "-journal")):
            leftover.unlink(missing_ok=True)


def _sync_file(path: Path, sync: Callable[[int], None]) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        sync(fd)
    finally:
        os.close(fd)


def rotate_backup(conn: sqlite3.Connection, journal: Path) -> Path:
    """A new newest backup of the journal, beside the journal and (a byte copy of the same
    checked file) outside the repository; the older ones move down, the oldest goes. Returns
    the newest one beside the journal."""
    newest = journal_backup(journal, 1)
    fresh = newest.with_name(f".{newest.name}.new")
    backup_into(conn, fresh)
    try:
        away = journal_backup(outside(journal), 1)
        copied = away.with_name(f".{away.name}.new")
        _copy_private(fresh, copied)
        _rotate_in(outside(journal), copied)
    finally:
        _rotate_in(journal, fresh)
    return newest


def _copy_private(source: Path, dest: Path) -> None:
    import shutil  # a restore's only: every open of a journal would pay for it

    private_dir(dest.parent)
    fd = os.open(dest, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as out, source.open("rb") as src:
        shutil.copyfileobj(src, out)
        out.flush()
        os.fsync(out.fileno())


def _rotate_in(place: Path, fresh: Path) -> None:
    """`fresh` becomes the newest backup at `place`; the older ones move down."""
    for generation in range(JOURNAL_BACKUPS_KEPT - 1, 0, -1):
        older = journal_backup(place, generation)
        if older.exists():
            os.replace(older, journal_backup(place, generation + 1))
    os.replace(fresh, journal_backup(place, 1))


# a NamedTuple: status imports it, and a frozen dataclass compiles its methods at import
class BackupInfo(NamedTuple):
    path: Path
    generation: int
    problem: str | None
    identity: Identity | None
    size: int
    modified_at: float

    @property
    def usable(self) -> bool:
        return self.problem is None


def inspect_backups(journal: Path, expected: str | None) -> list[BackupInfo]:
    """Every backup of the journal, newest first (the outside ones first), each checked whole
    and for identity."""
    found = []
    for place in copies(journal):
        for generation in range(1, JOURNAL_BACKUPS_KEPT + 1):
            path = journal_backup(place, generation)
            if path.is_file():
                found.append(inspect_backup(path, generation, journal, expected))
    return found


def inspect_backup(path: Path, generation: int, journal: Path, expected: str | None) -> BackupInfo:
    info = path.stat()
    problem: str | None
    identity: Identity | None = None
    try:
        conn = sqlite3.connect(f"{path.as_uri()}?mode=ro", uri=True)
        try:
            problem = damage(conn) or _seal_problem(conn, journal)
            identity = read_identity(conn) if problem is None else None
        finally:
            conn.close()
    except sqlite3.DatabaseError as exc:
        problem = str(exc)
    foreign = identity is None or identity.journal_id != expected
    if problem is None and expected is not None and foreign:
        problem = "it is the backup of another journal"
    return BackupInfo(path, generation, problem, identity, info.st_size, info.st_mtime)


class RecordedRun(NamedTuple):
    """What a journal file holds of one run: its branch, the commit the branch stands at by
    that record (the last keep, else the baseline; None before prepare made one), the
    numbers of its iterations (the one a session was in flight for too) and, by lane of
    `run --lanes K`, how many sessions that lane started."""

    run_id: str
    branch: str
    kept: str | None
    iterations: frozenset[int]
    lane_sessions: dict[int, int]


def recorded_runs(path: Path) -> dict[str, RecordedRun]:
    """The runs a journal file (a backup about to be restored) holds, read without writing
    to it."""
    conn = sqlite3.connect(f"{path.as_uri()}?mode=ro", uri=True)
    try:
        tables = {str(row[0]) for row in conn.execute("SELECT name FROM sqlite_master")}

        def rows(table: str, columns: str) -> list[tuple[object, ...]]:
            # a backup made before issue 11 or `--lanes` lacks their tables: nothing in flight
            found = conn.execute(f"SELECT {columns} FROM {table}") if table in tables else []
            return [tuple(row) for row in found]

        held: dict[str, set[int]] = {}
        for run_id, iteration in rows("iterations", "run_id, iteration") + rows(
            "session_inflight", "run_id, iteration"
        ):
            held.setdefault(str(run_id), set()).add(int(cast(int, iteration)))
        started: dict[str, dict[int, int]] = {}
        for run_id, lane, session in rows("run_lanes", "run_id, lane, session") + rows(
            "lane_inflight", "run_id, lane, session"
        ):
            lanes = started.setdefault(str(run_id), {})
            number = int(cast(int, lane))
            lanes[number] = max(lanes.get(number, 0), int(cast(int, session)))
        known = conn.execute(
            "SELECT run_id, branch_name, COALESCE(last_kept_commit, baseline_commit) FROM runs"
        )
        return {
            run_id: RecordedRun(
                run_id, branch, kept, frozenset(held.get(run_id, ())), started.get(run_id, {})
            )
            for run_id, branch, kept in known
        }
    finally:
        conn.close()


def _seal_problem(conn: sqlite3.Connection, journal: Path) -> str | None:
    """A backup taken after someone rewrote the journal is no way back: its seals say so."""
    if not seal_key(journal).is_file():
        return None
    seals.register(conn, seals.load_key(seal_key(journal))[0])
    if not seals.tables_present(conn) or not seals.same_key(conn):
        return None  # sealed under a key since made anew: nothing to check it against
    found = seals.problem(conn)
    return f"it was changed outside autoresearch ({found})" if found else None


_DECIDED_ROWS = (
    "SELECT run_id, iteration, decision, candidate_commit, kept_commit FROM iterations "
    "WHERE decision IS NOT NULL"
)


def _decided(path: Path) -> set[tuple[object, ...]]:
    conn = sqlite3.connect(f"{path.as_uri()}?mode=ro", uri=True)
    try:
        return {tuple(row) for row in conn.execute(_DECIDED_ROWS)}
    finally:
        conn.close()


def disagreement(journal: Path, backup: Path) -> str | None:
    """A decision the backup holds that the journal no longer holds as it was (the journal
    only ever adds decisions: one that is gone or changed was rewritten), or None."""
    try:
        gone = sorted(_decided(backup) - _decided(journal), key=str)
    except sqlite3.DatabaseError as exc:
        return f"it cannot be compared with {backup.name}: {exc}"
    if not gone:
        return None
    run_id, iteration, decision, *_ = gone[0]
    return (
        f"run {run_id} iteration {iteration} ({decision}) of backup {backup} is gone or "
        f"changed in the journal ({len(gone)} decisions in all)"
    )


def _seal_as_chosen(staged: Path, journal: Path) -> None:
    """The backup the user chose is sealed under today's key: one taken before the key was
    made anew (a moved repository) opens like any other."""
    conn = sqlite3.connect(staged, isolation_level=None)
    try:
        seals.register(conn, seals.load_key(seal_key(journal))[0])
        if seals.tables_present(conn):
            conn.execute("BEGIN IMMEDIATE")
            seals.seal_all(conn)
            conn.execute("COMMIT")
    finally:
        conn.close()


def restore(journal: Path, backup: Path, aside: Path) -> None:
    """Put `backup` in the journal's place; the current journal (and its WAL) move to `aside`
    first, never deleted."""
    source = sqlite3.connect(f"{backup.as_uri()}?mode=ro", uri=True)
    try:
        staged = journal.with_name(f".{journal.name}.restore")
        backup_into(source, staged)
    finally:
        source.close()
    _seal_as_chosen(staged, journal)
    for suffix in ("", "-wal", "-shm"):
        current = journal.with_name(journal.name + suffix)
        if current.exists():
            os.replace(current, aside.with_name(aside.name + suffix))
    os.replace(staged, journal)
