"""The collector while a command starts (cli/startup.py): off during start-up in the process's
own entry point, on again – with start-up's objects frozen – once the command runs, and never
touched for code that merely imports the CLI."""

from __future__ import annotations

import gc
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from autoresearch.cli import app, startup


@pytest.fixture
def collector() -> Iterator[None]:
    """This test process's collector as it was, whatever the test did to it."""
    was_on = gc.isenabled()
    startup._paused.clear()
    startup._entry.clear()
    try:
        yield
    finally:
        startup._paused.clear()
        startup._entry.clear()
        gc.unfreeze()
        if was_on:
            gc.enable()
        else:
            gc.disable()


@pytest.mark.parametrize(
    ("on_at_start", "paused", "on_after", "frozen"),
    [
        (True, True, True, True),  # the entry point's case: off, then on with start-up frozen
        (False, True, False, False),  # someone else's "off" is left alone
        (True, False, True, False),  # resume without a pause does nothing
    ],
)
def test_pause_and_resume(
    collector: None, on_at_start: bool, paused: bool, on_after: bool, frozen: bool
) -> None:
    gc.enable() if on_at_start else gc.disable()
    gc.unfreeze()
    if paused:
        startup.pause()
        assert not gc.isenabled()
    startup.resume()
    assert gc.isenabled() is on_after
    assert (gc.get_freeze_count() > 0) is frozen


@pytest.mark.parametrize("entry", [True, False])
def test_a_command_s_own_start_up_is_paused_only_under_the_entry_point(
    collector: None, entry: bool
) -> None:
    gc.enable()
    gc.unfreeze()
    if entry:  # cli.main paused, and the command's resolution resumed
        startup.pause()
        startup.resume()
    gc.unfreeze()
    with startup.starting():
        assert gc.isenabled() is not entry
    assert gc.isenabled() and (gc.get_freeze_count() > 0) is entry


def test_the_cli_run_in_process_leaves_the_collector_alone(collector: None, tmp_path: Path) -> None:
    gc.enable()
    gc.unfreeze()
    done = CliRunner().invoke(app, ["--repo", str(tmp_path), "status"])
    assert done.exit_code in (0, 2), done.output
    assert gc.isenabled() and gc.get_freeze_count() == 0


# The process's entry point, in a process of its own: the collector as the command finds it.
PROBE = textwrap.dedent(
    """
    import gc, sys
    import click
    from autoresearch.cli import app, main

    @app.command("probe")
    def probe() -> None:
        click.echo(f"{gc.isenabled()} {gc.get_freeze_count() > 0}")

    sys.argv = ["autoresearch", *sys.argv[1:]]
    main()
    """
)


def test_the_entry_point_runs_the_command_with_the_collector_on(tmp_path: Path) -> None:
    """Off while `main` starts the command (a subcommand group resolves it), on with start-up
    frozen once it runs."""
    done = subprocess.run(
        [sys.executable, "-c", PROBE, "probe"],
        cwd=tmp_path, capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "True True"
