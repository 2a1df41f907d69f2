"""Which run a user means: the newest when none is named, an exact id, or a unique prefix.

Run ids are long (`tune-sgd-20261206T061300Z`); a user types the start of one or copies a
near miss. The pick is pure and table-tested; an unknown id keeps the message every command
has always given (`unknown run: <id>`), with the closest id after it.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from autoresearch.errors import NotFoundError
from autoresearch.journal import runs
from autoresearch.journal.db import journal_present, open_journal
from autoresearch.paths import RepoPaths

NO_RUNS = "no runs yet (autoresearch prepare MISSION_DIR or autoresearch run …)"


def pick_run_id(named: str | None, known: Sequence[str]) -> str:
    """The run `named` means among `known` (oldest first); None means the newest."""
    if named is None:
        if not known:
            raise NotFoundError(NO_RUNS)
        return known[-1]
    if named in known:
        return named
    starting = [run_id for run_id in known if run_id.startswith(named)] if named else []
    if len(starting) == 1:
        return starting[0]
    if starting:
        listed = ", ".join(starting[:3]) + (", …" if len(starting) > 3 else "")
        raise NotFoundError(
            f"run {named!r} is ambiguous: {len(starting)} runs start with it ({listed}); "
            "give more of the id"
        )
    import difflib  # an unknown id only: `status` imports it no more (issue 36)

    close = difflib.get_close_matches(named, list(known), n=1, cutoff=0.6)
    hint = f" (did you mean {close[0]}?)" if close else ""
    raise NotFoundError(f"unknown run: {named}{hint}")


def resolve_run_id(repo_root: Path, named: str | None) -> str:
    """`pick_run_id` over the repository's runs; a repository without a journal has none
    (and gets none made)."""
    if not journal_present(RepoPaths(repo_root).journal):
        return pick_run_id(named, [])
    with open_journal(repo_root) as journal:
        return pick_run_id(named, [run.run_id for run in runs.list_runs(journal)])
