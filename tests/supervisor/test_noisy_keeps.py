"""Noise-aware keeps through prepare and step: real repositories, a real noisy evaluator, every
reading its own journal row."""

from __future__ import annotations

import sqlite3
import statistics
import textwrap
from pathlib import Path

import pytest
from sup_helpers import submit_and_step

from autoresearch.decide import (
    REASON_CHECKS_FAILED,
    REASON_INCUMBENT_FAILED,
    REASON_NOT_BETTER,
    REASON_SIGNIFICANT,
    REASON_UNDECIDED,
)
from autoresearch.supervisor import lifecycle, measure
from autoresearch.supervisor.handle import RunHandle
from autoresearch.supervisor.prepare import prepare
from helpers import Repo, sandbox_text

# value.txt + Gaussian noise (sd 1) from a counter kept outside the repository, so every
# reading differs and the sequence is reproducible; FAIL_AT makes readings of one value crash.
NOISY_EVAL = textwrap.dedent(
    """\
    import json, os, random, sys
    value = float(open("value.txt").read())
    if os.environ.get("FAIL_AT") == str(value):
        sys.exit(2)
    state = os.environ["NOISE_STATE"]
    n = int(open(state).read()) if os.path.exists(state) else 0
    open(state, "w").write(str(n + 1))
    print(json.dumps({"pass": True, "score": value + random.Random(n).gauss(0, 1)}))
    """
)


def rows(h: RunHandle, iteration: int | None = None) -> list[tuple[int, str, str, float | None]]:
    conn = sqlite3.connect(h.repo.journal)
    try:
        sql = "SELECT iteration, role, commit_sha, score FROM evaluations WHERE run_id = ?"
        args: tuple[object, ...] = (h.run_id,)
        if iteration is not None:
            sql += " AND iteration = ?"
            args += (iteration,)
        return list(conn.execute(sql + " ORDER BY id", args))
    finally:
        conn.close()


