"""Crash logs outside a repository: in a folder of this user's own under the temp folder, 0700
even under umask 000, never through a planted symlink or someone else's folder, and with
secrets masked (real subprocesses writing real logs)."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

SECRET = "supersecretvalue123"

_CRASH_OUTSIDE = """
import os
from pathlib import Path
from autoresearch.crash import write_crash_log

os.umask(0)
try:
    raise RuntimeError("token " + os.environ["MY_API_KEY"])
except RuntimeError as exc:
    print(write_crash_log(exc, ["autoresearch", "status"], Path.cwd()))
"""


def _crash(tmp_path: Path) -> tuple[Path, Path]:
    """Crash in a folder outside any repository with TMPDIR at `tmp_path/tmp`: (the temp
    folder, the log)."""
    shared, outside = tmp_path / "tmp", tmp_path / "outside"
    shared.mkdir(exist_ok=True)
    outside.mkdir(exist_ok=True)
    env = {**os.environ, "TMPDIR": str(shared), "MY_API_KEY": SECRET}
    done = subprocess.run(
        [sys.executable, "-c", _CRASH_OUTSIDE],
        cwd=outside, env=env, capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return shared, Path(done.stdout.strip())


def _mine(shared: Path) -> Path:
    return shared / f"autoresearch-crash-{os.getuid()}"


def _private_and_masked(log: Path) -> None:
    assert stat.S_IMODE(log.parent.stat().st_mode) == 0o700
    assert stat.S_IMODE(log.stat().st_mode) == 0o600
    text = log.read_text()
    assert "RuntimeError: token" in text and SECRET not in text


def test_a_crash_log_outside_a_repository_is_per_user_private_and_redacted(
    tmp_path: Path,
) -> None:
    shared, log = _crash(tmp_path)
    assert log.parent == _mine(shared)
    _private_and_masked(log)


def test_a_loose_folder_of_an_older_version_is_tightened(tmp_path: Path) -> None:
    mine = _mine(tmp_path / "tmp")
    mine.mkdir(parents=True)
    os.chmod(mine, 0o777)
    _, log = _crash(tmp_path)
    assert log.parent == mine
    _private_and_masked(log)


def test_a_planted_symlink_is_never_written_through(tmp_path: Path) -> None:
    trap = tmp_path / "trap"
    trap.mkdir()
    (tmp_path / "tmp").mkdir()
    _mine(tmp_path / "tmp").symlink_to(trap)
    shared, log = _crash(tmp_path)
    assert list(trap.iterdir()) == []
    assert log.parent.parent == shared and log.parent.name.startswith("autoresearch-crash-")
    _private_and_masked(log)


@pytest.mark.skipif(os.geteuid() != 0, reason="handing a folder to another user needs root")
def test_another_users_folder_is_never_written_into(tmp_path: Path) -> None:
    theirs = _mine(tmp_path / "tmp")
    theirs.mkdir(parents=True)
    os.chown(theirs, 65534, 65534)
    os.chmod(theirs, 0o777)
    _, log = _crash(tmp_path)
    assert log.parent != theirs and list(theirs.iterdir()) == []
    _private_and_masked(log)
