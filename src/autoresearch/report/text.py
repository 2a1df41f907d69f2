"""The few lines `autoresearch report` prints (pure), from the report's model."""

from __future__ import annotations

from typing import TYPE_CHECKING

from autoresearch.report.model import (
    Outcome,
    ReportData,
    baseline_value,
    best_value,
    improvement,
)
from autoresearch.supervisor.estimates import text

if TYPE_CHECKING:
    from autoresearch.report import ReportResult

LIVE_HINT = "  (live: run the command again to refresh)"


def summary_lines(result: ReportResult) -> str:
    d = result.data
    baseline = text(baseline_value(d), d.baseline_estimate) or "n/a"
    best = text(best_value(d), d.best_estimate) or "n/a"
    rows = [
        ("report", str(result.report_file)),
        ("plot", "(none)" if result.plot_file is None else str(result.plot_file)),
        ("status", f"{d.status}{LIVE_HINT if d.live else ''}"),
        (d.metric, f"{baseline} → {best} ({d.direction} is better)"),
        *_improvement(d),
        (
            "outcomes",
            f"{d.count(Outcome.KEPT)} kept, {d.count(Outcome.DISCARDED)} discarded, "
            f"{d.count(Outcome.ERROR)} error, {d.count(Outcome.OTHER)} other",
        ),
    ]
    width = max(len(k) for k, _ in rows)
    return "\n".join(f"{k:<{width}}  {v}" for k, v in rows)


def _improvement(d: ReportData) -> list[tuple[str, str]]:
    """The improvement's row when its readings vary (paired or not, it says which); a
    deterministic evaluator's baseline → best line says it exactly."""
    found = improvement(d)
    return [("improvement", found.text())] if found is not None and found.varies else []
