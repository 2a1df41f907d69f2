"""Seals: a journal whose history was rewritten behind autoresearch's back is found.

Every decided iteration (its run, number, decision, candidate and kept commit) and every run's
kept state (its last kept commit and baseline) carry a seal: a MAC (keyed BLAKE2b) under a key
kept outside the repository, in the user's state directory (`integrity.seal_key`, 0600), named
in the journal by its id (`seal_key`). autoresearch's own connection keeps the seals up to
date through TEMP triggers, which live in that connection alone: an edit made by any other
connection (`sqlite3 journal "delete from iterations …"`) leaves its rows unsealed or wrongly
sealed, and

* the journal is checked whole at open (`problem`), and a run's kept state before any git
  effect acts on it (`kept_problem`);
* a write of ours over a row that no longer matches its seal aborts its transaction
  (`TAMPERED`), so a tampered row is never sealed afresh by the tool itself.

What a seal does not protect against: a process that can read the key (an agent running
unsandboxed as the user can) can forge seals; the backups outside the repository stay the way
back. A key that is gone (the state directory was deleted) is made anew and the journal sealed
as it stands (trust on first use).
"""

from __future__ import annotations

import os
import sqlite3
import threading
from pathlib import Path

try:  # CPython's own BLAKE2b, which hashlib's import would reach only after loading OpenSSL
    from _blake2 import blake2b  # (~2.5 ms of every command that opens a journal)
except ImportError:  # another interpreter: the same digest from hashlib
    from hashlib import blake2b

from autoresearch.fsutil import atomic_write_text, private_dir, read_regular

# The SQL function the triggers and checks call; the RAISE text a write over a tampered row
# aborts with (journal/db.py turns it into the one-line refusal).
SEAL_FUNCTION = "autoresearch_seal"
TAMPERED = "autoresearch: sealed row changed outside autoresearch"
KEY_BYTES = 32

_KEPT = f"{SEAL_FUNCTION}('kept', {{t}}.run_id, {{t}}.last_kept_commit, {{t}}.baseline_commit)"
_DECIDED = (
    f"{SEAL_FUNCTION}('decided', {{t}}.run_id, {{t}}.iteration, {{t}}.decision, "
    "{t}.candidate_commit, {t}.kept_commit)"
)


def load_key(path: Path) -> tuple[bytes, bool]:
    """The seal key at `path`, made (0600) when there is none; and whether it was made now.

    Made exclusively: of two processes (or threads) opening a new journal at once, one makes
    the key and the other reads it – never two keys, each sealing with its own."""
    try:
        return _read_key(path), False
    except FileNotFoundError:
        pass  # any other failure is a key that is there but unreadable: no reason to seal afresh
    import secrets  # a key is made once per machine: its import is no reader's business

    private_dir(path.parent)
    staged = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    atomic_write_text(staged, secrets.token_hex(KEY_BYTES) + "\n")
    try:
        os.link(staged, path)  # fails when another creator won: then its key is the key
        made = True
    except FileExistsError:
        made = False
    finally:
        staged.unlink(missing_ok=True)
    return _read_key(path), made


def _read_key(path: Path) -> bytes:
    return bytes.fromhex(read_regular(path, 4096).decode("ascii").strip())


def register(conn: sqlite3.Connection, key: bytes) -> None:
    """Give `conn` the seal function under `key`."""

    # keyed BLAKE2b is a MAC in itself, and several times cheaper than HMAC per row; the key's
    # block is hashed once here and each row's MAC starts from a copy of that state (the
    # same digest, a third of the cost: the check at open seals every decided iteration)
    keyed = blake2b(key=key, digest_size=16)

    def seal(*fields: object) -> str:  # `_joined` inline: called for every row of a check
        found = keyed.copy()
        found.update("\x1f".join(["\x00" if f is None else str(f) for f in fields]).encode())
        return found.hexdigest()

    conn.create_function(SEAL_FUNCTION, -1, seal, deterministic=True)


def mac(key: bytes, *fields: object) -> str:
    """The seal of `fields` under `key`, as the SQL function computes it."""
    found = blake2b(key=key, digest_size=16)
    found.update(_joined(fields))
    return found.hexdigest()


def _joined(fields: tuple[object, ...]) -> bytes:
    return "\x1f".join(["\x00" if f is None else str(f) for f in fields]).encode()


def tables_present(conn: sqlite3.Connection) -> bool:
    row = conn.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'run_seals'"
    ).fetchone()
    return row is not None


def seal_all(conn: sqlite3.Connection) -> None:
    """Seal the journal as it stands (a new seal table, a key made anew, a restored backup)."""
    conn.execute("DELETE FROM seal_key")
    conn.execute(f"INSERT INTO seal_key VALUES ({SEAL_FUNCTION}('key'))")
    conn.execute("DELETE FROM run_seals")
    conn.execute("DELETE FROM decision_seals")
    conn.execute(f"INSERT INTO run_seals SELECT r.run_id, {_KEPT.format(t='r')} FROM runs r")
    conn.execute(
        "INSERT INTO decision_seals SELECT i.run_id, i.iteration, "
        f"{_DECIDED.format(t='i')} FROM iterations i WHERE i.decision IS NOT NULL"
    )


