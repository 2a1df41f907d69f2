"""The kept view of a run's readings (estimates.RunReadings.load) equals the full recomputation
after every write: the same pooled spread (sd and df, to the last bit), the same mean, interval
and n of every commit, the same row means – on a real journal of a prepared run, with noisy
readings in every role (calibration, candidate, incumbent, confirm, certify), failed and
unscored evaluations, legacy rows without a commit and another run's rows in between."""

from __future__ import annotations

import math
import random
import sqlite3
import uuid
from dataclasses import replace
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from autoresearch.evaluate import EvaluationRecord
from autoresearch.journal import runs
from autoresearch.journal.db import Journal
from autoresearch.journal.runs import RunRecord
from autoresearch.noise import Role, Spread, pooled_spread, reference
from autoresearch.scale import block_spread, with_today
from autoresearch.states import EvalPurpose, EvalStatus
from autoresearch.supervisor import estimates
from autoresearch.supervisor.handle import RunHandle

ROLES = ("baseline", "candidate", "incumbent", "confirm", "certify")

# one reading: which commit (of a few), its role, its score; `None` commit: a legacy row
reading = st.tuples(
    st.integers(0, 5),
    st.sampled_from(ROLES),
    st.one_of(
        st.floats(-1e6, 1e6, allow_nan=False),
        st.sampled_from([0.0, 1.0, 0.1, 1e-9, 12345.678]),  # repeats: groups that agree exactly
    ),
    st.sampled_from(["pass", "pass", "pass", "fail"]),
)
batches = st.lists(st.lists(reading, max_size=12), min_size=1, max_size=8)


def new_run(h: RunHandle) -> RunRecord:
    """A run of its own in the fixture's journal (hypothesis runs many examples on one)."""
    run = replace(h.run, run_id=f"prop-{uuid.uuid4().hex[:12]}")
    with h.journal.tx() as conn:
        runs.insert_run(conn, run)
    return run


def evaluation(status: str, score: float) -> EvaluationRecord:
    return EvaluationRecord(
        command="", format="json", ran_at="", duration_ms=0, status=EvalStatus(status),
        passed=status == "pass", score=score, exit_code=0, timed_out=False, stdout="",
        stderr="", log_file="",
    )  # fmt: skip


def insert(
    conn: sqlite3.Connection, run_id: str, n: int, reading: tuple[str, str, float, str]
) -> None:
    sha, role, score, status = reading
    runs.insert_evaluation(
        conn, run_id, n, EvalPurpose.ITERATION, evaluation(status, score), Role(role), sha or None
    )


def write(journal: Journal, run_id: str, rows: list[tuple[int, str, float, str]]) -> None:
    with journal.tx() as conn:
        for n, (commit, role, score, status) in enumerate(rows):
            sha = "" if commit == 5 else f"c{commit}"
            insert(conn, run_id, n, (sha, role, score, status))


def full(journal: Journal, run: RunRecord) -> tuple[Spread, dict[str, list[tuple[str, float]]]]:
    """Recomputed from every row, as the views did before they kept anything: the spread
    within blocks (a commit's readings of one iteration), or within commits for a run frozen
    before blocks."""
    groups: dict[str, list[tuple[str, float]]] = {}
    blocks: dict[tuple[str, int], list[float]] = {}
    for r in runs.readings(journal, run.run_id):
        groups.setdefault(r.commit, []).append((r.role, r.score))
        blocks.setdefault((r.commit, r.iteration), []).append(r.score)
    if run.sandbox.noise_policy.blocks:
        return block_spread(blocks.values()), groups
    return pooled_spread([s for _, s in g] for g in groups.values()), groups


