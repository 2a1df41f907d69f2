"""A command group that imports a subcommand's module only when that subcommand runs.

`autoresearch --help`, a hook and a status line start in a fraction of the time the whole
command tree takes to import (the journal views, the contracts, the supervisor): the group
lists its commands from a table of where each lives and the first paragraph of its help.
The table is checked against the real commands (tests/test_help.py), so `--help` prints
exactly what the imported commands would.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from typing import Any, NamedTuple

import click
from click.formatting import HelpFormatter

from autoresearch.cli.common import AppGroup


class LazyCommand(NamedTuple):
    """Where a subcommand is defined (`module`'s `attribute`) and its help's first paragraph (a
    NamedTuple: every command builds this class, ~0.3 ms less than a frozen dataclass's)."""

    module: str
    attribute: str
    summary: str

    def load(self) -> click.Command:
        command = getattr(importlib.import_module(self.module), self.attribute)
        if not isinstance(command, click.Command):
            raise TypeError(f"{self.module}.{self.attribute} is no click command")
        return command

    def short_help(self, limit: int) -> str:
        """What `--help` lists, shortened as click shortens the command's own help."""
        return click.Command(None, help=self.summary).get_short_help_str(limit)


class LazyGroup(AppGroup):
    """An AppGroup whose `lazy` subcommands are imported the first time one is asked for."""

    def __init__(self, *args: Any, lazy: Mapping[str, LazyCommand], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.lazy = dict(lazy)

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*self.commands, *self.lazy})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in self.commands and cmd_name in self.lazy:
            self.add_command(self.lazy[cmd_name].load(), cmd_name)
        return super().get_command(ctx, cmd_name)

    def resolve_command(
        self, ctx: click.Context, args: list[str]
    ) -> tuple[str | None, click.Command | None, list[str]]:
        if args and self.get_command(ctx, args[0]) is None:
            for name in self.lazy:  # a typo: click's "Did you mean" looks at loaded commands
                self.get_command(ctx, name)
        return super().resolve_command(ctx, args)

    def format_commands(self, ctx: click.Context, formatter: HelpFormatter) -> None:
        """click's own listing, with the summaries of commands not imported yet."""
        names = [name for name in self.list_commands(ctx) if not self._hidden(name)]
        if not names:
            return
        limit = formatter.width - 6 - max(len(name) for name in names)
        rows = [(name, self._short_help(name, limit)) for name in names]
        with formatter.section("Commands"):
            formatter.write_dl(rows)

    def _hidden(self, name: str) -> bool:
        loaded = self.commands.get(name)
        return loaded is not None and loaded.hidden

    def _short_help(self, name: str, limit: int) -> str:
        loaded = self.commands.get(name)
        return loaded.get_short_help_str(limit) if loaded else self.lazy[name].short_help(limit)
