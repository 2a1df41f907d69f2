"""Plateaus on Ray (issue 33): the plateau counts the run's iterations over the lanes a Ray
cluster runs, as on this machine; `stop` ends the run with the pinned reason."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("ray")

from autoresearch.decide import stop_plateau
from helpers import cli, make_repo
from ray_cluster import LocalCluster, SharedCluster, connected

pytestmark = pytest.mark.ray
FLAT_AGENT = f"cmd:{sys.executable} {Path(__file__).parent / 'fakes/flat_agent.py'}"


@pytest.fixture(scope="module")
def cluster(shared_cluster: SharedCluster) -> Iterator[LocalCluster]:
    with connected(shared_cluster.get()) as c:
        yield c


def test_a_flat_ray_run_over_two_lanes_stops_on_its_plateau(
    cluster: LocalCluster, tmp_path: Path
) -> None:
    repo = make_repo(tmp_path / "repo")
    repo.mission()
    done = cli(
        "run", "missions/demo", "--agent", FLAT_AGENT, "--executor", "ray", "--address",
        cluster.address, "--lanes", "2", "--plateau", "3", "--on-plateau", "stop",
        "--max-iterations", "20", "--no-certify", "--json", cwd=repo.root, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    loop = json.loads(done.stdout)
    assert (loop["status"], loop["stop_reason"]) == ("completed", stop_plateau(3))
    assert 3 <= loop["iteration"] <= 4  # the other lane's session in flight is judged too