def assert_same(journal: Journal, run: RunRecord) -> None:
    kept = estimates.RunReadings.load(journal, run)
    spread, groups = full(journal, run)
    assert kept.spread == spread  # exact: sd to the last bit, df
    fresh = estimates.RunReadings(runs.readings(journal, run.run_id), kept.blocks)
    assert fresh.spread == spread
    for commit, rows in groups.items():
        assert kept.scores(commit) == reference(rows)
        assert kept.estimate(commit) == fresh.estimate(commit)
        for through in range(13):
            assert kept.mean(commit, through) == fresh.mean(commit, through)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])  # fmt: skip
@given(batches=batches, others=batches)
def test_the_kept_view_equals_the_full_recomputation_after_every_write(
    run: RunHandle, batches: list[list[tuple[int, str, float, str]]], others: list[Any]
) -> None:
    mine, other = new_run(run), new_run(run)
    for n, rows in enumerate(batches):
        noise = others[n] if n < len(others) else []
        write(run.journal, mine.run_id, rows)
        write(run.journal, other.run_id, noise)  # another run's rows between this run's
        assert_same(run.journal, mine)
        assert_same(run.journal, other)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])  # fmt: skip
@given(batches=batches, more=st.dictionaries(st.integers(0, 6), st.lists(st.floats(-1e3, 1e3), max_size=5)))  # fmt: skip
def test_the_spread_with_readings_not_yet_recorded_equals_the_full_recomputation(
    run: RunHandle, batches: list[list[tuple[int, str, float, str]]], more: dict[int, list[float]]
) -> None:
    """The sequential test's spread while it measures (measure.py): the recorded readings and
    the iteration's own, pooled, as if they were all in the journal."""
    mine = new_run(run)
    for rows in batches:
        write(run.journal, mine.run_id, rows)
    kept = estimates.RunReadings.load(run.journal, mine)
    spread, _ = full(run.journal, mine)
    pending = {f"c{k}": v for k, v in more.items()}
    expected: dict[tuple[str, int], list[float]] = {}
    for r in runs.readings(run.journal, mine.run_id):
        expected.setdefault((r.commit, r.iteration), []).append(r.score)
    for commit, scores in pending.items():  # this iteration's: in its commit's block of it
        expected[(commit, 3)] = [*expected.get((commit, 3), []), *scores]
    today = [scores for (_, iteration), scores in expected.items() if iteration == 3]
    widest = with_today(block_spread(expected.values()), block_spread(today))
    assert kept.spread_with(pending, 3) == widest
    assert kept.spread == spread  # unchanged


def test_a_run_frozen_before_blocks_pools_each_commits_readings(run: RunHandle) -> None:
    """Its spread is each commit's readings around their mean, over the run, as it was."""
    mine = new_run(run)
    write(run.journal, mine.run_id, [(1, "candidate", 1.0, "pass"), (1, "confirm", 3.0, "pass")])
    old = estimates.RunReadings(runs.readings(run.journal, mine.run_id), blocks=False)
    assert old.spread == pooled_spread([[1.0, 3.0]])
    assert old.spread_with({"c1": [5.0]}, 7) == pooled_spread([[1.0, 3.0, 5.0]])
    blocked = estimates.RunReadings(runs.readings(run.journal, mine.run_id))
    assert blocked.spread.df == 0  # the two readings are of two iterations: two blocks of one


def test_a_long_noisy_run_in_many_steps(run: RunHandle) -> None:
    """~2,500 readings written as a run writes them (calibration, then per iteration a few
    candidate readings, incumbent readings of the kept commit, confirmations of a keep), the
    view loaded after each iteration as a driver does."""
    rng = random.Random(7)
    mine = new_run(run)
    write(run.journal, mine.run_id, [(0, "baseline", rng.gauss(10, 1), "pass") for _ in range(5)])
    kept, true = 0, {0: 10.0}
    with run.journal.tx() as conn:
        runs.update_run(conn, mine.run_id, last_kept_commit="c0")
    for n in range(1, 400):
        commit = n + 10
        true[commit] = true[kept] + rng.choice([-1.0, 0.0, 2.0])
        rows = [(commit, "candidate", rng.gauss(true[commit], 1), "pass") for _ in range(3)]
        rows += [(kept, "incumbent", rng.gauss(true[kept], 1), "pass") for _ in range(2)]
        if true[commit] > true[kept]:
            rows += [(commit, "confirm", rng.gauss(true[commit], 1), "pass") for _ in range(3)]
            kept = commit
        with run.journal.tx() as conn:
            for c, role, score, status in rows:
                insert(conn, mine.run_id, n, (f"c{c}", role, score, status))
        if n % 37 == 0 or n == 399:
            assert_same(run.journal, mine)
        else:  # the driver's loads in between: each brings the kept view up to date
            estimates.RunReadings.load(run.journal, mine)
    spread = estimates.RunReadings.load(run.journal, mine).spread
    assert spread.df > 1500 and math.isclose(spread.sd, 1.0, rel_tol=0.1)


