"""progress.png read back: a real PNG of the documented size, dots where they must be, in the
colours they must have; and the pure helpers behind it."""

from __future__ import annotations

import io
import math
import sys
from pathlib import Path
from typing import Any

import pytest

from autoresearch.report import build_run_report, plot
from autoresearch.report.model import (
    Outcome,
    ReportData,
    Row,
    difference_interval,
    improvement,
)
from autoresearch.supervisor.handle import RunHandle
from autoresearch.supervisor.improvement import Improvement

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def _read_png(source: Path | io.BytesIO) -> Any:
    """The pixels of a PNG, by matplotlib imported here: at the module's top every xdist worker
    paid its import (~0.5 s of CPU) while collecting, also those that run no test of this file."""
    from matplotlib import image

    return image.imread(source, format="png")


def _rgb(pixels, x: int, y: int) -> tuple[int, int, int]:
    r, g, b = (round(float(c) * 255) for c in pixels[y, x][:3])
    return r, g, b


# What a person sees, independent of the module's palette.
LOOKS = {
    Outcome.KEPT: lambda r, g, b: g > r + 60 and g > b + 40,  # green
    Outcome.DISCARDED: lambda r, g, b: max(r, g, b) - min(r, g, b) < 20 and 110 < r < 210,  # grey
    Outcome.ERROR: lambda r, g, b: r > 150 and r > g + 90 and r > b + 90,  # red
    Outcome.BASELINE: lambda r, g, b: b > r + 60,  # blue
}


def _close(a: tuple[int, int, int], b: tuple[int, int, int], tolerance: int = 40) -> bool:
    return all(abs(x - y) <= tolerance for x, y in zip(a, b, strict=True))


@pytest.mark.plot
def test_the_plot_is_a_png_with_each_dot_in_its_colour(finished_run: RunHandle) -> None:
    h = finished_run
    result = build_run_report(h.repo.repo_root, h.run_id)
    assert result.plot_file is not None and result.warning is None
    raw = result.plot_file.read_bytes()
    assert raw[:8] == PNG_SIGNATURE
    pixels = _read_png(result.plot_file)
    height, width = pixels.shape[:2]
    assert (width, height) == (int(plot.WIDTH_IN * plot.DPI), int(plot.HEIGHT_IN * plot.DPI))

    image = plot.render(result.data)  # the same drawing, with where each mark landed
    assert image.png[:8] == PNG_SIGNATURE and (image.width, image.height) == (width, height)
    expected = {
        0: Outcome.BASELINE,
        1: Outcome.KEPT,
        2: Outcome.DISCARDED,
        3: Outcome.ERROR,
        4: Outcome.KEPT,
        5: Outcome.DISCARDED,
        6: Outcome.KEPT,
    }
    assert {r.number: r.outcome for r in result.data.rows} == expected
    for number, outcome in expected.items():
        x, y = image.marks[number]
        assert 0 < x < width and 0 < y < height
        got = _rgb(pixels, x, y)
        assert LOOKS[outcome](*got), (number, outcome, got)
    # higher is better: the best kept dot (#6, score 12) sits above the baseline (score 1)
    assert image.marks[6][1] < image.marks[1][1] < image.marks[0][1]
    # an empty corner stays white: the dots are drawn, not painted everywhere
    assert _close(_rgb(pixels, 3, 3), (255, 255, 255), 5)


