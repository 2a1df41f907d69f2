"""report.html in a real headless Chromium (Debian's package, driven by Playwright): it loads
with no console error and no network request, the table sorts and filters, the plot shows.

The full-page screenshot is kept under artifacts/ (CI keeps that folder)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from report_helpers import artifacts_dir

from autoresearch.report import build_run_report, plot
from autoresearch.supervisor.handle import RunHandle


def _column(page: Any, col: int) -> list[str]:
    return page.eval_on_selector_all(
        "#iterations tbody tr:not([hidden])", f"rows => rows.map(r => r.cells[{col}].innerText)"
    )


def _numbers(page: Any) -> list[int]:
    return [int(v) for v in _column(page, 0)]


@pytest.mark.plot
def test_the_report_loads_offline_sorts_filters_and_shows_the_plot(
    finished_run: RunHandle, page: Any, tmp_path: Path
) -> None:
    result = build_run_report(finished_run.repo.repo_root, finished_run.run_id, tmp_path / "out")
    requests: list[str] = []
    problems: list[str] = []

    def route(r: Any) -> None:
        requests.append(r.request.url)
        if r.request.url.startswith("file:"):
            r.continue_()
        else:
            r.abort()

    page.route("**/*", route)
    page.on(
        "console",
        lambda m: (
            problems.append(f"{m.type}: {m.text}") if m.type in ("error", "warning") else None
        ),
    )
    page.on("pageerror", lambda e: problems.append(f"page error: {e}"))
    page.goto(result.report_file.as_uri())
    page.wait_for_load_state("load")

    assert problems == []
    assert requests == [result.report_file.as_uri()]  # one file, nothing else fetched

    shown = page.eval_on_selector(
        "#progress", "img => [img.complete, img.naturalWidth, img.naturalHeight]"
    )
    assert shown == [True, int(plot.WIDTH_IN * plot.DPI), int(plot.HEIGHT_IN * plot.DPI)]
    box = page.locator("#progress").bounding_box()
    assert box is not None and box["width"] > 600 and box["height"] > 250

    assert _numbers(page) == [0, 1, 2, 3, 4, 5, 6]
    score = page.locator("#iterations th button", has_text="score")
    score.click()
    assert page.locator("#iterations th[aria-sort=ascending]").inner_text() == "score"
    # ascending by score; the crash has no score and stays last either way
    assert _numbers(page) == [0, 5, 2, 1, 4, 6, 3]
    score.click()
    assert page.locator("#iterations th[aria-sort=descending]").inner_text() == "score"
    assert _numbers(page) == [6, 4, 1, 2, 5, 0, 3]
    page.locator("#iterations th button", has_text="#").click()
    assert _numbers(page) == [0, 1, 2, 3, 4, 5, 6]

    page.locator("[data-filter=kept]").click()
    assert _numbers(page) == [0, 1, 4, 6]
    page.locator("[data-filter=error]").click()
    assert _numbers(page) == [3]
    page.locator("[data-filter=all]").click()
    assert len(_numbers(page)) == 7

    kept = page.locator("details.kept")
    assert kept.count() == 3
    kept.nth(2).locator("summary").click()
    assert "+12" in kept.nth(2).locator("pre.diff").inner_text()

    shot = artifacts_dir() / "report-browser.png"
    page.screenshot(path=str(shot), full_page=True)
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert problems == [] and len(requests) == 1
