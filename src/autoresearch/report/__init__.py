"""Reports of runs and experiment sessions: progress.png and a self-contained report.html.

Built from the journal at the moment of the call (a run may still be going), written
atomically into the run's (or session's) `report/` folder or a folder the caller names.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import cast

from autoresearch import settings
from autoresearch.errors import NotFoundError
from autoresearch.fsutil import atomic_write_bytes, atomic_write_text
from autoresearch.journal import sessions
from autoresearch.jsonshape import json_field, json_shape
from autoresearch.paths import PLOT_FILE, REPORT_FILE, RepoPaths, session_paths
from autoresearch.redact import current
from autoresearch.report import collect, html, plot
from autoresearch.report.model import Outcome, ReportData, baseline_value, best_value, improvement
from autoresearch.supervisor.run_read import read_run


def _what_and_state(data: object) -> dict[str, object]:
    """What the report is of and how the run stands: the keys before where it went."""
    d = cast(ReportData, data)
    return {"kind": d.kind, "id": d.ident, "status": d.status_line, "live": d.live}


@dataclass(frozen=True)
class ReportResult:
    """Where the report went and its headline numbers (after where it went, in `to_dict`)."""

    data: ReportData = field(metadata=json_field(inline=True, convert=_what_and_state))
    report_file: Path
    plot_file: Path | None
    warning: str | None = None

    def to_dict(self) -> dict[str, object]:
        return json_shape(self)

    def json_extra(self) -> dict[str, object]:
        """The headline numbers, computed from the report's data as the report shows them."""
        d, found = self.data, improvement(self.data)
        return {
            "metric": d.metric,
            "direction": d.direction,
            "baseline": baseline_value(d),
            "best": best_value(d),
            "baseline_interval": d.baseline_estimate,
            "best_interval": d.best_estimate,
            "improvement": None if found is None else found.change,
            "counts": {o.value: d.count(o) for o in Outcome},
            "kept_commits": [k.commit for k in d.kept],
            "generated_at": d.generated_at,
        }


def run_report_file(repo_root: Path, run_id: str) -> Path:
    """Where `autoresearch report RUN_ID` writes by default."""
    return RepoPaths(repo_root).run(run_id).report / REPORT_FILE


def build_run_report(repo_root: Path, run_id: str, out: Path | None = None) -> ReportResult:
    """Write the report of a supervised run (running or finished)."""
    data, folder = run_data(repo_root, run_id)
    return write(data, out or folder)


def run_data(repo_root: Path, run_id: str) -> tuple[ReportData, Path]:
    """A supervised run's report model as the journal has it now, and its report folder."""
    repo = RepoPaths(repo_root)
    journal, run = read_run(repo_root, run_id)
    with journal:
        return collect.run_report(journal, repo, run), repo.run(run_id).report


def build_session_report(
    start: Path, session_id: int | None = None, out: Path | None = None
) -> ReportResult:
    """Write the report of an experiment session: the one bound to the checkout around
    `start`, or `session_id` (open or closed). It shows the session's current segment."""
    data, folder = session_data(start, session_id)
    return write(data, out or folder)


def session_data(start: Path, session_id: int | None = None) -> tuple[ReportData, Path]:
    """An experiment session's report model as the journal has it now, and its report folder."""
    from autoresearch.experiments.context import open_context

    with open_context(start, "read") as ctx:
        if session_id is None:
            session = ctx.bound_session()
        else:
            found = sessions.get_session(ctx.journal, session_id)
            if found is None:
                raise NotFoundError(f"unknown session: #{session_id}")
            session = found
        data = collect.session_report(ctx.journal, ctx.root, session)
    return data, session_paths(ctx.root, session.session_id).report


def write(data: ReportData, out: Path) -> ReportResult:
    """Draw the plot (when matplotlib is there) and write both files atomically."""
    out = out.resolve()
    data = redacted(data)
    image, warning = draw(data)
    plot_file = None
    if image is not None:
        plot_file = out / PLOT_FILE
        atomic_write_bytes(plot_file, image.png)
    page = html.render(data, image.png if image else None, warning or "", out)
    atomic_write_text(out / REPORT_FILE, page)
    return ReportResult(data, out / REPORT_FILE, plot_file, warning)


def redacted(data: ReportData) -> ReportData:
    """Every text a person reads, secrets masked (autoresearch.redact): the report is shared."""
    r = current()
    rows = tuple(
        replace(
            row,
            description=r.text(row.description),
            reason=r.text(row.reason),
            notes=tuple(r.text(n) for n in row.notes),
        )
        for row in data.rows
    )
    kept = tuple(
        replace(k, description=r.text(k.description), diff=r.text(k.diff)) for k in data.kept
    )
    facts = tuple((k, r.text(v)) for k, v in data.facts)
    return replace(data, rows=rows, kept=kept, facts=facts, title=r.text(data.title))


def draw(data: ReportData) -> tuple[plot.PlotImage | None, str | None]:
    """The plot, or None and why not (matplotlib is optional; no plot and no warning when
    AUTORESEARCH_REPORT_PLOT=0 leaves it out)."""
    if not settings.report_plot():
        return None, None
    if not plot.available():
        return None, f"no plot: {plot.INSTALL_HINT}"
    return plot.render(data), None


__all__ = [
    "ReportResult",
    "build_run_report",
    "build_session_report",
    "draw",
    "redacted",
    "run_data",
    "run_report_file",
    "session_data",
]
