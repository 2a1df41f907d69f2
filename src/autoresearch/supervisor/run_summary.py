"""What `status` shows of each run: its headline (`RunSummary`) and, listing the runs, whether a
driver is alive (`RunListing`).

Apart from supervisor/summary.py's records of one run's details and of a finished loop, which a
status line listing the runs never builds (issue 36: tests/test_import_graph.py).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple

from autoresearch.jsonshape import json_field, json_shape
from autoresearch.noise import Interval
from autoresearch.states import Direction, KeepPolicy, RunStatus
from autoresearch.supervisor.estimates import LevelDrift
from autoresearch.supervisor.improvement import Improvement

_LAST = json_field(trails=True)


@dataclass(frozen=True)
class RunSummary:
    """A run's headline: where it stands, its scores and how its iterations were decided."""

    run_id: str
    status: RunStatus
    stop_reason: str | None
    mission_slug: str
    branch_name: str
    worktree_path: str
    iteration: int
    keep_policy: KeepPolicy
    direction: Direction
    last_kept_commit: str | None
    last_kept_score: float | None
    best_score: float | None
    # `--json` has always written the intervals and what pooled numbers cannot say last,
    # after resume_command; the MCP schema (mcp/schemas.RunSummary) mirrors this order
    best_interval: Interval | None = field(metadata=_LAST)  # the best's 95 %, from readings
    baseline_score: float | None
    baseline_interval: Interval | None = field(metadata=_LAST)  # the baseline's, likewise
    # what pooled numbers cannot say (supervisor/honest.py): certify's paired improvement
    # (final − baseline, better is +), the drift the run saw, why the best reads worse
    certified_improvement: Interval | None = field(metadata=_LAST)
    drift: tuple[LevelDrift, ...] = field(metadata=_LAST)
    best_note: str | None = field(metadata=_LAST)
    counts: dict[str, int]  # decision → iterations
    created_at: str
    updated_at: str
    completed_at: str | None
    stop_requested: str | None
    stop_note: str | None
    cleaned_at: str | None
    resume_command: str | None
    paused: str | None = None  # the notice of a run paused on a plateau (supervisor/plateau.py)
    # best − baseline as every view reports it (supervisor/improvement.py): certify's paired
    # change when the run was certified, else the pooled means' difference, marked unpaired
    improvement: Improvement | None = field(default=None, metadata=_LAST)

    def to_dict(self) -> dict[str, object]:
        return json_shape(self)


# a record around a run's summary answers as one object: the summary's keys, then its own
SUMMARY_FIRST = json_field(inline=True)


# a NamedTuple: status imports it, and a frozen dataclass compiles its methods at import
class RunListing(NamedTuple):
    """One run of `status` without RUN_ID: its headline and whether a driver is alive."""

    summary: RunSummary
    driver_alive: bool

    def to_dict(self) -> dict[str, object]:
        """The summary's keys, then its own, as a dataclass's SUMMARY_FIRST field writes them
        (RunDetails): a NamedTuple's fields carry no json_field."""
        return {**self.summary.to_dict(), "driver_alive": self.driver_alive}
