"""`autoresearch mcp`: options and the message when the mcp extra is missing."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from click.testing import CliRunner

from autoresearch.cli import app

# Runs the CLI with the SDK made unimportable, as in an install without the `mcp` extra.
WITHOUT_SDK = (
    "import sys; sys.modules['mcp'] = None; sys.argv = ['autoresearch', 'mcp']; "
    "from autoresearch.cli import main; main()"
)


def test_without_the_mcp_extra_it_says_how_to_install_it(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-c", WITHOUT_SDK],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 2
    assert done.stdout == ""
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("autoresearch: the MCP server needs the mcp extra")
    assert lines[0].endswith("pip install '.[mcp]' in a clone of autoresearch")


def test_host_and_port_are_for_http_only(tmp_path: Path) -> None:
    done = CliRunner().invoke(app, ["--repo", str(tmp_path), "mcp", "--port", "9000"])
    assert done.exit_code == 2
    assert "--insecure-no-auth apply to --transport http only" in done.output


def test_http_listens_on_loopback_only(tmp_path: Path) -> None:
    done = CliRunner().invoke(app, ["mcp", "--transport", "http", "--host", "0.0.0.0"])
    assert done.exit_code == 2 and "0.0.0.0" in done.output


def test_a_missing_repo_directory_is_refused(tmp_path: Path) -> None:
    done = CliRunner().invoke(app, ["--repo", str(tmp_path / "nope"), "mcp"])
    assert done.exit_code == 2 and "--repo is not a directory" in done.output


def test_help_lists_the_mcp_command() -> None:
    done = CliRunner().invoke(app, ["--help"])
    assert done.exit_code == 0 and "mcp" in done.output
    sub = CliRunner().invoke(app, ["mcp", "--help"])
    assert "--transport" in sub.output and "run_experiment" in sub.output
