"""Supervised runs, evaluations and the aggregates over their iterations in the journal (the
iterations as records are journal/iteration_records.py: `status` listing the runs reads none).

With it, the only module that knows the SQL of these tables. Functions that write take the
connection of an open transaction (`with journal.tx() as conn`), so callers group writes into
one commit.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NamedTuple

from autoresearch.clock import utc_now_iso
from autoresearch.journal import records
from autoresearch.journal.db import Journal
from autoresearch.journal.records import Codec
from autoresearch.jsonshape import mapping, optional_text, text
from autoresearch.noise import NoisePolicy, Role
from autoresearch.states import (
    MISSION_DEFAULT_DIRECTION,
    DecisionKind,
    Direction,
    EvalPurpose,
    EvalStatus,
    IterationKind,
    IterationState,
    KeepPolicy,
    Phase,
    RunStatus,
)

if TYPE_CHECKING:  # the storage only reads the record's fields (evaluate.py sits above it)
    from autoresearch.contracts.evaluator_spec import EvaluatorSpec
    from autoresearch.contracts.frozen import FrozenMission
    from autoresearch.contracts.loop import LoopSettings
    from autoresearch.evaluate import EvaluationRecord

# `resume` finishes or rolls back any iteration that is not `applied`.
EVALUATING = IterationState.EVALUATING


@dataclass(frozen=True)
class RunRecord:
    """One row of `runs`, JSON columns decoded."""

    run_id: str
    run_tag: str
    mission_slug: str
    source_mission_dir: str
    mission_dir: str
    mission_file: str
    sandbox_file: str
    repo_root: str
    worktree_path: str
    branch_name: str
    # as frozen at prepare (JSON only in runs.evaluator_json), decoded at its first read: a
    # run's direction is read without it (`direction`)
    evaluator: EvaluatorSpec
    keep_policy: KeepPolicy
    sandbox: FrozenMission  # decoded at its first read (`_frozen_mission`, below the class)
    status: RunStatus
    phase: Phase
    created_at: str
    updated_at: str
    baseline_commit: str | None = None
    last_kept_commit: str | None = None
    last_kept_score: float | None = None
    latest_candidate_commit: str | None = None
    stop_reason: str | None = None
    iteration: int = 0
    loop: LoopSettings | None = None
    stop_requested: str | None = None
    stop_note: str | None = None
    views_iteration: int = -1
    completed_at: str | None = None
    cleaned_at: str | None = None

    @property
    def direction(self) -> Direction:
        """Which way the mission's score improves, read without decoding the rest of the
        evaluator: `status` asks of every run, and imports no evaluator contract."""
        held = self.__dict__["evaluator"]
        return held.decoded(_direction_of) if isinstance(held, records.Stored) else held.direction

    @property
    def loop_settings(self) -> LoopSettings:
        """What the run recorded of its loop (nothing, for a run only prepared)."""
        from autoresearch.contracts.loop import LoopSettings

        return self.loop if self.loop is not None else LoopSettings()

    @property
    def noise(self) -> NoisePolicy | None:
        """The frozen mission's `noise` (None: prepared before noise-aware keeps), read
        without decoding the rest of it: every view's estimates ask, `status` among them."""
        held = self.__dict__["sandbox"]
        return held.decoded(_noise_of) if isinstance(held, records.Stored) else held.noise

    @property
    def noise_policy(self) -> NoisePolicy:
        """The policy the run decides by (an older run without one: the single rule)."""
        found = self.noise
        return found if found is not None else NoisePolicy.from_dict(None)

    @property
    def paused(self) -> str | None:
        """The notice of a run paused on a plateau (its loop's `paused`), read without decoding
        the rest of the loop: `status` asks of every running run, and imports no loop contract."""
        held = self.__dict__["loop"]
        if isinstance(held, records.Stored):
            return held.decoded(_paused_of)
        return held.paused if held is not None else None


def _noise_of(data: Any) -> NoisePolicy | None:
    """`FrozenMission.from_dict`'s reading of the one key (a damaged mission's noise is
    refused as its whole would be)."""
    noise = mapping(data or {}).get("noise")
    return None if noise is None else NoisePolicy.from_dict(dict(mapping(noise)))


