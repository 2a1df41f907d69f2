from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest


@pytest.fixture
def outside_tmp() -> Iterator[Path]:
    """A folder outside /tmp: codex's sandbox lets every session write /tmp, which would hide a
    missing grant for the run folder."""
    base = Path(os.environ.get("AUTORESEARCH_AGENT_TEST_DIR") or "/var/tmp")
    path = Path(tempfile.mkdtemp(prefix="autoresearch-agents-", dir=base))
    yield path
    shutil.rmtree(path, ignore_errors=True)
