"""The cyclic garbage collector while a command starts (issue 36: start-up time).

Starting a command is importing: click, the command's own modules, for `mcp` the official SDK
– tens of thousands of objects that live as long as the process. The collector's passes over
them free nothing (a few hundred objects at most) and cost ~10 % of `autoresearch status`'s
CPU and of the SDK's import (docs/benchmarks.md). So the process's entry point (`cli.main`)
turns the collector off (`pause`) until the command is about to do its own work (`resume`):
what start-up built is then frozen out of every later pass (`gc.freeze`) and the collector
runs again as usual, so a run that lasts a night or the MCP server collects its own garbage.

Invariants: only `cli.main`, the process's own entry point, pauses: code that imports the CLI
(tests, click's CliRunner) never has its collector touched, and `resume` without a `pause`
does nothing. The collector is never left off: a command that fails before it resumes ends
the process.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

_paused: list[bool] = []  # [True] while this module holds the collector off
_entry: list[bool] = []  # [True] once the process's entry point has paused it (cli.main)


def pause() -> None:
    """Turn the collector off for start-up (left alone if something else turned it off):
    the process's entry point, `cli.main`, calls it first."""
    _entry[:] = [True]
    if gc.isenabled():
        gc.disable()
        _paused[:] = [True]


def resume() -> None:
    """Start-up is over: freeze what it built out of later passes and collect as usual."""
    if _paused:
        _paused.clear()
        gc.freeze()
        gc.enable()


@contextmanager
def starting() -> Iterator[None]:
    """A command's own start-up after `resume` (the MCP SDK's import): paused for the block,
    if the collector was on – in a process `cli.main` started only."""
    if not _entry:
        yield
        return
    pause()
    try:
        yield
    finally:
        resume()
