"""bench/targets.py: a target is met on the right side of its limit, and the table says which
were not (the bench's verdicts; no timing is asserted here)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

# loaded from its file: bench/ on sys.path would put its scripts (run, sandbox, trust…) first
_SPEC = importlib.util.spec_from_file_location(
    "bench_targets", Path(__file__).resolve().parents[1] / "bench" / "targets.py"
)
assert _SPEC is not None and _SPEC.loader is not None
targets = sys.modules[_SPEC.name] = importlib.util.module_from_spec(_SPEC)  # dataclasses look
_SPEC.loader.exec_module(targets)  # their module up by name


@pytest.mark.parametrize(
    ("at_most", "measured", "limit", "met"),
    [
        (True, 1.49, 1.5, True),
        (True, 1.5, 1.5, True),  # "within 1.5x": the limit itself meets it
        (True, 1.51, 1.5, False),
        (False, 3.61, 3.6, True),
        (False, 3.6, 3.6, True),
        (False, 3.59, 3.6, False),
    ],
)
def test_a_target_is_met_on_its_side_of_the_limit(
    at_most: bool, measured: float, limit: float, met: bool
) -> None:
    made = targets.at_most if at_most else targets.at_least
    assert made("t", measured, limit).met is met


def test_the_table_names_each_target_missed_and_counts_the_met() -> None:
    found = targets.lines(
        [
            targets.at_most("status: CPU / import click", 2.27, 2.0),
            targets.at_least("4 Ray lanes / 1 local lane", 3.66, 3.6),
            targets.at_most("mcp answers initialize", 0.49, 0.5, " s"),
        ]
    )
    assert found[1].startswith("Targets of issue 36")
    rows = {line.split("  ")[0]: line for line in found[3:-1]}
    assert rows["status: CPU / import click"].endswith("NO")
    assert "<= 2x" in rows["status: CPU / import click"]
    assert rows["4 Ray lanes / 1 local lane"].endswith("yes") and ">= 3.6x" in found[4]
    assert "0.49 s" in found[5] and "<= 0.5 s" in found[5]
    assert found[-1] == "2 of 3 met; not met: status: CPU / import click"


def test_no_verdict_prints_no_table() -> None:
    assert targets.lines([]) == []
