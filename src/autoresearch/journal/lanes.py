"""What each lane of a `run --lanes K` is doing (`run_lanes` table), for status and MCP.

Written only by the run's driver (supervisor/lanes.py); read by anyone.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass

from autoresearch.clock import utc_now_iso
from autoresearch.journal import records
from autoresearch.journal.db import Journal
from autoresearch.journal.records import Codec
from autoresearch.journal.runs import (
    LANE_TOTALS_PARAMS,
    LANE_TOTALS_SQL,
    LaneTotals,
    lane_totals_of,
)
from autoresearch.states import DecisionKind, LaneState


@dataclass(frozen=True)
class LaneRecord:
    run_id: str
    lane: int
    state: LaneState
    updated_at: str
    session: int = 0  # sessions the lane started
    base_commit: str | None = None  # the incumbent its current work is built on
    detail: str | None = None  # one line: what it is doing
    last_iteration: int | None = None
    last_decision: DecisionKind | None = None


_LANES = Codec(
    {},
    enums={"state": LaneState, "last_decision": DecisionKind},
    table="run_lanes",
    keys=("run_id", "lane"),
)


def save_lane(conn: sqlite3.Connection, lane: LaneRecord) -> None:
    cols = _LANES.record_columns(lane)
    cols["updated_at"] = utc_now_iso()
    conn.execute("DELETE FROM run_lanes WHERE run_id = ? AND lane = ?", (lane.run_id, lane.lane))
    records.insert(conn, "run_lanes", cols)


def lanes_of(journal: Journal, run_id: str) -> list[LaneRecord]:
    rows = journal.rows("SELECT * FROM run_lanes WHERE run_id = ? ORDER BY lane", (run_id,))
    return [_LANES.record(LaneRecord, r) for r in rows]


def lanes_judged(journal: Journal, run_id: str) -> list[tuple[LaneRecord, LaneTotals]]:
    """Each lane's row with what the journal judged of it (its counts, spend and last judged
    iteration), read in one statement: one snapshot of the journal, so a judgement committed
    meanwhile is either in both or in neither."""
    decision, kind, state = LANE_TOTALS_PARAMS
    rows = journal.rows(
        f"SELECT l.*, t.judged, t.keeps, t.cost_usd, t.tokens, t.last_judged "
        f"FROM run_lanes AS l LEFT JOIN ({LANE_TOTALS_SQL}) AS t ON t.lane = l.lane "
        "WHERE l.run_id = ? ORDER BY l.lane",
        (decision, run_id, kind, state, run_id),
    )
    return [(_LANES.record(LaneRecord, r), lane_totals_of(r)) for r in rows]


def delete_lanes(conn: sqlite3.Connection, run_id: str) -> None:
    conn.execute("DELETE FROM run_lanes WHERE run_id = ?", (run_id,))
