from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from autoresearch.supervisor.handle import RunHandle
from autoresearch.supervisor.prepare import prepare


@pytest.fixture
def run(mission_dir: Path) -> Iterator[RunHandle]:
    handle = prepare(mission_dir, run_tag="T1")
    try:
        yield handle
    finally:
        handle.close()


# The shared Ray cluster (ray_cluster.SharedCluster) of this process, once a test asked for it,
# and the modules that use it. ray_cluster is imported in the fixture, not at the top: the
# suite runs without Ray too.
SHARED_FIXTURE = "shared_cluster"
_shared: list[Any] = []
_shared_modules: set[Path] = set()


@pytest.fixture(scope="session")
def shared_cluster() -> Iterator[Any]:
    from ray_cluster import SharedCluster

    holder = SharedCluster()
    _shared.append(holder)
    try:
        yield holder
    finally:
        holder.stop()


@pytest.fixture(scope="module")
def spared(
    request: pytest.FixtureRequest, shared_cluster: Any
) -> Iterator[tuple[Any, Callable[[], None]]]:
    """The shared cluster with the nodes of the module's `SPARE_NODES`, which its tests kill
    (never the shared head or node-b), and what brings every one of them back."""
    from ray_cluster import connected, nodes_added

    spares = request.module.SPARE_NODES
    with connected(shared_cluster.get()) as local, nodes_added(local, spares) as restore:
        yield local, restore


@pytest.fixture
def spare_cluster(spared: tuple[Any, Callable[[], None]]) -> Any:
    """The shared cluster with every spare node of the module up, whichever an earlier test
    killed."""
    local, restore = spared
    restore()
    return local


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The modules of the shared cluster run one after another, where the first of them was,
    each whole and in its order: one cluster start for them all (per xdist worker)."""
    _shared_modules.update(
        item.path for item in items if SHARED_FIXTURE in getattr(item, "fixturenames", ())
    )
    if _shared_modules:
        first = next(i for i, item in enumerate(items) if item.path in _shared_modules)
        together = [item for item in items if item.path in _shared_modules]
        rest = [item for item in items if item.path not in _shared_modules]
        items[:] = rest[:first] + together + rest[first:]


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
    """Once a test is torn down (with its module's driver connection, when the module ends),
    the shared cluster stops unless the next test is of a module that uses it: an idle one
    costs ~3 % of a core."""
    try:
        return (yield)
    finally:
        if nextitem is None or nextitem.path not in _shared_modules:
            for holder in _shared:
                holder.stop()
