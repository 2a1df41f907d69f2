from __future__ import annotations

from pathlib import Path

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