def _direction_of(data: Any) -> Direction:
    """`EvaluatorSpec.from_dict`'s reading of the one key (a direction no version wrote is
    refused as the whole evaluator would be)."""
    return Direction(text(mapping(data).get("direction", MISSION_DEFAULT_DIRECTION)))


def _paused_of(data: Any) -> str | None:
    """The loop's `paused` notice: text or nothing (a loop that is no mapping, or a notice
    that is no text, is a damaged journal: refused, where `LoopSettings` would keep it)."""
    return optional_text(mapping(data or {}).get("paused"))


def _frozen_mission(data: Any) -> FrozenMission:
    """The frozen mission of a run read from the journal, decoded when first read: its
    contract (contracts/frozen.py, sandbox.md's parser and the tune, screen and isolation
    contracts below it) is what `status` and the hooks do without (issue 36)."""
    from autoresearch.contracts.frozen import FrozenMission

    return FrozenMission.from_dict(data)


def _evaluator_spec(data: Any) -> EvaluatorSpec:
    """A run's frozen evaluator, decoded when first read: `status` listing runs reads its
    direction alone (`RunRecord.direction`), without the contract's module and record class."""
    from autoresearch.contracts.evaluator_spec import EvaluatorSpec

    return EvaluatorSpec.from_dict(mapping(data))


def _loop_settings(data: Any) -> LoopSettings:
    """A run's loop settings, decoded when first read: `status` listing runs does without
    them and their contract."""
    from autoresearch.contracts.loop import LoopSettings

    return LoopSettings.from_dict(data)


def decoded_whole(run: RunRecord) -> RunRecord:
    """`run` with every field decoded at its first read decoded now (its frozen evaluator,
    mission and loop): a command that acts on a run refuses a damaged one here, before its
    first effect, not half-way through (review11b: `continue` had reopened a run it then
    refused, `clean A B` cleaned A and refused B)."""
    _ = run.evaluator, run.sandbox, run.loop_settings
    return run


records.decoded_later(RunRecord, "evaluator", _evaluator_spec)
records.decoded_later(RunRecord, "sandbox", _frozen_mission)
records.decoded_later(RunRecord, "loop", _loop_settings)


_RUNS = Codec(
    {"evaluator": "evaluator_json", "sandbox": "sandbox_json", "loop": "loop_json"},
    enums={"status": RunStatus, "phase": Phase, "keep_policy": KeepPolicy},
    later=frozenset({"evaluator", "sandbox", "loop"}),
    table="runs",
    keys=("run_id",),
)


# --- runs ----------------------------------------------------------------------------------


def insert_run(conn: sqlite3.Connection, run: RunRecord) -> None:
    records.insert(conn, "runs", _RUNS.record_columns(run))


def update_run(conn: sqlite3.Connection, run_id: str, **changes: Any) -> None:
    """Update columns of a run (JSON fields by their record name); stamps updated_at."""
    records.stamped_update(conn, _RUNS, (run_id,), changes)


def get_run(journal: Journal, run_id: str) -> RunRecord | None:
    row = journal.row("SELECT * FROM runs WHERE run_id = ?", (run_id,))
    return None if row is None else _RUNS.record(RunRecord, row)


def get_run_in(conn: sqlite3.Connection, run_id: str) -> RunRecord | None:
    """A run read inside an open transaction (for check-then-write without a race)."""
    row = conn.execute("SELECT * FROM runs WHERE run_id = ?", (run_id,)).fetchone()
    return None if row is None else _RUNS.record(RunRecord, row)


def list_runs(journal: Journal, last: int | None = None) -> list[RunRecord]:
    """Every run, oldest first; only the newest `last` when given (0: none)."""
    if last is None:
        rows = journal.rows("SELECT * FROM runs ORDER BY created_at, run_id")
    else:
        rows = journal.rows(
            "SELECT * FROM runs ORDER BY created_at DESC, run_id DESC LIMIT ?", (last,)
        )[::-1]
    return [_RUNS.record(RunRecord, r) for r in rows]


def active_run_ids(conn: sqlite3.Connection) -> list[str]:
    """Non-terminal runs (read inside a transaction so that the check is race-free)."""
    rows = conn.execute(
        "SELECT run_id FROM runs WHERE status = ? ORDER BY created_at", (RunStatus.RUNNING,)
    )
    return [r[0] for r in rows]


def run_exists(conn: sqlite3.Connection, run_id: str) -> bool:
    return conn.execute("SELECT 1 FROM runs WHERE run_id = ?", (run_id,)).fetchone() is not None


