"""The tools of a stdio server are built at the first request past the handshake (issue 36).

A host (codex, Claude Code) starts `autoresearch mcp` for each session and waits for its answer
to `initialize` before its first turn: building the ~30 tools (their modules, and the SDK's
pydantic models of every signature) took longer than importing the SDK's own server. The
handshake needs none of them (the tools capability comes from the SDK's handlers), so a server
middleware builds them once, just before the first request that could name one (`tools/list`,
`tools/call`, …); it runs before the SDK looks the tool up, so a host that calls a tool
without listing first finds it too. Over HTTP the server builds them at start: its header
check reads a tool's schema before any middleware runs.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mcp.server.context import CallNext, HandlerResult, ServerRequestContext

    from autoresearch.mcp.job_tools import JobTools

# What a host sends before it may use a tool: these never need one.
HANDSHAKE = frozenset({"initialize", "notifications/initialized", "ping"})


class ToolsAtFirstUse:
    """Server middleware: calls `build` (which registers the tools and returns the job tools)
    once, at the first request that is not part of the handshake."""

    def __init__(self, build: Callable[[], JobTools]) -> None:
        self._build = build
        self.job_tools: JobTools | None = None

    def live_jobs(self) -> int:
        """The job tools' live jobs (none before the tools exist: no job could start)."""
        return 0 if self.job_tools is None else self.job_tools.live_jobs()

    def ensure(self) -> JobTools:
        """The job tools, built with every other tool on the first call (the server's one
        event loop runs this synchronously, so two requests never build twice)."""
        if self.job_tools is None:
            self.job_tools = self._build()
        return self.job_tools

    async def __call__(
        self, ctx: ServerRequestContext[Any, Any], call_next: CallNext
    ) -> HandlerResult:
        if ctx.method not in HANDSHAKE:
            self.ensure()
        return await call_next(ctx)
