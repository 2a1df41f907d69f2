"""Helpers for the MCP tests: a real repository with a harness, and tool calls checked against
the tools' own output schemas."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import jsonschema
from mcp import Client

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "experiments"))

from exp_helpers import CHECKS, HARNESS, exp_repo

from helpers import Repo

# delay.txt makes the benchmark print a line, then sleep that many seconds (progress tests);
# hang.flag makes the checks hang (timeout tests). Everything else is exp_helpers' harness.
SLOW_HARNESS = HARNESS.replace(
    "#!/bin/bash\n",
    '#!/bin/bash\nif [ -f delay.txt ]; then echo "warming up"; sleep "$(cat delay.txt)"; fi\n',
    1,
)
HANGING_CHECKS = CHECKS.replace(
    "#!/bin/bash\n", "#!/bin/bash\nif [ -f hang.flag ]; then sleep 30; fi\n", 1
)
TOOL_NAMES = {
    "init_experiment",
    "run_experiment",
    "log_experiment",
    "update_notes",
    "experiment_status",
    "run_list",
    "run_status",
    "run_stop",
    # the delegation worker's job tools
    "job_start",
    "job_get",
    "job_wait",
    "job_tail",
    "job_cancel",
    "job_list",
    "job_apply",
    "job_discard",
    # the worker's zero-model tools
    "search",
    "read_pack",
    "diff_digest",
    "shell",
    "apply_edits",
    "history",
    "get_artifact",
    "analyze",
    "review",
    "draft",
}


def mcp_repo(path: Path, checks: bool = False) -> Repo:
    """A repository with the harness written but not committed (phase 1 done)."""
    repo = exp_repo(path, checks=checks)
    repo.write("autoresearch.sh", SLOW_HARNESS)
    if checks:
        repo.write("autoresearch.checks.sh", HANGING_CHECKS)
    return repo


@dataclass
class Reply:
    text: str
    data: dict[str, Any]


@dataclass
class Progress:
    events: list[tuple[float, float | None, str | None]] = field(default_factory=list)

    async def __call__(self, progress: float, total: float | None, message: str | None) -> None:
        self.events.append((progress, total, message))


class Tools:
    """A connected client whose every successful result is validated against its outputSchema."""

    def __init__(self, client: Client) -> None:
        self.client = client
        self.schemas: dict[str, dict[str, Any]] = {}

    async def load(self) -> None:
        for tool in (await self.client.list_tools()).tools:
            assert tool.output_schema is not None, tool.name
            self.schemas[tool.name] = tool.output_schema

    async def ok(self, name: str, args: dict[str, Any] | None = None, **kw: Any) -> Reply:
        result = await self.client.call_tool(name, args or {}, **kw)
        text = result.content[0].text if result.content else ""  # type: ignore[union-attr]
        assert not result.is_error, text
        assert result.structured_content is not None
        jsonschema.validate(result.structured_content, self.schemas[name])
        return Reply(text, result.structured_content)

    async def error(self, name: str, args: dict[str, Any] | None = None) -> str:
        """The message the model reads, without the SDK's `Error executing tool X: ` prefix."""
        result = await self.client.call_tool(name, args or {})
        assert result.is_error
        assert result.structured_content is None
        text = result.content[0].text  # type: ignore[union-attr]
        prefix = f"Error executing tool {name}: "
        assert text.startswith(prefix), text
        assert "Traceback" not in text
        return text[len(prefix) :]


@asynccontextmanager
async def connect(target: Any) -> AsyncIterator[Tools]:
    async with Client(target) as client:
        tools = Tools(client)
        await tools.load()
        yield tools


async def settle() -> None:
    """Progress callbacks run as their own tasks: let the last ones land."""
    await anyio.sleep(0.1)
