"""The frontier and a portfolio of agents on Ray (issue 33): a Ray run has lanes, and lanes
run both; each candidate is judged against the elite its session started from."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("ray")

from helpers import cli, make_repo
from ray_cluster import LocalCluster, SharedCluster, connected

pytestmark = pytest.mark.ray
FAKE = Path(__file__).parent / "fakes/portfolio_agent.py"
GOOD = f"cmd:{sys.executable} {FAKE} 1.0 0"
BAD = f"cmd:{sys.executable} {FAKE} 0.0 0"


@pytest.fixture(scope="module")
def cluster(shared_cluster: SharedCluster) -> Iterator[LocalCluster]:
    with connected(shared_cluster.get()) as c:
        yield c


def test_a_frontier_portfolio_runs_on_ray(cluster: LocalCluster, tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    repo.mission()
    done = cli(
        "run", "missions/demo", "--agent", BAD, "--agent", GOOD, "--executor", "ray",
        "--address", cluster.address, "--lanes", "2", "--strategy", "frontier",
        "--max-iterations", "8", "--no-certify", "--run-tag", "RS", cwd=repo.root, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    shown = json.loads(cli("status", "missions-demo-rs", "--json", cwd=repo.root).stdout)
    rows = shown["iterations"][1:]
    assert len(rows) == 8
    for row in rows:  # judged against its own parent, never replayed onto the best
        assert not any("replayed onto" in note for note in row["notes"]), row
        if row["candidate_commit"] and row["decision"] != "interrupted":
            assert row["parent"] == row["base_commit"], row
    archive = shown["archive"]
    assert len(archive) >= 2 and archive[0]["commit"] == shown["last_kept_commit"]
    assert {a["agent"] for a in shown["agents"] if a["sessions"] >= 2} == {BAD, GOOD}
