"""Reading a session's history for reports, and the one way pending runs are abandoned.

Stats are always computed from the journal at the moment of the call, so a flag set by any
later log is honoured everywhere from then on.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from autoresearch.journal import sessions
from autoresearch.journal.db import Journal, Reader
from autoresearch.journal.sessions import SessionRecord, SessionRunRecord

if TYPE_CHECKING:  # the statistics of a segment: a Stop that lets the agent stop reads none
    from autoresearch.experiments.confidence import Point, SegmentStats


@dataclass(frozen=True)
class Progress:
    """Logged runs of the segment against max_iterations."""

    logged: int
    max: int | None
    # a field (derived) so that every report's JSON has it after the two it comes from
    reached: bool = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "reached", self.max is not None and self.logged >= self.max)

    def to_dict(self) -> dict[str, object]:
        from autoresearch.jsonshape import json_shape  # a report's: a Stop reads the counts only

        return json_shape(self)


def point(run: SessionRunRecord) -> Point:
    from autoresearch.experiments.confidence import Point

    readings = tuple(run.readings or ())
    reference = tuple(run.reference_readings or ())
    if readings and run.metric != run.parsed_primary:
        # logged with another value than measured: that value is what counts, and it has no
        # reading to pair with the kept commit's
        readings, reference = (), ()
    return Point(
        run.number,
        run.status,
        run.metric,
        run.flagged,
        run.commit_sha,
        readings,
        run.reference_commit if reference else None,
        reference,
    )


def stats(src: Reader, session: SessionRecord) -> SegmentStats:
    from autoresearch.experiments.confidence import segment_stats

    runs = sessions.logged_runs(src, session.session_id, session.segment)
    return segment_stats([point(r) for r in runs], session.direction)


def progress_text(progress: Progress) -> str:
    """`logged/max`, or `logged` without a limit."""
    return f"{progress.logged}/{progress.max}" if progress.max else f"{progress.logged}"


def progress(src: Reader, session: SessionRecord) -> Progress:
    return Progress(
        sessions.logged_count(src, session.session_id, session.segment), session.max_iterations
    )


def abandon_pending(journal: Journal, session: SessionRecord) -> list[SessionRunRecord]:
    """Abandon the session's pending runs and stop harness processes a killed run left."""
    # the child registry and its killing only here: a hook that reads the ledger starts light
    from autoresearch.children import harness_tag, reap
    from autoresearch.proc import stop_grace

    # read before a run is marked abandoned: a bad setting must not leave one abandoned whose
    # harness nobody stopped (the next call no longer finds it pending)
    grace = stop_grace(None)
    with journal.tx() as conn:
        found = sessions.abandon_pending(conn, session.session_id)
    for run in found:
        reap(journal, harness_tag(run.session_id, run.number, session.directory), grace)
    return found


def abandoned_text(run: SessionRunRecord) -> str:
    state = "completed, never logged" if run.completed else "interrupted before it completed"
    return f"abandoned run #{run.number} ({state})"
