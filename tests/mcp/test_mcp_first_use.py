"""A stdio server builds its tools after the handshake (mcp/first_use.py, issue 36): the host
sees the same tools, with the same schemas, and may call one before it lists them."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from mcp import Client
from mcp_helpers import TOOL_NAMES, connect, mcp_repo

from autoresearch.mcp.server import build_server
from helpers import Repo


@pytest.fixture
def repo(tmp_path: Path) -> Repo:
    return mcp_repo(tmp_path / "repo")


@pytest.mark.anyio
async def test_tools_built_at_first_use_are_the_tools_built_at_start(repo: Repo) -> None:
    async with connect(build_server(repo.root)) as eager:
        at_start = (await eager.client.list_tools()).tools
    async with connect(build_server(repo.root, at_first_use=True)) as lazy:
        at_first_use = (await lazy.client.list_tools()).tools
    assert {t.name for t in at_first_use} == TOOL_NAMES
    assert [t.model_dump() for t in at_first_use] == [t.model_dump() for t in at_start]


@pytest.mark.anyio
async def test_a_tool_called_before_any_listing_is_found(repo: Repo) -> None:
    async with Client(build_server(repo.root, at_first_use=True)) as client:
        result = await client.call_tool("run_list", {})
        assert not result.is_error, result.content
        assert result.structured_content is not None
        assert result.structured_content["runs"] == []


def test_a_server_built_for_stdio_imports_no_tool_module_before_a_request(tmp_path: Path) -> None:
    # building ~30 tools (their modules, the SDK's models of their signatures) is what a host
    # no longer waits for before the answer to initialize
    probe = (
        "import json, sys; from pathlib import Path; from autoresearch.mcp.server import "
        "build_server; build_server(Path.cwd(), at_first_use=True); "
        "print(json.dumps(sorted(sys.modules)))"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], cwd=tmp_path, capture_output=True, text=True, check=True
    )
    modules = json.loads(done.stdout.splitlines()[-1])
    assert "autoresearch.mcp.server" in modules  # the probe saw the server built
    tool_modules = ("autoresearch.mcp.job_tools", "autoresearch.mcp.worker_tools")
    assert [m for m in modules if m in tool_modules] == []