@pytest.fixture
def noisy(repo: Repo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> RunHandle:
    monkeypatch.setenv("NOISE_STATE", str(tmp_path / "noise-counter"))
    repo.write("scripts/noisy.py", NOISY_EVAL)
    repo.write("value.txt", "0\n")
    mission = repo.mission(sandbox=sandbox_text("python3 scripts/noisy.py", unboxed=True))
    return prepare(mission, run_tag="N1")


def test_a_clear_improvement_is_kept_after_an_interleaved_test_and_confirmed(
    noisy: RunHandle,
) -> None:
    h = noisy
    baseline = h.run.last_kept_commit
    calibration = rows(h, 0)
    assert [r[1] for r in calibration] == ["baseline"] * 3
    assert h.run.last_kept_score == pytest.approx(statistics.fmean(r[3] for r in calibration))

    result = submit_and_step(h, {"value.txt": "10\n"}, description="ten")
    assert (result.decision, result.decision_reason) == ("keep", REASON_SIGNIFICANT)
    readings = rows(h, 1)
    roles = [r[1] for r in readings]
    assert roles[0] == "candidate" and "incumbent" in roles
    assert all(r[2] == baseline for r in readings if r[1] == "incumbent")
    confirm = [r[3] for r in readings if r[1] == "confirm"]
    assert len(confirm) == 5 and all(r[2] == result.candidate_commit for r in readings[-5:])
    # the reported best is the mean of the fresh confirmation readings, not the lucky ones
    assert result.last_kept_score == pytest.approx(statistics.fmean(confirm))
    # the incumbent was measured in a scratch checkout outside the worktree
    assert (h.incumbent_tree / "value.txt").read_text() == "0\n"
    assert not str(h.incumbent_tree).startswith(str(h.worktree))

    summary = lifecycle.run_summary(h, 1, False).to_dict()
    interval = summary["best_interval"]
    assert interval["n"] == 5 and interval["low"] < summary["best_score"] < interval["high"]
    assert summary["best_score"] == pytest.approx(statistics.fmean(confirm))

    # a change that does nothing is not kept; the incumbent is re-measured meanwhile
    same = submit_and_step(h, {"value.txt": "10.0\n"}, description="the same")
    assert same.decision == "discard"
    assert same.decision_reason in (REASON_NOT_BETTER, REASON_UNDECIDED)
    fresh = [r[3] for r in rows(h, 2) if r[1] == "incumbent"]
    assert fresh and all(r[2] == result.candidate_commit for r in rows(h, 2) if r[1] == "incumbent")
    assert same.last_kept_score == pytest.approx(statistics.fmean(confirm + fresh))
    assert any(n.startswith("kept commit now at ") for n in same.notes)

    # a clearly worse one is rejected on its first reading, beside one of the incumbent taken
    # in the same iteration (older ones alone decide nothing: the machine may have slowed)
    worse = submit_and_step(h, {"value.txt": "-20\n"}, description="worse")
    assert (worse.decision, worse.decision_reason) == ("discard", REASON_NOT_BETTER)
    assert [r[1] for r in rows(h, 3)] == ["candidate", "incumbent"]
    entry = h.paths.ledger.read_text()
    assert '"role": "incumbent"' in entry
    h.close()


def test_an_agent_cannot_tamper_with_the_incumbent_checkout(noisy: RunHandle) -> None:
    """The re-measured kept commit is out of the run folder that agents may write, and is
    checked out afresh before every reading, even when its HEAD did not move."""
    h = noisy
    kept = submit_and_step(h, {"value.txt": "10\n"}, description="ten")
    assert kept.decision == "keep"
    tree = h.incumbent_tree
    assert not tree.is_relative_to(h.paths.root) and not tree.is_relative_to(h.worktree)
    # something re-measured the kept commit already? make sure the checkout exists, then
    # plant a much worse tracked value in it, as an unsandboxed agent could
    same = submit_and_step(h, {"value.txt": "10.0\n"}, description="the same")
    assert same.decision == "discard" and tree.exists()
    (tree / "value.txt").write_text("-50\n")
    # the next re-measurement reads the kept commit as committed, whatever the decision
    measure.incumbent_checkout(h, kept.candidate_commit)
    assert (tree / "value.txt").read_text() == "10\n"
    h.close()


def test_a_failing_re_measurement_of_the_incumbent_discards_the_candidate(
    noisy: RunHandle, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAIL_AT", "0.0")  # the kept commit's evaluations now crash
    result = submit_and_step(noisy, {"value.txt": "2\n"})
    assert (result.decision, result.decision_reason) == ("discard", REASON_INCUMBENT_FAILED)
    assert [r[1] for r in rows(noisy, 1)][-1] == "incumbent"
    noisy.close()


def test_a_deterministic_evaluator_costs_one_evaluation_per_iteration(run: RunHandle) -> None:
    """Calibration readings agree: today's rule, today's reasons, one row per iteration."""
    assert [r[1] for r in rows(run, 0)] == ["baseline"] * 3
    kept = submit_and_step(run, {"value.txt": "5\n"})
    worse = submit_and_step(run, {"value.txt": "3\n"})
    assert (kept.decision_reason, worse.decision_reason) == (
        "score improved over last kept score",
        "score did not improve",
    )
    assert [len(rows(run, i)) for i in (1, 2)] == [1, 1]
    assert lifecycle.run_summary(run, 2, False).to_dict()["best_interval"]["n"] == 1


def test_mode_single_is_exactly_the_single_reading_rule(
    repo: Repo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("NOISE_STATE", str(tmp_path / "noise-counter"))
    repo.write("scripts/noisy.py", NOISY_EVAL)
    repo.write("value.txt", "0\n")
    sandbox = sandbox_text(
        "python3 scripts/noisy.py", extra="noise:\n  mode: single\n", unboxed=True
    )
    with prepare(repo.mission(sandbox=sandbox), run_tag="S1") as h:
        assert len(rows(h, 0)) == 1
        first = rows(h, 0)[0][3]
        result = submit_and_step(h, {"other.txt": "x\n"})  # a null change, one reading
        assert len(rows(h, 1)) == 1
        expected = "keep" if rows(h, 1)[0][3] > first else "discard"
        assert result.decision == expected


def test_a_candidate_that_fails_its_checks_spends_no_confirmation_reading(
    repo: Repo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Checks are asked for before confirmations: a clear improvement the test accepts but
    whose checks fail costs no confirmation reading, and the incumbent stays as it was."""
    monkeypatch.setenv("NOISE_STATE", str(tmp_path / "noise-counter"))
    repo.write("scripts/noisy.py", NOISY_EVAL)
    repo.write("scripts/check.sh", 'test "$(cat value.txt)" != 10 || exit 1\n')
    repo.write("value.txt", "0\n")
    sandbox = sandbox_text(
        "python3 scripts/noisy.py", extra="checks: sh scripts/check.sh\n", unboxed=True
    )
    with prepare(repo.mission(sandbox=sandbox), run_tag="NCHK") as h:
        result = submit_and_step(h, {"value.txt": "10\n"})
        assert (result.decision, result.decision_reason) == ("discard", REASON_CHECKS_FAILED)
        roles = [r[1] for r in rows(h, 1)]
        assert "confirm" not in roles and "incumbent" in roles
        # the incumbent stays, reported at the mean of its readings, fresh ones included
        assert h.run.last_kept_score == pytest.approx(
            statistics.fmean(r[3] for r in rows(h) if r[1] in ("baseline", "incumbent"))
        )
