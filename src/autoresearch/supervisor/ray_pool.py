"""The warm Ray actors of a `RayExecutor`, by node: made once per run, reused task after task.

A Ray task per session cost a worker lease each time (driver → raylet → worker, more round
trips on a loaded machine) and, for each node, a cold worker whenever the pool had none idle.
An actor is a worker of our own: a method call goes straight to it. An idle actor of the node
is taken for one task and given back after it; one whose task was lost (its worker or node
died, or it was killed because its task would not stop) is killed and forgotten, and the next
task on its node gets a new one. Idle actors on a node that left the cluster are dropped
before any is taken (`keep_nodes`), so a task is not sent to a worker known gone.

Nothing here imports Ray: the executor hands in `spawn` (make an actor pinned to a node),
`ready` (ask an actor to answer) and `kill`.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class ActorMeans:
    """What the pool does with Ray: make an actor on a node, its answer to "ready?" (an
    object ref), wait for refs (the ready ones, within seconds), read one (raises if the
    actor died), kill an actor."""

    spawn: Callable[[str], Any]
    ready: Callable[[Any], Any]
    wait: Callable[[list[Any], float], list[Any]]
    get: Callable[[Any], object]
    kill: Callable[[Any], None]


class WarmPool:
    """Idle actors by node; thread-safe (the executor's task threads share it)."""

    def __init__(self, means: ActorMeans) -> None:
        self._means = means
        self._idle: dict[str, list[Any]] = {}
        self._live: dict[int, Any] = {}  # every actor not yet killed, by id()
        self._lock = threading.Lock()

    def take(self, node: str) -> Any:
        """An idle actor on `node`, or a new one there."""
        with self._lock:
            idle = self._idle.get(node)
            if idle:
                return idle.pop()
        actor = self._means.spawn(node)
        with self._lock:
            self._live[id(actor)] = actor
        return actor

    def give(self, node: str, actor: Any) -> None:
        """`actor`'s task ended: idle again, unless it was dropped meanwhile."""
        with self._lock:
            if id(actor) in self._live:
                self._idle.setdefault(node, []).append(actor)

    def drop(self, actor: Any) -> None:
        """Kill `actor` and forget it (idempotent): its worker may be dead or mid-task."""
        with self._lock:
            known = self._live.pop(id(actor), None) is not None
            for idle in self._idle.values():
                if actor in idle:
                    idle.remove(actor)
        if known:
            self._means.kill(actor)

    def keep_nodes(self, live: Collection[str]) -> None:
        """Drop the idle actors of nodes not in `live` (they left the cluster)."""
        with self._lock:
            gone = [node for node in self._idle if node not in live]
            stale = [actor for node in gone for actor in self._idle.pop(node)]
        for actor in stale:
            self.drop(actor)

    def warm(self, counts: Mapping[str, int], patience: float) -> None:
        """Start `counts[node]` actors on each node and wait up to `patience` seconds until
        they answer: the workers' start-up is paid once, together, instead of by the first
        tasks of each node. One that failed to start is dropped; one slow to answer is kept
        (it answers its first task)."""
        made = [(node, self.take(node)) for node, count in counts.items() for _ in range(count)]
        asked = {id(actor): self._means.ready(actor) for _, actor in made}
        answered = set(self._means.wait(list(asked.values()), patience))
        for node, actor in made:
            ref = asked[id(actor)]
            if ref in answered and not self._started(ref):
                self.drop(actor)
            else:
                self.give(node, actor)

    def _started(self, ref: Any) -> bool:
        try:
            self._means.get(ref)
        except Exception:  # noqa: BLE001 - any failure of Ray's to start the actor
            return False
        return True

    def close(self) -> None:
        """Kill every actor (the executor shuts down)."""
        with self._lock:
            actors = list(self._live.values())
        for actor in actors:
            self.drop(actor)


def least_busy(able: Collection[str], running: Mapping[str, int]) -> str | None:
    """The able node running fewest of our tasks (the first on a tie), None if none is able
    (pure): sessions at once go to different nodes, as Ray's SPREAD sent them."""
    return min(able, key=lambda node: running.get(node, 0), default=None)


def less_ours(
    available: Mapping[str, Mapping[str, float]], running: Mapping[str, int]
) -> dict[str, dict[str, float]]:
    """What each node has free once our actors' tasks are counted (pure): Ray does not count
    them (an actor holds no CPU), so each running task takes one CPU off its node's."""
    free = {node: dict(resources) for node, resources in available.items()}
    for node, count in running.items():
        if node in free:
            free[node]["CPU"] = free[node].get("CPU", 0.0) - count
    return free
