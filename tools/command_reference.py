"""The command reference page, generated from the CLI itself: docs/reference/commands.md.

Each command's section is its `--help` as click prints it at a fixed width, walked from the
root group down (the lazy group imports each command to list it). tests/test_docs.py fails when
the committed page differs from what this prints, so `--help` and the docs cannot drift.

    python tools/command_reference.py          # rewrite docs/reference/commands.md
    python tools/command_reference.py --check  # exit 1 when the page is out of date
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import click
from click.testing import CliRunner

from autoresearch.cli import app

PAGE = Path(__file__).resolve().parents[1] / "docs" / "reference" / "commands.md"
REGENERATE = "python tools/command_reference.py"
# wide enough for the option tables, narrow enough to read without scrolling
WIDTH = 100
HEADER = f"""\
# Command reference

Every command's `--help`, generated from the CLI itself by `{REGENERATE}`
(`tests/test_docs.py` fails when this page and `--help` disagree). The guides explain what
the options are for; [exit codes](../operations.md#exit-codes) are shared by every command.
"""


def _subcommands(command: click.Command) -> list[tuple[str, click.Command]]:
    if not isinstance(command, click.Group):
        return []
    ctx = click.Context(command)
    found = ((name, command.get_command(ctx, name)) for name in command.list_commands(ctx))
    return [(name, sub) for name, sub in found if sub is not None and not sub.hidden]


def walk(command: click.Command = app, path: tuple[str, ...] = ()) -> Iterator[tuple[str, ...]]:
    """Every visible command's path, a group before its commands, in `--help`'s order."""
    yield path
    for name, sub in _subcommands(command):
        yield from walk(sub, (*path, name))


def help_text(path: tuple[str, ...]) -> str:
    """`autoresearch PATH --help` as a terminal WIDTH columns wide shows it."""
    done = CliRunner().invoke(
        app, [*path, "--help"], prog_name="autoresearch", terminal_width=WIDTH
    )
    if done.exit_code != 0:
        raise RuntimeError(f"autoresearch {' '.join(path)} --help failed: {done.output}")
    return done.output.rstrip() + "\n"


def render() -> str:
    """The whole page."""
    sections = [HEADER]
    for path in walk():
        title = " ".join(("autoresearch", *path))
        sections.append(f"## {title}\n\n```text\n{help_text(path)}```\n")
    return "\n".join(sections)


def main(argv: list[str]) -> int:
    page = render()
    if argv == ["--check"]:
        if PAGE.read_text() == page:
            return 0
        print(f"{PAGE} is out of date: run `{REGENERATE}`", file=sys.stderr)
        return 1
    PAGE.write_text(page)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
