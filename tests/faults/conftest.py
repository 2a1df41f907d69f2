from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from helpers import cli

# The supervisor tests' prepared-run fixture, shared rather than copied.
from supervisor.conftest import run

__all__ = ["demo", "finished_demo", "run"]


# A finished two-iteration demo (one per test process: two modules use it, and a demo costs
# ~2 s of CPU), and a copy of it for each test: the journal tests damage the copy.
@pytest.fixture(scope="session")
def finished_demo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("demo")
    done = cli("demo", str(root / "demo"), "--iterations", "2", cwd=root)
    assert done.returncode == 0, done.stderr
    return root / "demo"


@pytest.fixture
def demo(finished_demo: Path, tmp_path: Path) -> Path:
    copy = tmp_path / "demo"
    shutil.copytree(finished_demo, copy, symlinks=True)
    # the worktree's registration names the original folder: this copy serves the journal tests
    return copy
