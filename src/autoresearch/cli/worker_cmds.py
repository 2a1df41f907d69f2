"""`autoresearch worker …`: the delegation worker's operations for people (issue 16).

`worker stats` summarizes `.autoresearch/worker/metrics.jsonl` (one row per tool call) per
tool: calls, errors, error rate, bytes read and returned, latency p50/p95. With
`--max-error-rate X` it gates: exit 1 when a tool's (or the total) error rate is above X.
"""

from __future__ import annotations

import click

from autoresearch.cli.common import EXIT_RECORDED_FAILURE, AppGroup, emit_json, fail, repo_root


@click.group("worker", cls=AppGroup)
def worker() -> None:
    """The delegation worker's zero-model tools: metrics and their gate."""


@worker.command("stats")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object on stdout.")
@click.option(
    "--max-error-rate",
    type=float,
    default=None,
    help="Exit 1 when a tool's error rate (0..1) is above this.",
)
@click.pass_context
def stats(ctx: click.Context, as_json: bool, max_error_rate: float | None) -> None:
    """Per-tool calls, errors, bytes read vs returned and latency, from the metrics file."""
    from autoresearch.api import Workspace, load
    from autoresearch.api import render_metrics as render

    if max_error_rate is not None and not 0 <= max_error_rate <= 1:
        fail("--max-error-rate must be between 0 and 1")
    summary = load(Workspace(repo_root(ctx)), max_error_rate)
    if as_json:
        emit_json(summary.to_dict())
    else:
        click.echo(render(summary))
    if summary.over_threshold:
        ctx.exit(EXIT_RECORDED_FAILURE)
