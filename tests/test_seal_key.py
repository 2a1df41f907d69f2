"""The journal's seal key is made once: of several openers of a new journal at the same
instant, one makes it and every other reads that one (two keys would each seal with their own,
and the loser's journal would read as tampered)."""

from __future__ import annotations

import hashlib
import sqlite3
import threading
from pathlib import Path

import pytest

from autoresearch.journal import seals


@pytest.mark.parametrize("trial", range(10))
def test_concurrent_openers_share_one_key(tmp_path: Path, trial: int) -> None:
    path = tmp_path / "state" / "repo-id" / "seal.key"  # its folders do not exist yet
    got: list[tuple[bytes, bool]] = []
    threads = [threading.Thread(target=lambda: got.append(seals.load_key(path))) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(got) == 8  # no opener failed
    assert len({key for key, _ in got}) == 1
    assert [made for _, made in got].count(True) == 1
    assert oct(path.stat().st_mode & 0o777) == oct(0o600)
    assert [p.name for p in path.parent.iterdir()] == ["seal.key"]  # no staged copy left


def test_a_key_that_is_there_but_unreadable_is_not_replaced(tmp_path: Path) -> None:
    path = tmp_path / "seal.key"
    path.write_text("not hex\n")
    with pytest.raises(ValueError):
        seals.load_key(path)
    assert path.read_text() == "not hex\n"


@pytest.mark.parametrize(
    ("fields", "joined"),
    [
        (("decided", "r", 5, "keep", None, "abc"), b"decided\x1fr\x1f5\x1fkeep\x1f\x00\x1fabc"),
        (("kept", "r", "é", None), "kept\x1fr\x1fé\x1f\x00".encode()),
        (("key",), b"key"),
    ],
)
def test_a_seal_is_the_keyed_blake2b_of_its_fields(
    fields: tuple[object, ...], joined: bytes
) -> None:
    # the seals of every journal already written: a faster seal must make the same digests
    key = bytes(range(32))
    conn = sqlite3.connect(":memory:")
    seals.register(conn, key)
    marks = ", ".join("?" for _ in fields)
    (found,) = conn.execute(f"SELECT {seals.SEAL_FUNCTION}({marks})", fields).fetchone()
    assert found == hashlib.blake2b(joined, key=key, digest_size=16).hexdigest()
