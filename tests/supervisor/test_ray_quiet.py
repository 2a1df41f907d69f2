"""The Ray autoresearch starts itself runs quiet (no task events, metrics, event-loop stats nor
debug dumps: `ray_quiet.QUIET_SYSTEM_CONFIG`), read back from the running cluster's GCS; a
cluster a user started (the suite's shared one) is joined as it is. Each driver is a real process
of its own with its own Ray folder, and no Ray process of it may outlive the test."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

ray = pytest.importorskip("ray")

from autoresearch.supervisor.ray_quiet import QUIET_SYSTEM_CONFIG  # noqa: E402
from ray_cluster import SharedCluster, ray_processes  # noqa: E402

pytestmark = pytest.mark.ray

# a driver that opens the executor as a run does (no address: RAY_ADDRESS, else this machine),
# prints the cluster's system config as its GCS holds it, and stops what it started
DRIVER = (
    "import json, ray\n"
    "from autoresearch.supervisor.ray_executor import RayExecutor\n"
    "executor = RayExecutor(None, warm=0)\n"
    "try:\n"
    "    print(json.dumps(ray._private.state.state.get_system_config()))\n"
    "finally:\n"
    "    executor.shutdown()\n"
)


def _driver_env(base: Path, address: str | None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "RAY_ADDRESS"}
    env.update(RAY_TMPDIR=str(base), RAY_USAGE_STATS_ENABLED="0", AUTORESEARCH_RAY_DIR="")
    if address is not None:
        env["RAY_ADDRESS"] = address
    return env


def _system_config(base: Path, address: str | None = None) -> dict[str, object]:
    done = subprocess.run(
        [sys.executable, "-c", DRIVER], env=_driver_env(base, address), capture_output=True,
        text=True, timeout=180, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    config: dict[str, object] = json.loads(done.stdout.strip().splitlines()[-1])
    return config


@pytest.fixture
def ray_base() -> Iterator[Path]:
    """A short folder for Ray's files, checked empty of running Ray processes at the end: its
    socket paths must stay under 108 bytes, which pytest's own folders under an xdist worker
    (`/tmp/pytest-of-…/pytest-N/popen-gwK/…`) can exceed."""
    base = Path(tempfile.mkdtemp(prefix="ar-rq-", dir="/tmp"))
    try:
        yield base
        assert not ray_processes(base), "Ray processes left running"
    finally:
        shutil.rmtree(base, ignore_errors=True)


def test_the_ray_a_run_starts_itself_reports_no_task_events_metrics_or_stats(
    ray_base: Path,
) -> None:
    config = _system_config(ray_base)
    assert {k: config.get(k) for k in QUIET_SYSTEM_CONFIG} == dict(QUIET_SYSTEM_CONFIG)


def test_a_cluster_the_user_started_is_joined_with_its_own_settings(
    ray_base: Path, shared_cluster: SharedCluster
) -> None:
    """The suite's shared cluster stands for the user's (its head has a system config of its
    own, the tests' quick health checks): joined as it is, none of the quiet settings."""
    config = _system_config(ray_base, shared_cluster.get().address)
    assert not set(config) & set(QUIET_SYSTEM_CONFIG)
