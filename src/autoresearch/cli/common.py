"""Shared CLI plumbing: the error handler, repository lookup and JSON output."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import click

from autoresearch.errors import AutoresearchError

EXIT_RECORDED_FAILURE = 1
EXIT_REFUSED = 2


class AppGroup(click.Group):
    """A group whose commands report AutoresearchError as one line and an exit code."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except AutoresearchError as exc:
            fail(exc.message, exc.exit_code)
        except KeyboardInterrupt:
            click.echo("autoresearch: interrupted", err=True)
            sys.exit(130)


def fail(message: str, code: int = EXIT_REFUSED) -> None:
    click.echo(f"autoresearch: {' '.join(message.splitlines())}", err=True)
    sys.exit(code)


def repo_root(ctx: click.Context) -> Path:
    """The repository the command acts on (`--repo` or the one around the cwd)."""
    from autoresearch.supervisor.handle import find_repo

    start = ctx.find_root().obj.get("repo") if ctx.find_root().obj else None
    return find_repo(Path(start) if start else Path.cwd())


def emit_json(value: Any) -> None:
    """Print one JSON object on stdout and nothing else."""
    click.echo(json.dumps(value, indent=2, ensure_ascii=False, default=str))


def warn(message: str) -> None:
    click.echo(message, err=True)
