"""Iterations in the journal as records: `IterationRecord` (one row of `iterations`, its JSON
columns decoded when first read), written, read and listed here; the run-level aggregates over
the same table (counts, spend, kept commits, readings) stay in journal/runs.py.

Apart from journal/runs.py so that `status` listing the runs, which reads no iteration,
builds neither the record class nor its codec (issue 36: tests/test_import_graph.py). Functions
that write take the connection of an open transaction (`with journal.tx() as conn`).
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, NamedTuple

from autoresearch.clock import utc_now_iso
from autoresearch.journal import records
from autoresearch.journal.db import Journal
from autoresearch.journal.records import Codec
from autoresearch.journal.runs import EVALUATING
from autoresearch.states import DecisionKind, IterationKind, IterationState, KeepPolicy

if TYPE_CHECKING:  # the storage only reads the record's fields (evaluate.py sits above it)
    from autoresearch.contracts.agent_record import AgentRecord
    from autoresearch.contracts.stored_evaluation import StoredEvaluation


@dataclass(frozen=True)
class IterationRecord:
    """One row of `iterations`: an agent session's outcome, or the baseline (iteration 0)."""

    run_id: str
    iteration: int
    kind: IterationKind
    state: IterationState
    keep_policy: KeepPolicy  # the run's, as the iteration was decided under it
    created_at: str
    updated_at: str
    candidate_status: str | None = None  # an ArtifactStatus, or what an invalid artifact said
    base_commit: str | None = None
    candidate_commit: str | None = None
    description: str = ""
    artifact_notes: list[str] = field(default_factory=list)
    artifact_sha256: str | None = None
    decision: DecisionKind | None = None
    decision_reason: str | None = None
    decision_notes: list[str] = field(default_factory=list)
    kept_commit: str | None = None
    evaluator: StoredEvaluation | None = None
    agent: AgentRecord | None = None  # the session's end (JSON only in agent_json)
    lane: int = 0  # the lane whose session this judged (`run --lanes K`; 0: no lanes)
    # the candidate commit's tree id ('' once known to be unresolvable; None: not looked up)
    candidate_tree: str | None = None

    def shown_agent(self) -> AgentRecord | None:
        """The session's record as the views show it: a lane's iteration names its lane even
        when no session reported one (a session cut off by a crash or lost with its node,
        a candidate a restarted driver judged): the lane is the journal's column."""
        if not self.lane or (self.agent is not None and self.agent.lane is not None):
            return self.agent
        from autoresearch.contracts.agent_record import AgentRecord

        return replace(self.agent or AgentRecord(), lane=self.lane)


def _stored_evaluation(data: Any) -> StoredEvaluation:
    """An iteration's evaluation, decoded when first read: `status` listing runs reads no
    iteration, and `status RUN` decodes each row's as it shows it."""
    from autoresearch.contracts.stored_evaluation import StoredEvaluation

    return StoredEvaluation.from_dict(data)


def _agent_record(data: Any) -> AgentRecord:
    """An iteration's agent session, decoded when first read: `status RUN` shows none of it
    for a run with one agent, and a long run's rows each hold one."""
    from autoresearch.contracts.agent_record import AgentRecord

    return AgentRecord.from_dict(data)


records.decoded_later(IterationRecord, "agent", _agent_record)
records.decoded_later(IterationRecord, "evaluator", _stored_evaluation)


_ITERATIONS = Codec(
    {
        "artifact_notes": "artifact_notes_json",
        "decision_notes": "decision_notes_json",
        "evaluator": "evaluator_json",
        "agent": "agent_json",
    },
    enums={
        "kind": IterationKind,
        "state": IterationState,
        "decision": DecisionKind,
        "keep_policy": KeepPolicy,
    },
    later=frozenset({"agent", "evaluator"}),
    table="iterations",
    keys=("run_id", "iteration"),
)


def insert_iteration(conn: sqlite3.Connection, it: IterationRecord) -> None:
    records.insert(conn, "iterations", _ITERATIONS.record_columns(it))


def update_iteration(conn: sqlite3.Connection, it: IterationRecord) -> None:
    cols = _ITERATIONS.record_columns(replace(it, updated_at=utc_now_iso()))
    where = {"run_id": cols.pop("run_id"), "iteration": cols.pop("iteration")}
    records.update(conn, "iterations", where, cols)


def delete_iteration(conn: sqlite3.Connection, run_id: str, iteration: int) -> None:
    conn.execute("DELETE FROM evaluations WHERE run_id = ? AND iteration = ?", (run_id, iteration))
    conn.execute("DELETE FROM iterations WHERE run_id = ? AND iteration = ?", (run_id, iteration))


def get_iteration(journal: Journal, run_id: str, iteration: int) -> IterationRecord | None:
    row = journal.row(
        "SELECT * FROM iterations WHERE run_id = ? AND iteration = ?", (run_id, iteration)
    )
    return None if row is None else _ITERATIONS.record(IterationRecord, row)


