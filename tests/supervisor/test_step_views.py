"""Which views one step writes, and how (issue 36): on a loaded disk each atomic replace was
the bulk of a step's cost beyond git. Counted from the kernel's own file events
(tests/file_events.py), so nothing in the code that writes them is mocked."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from sup_helpers import submit

from autoresearch.supervisor.handle import RunHandle
from autoresearch.supervisor.prepare import prepare
from autoresearch.supervisor.step import step
from file_events import FileEvents
from helpers import Repo

# every file view of supervisor.md §5 (the worktree's own files, which a reset rewrites, are not)
VIEWS = {"active-run.json", "manifest.json", "candidate.json", "iteration-ledger.json",
         "latest-evaluator-result.json", "instructions.md", "results.tsv"}  # fmt: skip


def _names(found: Counter[str]) -> dict[str, int]:
    return {Path(p).name: count for p, count in found.items() if Path(p).name in VIEWS}


def views_of_step(
    h: RunHandle, events: FileEvents, **session: object
) -> tuple[dict[str, int], dict[str, int]]:
    """The views one step replaced and wrote in place (the session's own files before it are
    not counted)."""
    submit(h, **session)  # type: ignore[arg-type]
    events.take()
    step(h)
    replaced, written = events.take()
    return _names(replaced), _names(written)


def test_a_step_writes_each_view_once_and_appends_the_two_tables(repo: Repo) -> None:
    mission = repo.mission()
    with prepare(mission, run_tag="T1") as h:
        events = FileEvents(h.paths.manifest.parent, h.worktree, h.repo.active_run.parent)
        try:
            measured = {"candidate.json": 1, "manifest.json": 1, "instructions.md": 1,
                        "latest-evaluator-result.json": 1}  # fmt: skip
            tables = {"iteration-ledger.json": 1, "results.tsv": 1}
            for value in ("5", "3"):  # a keep, then a discard
                replaced, written = views_of_step(h, events, files={"value.txt": value + "\n"})
                assert (replaced, written) == (measured, tables), value
            # nothing measured: the latest evaluation stays the one before
            replaced, written = views_of_step(h, events, status="noop")
            del measured["latest-evaluator-result.json"]
            assert (replaced, written) == (measured, tables)
        finally:
            events.close()
