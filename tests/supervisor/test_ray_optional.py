"""Ray is an optional extra: autoresearch never imports it unless asked, and asking without it
installed is one clear line before anything is prepared (no cluster needed here)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from helpers import GIT_ENV, Repo

# Run the real CLI with `import ray` failing, as on a machine without the extra.
WITHOUT_RAY = (
    "import sys; sys.modules['ray'] = None; "
    "from autoresearch.cli import main; sys.argv = ['autoresearch', *sys.argv[1:]]; main()"
)


def test_importing_autoresearch_and_its_ray_executor_does_not_import_ray() -> None:
    code = (
        "import sys, autoresearch.cli, autoresearch.supervisor.ray_executor, "
        "autoresearch.supervisor.remote, autoresearch.supervisor.lanes; "
        "print('ray' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"


def test_executor_ray_without_ray_is_one_line_and_prepares_nothing(repo: Repo) -> None:
    mission = repo.mission()
    done = subprocess.run(
        [sys.executable, "-c", WITHOUT_RAY, "run", str(mission), "--agent", "cmd:true",
         "--executor", "ray", "--max-iterations", "1"],
        cwd=repo.root, env={**os.environ, **GIT_ENV}, capture_output=True, text=True,
        timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip().splitlines() == [
        "autoresearch: --executor ray needs Ray on this machine and on every node: "
        "pip install 'autoresearch[ray]'"
    ]
    assert not (Path(repo.root) / ".autoresearch" / "runs").exists()
