"""Shared CLI plumbing: the error handler, repository lookup and JSON output.

The handler is the one place that maps failures to exit codes: AutoresearchError → its code
(2, or 130 for an interrupted run), an unexpected exception → 3 with a crash log.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import click

from autoresearch.crash import (
    EXIT_INTERNAL_ERROR,
    disk_full_line,
    internal_error_line,
    write_crash_log,
)
from autoresearch.errors import AutoresearchError

EXIT_RECORDED_FAILURE = 1
EXIT_REFUSED = 2


class AppGroup(click.Group):
    """A group whose commands report AutoresearchError as one line and an exit code."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except AutoresearchError as exc:
            full = disk_full_line(exc, _start(_repo_option(ctx)))
            fail(full or exc.message, exc.exit_code)
        except KeyboardInterrupt:
            click.echo("autoresearch: interrupted", err=True)
            sys.exit(130)
        except (click.ClickException, click.exceptions.Exit, click.Abort):
            raise  # click's own usage errors and exits keep their codes
        except Exception as exc:  # noqa: BLE001 - the one catch-all, at the edge
            start = _repo_option(ctx)
            full = disk_full_line(exc, _start(start))
            if full is not None:  # not a bug: one line and the way on, no crash log
                fail(full, EXIT_REFUSED)
            log = write_crash_log(exc, ["autoresearch", *sys.argv[1:]], _start(start))
            fail(internal_error_line(exc, log), EXIT_INTERNAL_ERROR)


def _repo_option(ctx: click.Context) -> str | None:
    return ctx.obj.get("repo") if isinstance(ctx.obj, dict) else None


def _start(repo: str | None) -> Path | None:
    return Path(repo).absolute() if repo else None


def fail(message: str, code: int = EXIT_REFUSED) -> None:
    say(f"autoresearch: {' '.join(message.splitlines())}", err=True)
    sys.exit(code)


def say(text: str, err: bool = False) -> None:
    """Print text for people: secrets masked (autoresearch.redact), as in every view."""
    from autoresearch.redact import redact

    click.echo(redact(text), err=err)


def repo_root(ctx: click.Context) -> Path:
    """The repository the command acts on (`--repo` or the one around the cwd)."""
    from autoresearch.supervisor.handle import find_repo

    start = ctx.find_root().obj.get("repo") if ctx.find_root().obj else None
    return find_repo(Path(start) if start else Path.cwd())


def emit_json(value: Any) -> None:
    """Print one JSON object on stdout and nothing else (secrets masked, as in every view)."""
    from autoresearch.redact import redact_value

    text = json.dumps(value, ensure_ascii=False, default=str)  # default=str before redaction
    click.echo(json.dumps(redact_value(json.loads(text)), indent=2, ensure_ascii=False))


def warn(message: str) -> None:
    say(message, err=True)


def warn_baseline(manifest: dict[str, Any], baseline: dict[str, Any] | None) -> None:
    """Say loudly when a score_improvement run can never keep anything (the diagnosis is the
    core's: supervisor/diagnose.py)."""
    from autoresearch.supervisor.diagnose import baseline_warning

    text = baseline_warning(manifest, baseline)
    if text:
        warn(text)