def install_triggers(conn: sqlite3.Connection) -> None:
    """The TEMP triggers that keep the seals of this connection's writes (see the module)."""
    kept_old, kept_new = _KEPT.format(t="OLD"), _KEPT.format(t="NEW")
    decided_old, decided_new = _DECIDED.format(t="OLD"), _DECIDED.format(t="NEW")
    conn.executescript(
        f"""
        CREATE TEMP TRIGGER IF NOT EXISTS seal_run_insert AFTER INSERT ON main.runs BEGIN
            INSERT OR REPLACE INTO run_seals VALUES (NEW.run_id, {kept_new});
        END;
        CREATE TEMP TRIGGER IF NOT EXISTS seal_run_update
        AFTER UPDATE OF run_id, last_kept_commit, baseline_commit ON main.runs BEGIN
            SELECT RAISE(ABORT, '{TAMPERED}') WHERE (SELECT seal FROM run_seals
                WHERE run_id = OLD.run_id) IS NOT {kept_old};
            DELETE FROM run_seals WHERE run_id = OLD.run_id;
            INSERT OR REPLACE INTO run_seals VALUES (NEW.run_id, {kept_new});
        END;
        CREATE TEMP TRIGGER IF NOT EXISTS seal_run_delete AFTER DELETE ON main.runs BEGIN
            DELETE FROM run_seals WHERE run_id = OLD.run_id;
        END;
        CREATE TEMP TRIGGER IF NOT EXISTS seal_iteration_insert
        AFTER INSERT ON main.iterations WHEN NEW.decision IS NOT NULL BEGIN
            INSERT OR REPLACE INTO decision_seals VALUES (NEW.run_id, NEW.iteration, {decided_new});
        END;
        CREATE TEMP TRIGGER IF NOT EXISTS seal_iteration_update
        AFTER UPDATE OF run_id, iteration, decision, candidate_commit, kept_commit
        ON main.iterations BEGIN
            SELECT RAISE(ABORT, '{TAMPERED}') WHERE OLD.decision IS NOT NULL AND
                (SELECT seal FROM decision_seals WHERE run_id = OLD.run_id
                 AND iteration = OLD.iteration) IS NOT {decided_old};
            DELETE FROM decision_seals WHERE run_id = OLD.run_id AND iteration = OLD.iteration;
            INSERT OR REPLACE INTO decision_seals SELECT NEW.run_id, NEW.iteration, {decided_new}
                WHERE NEW.decision IS NOT NULL;
        END;
        CREATE TEMP TRIGGER IF NOT EXISTS seal_iteration_delete
        AFTER DELETE ON main.iterations BEGIN
            DELETE FROM decision_seals WHERE run_id = OLD.run_id AND iteration = OLD.iteration;
        END;
        """
    )


_BROKEN_RUNS = f"""
    SELECT r.run_id, 'its kept commit or baseline' FROM runs r
    LEFT JOIN run_seals s ON s.run_id = r.run_id WHERE s.seal IS NOT {_KEPT.format(t="r")}
    UNION ALL
    SELECT s.run_id, 'the run was deleted' FROM run_seals s
    WHERE NOT EXISTS (SELECT 1 FROM runs r WHERE r.run_id = s.run_id)
"""
_BROKEN_ITERATIONS = f"""
    SELECT i.run_id, 'iteration ' || i.iteration FROM iterations i
    LEFT JOIN decision_seals s ON s.run_id = i.run_id AND s.iteration = i.iteration
    WHERE i.decision IS NOT NULL AND s.seal IS NOT {_DECIDED.format(t="i")}
    UNION ALL
    SELECT s.run_id, 'iteration ' || s.iteration || ' was deleted' FROM decision_seals s
    WHERE NOT EXISTS (SELECT 1 FROM iterations i WHERE i.run_id = s.run_id
                      AND i.iteration = s.iteration AND i.decision IS NOT NULL)
"""


def same_key(conn: sqlite3.Connection) -> bool:
    """Whether the journal was sealed under this connection's key (a backup of the same
    repository taken before its key was made anew was not: its seals cannot be checked)."""
    row = conn.execute(f"SELECT key_id = {SEAL_FUNCTION}('key') FROM seal_key").fetchone()
    return bool(row and row[0])


def problem(conn: sqlite3.Connection) -> str | None:
    """What was changed outside autoresearch, in a few words, or None (the whole journal)."""
    if not tables_present(conn):
        return None
    if not same_key(conn):
        return "its seals were made under another key"
    for sql in (_BROKEN_RUNS, _BROKEN_ITERATIONS):
        row = conn.execute(sql + " LIMIT 1").fetchone()
        if row is not None:
            return f"run {row[0]}: {row[1]}"
    return None


def kept_problem(
    conn: sqlite3.Connection, run_id: str, kept: str | None, baseline: str | None
) -> str | None:
    """Whether the kept state a git effect is about to act on is the one autoresearch sealed."""
    row = conn.execute(
        f"SELECT seal IS NOT {SEAL_FUNCTION}('kept', ?, ?, ?) FROM run_seals WHERE run_id = ?",
        (run_id, kept, baseline, run_id),
    ).fetchone()
    if row is None or row[0]:
        return f"run {run_id}: its kept commit or baseline"
    return None


def msg_tampered(journal: Path, what: str) -> str:
    return (
        f"journal {journal} was changed outside autoresearch ({what} no longer matches its "
        "seal): nothing was done with it. Restore the latest good backup with "
        "`autoresearch doctor --restore`"
    )
