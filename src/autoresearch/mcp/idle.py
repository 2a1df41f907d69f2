"""The idle exit of `autoresearch mcp --idle-exit SECONDS` over stdio (worker.md "Machine-wide").

An editor that starts a server per window and never stops it leaves servers behind; one that
nobody has asked anything for SECONDS, and that has no job of its own running, ends by itself
(exit 0, one line on stderr). Invariants: a server never exits while a request is being
answered or while a job it started is live (the quiet time starts again while one is); the
decision is `IdleRule.due` (pure); stdin is read without a thread, so the exit does not wait
for the host's next line.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

import anyio
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.mcpserver import MCPServer
from mcp.server.stdio import stdio_server

from autoresearch.mcp.server import assemble

READ_BYTES = 65536


@dataclass(frozen=True)
class IdleRule:
    """When a quiet server exits: `seconds` without a request in flight or a live job."""

    seconds: float

    @property
    def poll(self) -> float:
        return min(1.0, max(0.05, self.seconds / 4))

    def due(self, now: float, quiet_since: float, in_flight: int) -> bool:
        return in_flight == 0 and now - quiet_since >= self.seconds


@dataclass
class Activity:
    """Server middleware: the requests in flight and when the server was last busy."""

    in_flight: int = 0
    quiet_since: float = field(default_factory=time.monotonic)

    def touch(self) -> None:
        self.quiet_since = time.monotonic()

    async def __call__(
        self, ctx: ServerRequestContext[Any, Any], call_next: CallNext
    ) -> HandlerResult:
        self.in_flight += 1
        try:
            return await call_next(ctx)
        finally:
            self.in_flight -= 1
            self.touch()


async def serve_stdio(
    server: MCPServer, activity: Activity, live_jobs: Callable[[], int], rule: IdleRule
) -> None:
    """Serve `server` over stdio until the host closes it or the server has been idle."""
    with _private_stdin() as fd:
        async with anyio.create_task_group() as group:

            async def serve() -> None:
                stdin = cast("anyio.AsyncFile[str]", _lines(fd))
                async with stdio_server(stdin=stdin) as (read, write):
                    lowlevel = server._lowlevel_server  # the SDK's own run_stdio_async does this
                    await lowlevel.run(read, write, lowlevel.create_initialization_options())
                group.cancel_scope.cancel()

            group.start_soon(serve)
            await _watch(activity, live_jobs, rule)
            group.cancel_scope.cancel()


async def _watch(activity: Activity, live_jobs: Callable[[], int], rule: IdleRule) -> None:
    while True:
        await anyio.sleep(rule.poll)
        if not rule.due(time.monotonic(), activity.quiet_since, activity.in_flight):
            continue
        if live_jobs():  # a job of this server is running: the quiet time starts after it
            while live_jobs():
                await anyio.sleep(rule.poll)
            activity.touch()
            continue
        print(
            f"autoresearch mcp: no request for {rule.seconds:g} s and no job running: exiting",
            file=sys.stderr,
            flush=True,
        )
        return


@contextmanager
def _private_stdin() -> Iterator[int]:
    """The protocol's stdin on a private descriptor, fd 0 on the null device meanwhile (as
    the SDK's own stdio transport does, so a child never reads the host's messages)."""
    private = os.dup(0)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    try:
        yield private
    finally:
        os.dup2(private, 0)
        os.close(private)


async def _lines(fd: int) -> AsyncIterator[str]:
    """Lines of `fd`, each awaited without a blocking thread (a cancel ends the wait)."""
    pending = b""
    while True:
        chunk = await _read(fd)
        if not chunk:
            if pending:
                yield pending.decode("utf-8", "replace")
            return
        pending += chunk
        *lines, pending = pending.split(b"\n")
        for line in lines:
            yield line.decode("utf-8", "replace") + "\n"


async def _read(fd: int) -> bytes:
    with suppress(OSError):  # a regular file or /dev/null cannot be polled, nor does it block
        await anyio.wait_readable(fd)
    return os.read(fd, READ_BYTES)


def serve_idle_stdio(start: Path, seconds: float, running_max: int | None) -> None:
    """`autoresearch mcp --idle-exit SECONDS`: the server over stdio, ending once idle."""
    activity = Activity()
    server, tools = assemble(
        start, running_max=running_max, middleware=[activity], at_first_use=True
    )
    anyio.run(serve_stdio, server, activity, tools.live_jobs, IdleRule(seconds))
