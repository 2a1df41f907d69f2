"""A run's totals: time, tokens, cost and evaluator errors over its sessions and evaluations.

Apart from journal/runs.py: the end of a loop and a run's details read them, and `status`
listing the runs (which imports runs.py) builds no class it does not use (issue 36: a frozen
dataclass compiles its methods at import; tests/test_import_graph.py counts them).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from autoresearch.clock import seconds_between
from autoresearch.journal.db import Journal
from autoresearch.journal.runs import EVALUATING, RunRecord
from autoresearch.jsonshape import json_shape
from autoresearch.states import EvalStatus, IterationKind


@dataclass(frozen=True)
class RunTotals:
    """Sums over a run's sessions and evaluations, and how long the run has existed."""

    agent_seconds: float
    evaluator_seconds: float
    input_tokens: int | None  # None: no session reported tokens
    output_tokens: int | None
    cost_usd: float | None  # None: no session reported a cost
    evaluator_errors: int  # iterations whose evaluator crashed or timed out
    wall_seconds: float  # since the run was created, until it completed (or now)

    def to_dict(self) -> dict[str, Any]:
        return json_shape(self)


def run_totals(journal: Journal, run: RunRecord) -> RunTotals:
    """Time, tokens, cost and evaluator errors over a run's sessions and evaluations."""
    agent = journal.row(
        "SELECT SUM(json_extract(agent_json, '$.duration_ms')), "
        "SUM(json_extract(agent_json, '$.input_tokens')), "
        "SUM(json_extract(agent_json, '$.output_tokens')), "
        "SUM(json_extract(agent_json, '$.cost_usd')), "
        "SUM(kind = ? AND json_extract(evaluator_json, '$.status') = ?) "
        "FROM iterations WHERE run_id = ? AND state != ?",
        (IterationKind.ITERATION, EvalStatus.ERROR, run.run_id, EVALUATING),
    )
    evaluation = journal.row(
        "SELECT SUM(duration_ms) FROM evaluations WHERE run_id = ?", (run.run_id,)
    )
    a = tuple(agent) if agent is not None else (None,) * 5
    return RunTotals(
        agent_seconds=(a[0] or 0) / 1000,
        evaluator_seconds=((evaluation[0] if evaluation else None) or 0) / 1000,
        input_tokens=a[1],
        output_tokens=a[2],
        cost_usd=a[3],
        evaluator_errors=int(a[4] or 0),
        wall_seconds=seconds_between(run.created_at, run.completed_at),
    )
