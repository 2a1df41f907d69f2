"""A journal that is corrupt, locked by another process or from a newer version: a clear
one-line error, no traceback, nothing overwritten."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from autoresearch.journal import integrity
from autoresearch.journal.db import BACKUP_MIN_INTERVAL, BackupThrottle, Journal
from helpers import Repo, cli

# holds the journal's lock until a line on its stdin (the test's word) or argv[2] seconds
LOCKER = """
import select, sqlite3, sys
conn = sqlite3.connect(sys.argv[1], isolation_level=None)
conn.execute("BEGIN EXCLUSIVE")
print("locked", flush=True)
select.select([sys.stdin], [], [], float(sys.argv[2]))
conn.execute("ROLLBACK")
"""


def test_corrupt_journal_for_every_command(repo: Repo, mission_dir: Path) -> None:
    journal = repo.root / ".autoresearch/journal.sqlite3"
    journal.parent.mkdir()
    journal.write_bytes(b"\x00garbage" * 4096)
    before = journal.read_bytes()
    for args in (["prepare", "missions/demo"], ["status"], ["step", "x"], ["resume", "x"],
                 ["stop"], ["run", "missions/demo", "--agent", "cmd:true"]):  # fmt: skip
        done = cli(*args, cwd=repo.root)
        assert done.returncode == 2, args
        assert "is not a valid SQLite database" in done.stderr, (args, done.stderr)
        assert "Traceback" not in done.stderr
        assert len(done.stderr.strip().splitlines()) == 1
    assert journal.read_bytes() == before


def make_journal(repo: Repo) -> Path:
    journal = repo.root / ".autoresearch/journal.sqlite3"
    Journal.open(journal).close()
    return journal


def test_locked_journal_is_a_clear_error_then_works(repo: Repo, mission_dir: Path) -> None:
    journal = make_journal(repo)
    locker = subprocess.Popen(
        [sys.executable, "-c", LOCKER, str(journal), "60"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert locker.stdout is not None and locker.stdout.readline().strip() == "locked"
        t0 = time.monotonic()
        done = cli(
            "prepare", "missions/demo", cwd=repo.root, env={"AUTORESEARCH_JOURNAL_TIMEOUT": "0.5"}
        )
        assert time.monotonic() - t0 < 4.5
        assert done.returncode == 2
        assert "is locked by another process (waited 0.5s)" in done.stderr
        assert "Traceback" not in done.stderr
        assert not (repo.root / ".autoresearch/worktrees").exists()
        locker.communicate("release\n", timeout=30)  # it ends its transaction and exits
        assert locker.returncode == 0
    finally:
        if locker.poll() is None:
            locker.kill()
            locker.wait()
    assert cli("prepare", "missions/demo", cwd=repo.root).returncode == 0


def test_journal_from_a_newer_version_is_refused(repo: Repo, mission_dir: Path) -> None:
    journal = make_journal(repo)
    with sqlite3.connect(journal) as conn:
        conn.execute("INSERT INTO migrations VALUES ('9999_from_the_future', 'x')")
    done = cli("status", cwd=repo.root)
    assert done.returncode == 2
    assert (
        "written by a newer autoresearch (unknown migrations: 9999_from_the_future)" in done.stderr
    )


def test_throttled_backups_take_at_most_a_tenth_of_the_time(repo: Repo) -> None:
    """Per-iteration backups copy the whole journal: a throttled one is skipped until nine
    times the last backup's duration has passed, so a long run stays flat; unthrottled
    backups (prepare, the end of a run) are always taken."""
    clock = HandClock()
    with Journal.open(make_journal(repo), clock=clock) as journal:
        clock.step = 3600.0  # every reading an hour after the last: a backup takes an hour
        assert journal.backup(throttled=True) is not None  # the first of a process is taken
        clock.step = 0.0
        assert journal.backup(throttled=True) is None  # an hour after it ended
        clock.now += 8 * 3600.0 - 1.0
        assert journal.backup(throttled=True) is None  # a second short of nine hours
        clock.now += 1.0
        assert journal.backup(throttled=True) is not None  # nine hours: due (it took no time)
        clock.now += 1.0
        assert journal.backup(throttled=True) is not None
        clock.step = 3600.0
        assert journal.backup() is not None
        assert journal.backup(throttled=True) is None
        assert journal.backup() is not None  # prepare and the end of a run never wait


@pytest.mark.parametrize(
    ("ended", "took", "now", "due"),
    [
        (None, 0.0, 0.0, True),  # the first backup of a process
        (10.0, 0.0, 10.5, False),  # a fast loop: a quick backup half a second ago
        (10.0, 0.0, 11.0, True),  # the minimum interval has passed
        (10.0, 0.05, 10.9, False),  # 9 times its duration passed, not the minimum
        (10.0, 1.0, 18.9, False),  # a slow backup: 9 times its duration not yet passed
        (10.0, 1.0, 19.0, True),
    ],
)
def test_throttled_backup_is_due_after_the_longer_of_both_waits(
    ended: float | None, took: float, now: float, due: bool
) -> None:
    assert BackupThrottle(ended, took).due(now) is due


def test_a_fast_loop_takes_one_backup_a_second(repo: Repo) -> None:
    """A backup of a small journal takes milliseconds: the throttle alone took one at nearly
    every step of a fast loop (~20 % of its overhead); at most one a second now."""
    clock = HandClock()
    with Journal.open(make_journal(repo), clock=clock) as journal:
        clock.step = 0.001  # a backup takes a millisecond
        taken = 0
        for _ in range(50):  # steps of 20 ms (and a reading of 1 ms): a second
            taken += journal.backup(throttled=True) is not None
            clock.now += 0.02
        assert taken == 2, taken
        clock.now += BACKUP_MIN_INTERVAL
        assert journal.backup(throttled=True) is not None


def test_deferred_backups_wait_for_the_driver_and_keep_the_throttle(repo: Repo) -> None:
    """The lane driver defers the per-iteration backup until it has served the lanes: asked
    for meanwhile, it is taken by `take_deferred_backup`, throttled as before."""
    clock = HandClock()
    with Journal.open(make_journal(repo), clock=clock) as journal:
        journal.defer_backups()
        assert journal.take_deferred_backup() is None  # none asked
        assert journal.backup(throttled=True) is None  # asked: waits
        assert journal.backup(throttled=True) is None  # asked twice: one backup
        clock.step = 3600.0  # a backup takes an hour
        assert journal.take_deferred_backup() is not None
        clock.step = 0.0
        assert journal.take_deferred_backup() is None
        assert journal.backup(throttled=True) is None
        assert journal.take_deferred_backup() is None  # due only after 9 times its duration
        assert journal.backup() is not None  # unthrottled ones never wait
        journal.defer_backups(False)
        clock.now += 9 * 3600.0
        assert journal.backup(throttled=True) is not None  # taken when asked again


def test_a_skipped_backup_is_owed_until_the_driver_can_take_it(repo: Repo) -> None:
    """Two lanes decided within a second: the second's backup is not due and skipped. The
    lane driver, which asks every round, takes it once due, not at the next decision, which
    may be a long session away."""
    clock = HandClock()
    with Journal.open(make_journal(repo), clock=clock) as journal:
        journal.defer_backups()
        taken = []
        for now in (0.0, 0.5, 0.9, 1.6, 2.2):  # decisions at 0 and 0.5, then only rounds
            clock.now = now
            if now in (0.0, 0.5):
                journal.backup(throttled=True)
            taken.append(journal.take_deferred_backup() is not None)
    assert taken == [True, False, False, True, False]


def test_taking_an_owed_backup_leaves_a_journal_that_does_not_defer_as_it_was(
    repo: Repo,
) -> None:
    """An owed backup taken outside the lane driver's deferral does not switch the journal
    into deferring: its next throttled backup, once due, is taken when asked."""
    clock = HandClock()
    with Journal.open(make_journal(repo), clock=clock) as journal:
        journal.backup(throttled=True)
        clock.now = 0.5
        journal.backup(throttled=True)  # skipped: owed
        clock.now = 1.6
        owed = journal.take_deferred_backup()
        clock.now = 3.0
        asked = journal.backup(throttled=True)
    assert (owed is not None, asked is not None) == (True, True)


def test_an_interrupted_run_takes_the_backup_it_owes_at_once(repo: Repo) -> None:
    """A decision half a second after a backup is skipped; a first Ctrl-C then takes it,
    whatever the throttle, and none when nothing is owed."""
    clock = HandClock()
    with Journal.open(make_journal(repo), clock=clock) as journal:
        first = journal.backup(throttled=True)
        clock.now = 0.5
        skipped = journal.backup(throttled=True)
        owed = [journal.backup_owed() is not None for _ in range(2)]
    assert (first is not None, skipped, owed) == (True, None, [True, False])


def test_a_backup_is_whole_and_synced_once_before_it_takes_its_name(repo: Repo) -> None:
    """The backup's temporary file goes without SQLite's syncs (8 fdatasyncs a backup on a
    loaded disk): it is synced once, whole and checked, then renamed into place."""
    synced: list[tuple[str, bool, list[str]]] = []
    dest = repo.root / ".autoresearch/backup.sqlite3"

    def sync(fd: int) -> None:
        name = os.readlink(f"/proc/self/fd/{fd}")
        with sqlite3.connect(f"file:{name}?mode=ro", uri=True) as copy:
            checked = [row[0] for row in copy.execute("PRAGMA quick_check")]
            header = Path(name).read_bytes()[18:20]
        synced.append((name, dest.exists(), [*checked, header.hex()]))
        os.fsync(fd)

    source = sqlite3.connect(make_journal(repo))  # in WAL mode, as the journal keeps it
    try:
        integrity.backup_into(source, dest, sync=sync)
    finally:
        source.close()
    assert len(synced) == 1
    name, dest_existed, checked = synced[0]
    assert name != str(dest) and not dest_existed
    assert checked == ["ok", "0101"]  # whole, in rollback journal mode (no WAL beside it)
    assert not Path(name).exists() and dest.exists()
    assert sorted(p.name for p in dest.parent.iterdir() if "backup" in p.name) == [dest.name]


class HandClock:
    """A clock the test moves: `now`, and `step` more after every reading."""

    def __init__(self) -> None:
        self.now = 0.0
        self.step = 0.0

    def monotonic(self) -> float:
        reading = self.now
        self.now += self.step
        return reading
