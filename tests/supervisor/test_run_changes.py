"""What a decision writes of its run (record.RunChanges.columns): the columns step and prepare
wrote as a dict before, table-tested. A commit left None keeps its column; the kept score is
written only when set, None included (a baseline without a score keeps none)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from autoresearch.supervisor.record import RunChanges

CASES: list[tuple[RunChanges, dict[str, Any]]] = [
    (RunChanges(), {}),  # a validation failure, an unchanged candidate, a touched harness
    (RunChanges(latest_candidate_commit="c"), {"latest_candidate_commit": "c"}),  # a discard
    (
        RunChanges(latest_candidate_commit="c").scored(None),  # a noise-aware discard
        {"latest_candidate_commit": "c", "last_kept_score": None},
    ),
    (
        replace(RunChanges(latest_candidate_commit="c").scored(2.5), last_kept_commit="c"),
        {"latest_candidate_commit": "c", "last_kept_commit": "c", "last_kept_score": 2.5},
    ),
    (
        RunChanges(latest_candidate_commit="c").scored(2.5).scored(1.0),  # checks failed
        {"latest_candidate_commit": "c", "last_kept_score": 1.0},
    ),
    (
        RunChanges(baseline_commit="b", last_kept_commit="b").scored(None),  # pass_only baseline
        {"baseline_commit": "b", "last_kept_commit": "b", "last_kept_score": None},
    ),
]


@pytest.mark.parametrize(("changes", "columns"), CASES)
def test_the_columns_a_decision_writes(changes: RunChanges, columns: dict[str, Any]) -> None:
    assert changes.columns() == columns
