"""Plumbing of the MCP tools: errors the model can read, replies, progress, supervised-run text.

Invariants: what reaches the client is redacted (autoresearch.redact: results and error
messages alike); every failure reaches the client as a `ToolError` with a readable one-line
message (an `AutoresearchError` with its own message; anything else as the CLI's
internal-error line, the traceback in a crash log and in the server's log on stderr); a reply
carries the same text the CLI prints plus the structured result validated against the tool's
output model.
"""

from __future__ import annotations

import inspect
import logging
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

import anyio
import anyio.to_thread
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import CallToolResult, TextContent, ToolAnnotations
from pydantic import BaseModel

from autoresearch.api import (
    AutoresearchError,
    current,
    disk_full_line,
    internal_error_line,
    redact,
    write_crash_log,
)

log = logging.getLogger("autoresearch.mcp")

HEARTBEAT_SECONDS = 1.0
T = TypeVar("T")


@contextmanager
def tool_errors() -> Iterator[None]:
    """Turn every exception into a ToolError whose message the model can act on."""
    try:
        yield
    except ToolError:
        raise
    except AutoresearchError as exc:
        full = disk_full_line(exc)
        raise ToolError(redact(full or " ".join(exc.message.splitlines()))) from exc
    except Exception as exc:
        full = disk_full_line(exc)
        if full is not None:  # not a bug: the line that says how to go on, no crash log
            raise ToolError(redact(full)) from exc
        # Not an expected refusal: a bug or a broken environment. The model gets the same line
        # as the CLI (never a traceback); the traceback goes to the crash log and stderr.
        log.exception("unexpected error in an autoresearch MCP tool")
        path = write_crash_log(exc, ["autoresearch", "mcp"])
        raise ToolError(redact(internal_error_line(exc, path))) from exc


def reply(text: str, structured: BaseModel) -> CallToolResult:
    """The CLI's text for the model, the validated structured result for programs."""
    redactor = current()
    return CallToolResult(
        content=[TextContent(type="text", text=redactor.text(text))],
        structured_content=redactor.value(structured.model_dump(mode="json")),
    )


class ProgressFeed:
    """The harness's latest output line, written by the core on the worker thread."""

    def __init__(self, total: float | None) -> None:
        self.total = total
        self.line = ""
        self._t0 = time.monotonic()

    def update(self, elapsed: float, line: str) -> None:
        """The core's `on_progress(elapsed, last_line)` callback."""
        self.line = line

    def snapshot(self) -> tuple[float, str]:
        elapsed = time.monotonic() - self._t0
        text = f"{elapsed:.0f}s elapsed" + (f": {self.line[:200]}" if self.line else "")
        return round(elapsed, 1), text


async def call_with_progress(
    ctx: Context,
    feed: ProgressFeed,
    work: Callable[[], T],
    limit: float,
    on_cancel: Callable[[], None] | None = None,
) -> T:
    """Run blocking `work` in a worker thread, report progress every second, give up at `limit`.

    Progress is sent by the event loop, so it keeps flowing while the checks run too. At the
    limit the thread is left to finish on its own: the run is recorded as the session's pending
    run. When the call itself is cancelled (the client cancelled it or went away),
    `on_cancel()` asks the work to stop – it must be thread-safe and must not block – and the
    cancellation goes on; the thread then ends the run and records it by itself.
    """
    failure: Exception | None = None
    async with anyio.create_task_group() as tg:
        tg.start_soon(_heartbeat, ctx, feed)
        try:
            with anyio.fail_after(limit):
                result = await anyio.to_thread.run_sync(work, abandon_on_cancel=True)
        except (ToolError, TimeoutError) as exc:
            failure = exc  # raised below, outside the task group (which would wrap it)
        except anyio.get_cancelled_exc_class():
            if on_cancel is not None:
                on_cancel()
            raise
        tg.cancel_scope.cancel()
    if isinstance(failure, TimeoutError):
        raise ToolError(
            f"run_experiment gave up waiting after {limit:.0f}s; the run goes on in the "
            "background and is recorded as the session's pending run: call experiment_status, "
            "then log_experiment once it has completed"
        )
    if failure is not None:
        raise failure
    return result


async def _heartbeat(ctx: Context, feed: ProgressFeed) -> None:
    while True:
        await anyio.sleep(HEARTBEAT_SECONDS)
        progress, message = feed.snapshot()
        try:
            await ctx.report_progress(progress, feed.total, message)
        except (anyio.BrokenResourceError, anyio.ClosedResourceError):
            return  # the client went away; the run itself goes on


# The hints every tool declares (the MCP spec's ToolAnnotations).
READ_ONLY = ToolAnnotations(
    read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False
)
WRITES = ToolAnnotations(
    read_only_hint=False, destructive_hint=False, idempotent_hint=False, open_world_hint=False
)
DESTRUCTIVE = ToolAnnotations(
    read_only_hint=False, destructive_hint=True, idempotent_hint=False, open_world_hint=False
)


def add_tools(server: MCPServer, table: list[tuple[Any, str, ToolAnnotations]]) -> None:
    """Register methods as tools: name, title, description (the docstring) and hints."""
    for method, title, hints in table:
        server.add_tool(
            method,
            name=method.__name__,
            title=title,
            description=_prose(method.__doc__ or ""),
            annotations=hints,
        )


def _prose(doc: str) -> str:
    """A docstring as the model reads it: paragraphs unwrapped into single lines."""
    paragraphs = inspect.cleandoc(doc).split("\n\n")
    return "\n\n".join(" ".join(p.split()) for p in paragraphs)
