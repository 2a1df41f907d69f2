"""Reading a run without driving it: the repository around a folder, a run's record, whether a
driver holds it.

`status`, the hooks and `autoresearch mcp` start here; `supervisor/handle.py` (a driven run: its
git, child registry, reset rule and sandbox) stays out of their start-up (issue 36:
tests/test_import_graph.py guards this).
"""

from __future__ import annotations

from pathlib import Path

from autoresearch.errors import ContractError, NotFoundError
from autoresearch.journal import runs
from autoresearch.journal.db import Journal, journal_present, open_journal
from autoresearch.locks import FileLock
from autoresearch.paths import RepoPaths
from autoresearch.repo_state import main_root
from autoresearch.supervisor.run_ids import pick_run_id


def find_repo(start: Path) -> Path:
    """The main working tree of the repository around `start`."""
    root = main_root(start)
    if root is None:
        raise ContractError(f"not inside a git repository: {start}")
    return root


def load_run(journal: Journal, run_id: str) -> runs.RunRecord:
    run = runs.get_run(journal, run_id)
    if run is None:
        raise NotFoundError(f"unknown run: {run_id}")
    return run


def read_run(
    repo_root: Path, run_id: str, *, to_read: bool = False
) -> tuple[Journal, runs.RunRecord]:
    """The journal, open (the caller closes it; `to_read`: for reading only, db.open_journal),
    and the run's record; an unknown run is refused, and a repository without a journal has
    none and gets none made."""
    if not journal_present(RepoPaths(repo_root).journal):
        raise NotFoundError(f"unknown run: {run_id}")
    journal = open_journal(repo_root, to_read=to_read)
    try:
        run = load_run(journal, run_id)
        # a command that may act on the run refuses a damaged one before it acts
        return journal, run if to_read else runs.decoded_whole(run)
    except BaseException:
        journal.close()
        raise


def read_named_run(repo_root: Path, named: str) -> tuple[Journal, runs.RunRecord]:
    """`read_run` of the run `named` means (an exact id, else `run_ids.pick_run_id`'s unique
    prefix) in one opening of the journal: `status RUN` opens it once, not once to resolve
    the name and again to read the run (each opening checks the journal's seals). Opened to
    read: `status RUN` answers while a driver holds a write transaction."""
    if not journal_present(RepoPaths(repo_root).journal):
        raise NotFoundError(f"unknown run: {named}")  # pick_run_id's word with no run known
    journal = open_journal(repo_root, to_read=True)
    try:
        run = runs.get_run(journal, named)
        if run is None:
            known = [each.run_id for each in runs.list_runs(journal)]
            run = load_run(journal, pick_run_id(named, known))
        return journal, run
    except BaseException:
        journal.close()
        raise


def driver_alive(repo: RepoPaths, run_id: str) -> bool:
    """True when some process holds the run's driver lock right now."""
    return FileLock(repo.run(run_id).driver_lock).held_elsewhere()