def delete_run(conn: sqlite3.Connection, run_id: str) -> None:
    """Forget a run whose prepare failed before anything was recorded."""
    for table in ("evaluations", "iterations", "runs"):
        conn.execute(f"DELETE FROM {table} WHERE run_id = ?", (run_id,))


# --- iterations (aggregates; the rows as records are journal/iteration_records.py) ---------


def first_measured_tree(journal: Journal, run_id: str, tree: str) -> int | None:
    """The earliest recorded iteration whose evaluator measured `tree` (the novelty rule's
    lookup: one range of the index iterations_tree), or None."""
    row = journal.row(
        "SELECT MIN(iteration) FROM iterations INDEXED BY iterations_tree "
        "WHERE run_id = ? AND candidate_tree = ? AND evaluator_json IS NOT NULL AND state != ?",
        (run_id, tree, EVALUATING),
    )
    return None if row is None or row[0] is None else int(row[0])


def measured_without_tree(journal: Journal, run_id: str, limit: int) -> list[tuple[int, str]]:
    """(iteration, candidate commit) of up to `limit` measured iterations whose tree was never
    looked up: rows older than the column, baselines (the partial index iterations_tree_unknown
    holds only them)."""
    rows = journal.rows(
        "SELECT iteration, COALESCE(candidate_commit, '') FROM iterations "
        "INDEXED BY iterations_tree_unknown WHERE run_id = ? AND candidate_tree IS NULL "
        "AND evaluator_json IS NOT NULL ORDER BY iteration LIMIT ?",
        (run_id, limit),
    )
    return [(int(r[0]), str(r[1])) for r in rows]


def set_trees(conn: sqlite3.Connection, run_id: str, found: dict[int, str]) -> None:
    """Record the trees looked up for iterations (`''`: the commit no longer resolves)."""
    conn.executemany(
        "UPDATE iterations SET candidate_tree = ? WHERE run_id = ? AND iteration = ?",
        [(tree, run_id, iteration) for iteration, tree in found.items()],
    )


def iteration_rows(journal: Journal, run_id: str, after: int, upto: int) -> int:
    """How many iteration rows, in any state, are numbered above `after` and up to `upto`
    (from the primary key's index alone: an incremental reader's cheap check that nothing
    below its watermark appeared or went away)."""
    row = journal.row(
        "SELECT COUNT(*) FROM iterations WHERE run_id = ? AND iteration > ? AND iteration <= ?",
        (run_id, after, upto),
    )
    return int(row[0]) if row is not None else 0


def decision_counts(journal: Journal, run_id: str) -> dict[str, int]:
    """How many iterations ended with each decision (the baseline not counted)."""
    rows = journal.rows(
        "SELECT decision, COUNT(*) FROM iterations WHERE run_id = ? AND kind = ? "
        "AND state != ? GROUP BY decision",
        (run_id, IterationKind.ITERATION, EVALUATING),
    )
    return {str(r[0]): int(r[1]) for r in rows}


def artifact_judged(journal: Journal, run_id: str, sha256: str) -> bool:
    """Whether an iteration of the run recorded the artifact with this digest."""
    row = journal.row(
        "SELECT 1 FROM iterations WHERE run_id = ? AND artifact_sha256 = ? AND state != ? LIMIT 1",
        (run_id, sha256, EVALUATING),
    )
    return row is not None


# a NamedTuple, as TriedCandidate: `status` imports this module
class LaneTotals(NamedTuple):
    """What one lane's recorded sessions came to."""

    iterations: int  # sessions judged
    keeps: int
    cost_usd: float | None
    tokens: int  # input + output
    last_iteration: int | None = None  # the last one judged (the journal's, never a copy)


# What sessions spent, summed over the iterations a query selects: the agents' recorded cost
# (NULL when none reported one) and input + output tokens (a session that reported none counts
# 0). The budget (`spend`) and the lanes' totals (LANE_TOTALS_SQL) sum the same way.
COST_SQL = "SUM(json_extract(agent_json, '$.cost_usd'))"
TOKENS_SQL = (
    "SUM(COALESCE(json_extract(agent_json, '$.input_tokens'), 0) + "
    "COALESCE(json_extract(agent_json, '$.output_tokens'), 0))"
)

