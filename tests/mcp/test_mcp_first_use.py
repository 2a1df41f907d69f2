"""A stdio server builds its tools after the handshake (mcp/first_use.py, issue 36): the host
sees the same tools, with the same schemas, and may call one before it lists them."""

from __future__ import annotations

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
