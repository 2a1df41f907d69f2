"""`autoresearch status`: the runs of a repository, or one run with its iterations.

A module of its own: a status line runs it often, and it reads the journal without the loop
options (cli/options.py) or the commands that drive runs (issue 36: tests/test_import_graph.py).
"""

from __future__ import annotations

import click

from autoresearch.cli import render
from autoresearch.cli.common import emit_json, repo_root

JSON_HELP = "Print one JSON object on stdout (logs go to stderr)."


@click.command()
@click.argument("run_id", required=False)
@click.option(
    "--last",
    type=click.IntRange(min=0),
    help="Show only the last N iterations of RUN_ID (without RUN_ID: the last N runs).",
)
@click.option("--json", "as_json", is_flag=True, help=JSON_HELP)
@click.pass_context
def status(ctx: click.Context, run_id: str | None, last: int | None, as_json: bool) -> None:
    """All runs (without RUN_ID), or run RUN_ID with its iterations."""
    from autoresearch.api import list_runs, run_details

    root = repo_root(ctx)
    if run_id is None:
        items = list_runs(root, last)
        data = {"repo_root": str(root), "runs": [item.to_dict() for item in items]}
        emit_json(data) if as_json else render.run_list(items)
        return
    details = run_details(root, run_id, last, by_name=True)
    emit_json(details.to_dict()) if as_json else render.run_details(details)