# Per lane of a run: sessions judged, keeps, agent cost and tokens, the last judged; the
# parameters are (run_id, kind, state) after KEEP (journal/lanes.lanes_judged joins it).
LANE_TOTALS_SQL = (
    "SELECT lane, COUNT(*) AS judged, SUM(decision = ?) AS keeps, "
    f"{COST_SQL} AS cost_usd, {TOKENS_SQL} AS tokens, "
    "MAX(iteration) AS last_judged "
    "FROM iterations WHERE run_id = ? AND kind = ? AND state != ? GROUP BY lane"
)
LANE_TOTALS_PARAMS = (DecisionKind.KEEP, IterationKind.ITERATION, EVALUATING)


def lane_totals_of(row: sqlite3.Row) -> LaneTotals:
    """A row of LANE_TOTALS_SQL's columns (NULL where a lane has judged nothing)."""
    last = row["last_judged"]
    return LaneTotals(
        int(row["judged"] or 0), int(row["keeps"] or 0), row["cost_usd"],
        int(row["tokens"] or 0), None if last is None else int(last),
    )  # fmt: skip


def spend(journal: Journal, run_id: str) -> tuple[float, int]:
    """(agent cost in USD, input + output tokens) over the run's recorded sessions."""
    row = journal.row(
        f"SELECT {COST_SQL}, {TOKENS_SQL} FROM iterations WHERE run_id = ? AND state != ?",
        (run_id, EVALUATING),
    )
    return (float(row[0] or 0.0), int(row[1] or 0)) if row is not None else (0.0, 0)


def trailing_decisions(
    journal: Journal, run_id: str, limit: int, after: int = 0
) -> list[DecisionKind]:
    """Decisions of the last `limit` iterations numbered above `after`, newest first."""
    rows = journal.rows(
        "SELECT decision FROM iterations WHERE run_id = ? AND kind = ? AND state != ? "
        "AND iteration > ? ORDER BY iteration DESC LIMIT ?",
        (run_id, IterationKind.ITERATION, EVALUATING, after, limit),
    )
    return [DecisionKind(r[0]) for r in rows]


def kept_since(journal: Journal, run_id: str, after: int) -> bool:
    """Whether an iteration numbered above `after` was kept."""
    rows = journal.rows(
        "SELECT 1 FROM iterations WHERE run_id = ? AND iteration > ? AND decision = ? LIMIT 1",
        (run_id, after, DecisionKind.KEEP),
    )
    return bool(rows)


def kept_commits(journal: Journal, run_id: str) -> list[str]:
    """The commits the run kept, in the order it kept them (the baseline not among them)."""
    rows = journal.rows(
        "SELECT kept_commit FROM iterations WHERE run_id = ? AND decision = ? "
        "AND kept_commit IS NOT NULL ORDER BY iteration",
        (run_id, DecisionKind.KEEP),
    )
    return [str(r[0]) for r in rows]


def kept_scores(journal: Journal, run_id: str) -> list[float]:
    """The scores of kept iterations and of a passing baseline (states.best_of picks one)."""
    rows = journal.rows(
        "SELECT e.score FROM evaluations e JOIN iterations i "
        "ON e.run_id = i.run_id AND e.iteration = i.iteration "
        "WHERE e.run_id = ? AND e.score IS NOT NULL AND e.status = ? "
        "AND i.decision IN (?, ?)",
        (run_id, EvalStatus.PASS, DecisionKind.KEEP, DecisionKind.BASELINE),
    )
    return [float(r[0]) for r in rows]


def baseline_score(journal: Journal, run_id: str, commit: str | None = None) -> float | None:
    """The mean of the baseline commit's calibration readings (a run recorded before readings
    had roles: its first passing baseline evaluation)."""
    row = journal.row(
        "SELECT avg(score) FROM evaluations WHERE run_id = ? AND iteration = 0 "
        "AND status = ? AND role = ? AND commit_sha = ?",
        (run_id, EvalStatus.PASS, Role.BASELINE, commit),
    )
    if row is not None and row[0] is not None:
        return float(row[0])
    row = journal.row(
        "SELECT score FROM evaluations WHERE run_id = ? AND iteration = 0 AND status = ? "
        "ORDER BY id LIMIT 1",
        (run_id, EvalStatus.PASS),
    )
    return None if row is None or row[0] is None else float(row[0])


