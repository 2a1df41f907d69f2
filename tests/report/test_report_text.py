"""The lines `autoresearch report` prints (report/text.summary_lines), rendered from the
report's typed model: pinned byte for byte."""

from __future__ import annotations

from pathlib import Path

import pytest

from autoresearch.noise import Interval
from autoresearch.report import ReportResult
from autoresearch.report.html import render
from autoresearch.report.model import Outcome, ReportData, ReportKind, Row
from autoresearch.report.text import summary_lines
from autoresearch.supervisor.improvement import PairedChange

ROWS = (
    Row(0, "baseline", Outcome.BASELINE, 10.0),
    Row(1, "keep", Outcome.KEPT, 12.5),
    Row(2, "discard", Outcome.DISCARDED, 9.0),
    Row(3, "error", Outcome.ERROR, None),
    Row(4, "noop", Outcome.OTHER, None),
    Row(5, "keep", Outcome.KEPT, 14.0),
)


def _data(**kw: object) -> ReportData:
    base: dict[str, object] = dict(
        kind=ReportKind.RUN, ident="missions-demo-t1", title="demo", metric="score",
        direction="higher", status="completed", started_at="2026-01-01T00:00:00Z",
        ended_at="2026-01-01T01:00:00Z", generated_at="2026-01-01T01:00:00Z", rows=ROWS,
    )  # fmt: skip
    base.update(kw)
    return ReportData(**base)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("data", "plot", "expected"),
    [
        (
            _data(),
            Path("/r/progress.png"),
            "report    /r/report.html\n"
            "plot      /r/progress.png\n"
            "status    completed\n"
            "score     10 → 14 (higher is better)\n"
            "outcomes  2 kept, 1 discarded, 1 error, 1 other",
        ),
        (  # a live run without matplotlib; a lower-is-better metric with estimates
            _data(
                ended_at=None,
                status="running",
                metric="seconds per batch",
                direction="lower",
                baseline_score=2.0,
                best_score=1.25,
                baseline_estimate=Interval(2.0, 1.9, 2.1, 5),
                best_estimate=Interval(1.25, 1.25, 1.25, 3),  # no spread: the value alone
            ),
            None,
            "report             /r/report.html\n"
            "plot               (none)\n"
            "status             running  (live: run the command again to refresh)\n"
            "seconds per batch  2.00 ± 0.10 (n=5) → 1.25 (lower is better)\n"
            "outcomes           2 kept, 1 discarded, 1 error, 1 other",
        ),
        (  # certified: the paired change, said to be paired
            _data(paired_change=PairedChange(Interval(4.5, 3.5, 5.5, 4))),
            None,
            "report       /r/report.html\n"
            "plot         (none)\n"
            "status       completed\n"
            "score        10 → 14 (higher is better)\n"
            "improvement  +4.5, 95 % interval [+3.5, +5.5] (paired; better is +)\n"
            "outcomes     2 kept, 1 discarded, 1 error, 1 other",
        ),
        (  # readings that vary, not certified: the means' difference, said to be unpaired
            _data(improvement_interval=Interval(4.0, 2.0, 6.0, 5)),
            None,
            "report       /r/report.html\n"
            "plot         (none)\n"
            "status       completed\n"
            "score        10 → 14 (higher is better)\n"
            "improvement  +4.0, 95 % interval [+2.0, +6.0] (unpaired: means of readings taken "
            "at other moments; better is +)\n"
            "outcomes     2 kept, 1 discarded, 1 error, 1 other",
        ),
        (
            _data(rows=()),
            None,
            "report    /r/report.html\n"
            "plot      (none)\n"
            "status    completed\n"
            "score     n/a → n/a (higher is better)\n"
            "outcomes  0 kept, 0 discarded, 0 error, 0 other",
        ),
    ],
)
def test_summary_lines(data: ReportData, plot: Path | None, expected: str) -> None:
    assert summary_lines(ReportResult(data, Path("/r/report.html"), plot)) == expected


def test_spend_per_agent_counts_each_agents_sessions_and_keeps() -> None:
    """Issue 33: a portfolio's report shows per agent its sessions, keeps and spend."""
    rows = (
        Row(0, "baseline", Outcome.BASELINE, 10.0),
        Row(1, "keep", Outcome.KEPT, 12.0, agent="strong", tokens=100, cost_usd=0.5),
        Row(2, "discard", Outcome.DISCARDED, 9.0, agent="cheap", tokens=10, cost_usd=0.01),
        Row(3, "keep", Outcome.KEPT, 13.0, agent="strong", tokens=120, cost_usd=0.25),
        Row(4, "error", Outcome.ERROR, None, agent="cheap"),
    )
    spends = _data(rows=rows).spend_by("agent")
    assert [(s.key, s.sessions, s.keeps, s.tokens, s.cost_usd) for s in spends] == [
        ("cheap", 2, 0, 10, 0.01),
        ("strong", 2, 2, 220, 0.75),
    ]
    page = render(_data(rows=rows), None, "no plot", Path("/r"))
    assert "<th>sessions</th><th>keeps</th><th>tokens</th>" in page
    assert "<td>strong</td><td class=n>2</td><td class=n>2</td>" in page
