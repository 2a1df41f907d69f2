"""Ray is an optional extra: autoresearch never imports it unless asked, and asking without it
installed is one clear line before anything is prepared (no cluster needed here)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

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


def test_workers_are_warmed_on_every_live_node_with_cpus_one_per_cpu_up_to_what_is_wanted() -> None:
    from autoresearch.supervisor.ray_executor import MAX_WARM_PER_NODE, warm_counts

    nodes = [
        {"NodeID": "a", "Alive": True, "Resources": {"CPU": 2.0}},
        {"NodeID": "b", "Alive": True, "Resources": {"CPU": 8.0, "GPU": 1.0}},
        {"NodeID": "dead", "Alive": False, "Resources": {"CPU": 4.0}},
        {"NodeID": "gpu-only", "Alive": True, "Resources": {"GPU": 4.0}},
        {"NodeID": "huge", "Alive": True, "Resources": {"CPU": 256.0}},
    ]
    assert warm_counts(nodes, 5) == {"a": 2, "b": 5, "huge": 5}
    assert warm_counts(nodes, 1000) == {"a": 2, "b": 8, "huge": MAX_WARM_PER_NODE}
    assert warm_counts(nodes, 0) == {}
    assert warm_counts([], 4) == {}


@pytest.mark.parametrize(
    ("address", "endpoint"),
    [
        ("127.0.0.1:6379", ("127.0.0.1", 6379)),
        ("ray://head.example:10001", ("head.example", 10001)),
        ("[::1]:6379", ("::1", 6379)),
        ("auto", None),
        ("head.example", None),
        ("head.example:port", None),
    ],
)
def test_the_endpoint_a_ray_address_is_probed_at(
    address: str, endpoint: tuple[str, int] | None
) -> None:
    from autoresearch.supervisor.ray_executor import gcs_endpoint

    assert gcs_endpoint(address) == endpoint
