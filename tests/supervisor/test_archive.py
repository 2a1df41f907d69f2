"""The frontier's archive rules (pure): admission with the lineage cap, the parent rule."""

from __future__ import annotations

import pytest

from autoresearch.noise import Interval
from autoresearch.states import Direction
from autoresearch.supervisor.archive import (
    Elite,
    admit,
    choose_parent,
    lineage_of,
    per_lineage,
    ranked,
)
from autoresearch.supervisor.report import archive_table
from autoresearch.supervisor.summary import ArchiveEntry

ROOT = Elite("root", 1.0, None, "root", 0)


def child(commit: str, score: float, parent: Elite, entered: int) -> Elite:
    return Elite(commit, score, parent.commit, lineage_of(parent, commit), entered)


A = child("a", 5.0, ROOT, 1)  # lineage a
A2 = child("a2", 6.0, A, 2)  # lineage a
A3 = child("a3", 7.0, A2, 3)  # lineage a
B = child("b", 3.0, ROOT, 4)  # lineage b


@pytest.mark.parametrize(("size", "cap"), [(1, 1), (2, 1), (3, 2), (4, 2), (8, 4)])
def test_one_lineage_fills_at_most_half_the_archive(size: int, cap: int) -> None:
    assert per_lineage(size) == cap


def test_a_child_of_the_root_starts_a_lineage_and_its_children_continue_it() -> None:
    assert (A.lineage, A2.lineage, A3.lineage, B.lineage) == ("a", "a", "a", "b")


@pytest.mark.parametrize(
    ("archive", "new", "size", "kept", "evicted"),
    [
        ((ROOT,), A, 4, ("a", "root"), None),  # room: in, best first
        ((A, ROOT), A2, 4, ("a2", "a", "root"), None),  # two of lineage a: the cap of 4
        # a third of lineage a: the worst of that lineage goes, not the root
        ((A2, A, ROOT), A3, 4, ("a3", "a2", "root"), "a"),
        # full, the lineage under its cap: the worst of all goes
        ((A2, A, B, ROOT), Elite("c", 4.0, "root", "c", 5), 4, ("a2", "a", "c", "b"), "root"),
        # the newcomer is the worst: it is the one that goes
        ((A2, A, B, ROOT), Elite("c", 0.0, "root", "c", 5), 4, ("a2", "a", "b", "root"), "c"),
        ((ROOT,), A, 1, ("a",), "root"),  # size 1: the best alone (a greedy archive)
        ((A,), child("w", 0.5, A, 2), 1, ("a",), "w"),  # the best is never evicted
    ],
)
def test_admission(
    archive: tuple[Elite, ...], new: Elite, size: int, kept: tuple[str, ...], evicted: str | None
) -> None:
    after, out = admit(archive, new, size, Direction.HIGHER)
    assert tuple(e.commit for e in after) == kept
    assert (out.commit if out else None) == evicted


def test_lower_is_better_ranks_the_other_way_and_ties_keep_the_older_first() -> None:
    twin = Elite("twin", 5.0, "root", "twin", 9)
    assert [e.commit for e in ranked([A, ROOT, twin], Direction.LOWER)] == ["root", "a", "twin"]
    assert [e.commit for e in ranked([twin, A], Direction.HIGHER)] == ["a", "twin"]


@pytest.mark.parametrize(
    ("tries", "busy", "chosen"),
    [
        ({}, (), "a2"),  # nothing tried: the best
        ({"root": 1}, (), "a2"),  # an untried elite before a tried one
        ({"a2": 3, "a": 3}, (), "root"),  # the best tried a lot, the others not: explore
        ({"a2": 1, "a": 1, "root": 1}, (), "a2"),  # tried alike: the best
        ({}, ("a2",), "a"),  # a lane works from the best: another lane gets another parent
        ({}, ("a2", "a", "root"), "a2"),  # every elite busy: the rule over all
    ],
)
def test_the_parent_balances_rank_against_tries(
    tries: dict[str, int], busy: tuple[str, ...], chosen: str
) -> None:
    archive = ranked([ROOT, A, A2], Direction.HIGHER)
    assert choose_parent(archive, tries, busy, seed="run").commit == chosen


@pytest.mark.parametrize(
    ("tries", "busy", "chosen"),
    [
        ({}, (), "a"),  # the best would win: exploring, the next elite
        ({"a": 3}, (), "root"),  # the next one tried a lot: the root, still not the best
        ({}, ("a", "root"), "a"),  # the others busy: the rule over all but the best
    ],
)
def test_a_run_exploring_after_a_plateau_starts_from_another_elite_than_the_best(
    tries: dict[str, int], busy: tuple[str, ...], chosen: str
) -> None:
    """`--on-plateau explore` (supervisor/plateau.py): the instructions say the obvious
    direction is exhausted, and the frontier starts sessions from other elites."""
    archive = ranked([ROOT, A, A2], Direction.HIGHER)
    assert choose_parent(archive, tries, busy, "run", exploring=True).commit == chosen
    assert choose_parent(archive[:1], tries, busy, "run", exploring=True).commit == "a2"


def test_the_parent_rule_is_deterministic_and_its_ties_follow_the_seed() -> None:
    equal = (Elite("x", 1.0, None, "x", 0), Elite("y", 1.0, "x", "y", 1))
    twice = {choose_parent(equal, {}, (), seed).commit for seed in ("s", "s")}
    assert len(twice) == 1
    picks = {choose_parent(equal[::-1], {"x": 1, "y": 1}, (), f"s{i}").commit for i in range(20)}
    assert picks <= {"x", "y"}


@pytest.mark.parametrize(
    ("score", "interval", "shown"),
    [
        # a noisy elite's mean is rounded to its interval, as every other row is
        (54.40125, Interval(54.40125, 53.1, 55.7, 4), "54.4 ± 1.3 (n=4)"),
        # a deterministic evaluator's score prints exactly, as it always did
        (6.0, None, "6"),
        (6.5, Interval(6.5, 6.5, 6.5, 3), "6.5"),
    ],
)
def test_the_elite_table_rounds_a_noisy_score_to_its_interval(
    score: float, interval: Interval | None, shown: str
) -> None:
    entry = ArchiveEntry("a" * 40, score, None, "a" * 40, 0, 2, interval)
    row = archive_table([entry]).splitlines()[1].split("  ")
    assert shown in [cell.strip() for cell in row]
