"""`run`, `demo` and the loop continuation used by `resume`."""

from __future__ import annotations

from typing import Any

import click


@click.command()
def run() -> None:
    """Prepare a run, then loop: agent session → artifact → evaluation → decision."""
    raise click.ClickException("not implemented yet")


@click.command()
def demo() -> None:
    """Create an example repository and run the loop on it with the offline agent."""
    raise click.ClickException("not implemented yet")


def continue_loop(
    ctx: click.Context,
    handle: Any,
    spec: str,
    max_iterations: int | None,
    agent_timeout: float | None,
    as_json: bool,
) -> None:
    raise click.ClickException("not implemented yet")
