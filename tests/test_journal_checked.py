"""A reader skips the whole check of a journal at rest that is, stat for stat, the one a whole
check last found sound (journal/checked.py); any change to its file, a journal not at rest, a
forged note or a writer brings the whole check back, and a tampered journal is still refused."""

from __future__ import annotations

import hashlib
import inspect
import os
import shutil
import sqlite3
import threading
from contextlib import closing
from pathlib import Path

import pytest

from autoresearch.errors import JournalError
from autoresearch.journal import checked, domains, integrity, seals
from autoresearch.journal.db import Journal, open_journal
from autoresearch.supervisor.prepare import prepare
from helpers import cli

RUN_ID = "missions-demo-t1"
SECOND = 1_000_000_000


@pytest.mark.parametrize(
    ("changed_before_s", "may_note"),
    [
        (checked.SETTLE_SECONDS, True),  # left alone exactly as long as a note waits
        (checked.SETTLE_SECONDS + 3600, True),
        (checked.SETTLE_SECONDS - 0.001, False),  # a write through a mapping may be unseen
        (1.0, False),  # a write in the same tick could still match it
        (0.0, False),
        (-1.0, False),  # changed after the check began (or a clock set back)
    ],
)
def test_a_check_notes_only_files_left_alone_long_enough(
    changed_before_s: float, may_note: bool
) -> None:
    began = 1_000_000 * SECOND
    found = checked.Seen("file", began - int(changed_before_s * SECOND))
    assert checked.settled(found, began) is may_note


def prepared(mission_dir: Path) -> tuple[Path, Path]:
    with prepare(mission_dir, run_tag="T1") as h:
        root = h.repo.repo_root
    return root, root / ".autoresearch/journal.sqlite3"


def read_runs(journal: Path) -> list[str]:
    """The runs, read as `status` reads them, noting files changed any time before (the
    tests do not wait for the settling time)."""
    with Journal.open_to_read(journal, settle_seconds=0.0) as reader:
        return [str(r["run_id"]) for r in reader.rows("SELECT run_id FROM runs")]


def tampered(journal: Path) -> None:
    """An edit by another connection, closed after it (the journal at rest again)."""
    with closing(sqlite3.connect(journal)) as conn, conn:
        conn.execute("UPDATE runs SET last_kept_commit = 'f00d' WHERE run_id = ?", (RUN_ID,))


def note_as_checked(journal: Path, key: bytes) -> None:
    """A note for the journal as it stands now, sealed under `key`."""
    found, journal_id = checked.at_rest(journal), integrity.read_marker(journal)
    assert found is not None and journal_id is not None
    checked.write(integrity.checked_note(journal), key, journal, journal_id, found)


def test_a_reader_skips_the_whole_check_of_the_journal_a_check_noted(mission_dir: Path) -> None:
    """Seen from outside: the journal's seals under the key it was made with, the key swapped
    for another. A whole check refuses that ("another key"); a reader with a note, sealed under
    the new key, of these very files does not check whole, and reads; a writer always does."""
    _, journal = prepared(mission_dir)
    note = integrity.checked_note(journal)
    assert read_runs(journal) == [RUN_ID]
    noted = note.read_text()
    note_as_checked(journal, seals.load_key(integrity.seal_key(journal))[0])
    assert note.read_text() == noted  # the reader noted the files it checked, as they are
    integrity.seal_key(journal).write_text("ab" * 32 + "\n")
    note_as_checked(journal, bytes.fromhex("ab" * 32))
    assert read_runs(journal) == [RUN_ID]
    with pytest.raises(JournalError, match="another key"):
        Journal.open(journal).close()
    note.unlink()
    with pytest.raises(JournalError, match="another key"):
        read_runs(journal)


def test_a_journal_a_driver_holds_open_is_checked_whole_at_every_read(mission_dir: Path) -> None:
    """Frames in the WAL: what a reader sees depends on the WAL's index too, which no stat
    describes. A note of the database file vouches for nothing then."""
    _, journal = prepared(mission_dir)
    integrity.seal_key(journal).write_text("ab" * 32 + "\n")
    note_as_checked(journal, bytes.fromhex("ab" * 32))
    assert read_runs(journal) == [RUN_ID]  # at rest: the note vouches
    with closing(sqlite3.connect(journal, isolation_level=None)) as driver:
        driver.execute("CREATE TEMP TABLE held (x)")  # the connection stays open...
        driver.execute("UPDATE runs SET updated_at = 'later'")  # ...with frames in the WAL
        assert checked.at_rest(journal) is None
        with pytest.raises(JournalError, match="another key"):
            read_runs(journal)


