"""`autoresearch exp …`: in-agent experiment sessions (experiments.md)."""

from __future__ import annotations

import click

from autoresearch.cli.common import AppGroup


@click.group(cls=AppGroup)
def exp() -> None:
    """Experiment sessions: tools a long-lived agent calls itself."""
