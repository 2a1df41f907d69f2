"""The journal's seal key is made once: of several openers of a new journal at the same
instant, one makes it and every other reads that one (two keys would each seal with their own,
and the loser's journal would read as tampered)."""

from __future__ import annotations

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