def test_a_journal_edited_behind_autoresearchs_back_is_checked_whole_again(
    mission_dir: Path,
) -> None:
    _, journal = prepared(mission_dir)
    read_runs(journal)
    assert integrity.checked_note(journal).exists()
    tampered(journal)
    with pytest.raises(JournalError, match="changed outside autoresearch"):
        read_runs(journal)


def test_same_size_same_mtime_is_not_the_same_journal(mission_dir: Path) -> None:
    """Bytes changed in place, the file's size and modification time put back: only its
    change time tells, and it does."""
    _, journal = prepared(mission_dir)
    with sqlite3.connect(journal) as conn:  # the run's row in the database file, not a WAL
        kept = conn.execute("SELECT last_kept_commit FROM runs").fetchone()[0]
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    read_runs(journal)
    before = os.stat(journal)
    data = journal.read_bytes()
    assert kept.encode() in data
    with open(journal, "r+b") as handle:  # in place: same inode, same size
        handle.write(data.replace(kept.encode(), ("0" * len(kept)).encode()))
    os.utime(journal, ns=(before.st_atime_ns, before.st_mtime_ns))
    after = os.stat(journal)
    assert (after.st_ino, after.st_size, after.st_mtime_ns) == (
        before.st_ino, before.st_size, before.st_mtime_ns,
    )  # fmt: skip
    with pytest.raises(JournalError, match="changed outside autoresearch"):
        read_runs(journal)


def test_a_journal_changed_moments_ago_is_not_noted(mission_dir: Path) -> None:
    """A write in the same tick of the file system's clock could leave the files' stat as it
    is: a note waits until they have settled (here, as shipped)."""
    root, journal = prepared(mission_dir)
    with open_journal(root, to_read=True) as reader:
        assert reader.identity is not None
    assert not integrity.checked_note(journal).exists()


@pytest.mark.parametrize("note", ["", "0" * 32, "not a note at all"])
def test_a_note_not_sealed_under_the_key_vouches_for_nothing(mission_dir: Path, note: str) -> None:
    _, journal = prepared(mission_dir)
    tampered(journal)
    integrity.checked_note(journal).write_text(note + "\n")
    with pytest.raises(JournalError, match="changed outside autoresearch"):
        read_runs(journal)


def test_a_note_under_another_key_vouches_for_nothing(mission_dir: Path) -> None:
    _, journal = prepared(mission_dir)
    tampered(journal)
    note_as_checked(journal, b"k" * 32)
    with pytest.raises(JournalError, match="changed outside autoresearch"):
        read_runs(journal)


def test_a_journal_is_at_rest_in_its_database_file_alone(tmp_path: Path) -> None:
    journal = tmp_path / "journal.sqlite3"
    journal.write_bytes(b"x")
    alone = checked.at_rest(journal)
    assert alone is not None
    checked.wal_of(journal).write_bytes(b"")  # what opening it makes: no content
    assert checked.at_rest(journal) == alone
    checked.wal_of(journal).write_bytes(b"frames")  # a driver holds it open: never vouched for
    assert checked.at_rest(journal) is None
    checked.wal_of(journal).unlink()
    checked.rollback_journal_of(journal).write_bytes(b"pages")
    assert checked.at_rest(journal) is None
    assert checked.at_rest(tmp_path / "none") is None


def test_a_modification_time_put_back_does_not_settle_a_file(tmp_path: Path) -> None:
    journal = tmp_path / "journal.sqlite3"
    journal.write_bytes(b"x")
    hour_ago = os.stat(journal).st_mtime_ns - 3600 * SECOND
    os.utime(journal, ns=(hour_ago, hour_ago))
    found = checked.at_rest(journal)
    assert found is not None
    assert not checked.settled(found, os.stat(journal).st_ctime_ns + SECOND)


