"""report.html: one self-contained page (inline style, script and plot; no network), pure.

Every value is escaped. Links to logs and patches are relative to the report's folder, so the
page keeps working when `.autoresearch/` is copied elsewhere as a whole.
"""

from __future__ import annotations

import base64
import os
from datetime import datetime
from html import escape
from pathlib import Path
from urllib.parse import quote

from autoresearch.noise import Interval as Estimate
from autoresearch.report.model import (
    KeptChange,
    Outcome,
    ReportData,
    ReportKind,
    Row,
    Spend,
    baseline_value,
    best_value,
    improvement,
    mean_score,
    total,
    total_tokens,
)
from autoresearch.report.static import SCRIPT, STYLE
from autoresearch.states import Direction, is_better


def num(value: float | None, signed: bool = False) -> str:
    """Six significant digits, the way people read scores; `–` for nothing."""
    if value is None:
        return "–"
    text = f"{value:+.6g}" if signed else f"{value:.6g}"
    return text.replace("-", "−")


def estimated(value: float | None, estimate: Estimate | None) -> str:
    """`9.77 ± 0.47 (n=17)` when the value rests on readings that vary, else `num(value)`."""
    if estimate is None or estimate.half_width == 0:
        return num(value)
    return estimate.text().replace("-", "−")


def duration(seconds: float | None) -> str:
    if seconds is None:
        return "–"
    if seconds < 60:
        return f"{seconds:.1f} s"
    minutes, secs = divmod(round(seconds), 60)
    if minutes < 60:
        return f"{minutes} min {secs} s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes} min"


def wall_seconds(data: ReportData) -> float | None:
    try:
        start = datetime.fromisoformat(data.started_at)
        end = datetime.fromisoformat(data.ended_at or data.generated_at)
    except ValueError:
        return None
    return max(0.0, (end - start).total_seconds())


def href(path: str, base: Path) -> str:
    try:
        rel = os.path.relpath(path, base)
    except ValueError:  # another drive: keep it absolute
        rel = path
    return quote(rel)


def render(data: ReportData, png: bytes | None, plot_note: str, base: Path, live: str = "") -> str:
    """The whole page; `png` is None when the plot could not be drawn (`plot_note` says why).
    `live` is markup after <main> that keeps a served page current (report/serve.py); the
    written report.html has none."""
    parts = [
        _head(data, served=bool(live)),
        _summary(data),
        _plot(png, plot_note),
        _spend(data),
        _facts(data),
        _table(data, base),
        _kept(data.kept),
        f"</main>{live}</body></html>\n",
    ]
    return "".join(parts)


def _head(data: ReportData, served: bool = False) -> str:
    live = ""
    if data.live and data.kind == ReportKind.RUN and served:
        live = '<p class="live">This run is still going: the page follows it as it goes.</p>'
    elif data.live and data.kind == ReportKind.RUN:
        live = (
            '<p class="live">This run is still going: the page shows it as of '
            f"{escape(data.generated_at)}. Rebuild it with "
            f"<code>{escape(data.refresh_hint)}</code>.</p>"
        )
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>autoresearch · {escape(data.title)}</title><style>{STYLE}</style>"
        f"<script>{SCRIPT}</script></head><body><main>"
        f"<header><h1>{escape(data.title)}</h1>"
        f'<p class="sub">{escape(data.kind)} <code>{escape(data.ident)}</code> · '
        f'<span class="status">{escape(data.status_line)}</span> · report of '
        f"{escape(data.generated_at)}</p>{live}</header>"
    )


