"""Shared CLI plumbing: the error handler, repository lookup, JSON output (the loop options
`run`, `resume` and `continue` share are cli/options.py's).

The handler is the one place that maps failures to exit codes: AutoresearchError → its code
(2, or 130 for an interrupted run), an unexpected exception → 3 with a crash log, an output
whose reader left → 141, quietly (crash.EXIT_CLOSED_PIPE).
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable, Iterator
from enum import StrEnum
from typing import TYPE_CHECKING, Any, TypeVar

import click

from autoresearch.api import AutoresearchError
from autoresearch.cli import startup

# imported where used, so that `--help` starts without them (tests/test_import_graph.py)
if TYPE_CHECKING:
    from pathlib import Path

    from autoresearch.api import RunManifest, StoredEvaluation

EXIT_RECORDED_FAILURE = 1
EXIT_REFUSED = 2
EXIT_INTERRUPTED = 130  # a signal stopped the command (or the loop it drove)


class AppGroup(click.Group):
    """A group whose commands report AutoresearchError as one line and an exit code."""

    def make_context(self, *args: Any, **kwargs: Any) -> click.Context:
        # `autoresearch --help` and `--version` print while the arguments are parsed
        with _closed_output_is_quiet():
            return super().make_context(*args, **kwargs)

    def invoke(self, ctx: click.Context) -> Any:
        with _closed_output_is_quiet():
            return self._invoke(ctx)

    def resolve_command(
        self, ctx: click.Context, args: list[str]
    ) -> tuple[str | None, click.Command | None, list[str]]:
        name, command, rest = super().resolve_command(ctx, args)
        if not isinstance(command, click.Group):  # the command to run is imported: start-up
            startup.resume()  # is over (cli/startup.py)
        return name, command, rest

    def _invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except AutoresearchError as exc:
            from autoresearch.api import disk_full_line

            full = disk_full_line(exc, _start(_repo_option(ctx)))
            fail(full or exc.message, exc.exit_code)
        except KeyboardInterrupt:
            click.echo("autoresearch: interrupted", err=True)
            sys.exit(EXIT_INTERRUPTED)
        except (click.ClickException, click.exceptions.Exit, click.Abort):
            raise  # click's own usage errors and exits keep their codes
        except Exception as exc:  # the one catch-all, at the edge
            _fail_unexpected(ctx, exc)
            raise  # not a bug: the reader left (_closed_output_is_quiet)


def _fail_unexpected(ctx: click.Context, exc: Exception) -> None:
    """Exit 3 with a crash log, or 2 on a full disk; return only when the output's reader left."""
    from autoresearch.api import (
        EXIT_INTERNAL_ERROR,
        disk_full_line,
        internal_error_line,
        output_closed,
        write_crash_log,
    )

    if output_closed(exc):
        return
    start = _repo_option(ctx)
    full = disk_full_line(exc, _start(start))
    if full is not None:  # not a bug: one line and the way on, no crash log
        fail(full, EXIT_REFUSED)
    log = write_crash_log(exc, ["autoresearch", *sys.argv[1:]], _start(start))
    fail(internal_error_line(exc, log), EXIT_INTERNAL_ERROR)


@contextlib.contextmanager
def _closed_output_is_quiet() -> Iterator[None]:
    """A reader that left (`status | head -1`) ends the command with 141 and nothing more: no
    line (stderr may be the same closed pipe), no crash log. Click's own answer is exit 1,
    which here means a recorded failure."""
    try:
        yield
    except (BrokenPipeError, BaseExceptionGroup) as exc:  # a group: the MCP server's tasks
        from autoresearch.api import EXIT_CLOSED_PIPE, output_closed, quiet_closed_output

        if not output_closed(exc):
            raise
        quiet_closed_output()
        sys.exit(EXIT_CLOSED_PIPE)


def _repo_option(ctx: click.Context) -> str | None:
    return ctx.obj.get("repo") if isinstance(ctx.obj, dict) else None


def _start(repo: str | None) -> Path | None:
    from pathlib import Path  # here: `--help` names no path (pathlib brings urllib.parse)

    return Path(repo).absolute() if repo else None


def fail(message: str, code: int = EXIT_REFUSED) -> None:
    say(f"autoresearch: {' '.join(message.splitlines())}", err=True)
    sys.exit(code)


def say(text: str, err: bool = False) -> None:
    """Print text for people: secrets masked (autoresearch.redact), as in every view."""
    from autoresearch.api import redact

    click.echo(redact(text), err=err)


def repo_root(ctx: click.Context) -> Path:
    """The repository the command acts on (`--repo` or the one around the cwd)."""
    from pathlib import Path

    from autoresearch.api import find_repo

    start = ctx.find_root().obj.get("repo") if ctx.find_root().obj else None
    return find_repo(Path(start) if start else Path.cwd())


def emit_json(value: Any) -> None:
    """Print one JSON object on stdout and nothing else (secrets masked, as in every view)."""
    import json  # here: `--help` and a command without --json write none

    from autoresearch.api import redact_value

    # shaped as JSON first, so that what masking sees is what is written: a value JSON has no
    # type for becomes its str() (under a secret-named key, masked whole), a key its JSON
    # name; then masked in place (not dumped and read back: status RUN --json ~10 ms)
    masked = redact_value(_json_shaped(value))
    click.echo(json.dumps(masked, indent=2, ensure_ascii=False))


def _json_shaped(value: Any) -> Any:
    """`value` as `json.loads(json.dumps(value, default=str))` gives it back, without the
    text in between."""
    if value is None or isinstance(value, str | int | float):  # bool is an int
        return value
    if isinstance(value, dict):
        return {_json_name(k): _json_shaped(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_json_shaped(v) for v in value]
    return str(value)


def _json_name(key: Any) -> str:
    """The name JSON writes for a mapping's key (true, 1, 2.5, null; any other key its str())."""
    import json

    if isinstance(key, str):
        return key
    return json.dumps(key) if key is None or isinstance(key, int | float) else str(key)


def warn(message: str) -> None:
    say(message, err=True)


def warn_baseline(manifest: RunManifest, baseline: StoredEvaluation | None) -> None:
    """Say loudly when a score_improvement run can never keep anything (the diagnosis is the
    core's: supervisor/diagnose.py)."""
    from autoresearch.api import baseline_warning

    text = baseline_warning(manifest.run, baseline)
    if text:
        warn(text)


F = TypeVar("F", bound=Callable[..., Any])


def enum_choice(kind: type[StrEnum]) -> click.Choice[str]:
    """A click choice of an enum's values in the enum's order, so an option offers exactly the
    values the core accepts."""
    return click.Choice([member.value for member in kind])


def stacked(*options: Callable[[Any], Any]) -> Callable[[F], F]:
    """Click options applied as if written one above the other, first on top (the order
    `--help` lists them)."""

    def apply(func: F) -> F:
        for option in reversed(options):
            func = option(func)
        return func

    return apply
