"""Every command and every option of the CLI says what it does in `--help`."""

from __future__ import annotations

from collections.abc import Iterator

import click
import pytest
from click.testing import CliRunner

from autoresearch.cli import app


def commands(
    command: click.Command = app, path: tuple[str, ...] = ()
) -> Iterator[tuple[tuple[str, ...], click.Command]]:
    yield path, command
    if isinstance(command, click.Group):
        for name, sub in sorted(command.commands.items()):
            yield from commands(sub, (*path, name))


ALL = list(commands())


def test_the_walk_sees_the_whole_tree() -> None:
    names = {" ".join(path) for path, _ in ALL}
    assert {"run", "resume", "continue", "clean", "exp log", "exp hooks install", "job start",
            "mcp", "worker"} <= names  # fmt: skip


@pytest.mark.parametrize(
    ("path", "command"), ALL, ids=[" ".join(p) or "autoresearch" for p, _ in ALL]
)
def test_every_command_and_option_has_help(path: tuple[str, ...], command: click.Command) -> None:
    assert (command.help or "").strip(), f"autoresearch {' '.join(path)}: no help text"
    for param in command.params:
        if isinstance(param, click.Option) and not param.hidden:
            assert (param.help or "").strip(), f"autoresearch {' '.join(path)} {param.opts[0]}"
        if isinstance(param, click.Argument) and not param.required:
            # what happens without it must be said: the usage line only shows it is optional
            name = (param.metavar or param.name or "").strip("[].").upper()
            assert name in (command.help or ""), f"autoresearch {' '.join(path)}: {name}"
    done = CliRunner().invoke(app, [*path, "--help"], prog_name="autoresearch")
    assert done.exit_code == 0, done.output
    assert done.output.startswith(f"Usage: autoresearch {' '.join(path)}".rstrip())
