"""Search strategies: which commit each session starts from, what a session is shown of the
run's history, and when the search itself says the run is over.

A strategy is pure: it decides on a `SearchView` (the run's facts the driver read) and does
no I/O; the one driver (`supervisor/loop.Driver`) consults it and carries out what it says.
Today's behaviour is `greedy`: every lane starts from the one incumbent (the last kept
commit), a session is shown the whole history, and only the loop's limits end a run.

The view is shaped for strategies that keep more than one incumbent (`SearchView.incumbents`,
best first), start a session from a parent that is not the tip (`Start.parent` is any
commit), or stop on a plateau (`SearchView.past`, read only for a strategy that
`reads_history`, so that greedy costs the driver nothing per turn).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import ClassVar, Protocol

from autoresearch.agents.base import PastIteration
from autoresearch.errors import ContractError
from autoresearch.supervisor.archive import Elite, choose_parent

DEFAULT_STRATEGY = "greedy"


@dataclass(frozen=True)
class SearchView:
    """What a strategy decides on: the run's incumbents (best first; today the last kept
    commit alone), its latest iteration number and, when the strategy reads it, its history."""

    incumbents: tuple[str, ...]
    iteration: int
    past: tuple[PastIteration, ...] = ()
    # the run explores after a plateau (supervisor/plateau.py, `--on-plateau explore`) and
    # nothing was kept since: a strategy with several parents starts sessions from others
    exploring: bool = False
    # a strategy that `keeps_archive`: its elites (best first), the sessions started from
    # each commit, the parents lanes work from now, and the run's seed for ties
    archive: tuple[Elite, ...] = ()
    tries: Mapping[str, int] = field(default_factory=dict)
    busy: tuple[str, ...] = ()
    seed: str = ""

    @property
    def incumbent(self) -> str:
        """The best incumbent: what the run branch points to."""
        return self.incumbents[0] if self.incumbents else ""


@dataclass(frozen=True)
class Start:
    """Where a session starts: its parent commit, and what its instructions should add about
    that choice (None: nothing)."""

    parent: str
    note: str | None = None


class SearchStrategy(Protocol):
    """How a run searches. `lane` is 0 for the single loop, 1..K for `run --lanes K`."""

    name: ClassVar[str]
    reads_history: ClassVar[bool]  # whether `start` and `stop` look at `SearchView.past`
    keeps_archive: ClassVar[bool]  # whether the driver keeps an archive (supervisor/frontier)

    def start(self, view: SearchView, lane: int) -> Start: ...

    def shown(self, past: Sequence[PastIteration]) -> tuple[PastIteration, ...]: ...

    def stop(self, view: SearchView) -> str | None: ...


@dataclass(frozen=True)
class Greedy:
    """Hill climbing on one incumbent: every session starts from the last kept commit."""

    name: ClassVar[str] = "greedy"
    reads_history: ClassVar[bool] = False
    keeps_archive: ClassVar[bool] = False

    def start(self, view: SearchView, lane: int) -> Start:
        return Start(view.incumbent)

    def shown(self, past: Sequence[PastIteration]) -> tuple[PastIteration, ...]:
        return tuple(past)

    def stop(self, view: SearchView) -> str | None:
        return None  # the loop's limits (iterations, noops, failures, budget) end the run


@dataclass(frozen=True)
class Frontier:
    """A population of elites (supervisor/archive.py): each session starts from the elite with
    the best balance of score and few sessions already started from it; a candidate is judged
    against that parent, and enters the archive when the keep policy accepts it."""

    name: ClassVar[str] = "frontier"
    reads_history: ClassVar[bool] = False
    keeps_archive: ClassVar[bool] = True

    def start(self, view: SearchView, lane: int) -> Start:
        if not view.archive:
            return Start(view.incumbent)
        parent = choose_parent(view.archive, view.tries, view.busy, view.seed, view.exploring)
        return Start(parent.commit)

    def shown(self, past: Sequence[PastIteration]) -> tuple[PastIteration, ...]:
        return tuple(past)

    def stop(self, view: SearchView) -> str | None:
        return None


# The registry: a strategy's name → how to make it (a plugin entry point may add one later).
STRATEGIES: dict[str, Callable[[], SearchStrategy]] = {
    Greedy.name: Greedy,
    Frontier.name: Frontier,
}


def msg_unknown_strategy(name: str) -> str:
    return f"unknown search strategy: {name} (known: {', '.join(sorted(STRATEGIES))})"


def strategy_named(name: str = DEFAULT_STRATEGY) -> SearchStrategy:
    """The registered strategy `name`, or a one-line refusal naming the known ones."""
    make = STRATEGIES.get(name)
    if make is None:
        raise ContractError(msg_unknown_strategy(name))
    return make()
