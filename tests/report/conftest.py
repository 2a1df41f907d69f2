from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from report_helpers import STANDARD_PLAN, drive

from autoresearch.supervisor.handle import RunHandle
from autoresearch.supervisor.prepare import prepare


@pytest.fixture
def finished_run(mission_dir: Path) -> RunHandle:
    """A run of the standard plan (keeps, discards, a crash), its driver lock released."""
    with prepare(mission_dir, run_tag="PLOT") as h:
        drive(h, STANDARD_PLAN)
        h.refresh()
        return h


CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
    "--disable-dev-shm-usage",
]


def _unavailable(why: str) -> None:
    # CI installs Chromium (.ci/run) and the dev extra: there a missing browser is a failure.
    if os.environ.get("CI"):
        pytest.fail(why)
    pytest.skip(why)


@pytest.fixture
def page() -> Iterator[Any]:
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _unavailable("playwright is not installed (pip install -e '.[dev]')")
    if not CHROMIUM.exists():
        _unavailable(f"{CHROMIUM} is missing (apt-get install chromium; .ci/run does it)")
    with sync_playwright() as pw:
        browser = pw.chromium.launch(
            executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS
        )
        try:
            yield browser.new_page(viewport={"width": 1360, "height": 900})
        finally:
            browser.close()
