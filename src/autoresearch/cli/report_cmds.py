"""`report` and `finalize`: see a run's results, then ship its kept commits for review."""

from __future__ import annotations

import webbrowser
from pathlib import Path
from typing import Any

import click

from autoresearch.cli.common import emit_json, repo_root, say, warn

JSON_HELP = "Print one JSON object on stdout."


def open_option(func: Any) -> Any:
    return click.option("--open", "open_it", is_flag=True, help="Open the report in a browser.")(
        func
    )


def out_option(func: Any) -> Any:
    return click.option(
        "--out",
        type=click.Path(file_okay=False, path_type=Path),
        help="Folder to write report.html and progress.png to (default: the run's report/).",
    )(func)


def show(result: Any, as_json: bool, open_it: bool) -> None:
    """Print where the report is (or its JSON), warn about a missing plot, open it if asked."""
    if result.warning:
        warn(f"autoresearch: {result.warning}")
    if as_json:
        emit_json(result.to_dict())
    else:
        from autoresearch.api import summary_lines

        say(summary_lines(result))
    if open_it:
        webbrowser.open(result.report_file.as_uri())


@click.command()
@click.argument("run_id", required=False)
@out_option
@open_option
@click.option("--json", "as_json", is_flag=True, help=JSON_HELP)
@click.pass_context
def report(
    ctx: click.Context, run_id: str | None, out: Path | None, open_it: bool, as_json: bool
) -> None:
    """Write RUN_ID's report: progress.png and a self-contained report.html.

    Without RUN_ID, the newest run's; RUN_ID may be any unique start of the id. Built from
    the journal, so it also works while the run is going (run it again to refresh).
    """
    from autoresearch.api import build_run_report, resolve_run_id

    root = repo_root(ctx)
    show(build_run_report(root, resolve_run_id(root, run_id), out), as_json, open_it)


@click.command()
@click.argument("run_id")
@click.option("--single", is_flag=True, help="One squashed branch with every kept change.")
@click.option("--dry-run", is_flag=True, help="Show the branches without creating them.")
@click.option("--json", "as_json", is_flag=True, help=JSON_HELP)
@click.pass_context
def finalize(ctx: click.Context, run_id: str, single: bool, dry_run: bool, as_json: bool) -> None:
    """Turn RUN_ID's kept commits into review branches cut from the run's start point.

    Kept commits that touch disjoint files become independent branches; those that share a
    file stay together. Each branch's last commit message carries the evidence. The run branch
    is never rewritten and no checkout is touched.
    """
    from autoresearch.api import finalize as do_finalize
    from autoresearch.api import report as text
    from autoresearch.api import resolve_run_id

    root = repo_root(ctx)
    result = do_finalize(root, resolve_run_id(root, run_id), single=single, dry_run=dry_run)
    if as_json:
        emit_json(result.to_dict())
    else:
        say(text.finalize(result))
