"""progress.png: every evaluation as a dot, the best kept score as a step line (matplotlib).

matplotlib is an optional dependency (the `report` extra): `available()` says whether it can be
imported, and the report is written without its plot when it cannot. The figure is drawn with
the Agg canvas (no display, no GUI toolkit), at a fixed size, so that the pixel position of
every dot is known and returned with the image.
"""

from __future__ import annotations

import io
import math
from dataclasses import dataclass, field
from typing import Any

from autoresearch.report.model import Outcome, ReportData, ReportKind, Row, mean_score
from autoresearch.supervisor.archive import better

WIDTH_IN, HEIGHT_IN, DPI = 13.0, 5.6, 100
COLOURS = {
    Outcome.KEPT: "#1a9641",
    Outcome.DISCARDED: "#a6a6a6",
    Outcome.ERROR: "#d7191c",
    Outcome.BASELINE: "#2b6cb0",
}
BEST_LINE = "#1a9641"
LINEAGE_LINE = "#8c8c8c"
LABEL_CHARS = 42
# Use a log axis when the scores span more than this factor (and are all positive).
LOG_RATIO = 30.0
INSTALL_HINT = "the plot needs matplotlib: pip install 'autoresearch[report]'"


@dataclass(frozen=True)
class PlotImage:
    """The PNG and where each row's mark landed, in image pixels (x right, y down)."""

    png: bytes
    width: int
    height: int
    marks: dict[int, tuple[int, int]] = field(default_factory=dict)
    log_scale: bool = False


def available() -> bool:
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return False
    return True


def use_log_scale(scores: list[float]) -> bool:
    """Log scale when every score is positive and they span more than LOG_RATIO."""
    if len(scores) < 2 or min(scores) <= 0:
        return False
    return max(scores) / min(scores) > LOG_RATIO


def best_steps(data: ReportData) -> tuple[list[float], list[float]]:
    """The step line of the kept score: it moves at the baseline and at every keep (of a
    frontier run, only at a keep that beats the best: a child kept against a lesser parent
    is not the run's best)."""
    xs: list[float] = []
    ys: list[float] = []
    frontier = any(row.parent is not None for row in data.rows)
    for row in data.rows:
        if row.outcome in (Outcome.BASELINE, Outcome.KEPT) and row.score is not None:
            if frontier and ys and not better(mean_score(row), ys[-1], data.direction):
                continue
            xs.append(row.number)
            ys.append(mean_score(row))
    if xs and data.rows:
        xs.append(max(r.number for r in data.rows))
        ys.append(ys[-1])
    return xs, ys


