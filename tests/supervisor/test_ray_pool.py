"""The warm actor pool of the Ray executor, and its pure choices, without Ray: the pool is
given its means (make, ask, wait, read, kill) as a seam, here plain objects that record what
was done to them."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from autoresearch.supervisor.ray_executor import ray_options, warmable
from autoresearch.supervisor.ray_pool import ActorMeans, WarmPool, least_busy, less_ours


@dataclass(eq=False)
class Actor:
    node: str
    starts: bool = True
    killed: bool = False


@dataclass(eq=False)
class Answer:
    actor: Actor


@dataclass
class Means:
    """Actors that start (or not, on nodes in `broken`) and answer at once."""

    broken: set[str] = field(default_factory=set)
    made: list[Actor] = field(default_factory=list)

    def spawn(self, node: str) -> Actor:
        self.made.append(Actor(node, starts=node not in self.broken))
        return self.made[-1]

    def get(self, answer: object) -> object:
        assert isinstance(answer, Answer)
        if not answer.actor.starts:
            raise RuntimeError("the actor died before it started")
        return answer.actor.node

    def kill(self, actor: Actor) -> None:
        assert not actor.killed, "killed twice"
        actor.killed = True

    def means(self) -> ActorMeans:
        return ActorMeans(
            spawn=self.spawn,
            ready=Answer,
            wait=lambda refs, _patience: refs,
            get=self.get,
            kill=self.kill,
        )


def test_an_actor_given_back_is_taken_again_for_the_next_task_on_its_node() -> None:
    means = Means()
    pool = WarmPool(means.means())
    first = pool.take("a")
    pool.give("a", first)
    assert pool.take("a") is first  # reused, not made anew
    assert pool.take("b") is not first  # another node: its own
    assert len(means.made) == 2


def test_a_dropped_actor_is_killed_once_never_given_back_and_replaced() -> None:
    means = Means()
    pool = WarmPool(means.means())
    lost = pool.take("a")
    pool.drop(lost)
    pool.drop(lost)  # the await's kill and the loss both drop it: one kill
    pool.give("a", lost)  # the task's `finally`: a no-op for a dropped actor
    again = pool.take("a")
    assert lost.killed and again is not lost and not again.killed


def test_warming_starts_each_node_s_count_and_drops_those_that_did_not_start() -> None:
    means = Means(broken={"b"})
    pool = WarmPool(means.means())
    pool.warm({"a": 2, "b": 1}, patience=1.0)
    assert [a.node for a in means.made] == ["a", "a", "b"]
    assert means.made[2].killed  # b's failed to start: killed, not kept idle
    warm = {id(pool.take("a")), id(pool.take("a"))}
    assert warm == {id(means.made[0]), id(means.made[1])}
    assert pool.take("b") is not means.made[2]


def test_idle_actors_of_a_node_that_left_are_dropped_and_close_kills_the_rest() -> None:
    means = Means()
    pool = WarmPool(means.means())
    pool.warm({"a": 1, "gone": 1}, patience=1.0)
    busy = pool.take("a")
    pool.keep_nodes({"a"})
    a_actor, gone_actor = means.made
    assert gone_actor.killed and not a_actor.killed
    pool.close()
    assert busy.killed  # an actor mid-task goes too


@pytest.mark.parametrize(
    ("running", "picked"),
    [
        ({}, "a"),  # none running: the first
        ({"a": 1}, "b"),
        ({"a": 1, "b": 1}, "a"),  # a tie: the first
        ({"a": 1, "gone": 0}, "b"),  # a node not able counts for nothing
    ],
)
def test_a_session_goes_to_the_able_node_running_fewest_of_our_tasks(
    running: dict[str, int], picked: str
) -> None:
    assert least_busy(("a", "b"), running) == picked
    assert least_busy((), running) is None


def test_our_actors_tasks_take_a_cpu_each_off_what_ray_says_is_free() -> None:
    free = {"a": {"CPU": 2.0, "GPU": 1.0}, "b": {"CPU": 2.0}}
    assert less_ours(free, {"a": 2, "gone": 1}) == {
        "a": {"CPU": 0.0, "GPU": 1.0},
        "b": {"CPU": 2.0},
    }
    assert free["a"]["CPU"] == 2.0  # Ray's answer is left as it was


@pytest.mark.parametrize(
    ("resources", "warm"),
    [
        ({}, True),
        ({"CPU": 2}, True),  # CPUs alone: the driver counts them
        ({"GPU": 1}, False),  # a GPU is handed out only to a Ray task that asks it
        ({"node_b": 1}, False),  # a custom resource is counted only for a task
    ],
)
def test_only_an_ask_of_cpus_alone_runs_on_a_warm_actor(
    resources: dict[str, float], warm: bool
) -> None:
    assert warmable(ray_options(resources)) is warm
