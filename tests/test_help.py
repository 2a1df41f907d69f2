"""Every command and every option of the CLI says what it does in `--help`."""

from __future__ import annotations

from collections.abc import Iterator

import click
import pytest
from click.testing import CliRunner

from autoresearch.cli import app
from autoresearch.cli.lazy import LazyCommand, LazyGroup


def subcommands(group: click.Group) -> dict[str, click.Command]:
    """A group's commands, those a LazyGroup has not imported yet included."""
    ctx = click.Context(group)
    found = {name: group.get_command(ctx, name) for name in group.list_commands(ctx)}
    return {name: command for name, command in found.items() if command is not None}


def commands(
    command: click.Command = app, path: tuple[str, ...] = ()
) -> Iterator[tuple[tuple[str, ...], click.Command]]:
    yield path, command
    if isinstance(command, click.Group):
        for name, sub in sorted(subcommands(command).items()):
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


LAZY = [
    (path, name, entry)
    for path, group in ALL
    if isinstance(group, LazyGroup)
    for name, entry in group.lazy.items()
]


@pytest.mark.parametrize(
    ("path", "name", "entry"), LAZY, ids=[" ".join((*p, n)) for p, n, _ in LAZY]
)
def test_the_listing_of_a_command_not_imported_yet_is_its_own_help(
    path: tuple[str, ...], name: str, entry: LazyCommand
) -> None:
    # `--help` lists a LazyGroup's commands from its table without importing them: the table
    # must say what the command's own help would (edit the table in cli/__init__.py or
    # cli/exp_group.py with the command's first paragraph)
    command = entry.load()
    assert command.name == name, f"autoresearch {' '.join(path)}: {name} loads {command.name}"
    assert not (command.short_help or command.hidden or command.deprecated)
    assert entry.summary == command.get_short_help_str(limit=10_000)