def test_a_report_leaves_its_plot_out_silently_under_report_plot_0(
    finished_run: RunHandle, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # what the suite runs under (tests/conftest.py), so only the tests about the plot draw it
    monkeypatch.setenv("AUTORESEARCH_REPORT_PLOT", "0")
    result = build_run_report(finished_run.repo.repo_root, finished_run.run_id, tmp_path / "r")
    assert (result.plot_file, result.warning) == (None, None)
    assert result.report_file.is_file()
    assert not (tmp_path / "r" / "progress.png").exists()


@pytest.mark.plot
def test_the_plot_degrades_to_a_clear_note_without_matplotlib(
    finished_run: RunHandle, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # matplotlib not installed: its import fails, as `import` fails for a None entry
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    result = build_run_report(finished_run.repo.repo_root, finished_run.run_id, tmp_path / "r")
    assert result.plot_file is None
    assert (
        result.warning == "no plot: the plot needs matplotlib: pip install 'autoresearch[report]'"
    )
    page = result.report_file.read_text()
    assert "pip install &#x27;autoresearch[report]&#x27;" in page
    assert not (tmp_path / "r" / "progress.png").exists()


@pytest.mark.parametrize(
    ("scores", "log"),
    [
        ([0.24, 0.009], False),  # a ratio under 30 would read worse on a log axis…
        ([0.3, 0.009], True),  # …above it, a linear axis squashes the progress at the bottom
        ([5.0, -1.0, 300.0], False),  # a non-positive score cannot go on a log axis
        ([1.0], False),
        ([], False),
    ],
)
def test_log_scale_only_when_the_range_asks_for_it(scores: list[float], log: bool) -> None:
    assert plot.use_log_scale(scores) is log


def _data(rows: list[Row], direction: str = "lower") -> ReportData:
    return ReportData(
        kind="run",
        ident="r",
        title="t",
        metric="loss",
        direction=direction,
        status="completed",
        started_at="2026-01-01T00:00:00Z",
        ended_at="2026-01-01T00:01:00Z",
        generated_at="2026-01-01T00:02:00Z",
        rows=tuple(rows),
    )


def test_the_best_line_steps_at_the_baseline_and_every_keep() -> None:
    data = _data(
        [
            Row(0, "baseline", Outcome.BASELINE, 10.0),
            Row(1, "discard", Outcome.DISCARDED, 12.0),
            Row(2, "keep", Outcome.KEPT, 7.0),
            Row(3, "error", Outcome.ERROR, None),
            Row(4, "keep", Outcome.KEPT, 5.0),
            Row(5, "discard", Outcome.DISCARDED, 6.0),
        ]
    )
    assert plot.best_steps(data) == ([0, 2, 4, 5], [10.0, 7.0, 5.0, 5.0])
    found = improvement(data)
    # lower is better: 10 → 5 is +5, +50 % (better is +, as certify's); one reading each: no
    # interval; no certification: unpaired
    assert found == Improvement(5.0, 50.0, None, paired=False)


def test_several_readings_give_the_improvement_an_interval() -> None:
    base = Row(0, "baseline", Outcome.BASELINE, 10.0, readings=(10.0, 10.4, 9.6))
    best = Row(1, "keep", Outcome.KEPT, 8.0, readings=(8.0, 8.2, 7.8))
    found = improvement(_data([base, best]))
    assert found is not None and not found.paired
    delta, interval = found.change, found.interval
    assert delta == pytest.approx(2.0)  # lower is better: better is +
    assert interval is not None and 0 < interval.low < 2.0 < interval.high
    # Welch's t (noise.difference_interval): se sqrt(0.16/3 + 0.04/3), df floor(2.94) = 2
    spread = math.sqrt(0.16 / 3 + 0.04 / 3)
    assert interval.low == pytest.approx(2.0 - 4.302653 * spread)
    assert difference_interval([1.0], [2.0, 3.0]) is None


def test_repeated_readings_show_as_a_bar_through_the_dot() -> None:
    data = _data(
        [
            Row(0, "baseline", Outcome.BASELINE, 10.0, readings=(10.0,)),
            Row(1, "discard", Outcome.DISCARDED, 6.0, readings=(2.0, 6.0, 10.0)),
            Row(2, "discard", Outcome.DISCARDED, 6.0),
            Row(3, "keep", Outcome.KEPT, 1.0),
        ]
    )
    image = plot.render(data)
    pixels = _read_png(io.BytesIO(image.png))
    (x1, y1), (x2, y2) = image.marks[1], image.marks[2]
    assert y1 == y2  # same mean, same height
    ten = image.marks[0][1]
    probe = (y1 + ten) // 2  # halfway between 6 and 10: inside the bar of #1 only
    assert LOOKS[Outcome.DISCARDED](*_rgb(pixels, x1, probe)), _rgb(pixels, x1, probe)
    assert _close(_rgb(pixels, x2, probe), (255, 255, 255), 30), _rgb(pixels, x2, probe)


def test_a_plot_with_nothing_measured_draws_without_a_warning() -> None:
    # A reopened session's new segment has no run yet: matplotlib used to warn "No artists with
    # labels found to put in legend" on the user's terminal (`exp report`).
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        image = plot.render(_data([]))
    assert image.png[:8] == PNG_SIGNATURE