def forged_rollback_journal(journal: Path, scratch: Path) -> Path:
    """A rollback journal whose playback writes a forged kept commit into `journal`: made on
    a copy of it (review11's reproduction), the journal itself untouched."""
    copy = scratch / "copy.sqlite3"
    shutil.copyfile(journal, copy)
    forger = sqlite3.connect(copy, isolation_level=None)
    forger.execute("PRAGMA journal_mode=DELETE")
    forger.execute("UPDATE runs SET last_kept_commit = 'f00d' WHERE run_id = ?", (RUN_ID,))
    forger.execute("PRAGMA synchronous=OFF")  # the header then says: count the pages by size
    forger.execute("BEGIN")
    forger.execute("UPDATE runs SET last_kept_commit = 'beef' WHERE run_id = ?", (RUN_ID,))
    pages = scratch / "pages"
    shutil.copyfile(checked.rollback_journal_of(copy), pages)  # the forged pages, as they were
    forger.execute("ROLLBACK")
    forger.close()
    return pages


def test_a_rollback_journal_left_beside_a_noted_journal_is_checked_whole(
    mission_dir: Path, tmp_path: Path
) -> None:
    """SQLite plays a rollback journal back at its first read, after a stat taken before it
    would have matched the note: the reader reads first, then stats."""
    _, journal = prepared(mission_dir)
    pages = forged_rollback_journal(journal, tmp_path)
    assert read_runs(journal) == [RUN_ID] and integrity.checked_note(journal).exists()
    shutil.copyfile(pages, checked.rollback_journal_of(journal))
    with pytest.raises(JournalError, match="changed outside autoresearch"):
        read_runs(journal)


def test_a_fifo_where_the_note_is_staged_is_not_waited_on(mission_dir: Path) -> None:
    _, journal = prepared(mission_dir)
    note = integrity.checked_note(journal)

    def read_past_a_fifo() -> None:  # in a thread of its own: the wait, if any, is its own
        os.mkfifo(note.with_name(f".{note.name}.{os.getpid()}.{threading.get_ident()}.tmp"))
        read_runs(journal)

    reading = threading.Thread(target=read_past_a_fifo, daemon=True)
    reading.start()
    reading.join(timeout=30)
    assert not reading.is_alive(), "the reader waits on a FIFO"
    assert not note.exists()


# The whole check a note vouches for, as of CHECK_VERSION: a change to it must bump the version
# (a note of the older check must not vouch for the newer), then record the new digest here.
CHECK_DIGEST = (1, "f6de648c67ad4a95")


def test_a_change_to_the_whole_check_bumps_the_version_notes_name() -> None:
    text = "\n".join(
        [inspect.getsource(integrity.quick_check), inspect.getsource(integrity.damage),
         inspect.getsource(domains), inspect.getsource(seals)]
    )  # fmt: skip
    digest = hashlib.sha256(text.encode()).hexdigest()[:16]
    assert (checked.CHECK_VERSION, digest) == CHECK_DIGEST, (
        "the journal's whole check changed: bump journal/checked.CHECK_VERSION and record "
        f"({checked.CHECK_VERSION + 1}, {digest!r}) as CHECK_DIGEST"
    )


def test_status_trusts_a_note_and_still_refuses_a_tampered_journal(mission_dir: Path) -> None:
    """The shipped command: it reads past a note of the journal as it stands (the key swapped
    as above, so only a trusted note lets it read), and refuses the journal once an edit in
    place has left its size and modification time as they were."""
    root, journal = prepared(mission_dir)
    integrity.seal_key(journal).write_text("ab" * 32 + "\n")
    note_as_checked(journal, bytes.fromhex("ab" * 32))
    done = cli("status", cwd=root)
    assert done.returncode == 0 and RUN_ID in done.stdout, done.stderr
    before = os.stat(journal)
    with sqlite3.connect(journal) as conn:
        conn.execute("UPDATE runs SET last_kept_commit = 'f00d' WHERE run_id = ?", (RUN_ID,))
        conn.commit()
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")  # into the database file, in place
    os.utime(journal, ns=(before.st_atime_ns, before.st_mtime_ns))
    done = cli("status", cwd=root)
    assert done.returncode == 2 and "another key" in done.stderr, done.stderr