def _summary(data: ReportData) -> str:
    best = data.best
    cards = [
        (
            "baseline → best",
            f"{estimated(baseline_value(data), data.baseline_estimate)} → "
            f"{estimated(best_value(data), data.best_estimate)}",
            f"{data.metric}, {data.direction} is better"
            + (f" · best at #{best.number}" if best is not None else ""),
        ),
        ("improvement", *_improvement(data)),
        (
            "iterations" if data.kind == ReportKind.RUN else "runs",
            str(len([r for r in data.rows if r.outcome is not Outcome.BASELINE])),
            f"{data.count(Outcome.KEPT)} kept · {data.count(Outcome.DISCARDED)} discarded · "
            f"{data.count(Outcome.ERROR)} errors · {data.count(Outcome.OTHER)} other",
        ),
        (
            "wall time",
            duration(wall_seconds(data)),
            "still running" if data.live else "start to end",
        ),
        ("tokens", _tokens(total_tokens(data.rows)), "as the agents reported them"),
        ("cost", _cost(total(r.cost_usd for r in data.rows)), "as the agents reported it"),
    ]
    html = ['<section class="cards">']
    for title, value, sub in cards:
        html.append(
            f'<div class="card"><h2>{escape(title)}</h2><p class="value">{escape(value)}</p>'
            f'<p class="note">{escape(sub)}</p></div>'
        )
    html.append("</section>")
    return "".join(html)


def _score(row: Row | None) -> float | None:
    return None if row is None or row.score is None else mean_score(row)


def _improvement(data: ReportData) -> tuple[str, str]:
    found = improvement(data)
    if found is None:
        return "–", "no comparable baseline"
    pct = found.percent
    value = num(found.change, signed=True) + (
        f" ({pct:+.1f} %)".replace("-", "−") if pct is not None else ""
    )
    interval = found.interval
    if interval is None:
        return value, "one reading each: no interval"
    how = "paired" if found.paired else "unpaired"
    return value, f"{how}: 95 % interval {num(interval.low, True)} … {num(interval.high, True)}"


def _tokens(value: int | None) -> str:
    return "not reported" if value is None else f"{value:,}"


def _cost(value: float | None) -> str:
    return "not reported" if value is None else f"${value:,.2f}"


def _spend(data: ReportData) -> str:
    tables = []
    for title, spends in (
        ("per agent", data.spend_by("agent")),
        ("per lane", data.spend_by("lane")),
    ):
        if spends:
            tables.append(_spend_table(title, spends))
    return f'<section class="spend">{"".join(tables)}</section>' if tables else ""


def _spend_table(title: str, spends: tuple[Spend, ...]) -> str:
    rows = "".join(
        f"<tr><td>{escape(s.key)}</td><td class=n>{s.sessions}</td><td class=n>{s.keeps}</td>"
        f"<td class=n>{escape(_tokens(s.tokens))}</td>"
        f"<td class=n>{escape(_cost(s.cost_usd))}</td></tr>"
        for s in spends
    )
    return (
        f'<table class="small"><caption>spend {escape(title)}</caption><thead><tr><th>'
        f"{escape(title.split()[-1])}</th><th>sessions</th><th>keeps</th><th>tokens</th><th>cost</th></tr>"
        f"</thead><tbody>{rows}</tbody></table>"
    )


def _facts(data: ReportData) -> str:
    items = "".join(f"<dt>{escape(k)}</dt><dd><code>{escape(v)}</code></dd>" for k, v in data.facts)
    return f'<dl class="facts">{items}</dl>' if items else ""


def _plot(png: bytes | None, note: str) -> str:
    if png is None:
        return f'<section class="plot"><p class="missing">{escape(note)}</p></section>'
    encoded = base64.b64encode(png).decode("ascii")
    return (
        '<section class="plot"><img id="progress" alt="score per iteration: kept in green, '
        f'discarded in grey, errors as red crosses" src="data:image/png;base64,{encoded}">'
        "</section>"
    )


_COLUMNS = ("#", "decision", "score", "Δ best", "description", "why", "agent")


def _table(data: ReportData, base: Path) -> str:
    lanes = any(r.lane for r in data.rows)
    head = [*_COLUMNS, *(("lane",) if lanes else ()), "time", "tokens", "cost", "commit", "files"]
    ths = "".join(
        f'<th scope="col"><button type="button" data-col="{i}">{escape(h)}</button></th>'
        for i, h in enumerate(head)
    )
    body = "".join(
        _row(r, best, lanes, base, data.direction) for r, best in _with_best_before(data)
    )
    filters = "".join(
        f'<button type="button" data-filter="{f}"{" aria-pressed=true" if f == "all" else ""}>'
        f"{f}</button>"
        for f in ("all", "kept", "discarded", "error")
    )
    return (
        f"<section><h2>Every {'iteration' if data.kind == ReportKind.RUN else 'run'}</h2>"
        f'<p class="filters">show: {filters} <span class="hint">click a column to sort</span></p>'
        f'<table id="iterations"><thead><tr>{ths}</tr></thead><tbody>{body}</tbody></table>'
        "</section>"
    )


