"""The resume message reaches the model through hosts that hand it the structured content
(Claude Code, codex): `experiment_status(resume: true)` carries it there too, not only in the
text content (F2 of issue 37)."""

from __future__ import annotations

from pathlib import Path

import pytest
from mcp_helpers import connect, mcp_repo

from autoresearch.mcp.server import build_server

pytestmark = pytest.mark.anyio


async def test_the_resume_message_is_in_the_structured_result(tmp_path: Path) -> None:
    repo = mcp_repo(tmp_path / "repo")
    async with connect(build_server(repo.root)) as t:
        await t.ok("init_experiment", {"name": "speed up", "metric": "score"})
        await t.ok("run_experiment", {})
        plain = await t.ok("experiment_status", {})
        resumed = await t.ok("experiment_status", {"resume": True})
    assert plain.data["resume_message"] is None
    message = resumed.data["resume_message"]
    assert message == resumed.text
    assert "Continue the autoresearch loop now." in message
    assert "completed but was never logged. Log it first (log_experiment)" in message
