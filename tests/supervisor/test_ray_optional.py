"""Ray is an optional extra: autoresearch never imports it unless asked (no cluster here)."""

from __future__ import annotations

import subprocess
import sys


def test_importing_autoresearch_and_its_ray_executor_does_not_import_ray() -> None:
    code = (
        "import sys, autoresearch.cli, autoresearch.supervisor.ray_executor, "
        "autoresearch.supervisor.remote; "
        "print('ray' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"