def _with_best_before(data: ReportData) -> list[tuple[Row, float | None]]:
    """Each row with the best kept score it was compared against."""
    out: list[tuple[Row, float | None]] = []
    best: float | None = None
    for row in data.rows:
        out.append((row, best))
        if row.outcome in (Outcome.BASELINE, Outcome.KEPT) and row.score is not None:
            best = mean_score(row)
    return out


def _row(row: Row, best: float | None, lanes: bool, base: Path, direction: Direction) -> str:
    score = _score(row)
    delta = None if score is None or best is None else score - best
    readings = f" ({len(row.readings)} readings)" if len(row.readings) > 1 else ""
    shown = num(score) + readings
    if row.estimate is not None and row.estimate.half_width > 0:
        shown = estimated(score, row.estimate)
    why = escape(row.reason)
    if row.notes:
        items = "".join(f"<li>{escape(n)}</li>" for n in row.notes)
        why += f"<details><summary>notes ({len(row.notes)})</summary><ul>{items}</ul></details>"
    cells = [
        _td(str(row.number), row.number),
        f'<td><span class="pill {row.outcome.value}">{escape(row.decision or "")}</span></td>',
        _td(shown, score),
        _td(num(delta, signed=True), delta, _trend(direction, score, best)),
        f'<td class="desc">{escape(row.description)}</td>',
        f'<td class="why">{why}</td>',
        f"<td>{escape(row.agent or '')}</td>",
        *([f"<td>{escape(row.lane or '')}</td>"] if lanes else []),
        _td(duration(row.seconds), row.seconds),
        _td("" if row.tokens is None else f"{row.tokens:,}", row.tokens),
        _td("" if row.cost_usd is None else f"${row.cost_usd:.2f}", row.cost_usd),
        f"<td><code>{escape((row.commit or '')[:7])}</code></td>",
        "<td>"
        + " ".join(
            f'<a href="{href(link.path, base)}">{escape(link.label)}</a>' for link in row.links
        )
        + "</td>",
    ]
    return f'<tr data-outcome="{row.outcome.value}">{"".join(cells)}</tr>'


def _td(text: str, value: float | None, extra: str = "") -> str:
    sort = "" if value is None else f' data-sort="{value!r}"'
    return f'<td class="n{extra}"{sort}>{escape(text)}</td>'


def _trend(direction: Direction, score: float | None, best: float | None) -> str:
    """A class that colours a change: better than the best before it, or worse."""
    if score is None or best is None or score == best:
        return ""
    return " better" if is_better(direction, score, best) else " worse"


def _kept(kept: tuple[KeptChange, ...]) -> str:
    if not kept:
        return '<section><h2>Kept changes</h2><p class="note">Nothing was kept.</p></section>'
    blocks = []
    for change in kept:
        cut = (
            '<p class="note">diff cut: see the commit for the rest</p>' if change.truncated else ""
        )
        blocks.append(
            f'<details class="kept" id="kept-{change.number}"><summary><b>#{change.number}</b> '
            f"<code>{escape(change.commit[:7])}</code> "
            f"{escape(estimated(change.score_before, change.before_estimate))} → "
            f"{escape(estimated(change.score_after, change.after_estimate))} · "
            f"{escape(change.description)}</summary>{cut}"
            f'<pre class="diff">{_diff_lines(change.diff)}</pre></details>'
        )
    return f"<section><h2>Kept changes ({len(kept)})</h2>{''.join(blocks)}</section>"


def _diff_lines(diff: str) -> str:
    out = []
    for line in diff.splitlines():
        kind = ""
        if line.startswith(("+++", "---", "diff --git", "index ")):
            kind = "file"
        elif line.startswith("@@"):
            kind = "hunk"
        elif line.startswith("+"):
            kind = "add"
        elif line.startswith("-"):
            kind = "del"
        out.append(f'<span class="{kind}">{escape(line)}</span>' if kind else escape(line))
    return "\n".join(out)
