"""fsutil's atomic writes over an existing file (issue 36): a view by an atomic exchange where
the OS has one, anything else by a rename; either way a reader never sees a torn or missing
file, and nothing is left beside it but a view's spare (its previous bytes, filled in place by
the next write once nobody has it open)."""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from autoresearch.fsutil import atomic_write_text, atomic_write_view, spare_of
from file_events import FileEvents

WRITERS = pytest.mark.parametrize("write", [atomic_write_text, atomic_write_view])
LINUX = pytest.mark.skipif(sys.platform != "linux", reason="renameat2, leases and inotify")


def left_beside(view: Path, write: Callable[[Path, str], None]) -> list[str]:
    """What a writer leaves in the view's folder after replacing it: the view, and a view's
    spare where the OS has leases."""
    spare = write is atomic_write_view and sys.platform == "linux"
    return sorted([view.name, *([spare_of(view).name] if spare else [])])


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
    assert sorted(os.listdir(view.parent)) == left_beside(view, write)


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
    assert sorted(os.listdir(tmp_path)) == left_beside(view, write)


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
    # no old view was swapped out: no spare either
    assert sorted(os.listdir(tmp_path)) == ["candidate.json", "elsewhere.txt", "new.json"]


@pytest.mark.skipif(sys.platform != "linux", reason="renameat2 and inotify are Linux's")
@pytest.mark.parametrize(
    ("write", "exchanged"), [(atomic_write_view, True), (atomic_write_text, False)]
)
def test_on_linux_a_view_is_exchanged_in_and_any_other_file_renamed_over(
    tmp_path: Path, write: Callable[[Path, str], None], exchanged: bool
) -> None:
    """A rename over an existing file makes ext4 write the new one out first (milliseconds on
    a loaded disk, each view of each step); the exchange moves the old view to the spare
    instead. The user's files and the run's keys keep the rename: that flush is what saves
    them from a power cut."""
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
    assert sorted(os.listdir(tmp_path)) == left_beside(view, write)


@LINUX
def test_a_view_reuses_its_old_file_instead_of_freeing_it(tmp_path: Path) -> None:
    """Unlinking the old view (the session's candidate.json, written moments before) cost
    milliseconds a step on a loaded disk: its file is the next write's, filled in place."""
    view = tmp_path / "candidate.json"
    atomic_write_view(view, "first\n")
    first = os.stat(view).st_ino
    atomic_write_view(view, "second, longer\n")
    assert spare_of(view).read_text() == "first\n"
    atomic_write_view(view, "third\n")
    assert os.stat(view).st_ino == first
    assert view.read_text() == "third\n"
    assert os.stat(view).st_mode & 0o777 == 0o600
    assert spare_of(view).read_text() == "second, longer\n"


@LINUX
def test_a_reader_of_an_old_view_keeps_it_whole_over_later_writes(tmp_path: Path) -> None:
    """The spare is filled only when nobody has it open (a write lease says so): a reader
    that opened the view two writes ago still reads what it opened."""
    view = tmp_path / "manifest.json"
    atomic_write_view(view, "zero\n")
    atomic_write_view(view, "old\n")
    with view.open() as reader:
        for text in ("new\n", "newer\n", "newest\n"):
            atomic_write_view(view, text)
            assert view.read_text() == text
        assert reader.read() == "old\n"
    atomic_write_view(view, "after\n")
    assert view.read_text() == "after\n"
    assert sorted(os.listdir(tmp_path)) == left_beside(view, atomic_write_view)


@LINUX
@pytest.mark.parametrize("plant", ["symlink", "hardlink"])
def test_a_link_planted_as_the_spare_is_never_written_through(tmp_path: Path, plant: str) -> None:
    view = tmp_path / "candidate.json"
    theirs = tmp_path / "theirs.txt"
    theirs.write_text("theirs\n")
    atomic_write_view(view, "one\n")
    spare = spare_of(view)
    spare.unlink(missing_ok=True)
    if plant == "symlink":
        spare.symlink_to(theirs)
    else:
        os.link(theirs, spare)
    atomic_write_view(view, "two\n")
    atomic_write_view(view, "three\n")
    assert view.read_text() == "three\n"
    assert theirs.read_text() == "theirs\n"
