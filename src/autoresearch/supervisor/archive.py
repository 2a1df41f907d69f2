"""The frontier's archive of elites, and the rule that picks a session's parent from it (pure).

An elite is a commit the keep policy accepted against its own parent (or the run's root, the
commit the frontier started from). The archive holds at most `size` of them, and at most
`per_lineage` of one lineage – the elites that descend from the same child of the root – so
that a run whose first lucky step keeps paying does not fill the archive with copies of one
hill. Lineage is read from the journal's parent edges, free; a distance between trees would
ask git for every pair of elites at every admission, and two lineages may still be close.

The parent rule is UCB1 over the elites: an elite's rank (1 for the best, down by 1/K for
each place, K elites), plus a bonus that shrinks with the sessions already started from it.
The rank and not the score: one outlier score would otherwise squeeze every other elite to
nothing, and scores of different missions are on no common scale. Ties fall to a hash of the
run's seed and the commit: the same journal gives the same parents, on resume too.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, replace

try:  # CPython's own BLAKE2b, which hashlib's import would reach only after loading OpenSSL
    from _blake2 import blake2b  # (~2.5 ms of every command that opens a journal)
except ImportError:  # another interpreter: the same digest from hashlib
    from hashlib import blake2b

from autoresearch.states import Direction

DEFAULT_ARCHIVE_SIZE = 8
# UCB1's exploration weight for rewards in [0, 1]: sqrt(2) explores more than a run of a few
# dozen sessions can afford; 1 still gives an untried elite a session within a few turns.
EXPLORATION = 1.0


@dataclass(frozen=True)
class Elite:
    """A commit in the archive: its score (the keep policy's estimate), the parent it was
    kept against (None: the root), its lineage (the root's child it descends from; the root's
    own commit for the root) and the iteration that kept it (0: the root)."""

    commit: str
    score: float | None
    parent: str | None
    lineage: str
    entered: int


def per_lineage(size: int) -> int:
    """At most half the archive (rounded up) from one lineage: room for at least two hills."""
    return max(1, (size + 1) // 2)


def lineage_of(parent: Elite | None, commit: str) -> str:
    """A child of the root starts a lineage; any other elite continues its parent's."""
    if parent is None or parent.parent is None:
        return commit
    return parent.lineage


def better(a: float | None, b: float | None, direction: Direction) -> bool:
    """Whether score `a` beats `b` (a missing score beats nothing)."""
    if a is None:
        return False
    if b is None:
        return True
    return a > b if direction == Direction.HIGHER else a < b


def ranked(elites: Sequence[Elite], direction: Direction) -> tuple[Elite, ...]:
    """Best first; on a tie the earlier elite first (the run branch does not move for an
    equal score)."""
    order = sorted(elites, key=lambda e: e.entered)
    out: list[Elite] = []
    for elite in order:  # an insertion sort: stable, and the archive is small
        at = next((i for i, o in enumerate(out) if better(elite.score, o.score, direction)), None)
        out.insert(len(out) if at is None else at, elite)
    return tuple(out)


def admit(
    archive: Sequence[Elite], new: Elite, size: int, direction: Direction
) -> tuple[tuple[Elite, ...], Elite | None]:
    """The archive with `new` in it, best first, and the elite it evicted (None: none; may be
    `new` itself). Over the lineage cap the worst of `new`'s lineage goes, else over the size
    the worst of all; the best elite always stays."""
    grown = ranked([*archive, new], direction)
    if len(grown) <= size and _count(grown, new.lineage) <= per_lineage(size):
        return grown, None
    pool = grown[1:]  # never the best
    if _count(grown, new.lineage) > per_lineage(size):
        pool = tuple(e for e in pool if e.lineage == new.lineage)
    evicted = pool[-1]
    return tuple(e for e in grown if e is not evicted), evicted


def _count(elites: Sequence[Elite], lineage: str) -> int:
    return sum(1 for e in elites if e.lineage == lineage)


def rescored(
    archive: Sequence[Elite], scores: Mapping[str, float], direction: Direction
) -> tuple[Elite, ...]:
    """The archive with each elite's newer estimate (noise-aware runs re-measure a parent)."""
    fresh = [replace(e, score=scores.get(e.commit, e.score)) for e in archive]
    return ranked(fresh, direction)


def choose_parent(
    archive: Sequence[Elite],
    tries: Mapping[str, int],
    busy: Collection[str],
    seed: str,
    exploring: bool = False,
) -> Elite:
    """The elite the next session starts from: the highest UCB1 value among those no lane is
    working from now (all of them when every elite is busy). `archive` is best first.
    `exploring` (a plateau's `explore`: nothing kept for N iterations, the obvious direction
    is exhausted): never the best elite while there is another."""
    free = [e for e in archive if e.commit not in busy] or list(archive)
    if exploring and len(archive) > 1:
        free = [e for e in free if e.commit != archive[0].commit] or list(archive[1:])
    rank = {e.commit: 1 - place / len(archive) for place, e in enumerate(archive)}
    total = sum(tries.get(e.commit, 0) for e in archive)

    def value(elite: Elite) -> tuple[float, str]:
        bonus = EXPLORATION * math.sqrt(math.log(total + 1) / (tries.get(elite.commit, 0) + 1))
        return rank[elite.commit] + bonus, _tie_break(seed, elite.commit)

    return max(free, key=value)


def _tie_break(seed: str, commit: str) -> str:
    return blake2b(f"{seed}:{commit}".encode(), digest_size=8).hexdigest()


def tries_of(parents: Sequence[str]) -> dict[str, int]:
    """How many sessions started from each commit."""
    return dict(Counter(parents))
