"""A real Ray cluster on this machine for tests: a head and more nodes, each with its own raylet,
object store, resources and node folder (AUTORESEARCH_RAY_DIR), all under one private folder.

Ray binds to the machine's own address by design; the cluster never leaves this machine. On
exit every node is stopped and no raylet or GCS server of the cluster may be left running.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import ray
from ray.cluster_utils import Cluster

from helpers import GIT_ENV

NODE_CPUS = 2


@dataclass
class LocalCluster:
    cluster: Cluster
    base: Path
    nodes: dict[str, Any] = field(default_factory=dict)

    @property
    def address(self) -> str:
        return str(self.cluster.address)

    def node_dir(self, name: str) -> Path:
        return self.base / "nodes" / name

    def add_node(
        self, name: str, resources: dict[str, float], wait: bool = True, cpus: int = NODE_CPUS
    ) -> Any:
        """A node started and (`wait`) known to the cluster; nodes started together are waited
        for together (`cluster.wait_for_nodes()`), their raylets' starts overlapping."""
        node = self.cluster.add_node(
            wait=wait, num_cpus=cpus, resources=resources, env_vars=self._env(name)
        )
        self.nodes[name] = node
        return node

    def remove_node(self, *names: str) -> None:
        """Kill the nodes' raylets and workers at once, as machines that die, and wait until
        the cluster has noticed (a node not yet known dead would still be offered work). All
        are killed first, then waited for together: each takes the cluster's health checks
        (~1 s here) to be known dead."""
        gone = [self.nodes.pop(name) for name in names]
        for node in gone:
            self.cluster.remove_node(node, allow_graceful=False)
        ids = {node.node_id for node in gone}
        deadline = time.monotonic() + 30
        while any(n["NodeID"] in ids and n["Alive"] for n in ray.nodes()):
            assert time.monotonic() < deadline, f"nodes {names} still alive for the cluster"
            time.sleep(0.1)

    def _env(self, name: str) -> dict[str, str]:
        return {"AUTORESEARCH_RAY_DIR": str(self.node_dir(name))}


def stop_boards(job_id: str | None = None) -> dict[str, dict[str, Any]]:
    """The live stop boards of the cluster (from its GCS), by actor id; those of one job (a
    driver) when `job_id` is given."""
    return {k: v for k, v in actors_of("StopBoard", job_id).items() if v["State"] == "ALIVE"}


def actors_of(class_name: str, job_id: str | None = None) -> dict[str, dict[str, Any]]:
    """The actors of a class the cluster's GCS knows, alive or dead, by actor id; those of one
    job (a driver) when `job_id` is given."""
    return {
        actor_id: actor
        for actor_id, actor in ray._private.state.actors().items()
        if actor.get("ActorClassName") == class_name and job_id in (None, actor["JobID"])
    }


def ray_processes(base: Path) -> list[str]:
    """The command lines of this cluster's Ray processes still running (they name its folder)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue
        if str(base) in argv and state != "Z":
            found.append(argv)
    return found


# The shared cluster's nodes: the head and node-b, which alone offers `node_b`, and `pin`
# enough for four tasks at once (test_ray_slots: Ray's resources alone would not keep two of
# its evaluations apart, only the slot does).
SHARED_NODES: dict[str, dict[str, float]] = {"node-b": {"node_b": 1, "pin": 4}}


class SharedCluster:
    """One cluster for the test modules whose tests leave its nodes as they found them (the
    `shared_cluster` fixture, tests/supervisor/conftest.py): starting and stopping one took ~6 s
    of wall a module. Started by the first test that asks for it; the fixture's conftest stops
    it as soon as the next test does not, and runs its users one after another. A module whose
    tests kill nodes adds its own to this one and removes them (`nodes_added`): none kills the
    cluster's own."""

    def __init__(self) -> None:
        self._running: ExitStack | None = None
        self._cluster: LocalCluster | None = None

    def get(self) -> LocalCluster:
        """The running cluster, started when there is none."""
        if self._running is None or self._cluster is None:
            with ExitStack() as stack:
                self._cluster = stack.enter_context(cluster_processes(SHARED_NODES))
                self._running = stack.pop_all()
        return self._cluster

    def stop(self) -> None:
        running, self._running, self._cluster = self._running, None, None
        if running is not None:
            running.close()


