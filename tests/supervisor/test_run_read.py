"""Reading a run by what a user typed, in one opening of the journal (`status RUN`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from autoresearch.errors import NotFoundError
from autoresearch.paths import RepoPaths
from autoresearch.supervisor.prepare import prepare
from autoresearch.supervisor.run_read import read_named_run
from helpers import Repo


@pytest.mark.parametrize("typed", ["missions-demo-t1", "missions-demo", "missions-"])
def test_a_run_is_read_by_its_id_or_a_unique_prefix(mission_dir: Path, typed: str) -> None:
    with prepare(mission_dir, run_tag="T1") as h:
        root = h.repo.repo_root
    journal, run = read_named_run(root, typed)
    with journal:
        assert run.run_id == "missions-demo-t1"


def test_an_unknown_run_is_refused_with_the_closest_id(mission_dir: Path) -> None:
    with prepare(mission_dir, run_tag="T1") as h:
        root = h.repo.repo_root
    with pytest.raises(NotFoundError, match=r"^unknown run: missions-demo-t2 \(did you mean "):
        read_named_run(root, "missions-demo-t2")


def test_a_repository_without_a_journal_gets_none_made(repo: Repo) -> None:
    with pytest.raises(NotFoundError, match="^unknown run: nope$"):
        read_named_run(repo.root, "nope")
    assert not RepoPaths(repo.root).journal.exists()
