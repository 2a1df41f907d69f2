"""`serve`: the report of a run (or an experiment session), live in a browser."""

from __future__ import annotations

import threading
import webbrowser
from functools import partial

import click

from autoresearch.cli.common import repo_root, say

# How often the waiting main thread wakes: a signal's handler runs between two waits.
_WAKE_S = 0.5


@click.command()
@click.argument("run_id", required=False)
@click.option(
    "--session",
    "session_id",
    type=int,
    default=None,
    help="Serve experiment session #ID's report instead of a run's.",
)
@click.option(
    "--port",
    type=click.IntRange(0, 65535),
    default=0,
    help="Port on 127.0.0.1 (default: a free one).",
)
@click.option("--open", "open_it", is_flag=True, help="Open the page in a browser.")
@click.pass_context
def serve(
    ctx: click.Context, run_id: str | None, session_id: int | None, port: int, open_it: bool
) -> None:
    """Serve RUN_ID's report on 127.0.0.1, updated in place as the run goes, until Ctrl-C.

    Without RUN_ID, the newest run's; RUN_ID may be any unique start of the id. The page asks
    the server every 1.5 s and shows new iterations without a reload. Everything is read from
    the journal; nothing is written.
    """
    from autoresearch.api import (
        RepoPaths,
        first_signal_stops,
        resolve_run_id,
        run_data,
        session_data,
    )
    from autoresearch.api import serve_report as start

    root = repo_root(ctx)
    if session_id is not None and run_id is not None:
        raise click.UsageError("give RUN_ID or --session, not both")
    if session_id is not None:
        load, what = partial(session_data, root, session_id), f"session #{session_id}"
    else:
        run_id = resolve_run_id(root, run_id)
        load, what = partial(run_data, root, run_id), f"run {run_id}"
    serving = start(load, port, RepoPaths(root).journal)
    stopped = threading.Event()
    # the handlers first: a script that reads the URL may signal the server at once
    with first_signal_stops(lambda _signal: stopped.set()):
        say(f"serving the live report of {what} at {serving.url} (Ctrl-C to stop)")
        if open_it:
            webbrowser.open(serving.url)
        while not stopped.wait(_WAKE_S):
            pass
    serving.stop()
    say(f"stopped serving {serving.url}")
