"""The targets of issue 36 as one run of the bench measured them, gathered from its sections
and printed together at its end (bench/run.py, bench/lanes.py): what was measured, the limit,
the load average as it was measured, and whether this run met it.

A verdict is this run's, on this machine and under its load: the issue's targets hold "on a
quiet machine", so each is printed beside the load. The sections print the figures behind
each verdict above it (spreads, rounds, the reference trees); a verdict is always about this
tree, the one the bench imports. Nothing here is a pass/fail test.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Verdict:
    """One target: `measured` against `limit` (at most, or at least), and the load then."""

    what: str
    measured: float
    limit: float
    at_most: bool
    unit: str
    load: float

    @property
    def met(self) -> bool:
        return self.measured <= self.limit if self.at_most else self.measured >= self.limit


def at_most(what: str, measured: float, limit: float, unit: str = "x") -> Verdict:
    """A target that `measured` stays within, measured now (the load is read here)."""
    return Verdict(what, measured, limit, True, unit, os.getloadavg()[0])


def at_least(what: str, measured: float, limit: float, unit: str = "x") -> Verdict:
    """A target that `measured` reaches, measured now (the load is read here)."""
    return Verdict(what, measured, limit, False, unit, os.getloadavg()[0])


def lines(verdicts: Sequence[Verdict]) -> list[str]:
    """The table of `verdicts` and a last line counting those met (nothing: no verdict)."""
    if not verdicts:
        return []
    found = [
        "",
        "Targets of issue 36, this tree, as this run measured them (figures above):",
        f"{'target':<58} {'measured':>10} {'limit':>10} {'load':>5}  met",
    ]
    for v in verdicts:
        limit = f"{'<=' if v.at_most else '>='} {v.limit:g}{v.unit}"
        found.append(
            f"{v.what:<58} {f'{v.measured:.2f}{v.unit}':>10} {limit:>10} {v.load:>5.1f}  "
            f"{'yes' if v.met else 'NO'}"
        )
    missed = [v.what for v in verdicts if not v.met]
    found.append(
        f"{len(verdicts) - len(missed)} of {len(verdicts)} met"
        + (f"; not met: {'; '.join(missed)}" if missed else "")
    )
    return found


def print_verdicts(verdicts: Sequence[Verdict]) -> None:
    for line in lines(verdicts):
        print(line)
