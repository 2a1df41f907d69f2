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
        "pip install '.[ray]' in a clone of autoresearch"
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
    ("lanes", "slots", "most"),
    [(0, 1, 1), (1, 1, 1), (1, 2, 2), (4, 1, 4), (4, 2, 5), (2, 0, 2)],
)
def test_a_node_is_warmed_for_one_lane_s_readings_or_every_other_lane_s_session_beside_them(
    lanes: int, slots: int, most: int
) -> None:
    """A lane runs its session or its readings, never both: one lane with one slot needs one
    worker on a node, not two."""
    from autoresearch.supervisor.ray_executor import tasks_per_node

    assert tasks_per_node(lanes, slots) == most


@pytest.mark.parametrize(
    ("grace", "seconds"),
    [(3.0, 10.0), (0.5, 5.0), (0.0, 4.0), (10.0, 24.0)],
)
def test_a_dead_node_s_lost_slot_waits_for_its_watcher_s_stop_at_the_kill_grace_given(
    grace: float, seconds: float
) -> None:
    """The wait for a dead node's watcher follows the kill grace it stops with: 10 s at the
    default 3 s (the fixed wait before), less with a shorter one (the tests' 0.5 s), more
    with a longer one (a stubborn evaluator is given its grace before the retry starts)."""
    from autoresearch.supervisor.ray_executor import lost_node_seconds

    assert lost_node_seconds(grace) == pytest.approx(seconds)


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


NODES = [
    {"NodeID": "a", "Alive": True, "Resources": {"CPU": 2.0}},
    {"NodeID": "b", "Alive": True, "Resources": {"CPU": 8.0, "GPU": 1.0}},
    {"NodeID": "dead", "Alive": False, "Resources": {"CPU": 4.0, "GPU": 8.0}},
    {"NodeID": "gpu-only", "Alive": True, "Resources": {"GPU": 4.0, "fpga": 1.0}},
]


@pytest.mark.parametrize(
    ("resources", "able"),
    [
        ({}, ("a", "b")),  # one CPU, as every task of ours asks by default
        ({"GPU": 1}, ("b",)),
        ({"GPU": 2}, ()),  # the dead node's GPUs do not count
        ({"CPU": 4}, ("b",)),
        ({"CPU": 0, "fpga": 1}, ("gpu-only",)),
        ({"fpga": 1}, ()),  # and one CPU: never both on one node
    ],
)
def test_an_evaluation_goes_only_to_a_live_node_with_all_it_asks(
    resources: dict[str, float], able: tuple[str, ...]
) -> None:
    from autoresearch.supervisor.ray_executor import able_nodes, live_offers, ray_options

    assert able_nodes(ray_options(resources), live_offers(NODES)) == able


@pytest.mark.parametrize(
    ("resources", "named"),
    [
        ({"GPU": 16}, ["GPU: 16"]),
        ({"GPU": 2}, ["CPU: 1", "GPU: 2"]),  # gpu-only has the GPUs, b the CPU and 1 GPU
        ({"fpga": 1}, ["CPU: 1", "fpga: 1"]),  # each is somewhere, never both on one node
        ({"CPU": 2, "tpu": 1}, ["tpu: 1"]),
    ],
)
def test_a_refused_ask_names_what_no_node_has(
    resources: dict[str, float], named: list[str]
) -> None:
    from autoresearch.supervisor.ray_executor import live_offers, ray_options, unoffered

    assert unoffered(ray_options(resources), live_offers(NODES)) == named


@pytest.mark.parametrize(
    ("busy", "slots", "picked"),
    [
        ({}, 1, "a"),  # all free: the first
        ({"a": 1}, 1, "b"),  # a's one slot is taken
        ({"a": 1, "b": 1}, 1, None),  # every node's: wait
        ({"a": 1}, 2, "b"),  # the one running fewest
        ({"a": 1, "b": 1}, 2, "a"),  # a tie: the first
        ({"a": 2, "b": 1}, 2, "b"),
        ({"b": 5, "gone": 1}, 2, "a"),  # a node no longer able counts for nothing
    ],
)
def test_an_evaluation_takes_a_slot_on_the_able_node_running_fewest(
    busy: dict[str, int], slots: int, picked: str | None
) -> None:
    from autoresearch.supervisor.ray_executor import pick_node

    assert pick_node(("a", "b"), busy, slots) == picked


@pytest.mark.parametrize(
    ("busy", "slots", "ready", "picked"),
    [
        ({}, 1, {"b"}, "b"),  # a's CPUs are held (by sessions): b has its ask free now
        ({}, 1, set(), "a"),  # none free now: the slot alone decides
        ({"b": 1}, 1, {"b"}, "a"),  # b is ready but its one slot is taken: never two there
        ({"a": 1}, 2, {"a"}, "a"),  # free now beats running fewest
        ({}, 1, {"a", "b"}, "a"),  # both: the first
        ({}, 1, {"gone"}, "a"),  # a node not able counts for nothing
    ],
)
def test_of_the_nodes_with_a_free_slot_one_with_the_ask_free_now_goes_first(
    busy: dict[str, int], slots: int, ready: set[str], picked: str | None
) -> None:
    from autoresearch.supervisor.ray_executor import pick_node

    assert pick_node(("a", "b"), busy, slots, ready) == picked


def test_a_node_is_ready_when_its_free_resources_cover_the_ask() -> None:
    from autoresearch.supervisor.ray_executor import ray_options, ready_nodes

    free = {"a": {"CPU": 0.0}, "b": {"CPU": 1.0}, "c": {"CPU": 2.0, "GPU": 1.0}, "d": {}}
    assert ready_nodes(ray_options({}), free) == {"b", "c"}
    assert ready_nodes(ray_options({"GPU": 1}), free) == {"c"}
