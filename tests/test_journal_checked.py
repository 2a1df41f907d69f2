"""A reader skips the whole check of a journal that is, file for file, the one a whole check
last found sound (journal/checked.py); any change to its files, a forged note or a writer
brings the whole check back, and a tampered journal is still refused."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

import pytest

from autoresearch.errors import JournalError
from autoresearch.journal import checked, integrity, seals
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
    found = checked.Seen("files", began - int(changed_before_s * SECOND))
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
    with sqlite3.connect(journal) as conn:
        conn.execute("UPDATE runs SET last_kept_commit = 'f00d' WHERE run_id = ?", (RUN_ID,))


def note_as_checked(journal: Path, key: bytes) -> None:
    """A note for the journal as it stands now, sealed under `key`."""
    found, journal_id = checked.seen(journal), integrity.read_marker(journal)
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


def test_an_empty_wal_is_no_change(tmp_path: Path) -> None:
    journal = tmp_path / "journal.sqlite3"
    journal.write_bytes(b"x")
    alone = checked.seen(journal)
    checked.wal_of(journal).write_bytes(b"")
    assert checked.seen(journal) == alone
    checked.wal_of(journal).write_bytes(b"frames")
    assert checked.seen(journal) != alone
    assert checked.seen(tmp_path / "none") is None


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
