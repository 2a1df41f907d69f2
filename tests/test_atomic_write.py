"""fsutil's atomic writes over an existing file (issue 36): a view by an atomic exchange where
the OS has one, anything else by a rename; either way a reader never sees a torn or missing
file, and nothing is left beside it."""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from autoresearch.fsutil import atomic_write_text, atomic_write_view
from file_events import FileEvents

WRITERS = pytest.mark.parametrize("write", [atomic_write_text, atomic_write_view])


@WRITERS
def test_a_replaced_file_is_whole_private_and_leaves_no_temporary(
    tmp_path: Path, write: Callable[[Path, str], None]
) -> None:
    view = tmp_path / "state" / "manifest.json"
    write(view, "old\n")
    with view.open() as before:  # a reader that opened the old file keeps reading it whole
        write(view, "new\n")
        assert before.read() == "old\n"
    assert view.read_text() == "new\n"
    assert os.stat(view).st_mode & 0o777 == 0o600
    assert os.listdir(view.parent) == ["manifest.json"]


@WRITERS
def test_a_reader_never_sees_a_torn_or_missing_file(
    tmp_path: Path, write: Callable[[Path, str], None]
) -> None:
    view = tmp_path / "instructions.md"
    texts = ["a" * 5000, "b" * 7000]
    write(view, texts[0])
    seen: set[str] = set()
    done = threading.Event()

    def read() -> None:
        while not done.is_set():
            seen.add(view.read_text())  # FileNotFoundError here fails the test

    reader = threading.Thread(target=read)
    reader.start()
    try:
        for n in range(300):
            write(view, texts[n % 2])
    finally:
        done.set()
        reader.join()
    assert seen <= set(texts)
    assert os.listdir(tmp_path) == ["instructions.md"]


@WRITERS
def test_what_is_no_regular_file_is_replaced_by_a_rename(
    tmp_path: Path, write: Callable[[Path, str], None]
) -> None:
    """No exchange with a symbolic link (it is replaced, never followed) nor a fresh name."""
    target = tmp_path / "elsewhere.txt"
    target.write_text("theirs\n")
    link = tmp_path / "candidate.json"
    link.symlink_to(target)
    write(link, "ours\n")
    assert not link.is_symlink() and link.read_text() == "ours\n"
    assert target.read_text() == "theirs\n"
    fresh = tmp_path / "new.json"
    write(fresh, "first\n")
    assert fresh.read_text() == "first\n"
    assert sorted(os.listdir(tmp_path)) == ["candidate.json", "elsewhere.txt", "new.json"]


@pytest.mark.skipif(sys.platform != "linux", reason="renameat2 and inotify are Linux's")
@pytest.mark.parametrize(
    ("write", "exchanged"), [(atomic_write_view, True), (atomic_write_text, False)]
)
def test_on_linux_a_view_is_exchanged_in_and_any_other_file_renamed_over(
    tmp_path: Path, write: Callable[[Path, str], None], exchanged: bool
) -> None:
    """A rename over an existing file makes ext4 write the new one out first (milliseconds on
    a loaded disk, each view of each step); the exchange moves the old view to the temporary
    name instead, where it is removed. The user's files and the run's keys keep the rename:
    that flush is what saves them from a power cut."""
    view = tmp_path / "manifest.json"
    write(view, "old\n")
    events = FileEvents(tmp_path)
    try:
        write(view, "new\n")
        replaced, _ = events.take(temporaries=True)
    finally:
        events.close()
    assert replaced[str(view)] == 1
    temporaries = [p for p in replaced if Path(p).name.endswith(".tmp")]
    assert len(temporaries) == (1 if exchanged else 0)
    assert os.listdir(tmp_path) == ["manifest.json"]
