"""A note that the journal is, file for file, the one a whole check last found sound.

Checking the journal whole (`quick_check`, the enum scan, every seal: journal/db.py) costs
~5 ms on a run of 1,000 iterations and grows with the run; a command that only reads
(`status`, a status line, an MCP read) paid it at every call, on a journal that had not
changed since the last one. After a whole check finds a journal at rest sound, the reader
notes its database file as it stood before the check: device, inode, size, modification and
change time. The next reader that finds it at rest and stat'ed the same skips the whole check
(the journal's identity is still checked at every open); anything else checks it whole again.

At rest: the database file alone holds it, no WAL content and no rollback journal beside it,
as SQLite leaves it when its last connection closes (after a run, between two `step`s, `exp`
commands or MCP calls). While a driver holds it open, what a reader sees also depends on the
WAL and its index (`-shm`), which SQLite writes through a memory mapping and no stat
describes: such a journal is checked whole at every read, as before. A reader reads the
database once before its stat, so a rollback journal left beside it is played back (and seen
by the stat) before it is vouched for.

Why the file's stat is enough. A write to a file moves its change time (ctime), which no
process can set back (only the clock can, as root): a journal edited behind autoresearch's
back, byte for byte the same size, its modification time put back, no longer matches. Two
writes the stat can miss, and why a note waits `SETTLE_SECONDS` after the file last changed:
* one within the same tick of the file system's clock as the noted state (git's "racily
  clean" entries);
* one through a shared writable memory mapping: only the write that makes a clean page dirty
  moves ctime, later ones to that page move nothing until the kernel writes it back, which it
  does within ~35 s of its first dirtying (vm.dirty_expire_centisecs, 30 s, plus the flusher's
  5 s period; reproduced on ext4: a second write 10 s after the first is unseen, one 25 s
  after is seen). After 60 s every page is clean again and the next write moves ctime.
On tmpfs, which never writes back, or with write-back tuned slower, a process holding a
writable mapping of the journal could change it unseen by readers; so could one that steps the
clock forward. Any process that can write `.autoresearch/` at all runs as the user
(autoresearch's box hides both the journal and the user's state directory): it can read the
seal key and forge seals outright (journal/seals.py), note or no note. Writers check whole
regardless, so such a journal is refused before any git effect acts on it.

A note also names the check that wrote it (`CHECK_VERSION`): a check that refuses more does
not take an older check's word.

The note is sealed under the journal's seal key and kept beside it, outside the repository: a
process that cannot read the key cannot forge one.

Writers never skip: `Journal.open` checks the journal whole before anything is written.
"""

from __future__ import annotations

import contextlib
import os
import threading
from pathlib import Path
from typing import NamedTuple

from autoresearch import __version__
from autoresearch.fsutil import FileRefused, read_regular
from autoresearch.journal import seals

# A file changed less than this long before a check is not noted (see above).
SETTLE_SECONDS = 60.0
# Bumped whenever the whole check refuses more (integrity.damage, domains.DOMAINS,
# seals.problem): tests/test_journal_checked.py holds a digest of them that says so.
CHECK_VERSION = 1
_MAX_NOTE_BYTES = 256


# a NamedTuple: status imports it, and a frozen dataclass compiles its methods at import
class Seen(NamedTuple):
    """The journal's database file as one stat found it: `text` to compare and seal, and its
    change time (ns since the epoch)."""

    text: str
    changed_ns: int


def wal_of(journal: Path) -> Path:
    return journal.with_name(journal.name + "-wal")


def rollback_journal_of(journal: Path) -> Path:
    return journal.with_name(journal.name + "-journal")


def at_rest(journal: Path) -> Seen | None:
    """The journal's database file when the journal is at rest, or None: it is not (its WAL
    holds frames, a rollback journal lies beside it) or cannot be stat'ed. An empty WAL holds
    nothing: opening the journal makes one, closing its last connection removes it."""
    try:
        info = os.stat(journal)
        for other in (wal_of(journal), rollback_journal_of(journal)):
            with contextlib.suppress(FileNotFoundError):
                if os.stat(other).st_size > 0:
                    return None
    except OSError:
        return None
    text = f"{info.st_dev}:{info.st_ino}:{info.st_size}:{info.st_mtime_ns}:{info.st_ctime_ns}"
    return Seen(text, info.st_ctime_ns)


def settled(found: Seen, check_began_ns: int, settle_seconds: float = SETTLE_SECONDS) -> bool:
    """Whether a whole check that began at `check_began_ns` may note `found`: the file last
    changed at least `settle_seconds` before, so a later write cannot share its timestamps."""
    return found.changed_ns <= check_began_ns - int(settle_seconds * 1e9)


def _seal(key: bytes, journal: Path, journal_id: str, found: Seen) -> str:
    return seals.mac(
        key, "checked", CHECK_VERSION, __version__, journal_id, str(journal.absolute()), found.text
    )


def vouches_for(note: Path, key: bytes, journal: Path, journal_id: str, found: Seen) -> bool:
    """Whether the note at `note` says a whole check found the journal sound as `found`."""
    try:
        text = read_regular(note, _MAX_NOTE_BYTES).decode("ascii").strip()
    except (OSError, FileRefused, UnicodeDecodeError):
        return False
    # a plain comparison: a note is a local file, compared once per command, not an oracle
    return text == _seal(key, journal, journal_id, found)


def write(note: Path, key: bytes, journal: Path, journal_id: str, found: Seen) -> None:
    """Note that a whole check found the journal sound as `found`. Best effort: a note that
    cannot be written only means the next reader checks the journal whole."""
    staged = note.with_name(f".{note.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    try:
        # O_NONBLOCK: a FIFO planted at that name is never waited on
        flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | os.O_NONBLOCK
        fd = os.open(staged, flags, 0o600)
        with os.fdopen(fd, "w", encoding="ascii") as handle:
            handle.write(_seal(key, journal, journal_id, found) + "\n")
        os.replace(staged, note)
    except OSError:
        with contextlib.suppress(OSError):
            staged.unlink()
