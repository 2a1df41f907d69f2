"""The few lines `autoresearch report` prints (pure)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from autoresearch.supervisor.estimates import text

if TYPE_CHECKING:
    from autoresearch.report import ReportResult


def summary_lines(result: ReportResult) -> str:
    d = result.to_dict()
    counts = d["counts"]
    rows = [
        ("report", d["report_file"]),
        ("plot", d["plot_file"] or "(none)"),
        (
            "status",
            d["status"] + ("  (live: run the command again to refresh)" if d["live"] else ""),
        ),
        (
            d["metric"],
            f"{text(d['baseline'], d['baseline_interval']) or 'n/a'} → "
            f"{text(d['best'], d['best_interval']) or 'n/a'} "
            f"({d['direction']} is better)",
        ),
        (
            "outcomes",
            f"{counts['kept']} kept, {counts['discarded']} discarded, {counts['error']} error, "
            f"{counts['other']} other",
        ),
    ]
    width = max(len(k) for k, _ in rows)
    return "\n".join(f"{k:<{width}}  {v}" for k, v in rows)
