"""What `status`, `--json`, the loop's summary and MCP `run_status` show of a frontier run:
its archive (best first, with the sessions started from each elite) and each iteration's
parent. Empty for a run that kept no archive (greedy)."""

from __future__ import annotations

from autoresearch.journal import search
from autoresearch.journal.db import Journal
from autoresearch.journal.runs import RunRecord
from autoresearch.supervisor.archive import Elite, ranked
from autoresearch.supervisor.estimates import RunReadings
from autoresearch.supervisor.summary import ArchiveEntry


def archive_entries(journal: Journal, run: RunRecord) -> list[ArchiveEntry]:
    rows = search.elites(journal, run.run_id)
    if not rows:
        return []
    tries = search.tries(journal, run.run_id)
    found = RunReadings.load(journal, run)
    elites = ranked(
        [Elite(r.commit, r.score, r.parent, r.lineage, r.entered) for r in rows], run.direction
    )
    return [
        ArchiveEntry(
            e.commit,
            e.score,
            e.parent,
            e.lineage,
            e.entered,
            tries.get(e.commit, 0),
            found.estimate(e.commit),
        )
        for e in elites
    ]


def parents(journal: Journal, run: RunRecord) -> dict[int, str]:
    """Each iteration's parent (none for a run without an archive)."""
    return search.parents(journal, run.run_id)