def last_of_lane(journal: Journal, run_id: str, lane: int) -> IterationRecord | None:
    """The last iteration judged in `lane` (a lanes run), or None."""
    row = journal.row(
        "SELECT * FROM iterations WHERE run_id = ? AND lane = ? AND kind = 'iteration' "
        "AND state != ? ORDER BY iteration DESC LIMIT 1",
        (run_id, lane, EVALUATING),
    )
    return None if row is None else _ITERATIONS.record(IterationRecord, row)


def unfinished_iterations(journal: Journal, run_id: str) -> list[IterationRecord]:
    # the literal matches the partial index iterations_unfinished
    rows = journal.rows(
        "SELECT * FROM iterations INDEXED BY iterations_unfinished "
        "WHERE run_id = ? AND state != 'applied' ORDER BY iteration",  # IterationState.APPLIED
        (run_id,),
    )
    return [_ITERATIONS.record(IterationRecord, r) for r in rows]


# a NamedTuple: `status` imports this module, and a frozen dataclass compiles its methods
class TriedCandidate(NamedTuple):
    """A measured iteration as the instructions list it (`measured_iterations`)."""

    iteration: int
    decision: DecisionKind | None
    reason: str
    description: str
    score: float | None


def measured_iterations(journal: Journal, run_id: str, limit: int) -> list[TriedCandidate]:
    """The last `limit` iterations whose candidate the evaluator measured, newest first (what
    the instructions say was already tried). Only the columns the list shows: the prompt is
    written after every step, and 20 whole rows decoded cost it ~0.2 ms of ~6 (issue 36)."""
    rows = journal.rows(
        "SELECT run_id, iteration, decision, decision_reason, description, evaluator_json "
        "FROM iterations WHERE run_id = ? AND kind = ? AND state != ? "
        "AND evaluator_json IS NOT NULL ORDER BY iteration DESC LIMIT ?",
        (run_id, IterationKind.ITERATION, EVALUATING, limit),
    )
    return [_tried(row) for row in rows]


def _tried(row: sqlite3.Row) -> TriedCandidate:
    """One row of `measured_iterations`, its values checked as a whole record's are (a damaged
    one is the same one-line refusal naming its table, row and column)."""
    stored = _ITERATIONS.value("evaluator", row)
    evaluation = stored.decoded(_stored_evaluation) if stored is not None else None
    return TriedCandidate(
        int(row["iteration"]),
        _ITERATIONS.value("decision", row),
        row["decision_reason"] or "",
        row["description"] or "",
        evaluation.score if evaluation is not None else None,
    )


def recent_iterations(journal: Journal, run_id: str, limit: int) -> list[IterationRecord]:
    """The last `limit` recorded iterations, oldest first (an index range scan: O(limit))."""
    rows = journal.rows(
        "SELECT * FROM iterations WHERE run_id = ? AND state != ? ORDER BY iteration DESC LIMIT ?",
        (run_id, EVALUATING, limit),
    )
    return [_ITERATIONS.record(IterationRecord, r) for r in reversed(rows)]


def all_iterations(journal: Journal, run_id: str) -> list[IterationRecord]:
    rows = journal.rows(
        "SELECT * FROM iterations WHERE run_id = ? AND state != ? ORDER BY iteration",
        (run_id, EVALUATING),
    )
    return [_ITERATIONS.record(IterationRecord, r) for r in rows]


def iterations_after(journal: Journal, run_id: str, after: int) -> list[IterationRecord]:
    """Recorded iterations numbered above `after` (incremental readers stay O(new rows))."""
    rows = journal.rows(
        "SELECT * FROM iterations WHERE run_id = ? AND iteration > ? AND state != ? "
        "ORDER BY iteration",
        (run_id, after, EVALUATING),
    )
    return [_ITERATIONS.record(IterationRecord, r) for r in rows]


def decided_iterations(
    journal: Journal, run_id: str, decisions: Sequence[DecisionKind], limit: int
) -> list[IterationRecord]:
    """The last `limit` iterations decided as one of `decisions`, oldest first."""
    marks = ", ".join("?" * len(decisions))
    rows = journal.rows(
        f"SELECT * FROM iterations WHERE run_id = ? AND kind = ? AND decision IN ({marks}) "
        "ORDER BY iteration DESC LIMIT ?",
        (run_id, IterationKind.ITERATION, *decisions, limit),
    )
    return [_ITERATIONS.record(IterationRecord, r) for r in reversed(rows)]


def latest_evaluation(journal: Journal, run_id: str) -> StoredEvaluation | None:
    """The run's last evaluation record, whole (latest-evaluator-result.json), as written."""
    row = journal.row(
        "SELECT record_json FROM evaluations WHERE run_id = ? ORDER BY id DESC LIMIT 1",
        (run_id,),
    )
    return None if row is None else _stored_evaluation(json.loads(row[0]))
