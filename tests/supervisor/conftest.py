from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from autoresearch.supervisor.handle import RunHandle
from autoresearch.supervisor.prepare import prepare


@pytest.fixture
def run(mission_dir: Path) -> Iterator[RunHandle]:
    handle = prepare(mission_dir, run_tag="T1")
    try:
        yield handle
    finally:
        handle.close()
