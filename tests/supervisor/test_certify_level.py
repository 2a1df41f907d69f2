"""certify says when the level moved while it read (#34): its per-commit means then mix two
levels, and the paired change is what to trust (pure, a table)."""

from __future__ import annotations

import pytest

from autoresearch.noise import Interval
from autoresearch.states import Direction
from autoresearch.supervisor.certify import (
    MSG_LEVEL_MOVED,
    Certification,
    Measured,
    certification_lines,
    level_moved,
)

MOVED = MSG_LEVEL_MOVED.split("{")[0]


def certification(baseline: list[float], spread: float, same: bool = False) -> Certification:
    """A certification whose baseline read `baseline` round by round, the final commit 10 more."""
    final = [b + 10 for b in baseline]
    mean = sum(baseline) / len(baseline)
    return Certification(
        run_id="r",
        repeats=len(baseline),
        direction=Direction.HIGHER,
        failed_readings=0,
        spread=spread,
        baseline=Measured(
            "b" * 40, baseline, Interval(mean, mean - 1.2, mean + 1.2, len(baseline))
        ),
        final=Measured("f" * 40, final, None),
        improvement=Interval(10.0, 9.5, 10.5, len(baseline)),
        significant=True,
        same_commit=same,
        baseline_mean=mean,
    )


@pytest.mark.parametrize(
    ("baseline", "spread", "same", "said"),
    [
        ([5.0, 5.2, -5.1, -4.9], 0.5, False, "the baseline read 5.0 in the first round and -4.9 in the last"),
        ([5.0, 5.2, 4.9, 6.3], 0.5, False, None),  # 1.3 apart: within 2·√2 × 0.5
        ([5.0, 5.2, 4.9, 6.5], 0.5, False, "the baseline read 5.0 in the first round and 6.5 in the last"),
        ([5.0], 0.5, False, None),  # one round: nothing to compare
        ([5.0, -5.0], 0.5, True, None),  # nothing kept: no paired change to trust instead
        ([3.0, 3.0, 4.0], 0.0, False, "the baseline read 3.0 in the first round and 4.0 in the last"),
    ],
)  # fmt: skip
def test_a_baseline_that_moved_between_its_first_and_last_rounds_is_said(
    baseline: list[float], spread: float, same: bool, said: str | None
) -> None:
    found = level_moved(certification(baseline, spread, same))
    if said is None:
        assert found is None
    else:
        assert found is not None and found.startswith(said + ": the machine's speed moved")


def test_the_line_follows_the_improvement_in_certifications_lines() -> None:
    lines = certification_lines(certification([5.0, 5.2, -5.1, -4.9], 0.5))
    assert lines[0].startswith("improvement +10")
    assert lines[1].startswith(f"  {MOVED}") and lines[1].endswith("what to trust")
    assert all(MOVED not in line for line in certification_lines(certification([5.0, 5.1], 0.5)))
