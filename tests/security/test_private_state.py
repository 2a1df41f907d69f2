"""Private state: everything autoresearch creates under `.autoresearch/` is the user's alone,
even under a umask that would make it world-writable."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from autoresearch.fsutil import atomic_write_text, private_dir, private_open
from helpers import cli, loose_modes, make_repo


def test_state_of_a_supervised_run_is_private(tmp_path: Path, open_umask: None) -> None:
    # The demo is a whole supervised run: journal (WAL/SHM), views, logs, patches, a worktree
    # checked out by git, an agent and an evaluator writing into it.
    demo = tmp_path / "demo"
    done = cli("demo", str(demo), "--iterations", "3", cwd=tmp_path, timeout=300)
    assert done.returncode == 0, done.stderr
    state = demo / ".autoresearch"
    names = {p.name for p in state.rglob("*")}
    assert {"journal.sqlite3", "manifest.json", "iteration-ledger.json"} <= names
    assert any(n.endswith(".log") for n in names)
    assert loose_modes(state) == []


def test_state_of_an_experiment_session_is_private(tmp_path: Path, open_umask: None) -> None:
    repo = make_repo(tmp_path / "repo")
    repo.write("autoresearch.sh", 'echo "METRIC score=$(cat value.txt)"\n')
    assert cli("exp", "init", "--name", "n", "--metric", "score", cwd=repo.root).returncode == 0
    assert cli("exp", "run", cwd=repo.root).returncode == 0
    assert cli("exp", "log", "--status", "keep", "-d", "base", cwd=repo.root).returncode == 0
    repo.write("value.txt", "200\n")
    assert cli("exp", "run", cwd=repo.root).returncode == 0
    done = cli("exp", "log", "--status", "discard", "-d", "worse", cwd=repo.root)
    assert done.returncode == 0, done.stderr
    state = repo.root / ".autoresearch"
    names = {p.name for p in state.rglob("*")}
    assert {"journal.sqlite3", "run-0002-discarded.patch", "session.lock"} <= names
    assert loose_modes(state) == []


def test_the_helpers_set_modes_whatever_the_umask(tmp_path: Path) -> None:
    old = os.umask(0o700)  # would leave even the owner without access
    try:
        deep = private_dir(tmp_path / "a" / "b")
        atomic_write_text(deep / "f.json", "{}")
        with private_open(deep / "log", "ab") as handle:
            handle.write(b"x")
    finally:
        os.umask(old)
    for folder in (tmp_path / "a", deep):
        assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    for file in (deep / "f.json", deep / "log"):
        assert stat.S_IMODE(file.stat().st_mode) == 0o600


def test_replacing_a_users_file_keeps_its_mode(tmp_path: Path) -> None:
    path = tmp_path / "exclude"
    path.write_text("x")
    path.chmod(0o644)
    atomic_write_text(path, "y", keep_mode=True)
    assert stat.S_IMODE(path.stat().st_mode) == 0o644
