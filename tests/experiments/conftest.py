from __future__ import annotations

from pathlib import Path

import pytest
from exp_helpers import exp_repo, init

from helpers import Repo


@pytest.fixture
def repo(tmp_path: Path) -> Repo:
    """A repository with an uncommitted harness and no session yet."""
    return exp_repo(tmp_path / "repo")


@pytest.fixture
def session(repo: Repo) -> Repo:
    """A repository with an initialised session (no run yet)."""
    init(repo.root)
    return repo


@pytest.fixture
def checked(tmp_path: Path) -> Repo:
    """A session whose repository also has autoresearch.checks.sh."""
    repo = exp_repo(tmp_path / "repo", checks=True)
    init(repo.root)
    return repo