@contextmanager
def nodes_added(
    local: LocalCluster, nodes: dict[str, dict[str, float]], cpus: int = 1
) -> Iterator[Callable[[], None]]:
    """`nodes` added to the (shared) cluster for a module whose tests kill them: what it yields
    adds again those a test removed (each test calls it first), and at the end those left are
    removed, so that the modules after it find the cluster as it was. Two nodes added cost
    less than a cluster of its own: no head (GCS) to start and no cluster to stop. One CPU
    each by default: an executor starts a warm worker per CPU on every node before its first
    task, and the shared cluster's own two nodes already have theirs."""

    def restore() -> None:
        missing = {name: res for name, res in nodes.items() if name not in local.nodes}
        for name, resources in missing.items():
            local.add_node(name, resources, wait=False, cpus=cpus)
        if missing:
            local.cluster.wait_for_nodes()

    try:
        restore()
        yield restore
    finally:
        local.remove_node(*(name for name in nodes if name in local.nodes))


@contextmanager
def connected(local: LocalCluster) -> Iterator[LocalCluster]:
    """This process as the cluster's driver for the block: one connection for a module, whose
    executors share it (and its warm workers) instead of connecting and starting workers anew
    each time. A process has one driver connection: the next module connects after this
    block."""
    ray.init(address=local.address, logging_level="ERROR", log_to_driver=False)
    try:
        yield local
    finally:
        ray.shutdown()


@contextmanager
def cluster_processes(extra_nodes: dict[str, dict[str, float]]) -> Iterator[LocalCluster]:
    """The cluster's processes (no driver connection); every one is stopped at the end."""
    base = Path(tempfile.mkdtemp(prefix="ar-ray-", dir="/tmp"))  # short: Ray's socket paths
    saved = dict(os.environ)
    # what the nodes' workers inherit: Ray's files in `base`, a git identity, a quick grace
    os.environ.update(GIT_ENV)
    os.environ.update(
        RAY_TMPDIR=str(base),
        HOME=str(base / "home"),
        AUTORESEARCH_KILL_GRACE_SECONDS="0.5",
        RAY_USAGE_STATS_ENABLED="0",
    )
    cluster: Cluster | None = None
    try:
        cluster = Cluster(
            initialize_head=True,
            head_node_args={
                "num_cpus": NODE_CPUS,
                "resources": {"head": 1},
                "include_dashboard": False,
                # a dead node is known dead within about a second (Ray's default: ~15 s)
                "_system_config": {
                    "health_check_initial_delay_ms": 0,
                    "health_check_period_ms": 300,
                    "health_check_timeout_ms": 300,
                    "health_check_failure_threshold": 3,
                },
                "env_vars": {"AUTORESEARCH_RAY_DIR": str(base / "nodes" / "head")},
            },
        )
        local = LocalCluster(cluster, base)
        for name, resources in extra_nodes.items():
            local.add_node(name, resources, wait=False)
        cluster.wait_for_nodes()
        os.environ.clear()
        os.environ.update(saved)
        yield local
    finally:
        os.environ.clear()
        os.environ.update(saved)
        if ray.is_initialized():  # a driver connection a failed block left
            ray.shutdown()
        if cluster is not None:
            cluster.shutdown()
        left = _wait_gone(base)
        shutil.rmtree(base, ignore_errors=True)
        assert not left, f"Ray processes left running: {left}"


def _wait_gone(base: Path, patience: float = 10.0) -> list[str]:
    deadline = time.monotonic() + patience
    while (left := ray_processes(base)) and time.monotonic() < deadline:
        time.sleep(0.1)
    return left
