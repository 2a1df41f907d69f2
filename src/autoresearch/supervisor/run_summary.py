"""What `status` shows of each run: its headline (`RunSummary`) and, listing the runs, whether a
driver is alive (`RunListing`).

Apart from supervisor/summary.py's records of one run's details and of a finished loop, which a
status line listing the runs never builds (issue 36: tests/test_import_graph.py).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import NamedTuple

from autoresearch.jsonshape import FieldShape, json_field, json_shape
from autoresearch.noise import Interval
from autoresearch.states import Direction, KeepPolicy, RunStatus
from autoresearch.supervisor.estimates import LevelDrift
from autoresearch.supervisor.improvement import Improvement


# a NamedTuple: status builds one per run it lists, and a frozen dataclass compiles its
# methods at import (its JSON's trailing fields are said in `json_fields`)
class RunSummary(NamedTuple):
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
    # after resume_command (`json_fields`); the MCP schema (mcp/schemas.RunSummary) mirrors
    # this order
    best_interval: Interval | None  # the best's 95 %, from readings
    baseline_score: float | None
    baseline_interval: Interval | None  # the baseline's, likewise
    # what pooled numbers cannot say (supervisor/honest.py): certify's paired improvement
    # (final − baseline, better is +), the drift the run saw, why the best reads worse
    certified_improvement: Interval | None
    drift: tuple[LevelDrift, ...]
    best_note: str | None
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
    improvement: Improvement | None = None

    @staticmethod
    def json_fields() -> Mapping[str, Mapping[str, FieldShape]]:
        """The fields `--json` writes after the others, in their order (jsonshape)."""
        return _TRAILING

    def to_dict(self) -> dict[str, object]:
        return json_shape(self)


_LAST = json_field(trails=True)
_TRAILING = dict.fromkeys(
    (
        "best_interval",
        "baseline_interval",
        "certified_improvement",
        "drift",
        "best_note",
        "improvement",
    ),
    _LAST,
)


# a record around a run's summary answers as one object: the summary's keys, then its own
SUMMARY_FIRST = json_field(inline=True)


# a NamedTuple: status imports it, and a frozen dataclass compiles its methods at import
class RunListing(NamedTuple):
    """One run of `status` without RUN_ID: its headline and whether a driver is alive."""

    summary: RunSummary
    driver_alive: bool

    @staticmethod
    def json_fields() -> Mapping[str, Mapping[str, FieldShape]]:
        return {"summary": SUMMARY_FIRST}

    def to_dict(self) -> dict[str, object]:
        return json_shape(self)