def test_rows_gone_from_under_the_view_are_read_again(run: RunHandle) -> None:
    """A journal put back from a backup holds fewer rows than the view read: it starts anew."""
    mine = new_run(run)
    write(run.journal, mine.run_id, [(1, "candidate", 1.0, "pass"), (1, "confirm", 2.0, "pass")])
    write(run.journal, mine.run_id, [(1, "confirm", 4.0, "pass"), (2, "candidate", 3.0, "pass")])
    assert estimates.RunReadings.load(run.journal, mine).scores("c1") == [2.0, 4.0]
    with run.journal.tx() as conn:
        conn.execute("DELETE FROM evaluations WHERE run_id = ? AND score >= 3", (mine.run_id,))
    assert_same(run.journal, mine)
    assert estimates.RunReadings.load(run.journal, mine).scores("c1") == [2.0]


def test_a_run_forgotten_and_prepared_again_is_read_anew(run: RunHandle) -> None:
    """runs.delete_run (a failed prepare) then a new run of the same id: not the old view."""
    mine = new_run(run)
    write(run.journal, mine.run_id, [(1, "candidate", 1.0, "pass"), (1, "confirm", 2.0, "pass")])
    assert estimates.RunReadings.load(run.journal, mine).scores("c1") == [2.0]
    with run.journal.tx() as conn:
        runs.delete_run(conn, mine.run_id)
    other = new_run(run)  # the highest id stays where it was: only the run tells them apart
    write(run.journal, other.run_id, [(3, "candidate", 5.0, "pass")])
    again = replace(mine, created_at="2099-01-01T00:00:00Z")
    with run.journal.tx() as conn:
        runs.insert_run(conn, again)
    write(run.journal, again.run_id, [(1, "candidate", 7.0, "pass")])
    assert estimates.RunReadings.load(run.journal, again).scores("c1") == [7.0]
    assert_same(run.journal, again)


def test_a_read_inside_a_transaction_is_not_kept(run: RunHandle) -> None:
    """What a transaction reads may be rolled back: it must not stay in the kept view."""
    mine = new_run(run)
    write(run.journal, mine.run_id, [(1, "candidate", 1.0, "pass")])
    try:
        with run.journal.tx() as conn:
            insert(conn, mine.run_id, 1, ("c1", "confirm", 9.0, "pass"))
            assert estimates.RunReadings.load(run.journal, mine).scores("c1") == [9.0]
            raise RuntimeError("rolled back")
    except RuntimeError:
        pass
    assert estimates.RunReadings.load(run.journal, mine).scores("c1") == [1.0]
    assert_same(run.journal, mine)


def test_the_exact_total_is_math_fsum() -> None:
    """The running total's one rounding is fsum's: values of every magnitude, any order."""
    rng = random.Random(3)
    for _ in range(200):
        values = [abs(rng.gauss(0, 1)) * 10 ** rng.randint(-300, 300) for _ in range(20)]
        values += [5e-324, 0.0, 1e-310]
        total = sum(estimates._exact(v) for v in values)
        assert total / estimates._UNIT == math.fsum(values)
