"""Reading a session's history for reports, and the one way pending runs are abandoned.

Stats are always computed from the journal at the moment of the call, so a flag set by any
later log is honoured everywhere from then on.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from autoresearch.experiments.confidence import Point, SegmentStats, segment_stats
from autoresearch.journal import sessions
from autoresearch.journal.db import Journal
from autoresearch.journal.sessions import Reader, SessionRecord, SessionRunRecord
from autoresearch.proc import kill_marked, kill_stale_group
from autoresearch.settings import ENV_EXP_DIR, ENV_EXP_RUN_MARKER


@dataclass(frozen=True)
class Progress:
    """Logged runs of the segment against max_iterations."""

    logged: int
    max: int | None

    @property
    def reached(self) -> bool:
        return self.max is not None and self.logged >= self.max

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "reached": self.reached}


def point(run: SessionRunRecord) -> Point:
    return Point(run.number, run.status or "", run.metric, run.flagged, run.commit_sha)


def stats(src: Reader, session: SessionRecord) -> SegmentStats:
    runs = sessions.logged_runs(src, session.session_id, session.segment)
    return segment_stats([point(r) for r in runs], session.direction)


def progress_text(progress: dict[str, Any]) -> str:
    """`logged/max`, or `logged` without a limit (from Progress.to_dict())."""
    return f"{progress['logged']}/{progress['max']}" if progress["max"] else f"{progress['logged']}"


def progress(src: Reader, session: SessionRecord) -> Progress:
    return Progress(
        sessions.logged_count(src, session.session_id, session.segment), session.max_iterations
    )


def marker_value(session_id: int, number: int) -> str:
    """The value of ENV_EXP_RUN_MARKER in every process of one harness run."""
    return f"{session_id}-{number}"


def abandon_pending(journal: Journal, session: SessionRecord) -> list[SessionRunRecord]:
    """Abandon the session's pending runs and stop harness processes a killed run left."""
    with journal.tx() as conn:
        found = sessions.abandon_pending(conn, session.session_id)
    for run in found:
        marker = f"{ENV_EXP_RUN_MARKER}={marker_value(run.session_id, run.number)}"
        if run.pgid is not None:
            kill_stale_group(run.pgid, marker)
        # a harness whose group was never recorded (its driver died right after the spawn)
        kill_marked([marker, f"{ENV_EXP_DIR}={session.directory}"])
    return found


def abandoned_text(run: SessionRunRecord) -> str:
    state = "completed, never logged" if run.completed else "interrupted before it completed"
    return f"abandoned run #{run.number} ({state})"


def session_dict(session: SessionRecord) -> dict[str, Any]:
    """The session as JSON: lists for tuples, everything else as stored."""
    data = asdict(session)
    for key in ("secondary", "scope", "off_limits", "constraints"):
        data[key] = list(data[key])
    return data
