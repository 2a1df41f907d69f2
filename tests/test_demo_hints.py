"""The commands `demo` prints for the user to copy work as pasted, whatever the path."""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from pathlib import Path

from helpers import GIT_ENV, cli


def test_the_demos_next_steps_run_as_printed_in_a_path_with_spaces_and_quotes(
    tmp_path: Path,
) -> None:
    demo = tmp_path / "my demo's $HOME"
    # a fresh shell, as after `python3 dev.py demo`: autoresearch is not on its PATH
    fresh = {"PATH": "/usr/bin:/bin"}
    done = cli("demo", str(demo), "--iterations", "2", cwd=tmp_path, env=fresh)
    assert done.returncode == 0, done.stderr
    steps = done.stdout.split("Next steps:\n", 1)[1].split("\n\n", 1)[0].splitlines()
    commands = [
        shlex.split(line, comments=True) for line in steps if "writing-a-mission.md" not in line
    ]
    assert [Path(argv[0]).name for argv in commands] == ["git", "autoresearch", "autoresearch"]
    assert Path(commands[1][0]).parent == Path(sys.executable).parent
    for argv in commands[:2]:  # finalize would create branches: reading is enough
        ran = subprocess.run(argv, cwd=tmp_path,
                             env={**GIT_ENV, **fresh, "XDG_STATE_HOME": os.environ["XDG_STATE_HOME"]},
                             capture_output=True, text=True)  # fmt: skip
        assert ran.returncode == 0, (argv, ran.stderr)
        assert ran.stdout.strip()
    assert commands[2][2] == str(demo)
