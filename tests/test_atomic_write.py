"""fsutil's atomic write over an existing file (issue 36): an atomic exchange where the OS has
one, so that a reader never sees a torn or missing file, and nothing is left beside it."""

from __future__ import annotations

import os
import sys
import threading
from pathlib import Path

import pytest

from autoresearch.fsutil import atomic_write_text
from file_events import FileEvents


def test_a_replaced_file_is_whole_private_and_leaves_no_temporary(tmp_path: Path) -> None:
    view = tmp_path / "state" / "manifest.json"
    atomic_write_text(view, "old\n")
    with view.open() as before:  # a reader that opened the old file keeps reading it whole
        atomic_write_text(view, "new\n")
        assert before.read() == "old\n"
    assert view.read_text() == "new\n"
    assert os.stat(view).st_mode & 0o777 == 0o600
    assert os.listdir(view.parent) == ["manifest.json"]


def test_a_reader_never_sees_a_torn_or_missing_file(tmp_path: Path) -> None:
    view = tmp_path / "instructions.md"
    texts = ["a" * 5000, "b" * 7000]
    atomic_write_text(view, texts[0])
    seen: set[str] = set()
    done = threading.Event()

    def read() -> None:
        while not done.is_set():
            seen.add(view.read_text())  # FileNotFoundError here fails the test

    reader = threading.Thread(target=read)
    reader.start()
    try:
        for n in range(300):
            atomic_write_text(view, texts[n % 2])
    finally:
        done.set()
        reader.join()
    assert seen <= set(texts)
    assert os.listdir(tmp_path) == ["instructions.md"]


def test_what_is_no_regular_file_is_replaced_by_a_rename(tmp_path: Path) -> None:
    """No exchange with a symbolic link (it is replaced, never followed) nor a fresh name."""
    target = tmp_path / "elsewhere.txt"
    target.write_text("theirs\n")
    link = tmp_path / "candidate.json"
    link.symlink_to(target)
    atomic_write_text(link, "ours\n")
    assert not link.is_symlink() and link.read_text() == "ours\n"
    assert target.read_text() == "theirs\n"
    fresh = tmp_path / "new.json"
    atomic_write_text(fresh, "first\n")
    assert fresh.read_text() == "first\n"
    assert sorted(os.listdir(tmp_path)) == ["candidate.json", "elsewhere.txt", "new.json"]


@pytest.mark.skipif(sys.platform != "linux", reason="renameat2 and inotify are Linux's")
def test_on_linux_the_old_file_is_exchanged_out_not_renamed_over(tmp_path: Path) -> None:
    """A rename over an existing file makes ext4 write the new one out first (milliseconds on
    a loaded disk, each view of each step); the exchange moves the old file to the temporary
    name instead, where it is removed."""
    view = tmp_path / "manifest.json"
    atomic_write_text(view, "old\n")
    events = FileEvents(tmp_path)
    try:
        atomic_write_text(view, "new\n")
        replaced, _ = events.take(temporaries=True)
    finally:
        events.close()
    assert replaced[str(view)] == 1
    assert sorted(Path(p).name.endswith(".tmp") for p in replaced) == [False, True]
    assert os.listdir(tmp_path) == ["manifest.json"]