# --- evaluations ---------------------------------------------------------------------------


def insert_evaluation(
    conn: sqlite3.Connection,
    run_id: str,
    iteration: int,
    purpose: EvalPurpose,
    record: EvaluationRecord,
    role: Role | None = None,
    commit: str | None = None,
) -> int:
    """One evaluation row: its columns are the record's §2 values (an error's pass and score
    are NULL, as its to_dict leaves them out), record_json its to_dict."""
    passed = record.reported_pass
    cur = conn.execute(
        "INSERT INTO evaluations (run_id, iteration, purpose, status, pass, score, exit_code, "
        "timed_out, duration_ms, log_file, record_json, created_at, role, commit_sha) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            run_id,
            iteration,
            purpose,
            record.status,
            None if passed is None else int(passed),
            record.reported_score,
            record.exit_code,
            int(record.timed_out),
            int(record.duration_ms),
            record.log_file,
            json.dumps(record.to_dict()),
            utc_now_iso(),
            role,
            commit,
        ),
    )
    return int(cur.lastrowid or 0)


# a NamedTuple, as TriedCandidate: `status` imports this module, and builds one per reading
# (made in about half the time of a frozen dataclass, which sets each field in turn)
class Reading(NamedTuple):
    """One passing, scored evaluation as the statistics see it."""

    iteration: int
    role: Role
    commit: str
    score: float


# Each role by its stored value: `status` turns every reading of a run into a Reading, and an
# enum's own lookup by value costs a call each (the enum columns were checked at open: a value
# no version wrote still fails, in Role's own words)
_ROLES: dict[object, Role] = {role.value: role for role in Role}


def _readings(rows: Iterable[Sequence[Any]]) -> list[Reading]:
    return [
        Reading(int(r[0]), _ROLES.get(r[1]) or Role(r[1]), str(r[2]), float(r[3])) for r in rows
    ]


def readings(journal: Journal, run_id: str, commit: str | None = None) -> list[Reading]:
    """Passing scored readings of the run (of one commit), oldest first."""
    sql = (
        "SELECT iteration, role, commit_sha, score FROM evaluations WHERE run_id = ? "
        "AND status = ? AND score IS NOT NULL AND commit_sha IS NOT NULL"
    )
    args: tuple[Any, ...] = (run_id, EvalStatus.PASS)
    if commit is not None:
        sql += " AND commit_sha = ?"
        args += (commit,)
    rows = journal.rows(sql + " ORDER BY id", args)
    return _readings(rows)


def readings_since(journal: Journal, run_id: str, after: int) -> tuple[list[Reading], int]:
    """The run's passing scored readings with an evaluation id above `after`, oldest first,
    and the highest evaluation id in the journal (any run's: the next call's `after`).

    Evaluation rows are only ever appended (delete_iteration removes an undecided iteration,
    which has none), so a caller that keeps what it read asks only for the rows added since:
    past the first read the rowid range alone finds them (NOT INDEXED: the run_id indexes
    would walk every row of the run), whatever the run's size."""
    top = journal.row("SELECT max(id) FROM evaluations")
    upto = int(top[0]) if top is not None and top[0] is not None else 0
    if upto <= after:
        return [], upto
    table = "evaluations" if after == 0 else "evaluations NOT INDEXED"
    rows = journal.rows(
        f"SELECT iteration, role, commit_sha, score FROM {table} WHERE id > ? AND id <= ? "
        "AND run_id = ? AND status = ? AND score IS NOT NULL AND commit_sha IS NOT NULL "
        "ORDER BY id",
        (after, upto, run_id, EvalStatus.PASS),
    )
    return _readings(rows), upto


def earlier_runs_of_mission(journal: Journal, run: RunRecord, limit: int) -> list[RunRecord]:
    """Up to `limit` runs of `run`'s mission (its slug) created before it, newest first (what
    the memory across runs digests)."""
    rows = journal.rows(
        "SELECT * FROM runs WHERE mission_slug = ? AND run_id != ? "
        "AND (created_at < ? OR (created_at = ? AND run_id < ?)) "
        "ORDER BY created_at DESC, run_id DESC LIMIT ?",
        (run.mission_slug, run.run_id, run.created_at, run.created_at, run.run_id, limit),
    )
    return [_RUNS.record(RunRecord, r) for r in rows]
