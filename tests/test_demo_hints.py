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
    done = cli("demo", str(demo), "--iterations", "2", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    steps = done.stdout.split("Next steps:\n", 1)[1].split("\n\n", 1)[0].splitlines()
    commands = [shlex.split(line, comments=True) for line in steps if "README" not in line]
    assert [argv[0] for argv in commands] == ["git", "autoresearch", "autoresearch"]
    for argv in commands[:2]:  # finalize would create branches: reading is enough
        if argv[0] == "autoresearch":
            argv = [sys.executable, "-m", "autoresearch", *argv[1:]]
        ran = subprocess.run(argv, cwd=tmp_path, env={**GIT_ENV, "PATH": "/usr/bin:/bin",
                                              "XDG_STATE_HOME": os.environ["XDG_STATE_HOME"]},
                             capture_output=True, text=True)  # fmt: skip
        assert ran.returncode == 0, (argv, ran.stderr)
        assert ran.stdout.strip()
    assert commands[2][2] == str(demo)
