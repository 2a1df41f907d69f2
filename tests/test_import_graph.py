"""The light commands start light: `--help`, `--version` and a group's help import click and a
few vocabulary modules, never the journal, the contracts, an engine or a heavy library (each
costs a hook or a status line its start-up time: issue 36)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

# Runs the real entry point in a fresh interpreter and prints what it imported.
PROBE = """
import json, sys
from autoresearch.cli import main
sys.argv = ["autoresearch", *sys.argv[1:]]
try:
    main()
except SystemExit:
    pass
print(json.dumps(sorted(sys.modules)), file=sys.stderr)
"""

HEAVY = (
    "autoresearch.journal",
    "autoresearch.contracts",
    "autoresearch.supervisor",
    "autoresearch.experiments",
    "autoresearch.worker",
    "autoresearch.mcp",
    "autoresearch.crash",
    "sqlite3",
    "rich",
    "yaml",
    "mcp",
    "pydantic",
    "matplotlib",
    "mlflow",
)


def imported_by(*args: str) -> list[str]:
    done = subprocess.run(
        [sys.executable, "-c", PROBE, *args], capture_output=True, text=True, check=True
    )
    modules: list[str] = json.loads(done.stderr.splitlines()[-1])
    return modules


def heavy(modules: list[str]) -> list[str]:
    return [m for m in modules if any(m == h or m.startswith(f"{h}.") for h in HEAVY)]


@pytest.mark.parametrize(
    "args",
    [("--help",), ("--version",), ("exp", "--help"), ("exp", "hook", "--help"), ("mcp", "--help")],
    ids=" ".join,
)
def test_a_light_command_imports_nothing_heavy(args: tuple[str, ...]) -> None:
    assert heavy(imported_by(*args)) == []


def test_help_imports_no_command_module() -> None:
    # the listing comes from the table in cli/__init__.py: no command's module is imported
    commands = [m for m in imported_by("--help") if m.startswith("autoresearch.cli.")]
    assert commands == ["autoresearch.cli.common", "autoresearch.cli.lazy"]


def test_the_probe_sees_a_heavy_import() -> None:
    # `status` reads the journal: were the probe blind, the tests above would pass vacuously
    assert "autoresearch.journal.views" in heavy(imported_by("status", "--help"))


@pytest.mark.parametrize(
    ("args", "offered"),
    [(("stauts",), "Did you mean 'status'?"), (("exp", "hok"), "'hook', 'hooks'")],
)
def test_a_mistyped_command_is_offered_one_not_imported_yet(
    args: tuple[str, ...], offered: str
) -> None:
    # in a fresh interpreter: no command module imported before the typo is resolved
    done = subprocess.run(
        [sys.executable, "-m", "autoresearch", *args], capture_output=True, text=True, check=False
    )
    assert done.returncode == 2
    assert offered in done.stderr.splitlines()[-1]