def short(text: str, limit: int = LABEL_CHARS) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def render(data: ReportData) -> PlotImage:
    """Draw the figure; raises ImportError when matplotlib is missing."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(WIDTH_IN, HEIGHT_IN), dpi=DPI)
    FigureCanvasAgg(fig)  # the Agg canvas, whatever backend pyplot would pick
    ax = fig.add_subplot()
    scored = [r for r in data.rows if r.score is not None and math.isfinite(r.score)]
    log = use_log_scale([v for r in scored for v in (r.readings or (r.score or 0.0,))])
    _draw(ax, data, scored, log)
    fig.subplots_adjust(left=0.065, right=0.655, top=0.92, bottom=0.1)
    kept = [r for r in scored if r.outcome is Outcome.KEPT]
    _annotate(ax, kept)
    _panel(fig, ax, data, kept)
    fig.canvas.draw()
    marks = _marks(ax, data, scored, fig.bbox.height)
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=DPI)
    width, height = int(fig.bbox.width), int(fig.bbox.height)
    return PlotImage(buffer.getvalue(), width, height, marks, log)


def _draw(ax: Any, data: ReportData, scored: list[Row], log: bool) -> None:
    if log:
        ax.set_yscale("log")
    unit = f" ({data.unit})" if data.unit else ""
    ax.set_title(
        f"{data.metric} per iteration · {data.direction} is better", loc="left", fontsize=12
    )
    ax.set_xlabel("iteration" if data.kind == ReportKind.RUN else "run")
    ax.set_ylabel(f"{data.metric}{unit}" + (" · log scale" if log else ""))
    ax.grid(True, color="#e6e6e6", linewidth=0.8)
    ax.set_axisbelow(True)
    xs, ys = best_steps(data)
    if xs:
        ax.step(xs, ys, where="post", color=BEST_LINE, linewidth=2, alpha=0.55, label="best kept")
    _intervals(ax, scored)
    _lineage(ax, scored)
    for outcome, size, label in (
        (Outcome.DISCARDED, 30, "discarded"),
        (Outcome.BASELINE, 90, "baseline"),
        (Outcome.KEPT, 70, "kept"),
    ):
        rows = [r for r in scored if r.outcome is outcome]
        if rows:
            marker = "D" if outcome is Outcome.BASELINE else "o"
            ax.scatter(
                [r.number for r in rows],
                [mean_score(r) for r in rows],
                s=size,
                color=COLOURS[outcome],
                marker=marker,
                zorder=4 if outcome is Outcome.DISCARDED else 6,
                label=f"{label} ({len(rows)})",
            )
    _errors(ax, data)
    if data.rows:
        ax.set_xlim(-0.7, max(r.number for r in data.rows) + 0.7)


def _lineage(ax: Any, scored: list[Row]) -> None:
    """A frontier run's lineage: a thin line from each candidate back to the elite its session
    started from."""
    at = {r.number: mean_score(r) for r in scored}
    edges = [(r, r.parent) for r in scored if r.parent is not None and r.parent in at]
    for i, (row, parent) in enumerate(edges):
        ax.plot(
            [parent, row.number], [at[parent], mean_score(row)], color=LINEAGE_LINE,
            linewidth=0.8, alpha=0.6, zorder=2, label="from parent" if i == 0 else None,
        )  # fmt: skip


def _intervals(ax: Any, scored: list[Row]) -> None:
    """A vertical bar over the readings of every row measured more than once."""
    for row in scored:
        if len(row.readings) > 1:
            ax.vlines(
                row.number,
                min(row.readings),
                max(row.readings),
                color=COLOURS.get(row.outcome, "#777777"),
                linewidth=2,
                alpha=0.7,
                zorder=3,
            )


def _errors(ax: Any, data: ReportData) -> None:
    """Errors have no score: a red cross on the bottom edge of the plot."""
    errors = [r.number for r in data.rows if r.outcome is Outcome.ERROR]
    if errors:
        ax.scatter(
            errors,
            [0.03] * len(errors),
            transform=ax.get_xaxis_transform(),
            marker="x",
            s=60,
            linewidths=2,
            color=COLOURS[Outcome.ERROR],
            zorder=5,
            label=f"error, no score ({len(errors)})",
            clip_on=False,
        )


# Tag offsets in points, tried in turn until a tag overlaps no tag placed before it.
_OFFSETS = ((5, 6), (5, -13), (-20, 6), (-20, -13), (5, 16), (5, -23))
PANEL_LINES = 30


def _annotate(ax: Any, kept: list[Row]) -> None:
    """Tag each kept dot with its number (the panel beside the plot says what it was)."""
    renderer = ax.figure.canvas.get_renderer()
    placed: list[Any] = []
    for row in kept:
        tag = None
        for offset in _OFFSETS:
            if tag is not None:
                tag.remove()
            tag = ax.annotate(
                f"#{row.number}",
                (row.number, mean_score(row)),
                xytext=offset,
                textcoords="offset points",
                fontsize=8,
                fontweight="bold",
                color="#14532d",
                zorder=3.5,  # under every dot: a tag never hides a measurement
            )
            if not any(tag.get_window_extent(renderer).overlaps(o) for o in placed):
                break
        if tag is not None:
            placed.append(tag.get_window_extent(renderer))


def _panel(fig: Any, ax: Any, data: ReportData, kept: list[Row]) -> None:
    """The legend, then every kept change with its score and description, right of the plot."""
    handles, _ = ax.get_legend_handles_labels()
    if handles:
        legend = ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1.0), fontsize=9, frameon=False)
        fig.canvas.draw()
        box = legend.get_window_extent().transformed(fig.transFigure.inverted())
        x, y = box.x0 + 0.005, box.y0 - 0.03
    else:  # nothing drawn yet (an empty segment): an empty legend only makes matplotlib warn
        box = ax.get_position()
        x, y = box.x1 + 0.02 * box.width + 0.005, box.y1 - 0.03
    fig.text(x, y, f"kept changes ({len(kept)})", fontsize=9, fontweight="bold", va="top")
    shown = kept if len(kept) <= PANEL_LINES else kept[: PANEL_LINES - 1]
    lines = [f"#{r.number:<4} {num(mean_score(r)):>9}  {short(r.description)}" for r in shown]
    if len(shown) < len(kept):
        lines.append(f"… {len(kept) - len(shown)} more in report.html")
    if not kept:
        lines = ["nothing kept yet"]
    fig.text(
        x,
        y - 0.045,
        "\n".join(lines),
        fontsize=8,
        family="monospace",
        va="top",
        color="#14532d",
        linespacing=1.35,
    )


def num(value: float) -> str:
    return f"{value:.6g}"


def _marks(
    ax: Any, data: ReportData, scored: list[Row], height: float
) -> dict[int, tuple[int, int]]:
    """Pixel centres of every dot and cross (display y is measured from the bottom)."""
    marks: dict[int, tuple[int, int]] = {}
    for row in scored:
        if row.outcome is not Outcome.OTHER and row.outcome is not Outcome.ERROR:
            x, y = ax.transData.transform((row.number, mean_score(row)))
            marks[row.number] = (round(x), round(height - y))
    blend = ax.get_xaxis_transform()
    for row in data.rows:
        if row.outcome is Outcome.ERROR:
            x, y = blend.transform((row.number, 0.03))
            marks[row.number] = (round(x), round(height - y))
    return marks
