"""The decision table of supervisor.md §3, row by row, in both directions."""

from __future__ import annotations

import pytest

from autoresearch.decide import (
    BUDGETS,
    Budget,
    Decision,
    EvalSummary,
    Spend,
    baseline_decision,
    budget_exhausted,
    decide,
    duplicate_of,
    kept_score_after,
    previous_outcome,
    replay_conflict,
    stop_budget,
    validation_failure,
)

PASS = lambda score: EvalSummary("pass", True, score)
FAIL = EvalSummary("fail", False, 9.0)
ERROR = EvalSummary("error", None, None)


@pytest.mark.parametrize(
    ("status", "evaluation", "policy", "direction", "kept", "dirty", "expected"),
    [
        ("abort", None, "score_improvement", "higher", 1.0, False,
         ("abort", "candidate requested abort", (), "stopped", "candidate abort")),
        ("noop", None, "pass_only", "higher", 1.0, False,
         ("noop", "candidate reported noop", (), "running", None)),
        ("interrupted", None, "score_improvement", "higher", 1.0, False,
         ("interrupted", "candidate session interrupted cleanly", (), "running", None)),
        ("interrupted", None, "score_improvement", "higher", 1.0, True,
         ("error", "interrupted dirty worktree requires operator intervention", (), "failed",
          "interrupted dirty worktree requires operator intervention")),
        ("candidate", ERROR, "pass_only", "higher", 1.0, False,
         ("discard", "evaluator error",
          ("candidate discarded because evaluator errored or crashed",), "running", None)),
        ("candidate", FAIL, "score_improvement", "higher", 1.0, False,
         ("discard", "evaluator reported failure",
          ("candidate discarded because evaluator pass=false",), "running", None)),
        ("candidate", PASS(None), "pass_only", "higher", None, False,
         ("keep", "pass_only keep policy accepted evaluator pass=true",
          ("candidate kept because sandbox opted into pass_only policy",), "running", None)),
        ("candidate", PASS(None), "score_improvement", "higher", 1.0, False,
         ("ambiguous", "evaluator pass without comparable score",
          ("candidate discarded because score_improvement policy requires comparable numeric "
           "scores",), "running", None)),
        ("candidate", PASS(5.0), "score_improvement", "higher", None, False,
         ("ambiguous", "evaluator pass without comparable score",
          ("candidate discarded because score_improvement policy requires comparable numeric "
           "scores",), "running", None)),
        ("candidate", PASS(2.0), "score_improvement", "higher", 1.0, False,
         ("keep", "score improved over last kept score",
          ("candidate kept because evaluator score increased",), "running", None)),
        ("candidate", PASS(1.0), "score_improvement", "higher", 1.0, False,
         ("discard", "score did not improve",
          ("candidate discarded because evaluator score was not better than the kept baseline",),
          "running", None)),
        ("candidate", PASS(0.5), "score_improvement", "higher", 1.0, False,
         ("discard", "score did not improve",
          ("candidate discarded because evaluator score was not better than the kept baseline",),
          "running", None)),
        ("candidate", PASS(0.5), "score_improvement", "lower", 1.0, False,
         ("keep", "score improved over last kept score",
          ("candidate kept because evaluator score increased",), "running", None)),
        ("candidate", PASS(1.0), "score_improvement", "lower", 1.0, False,
         ("discard", "score did not improve",
          ("candidate discarded because evaluator score was not better than the kept baseline",),
          "running", None)),
        ("candidate", PASS(2.0), "score_improvement", "lower", 1.0, False,
         ("discard", "score did not improve",
          ("candidate discarded because evaluator score was not better than the kept baseline",),
          "running", None)),
    ],
)  # fmt: skip
def test_decision_table(status, evaluation, policy, direction, kept, dirty, expected) -> None:
    d = decide(policy, direction, kept, status, evaluation, worktree_dirty=dirty)
    assert (d.decision, d.reason, d.notes, d.run_status, d.stop_reason) == expected
    assert d.keep == (d.decision == "keep")
    assert d.reset == (d.decision in ("discard", "ambiguous"))


def test_kept_score_after() -> None:
    keep = Decision("keep", "r", keep=True)
    assert kept_score_after(keep, PASS(3.0), 1.0) == 3.0
    # pass_only keep without a score leaves the kept score unchanged
    assert kept_score_after(keep, PASS(None), 1.0) == 1.0
    assert kept_score_after(Decision("discard", "r"), PASS(9.0), 1.0) == 1.0


def test_baseline_and_validation() -> None:
    assert baseline_decision(PASS(2.0))[1] == 2.0
    assert baseline_decision(PASS(2.0))[0].decision == "baseline"
    assert baseline_decision(FAIL) == (Decision("baseline", "baseline established"), None)
    d, score = baseline_decision(ERROR)
    assert (d.decision, d.reason, score) == ("error", "baseline evaluator error", None)
    v = validation_failure("autoresearch candidate artifact must be valid JSON")
    assert v.notes == ("validation_error:autoresearch candidate artifact must be valid JSON",)
    assert (v.decision, v.run_status) == ("error", "failed")
    survived = validation_failure(
        "autoresearch candidate artifact notes must be a string array", False
    )
    assert (survived.decision, survived.run_status, survived.stop_reason) == (
        "error",
        "running",
        None,
    )
    assert survived.notes == (
        "validation_error:autoresearch candidate artifact notes must be a string array",
    )
    assert survived.needs_git_effect  # the session's work is saved, the tree reset
    assert previous_outcome(None, None) == "none yet"
    assert previous_outcome("discard", "score did not improve") == "discard:score did not improve"


def test_a_duplicate_is_a_discard_without_evaluation() -> None:
    d = duplicate_of(7)
    assert (d.decision, d.reason, d.keep, d.reset) == (
        "discard",
        "duplicate of iteration 7",
        False,
        True,
    )
    assert d.notes == (
        "candidate discarded without evaluation because an earlier iteration measured the same "
        "tree",
    )


def test_lane_and_budget_strings_are_pinned() -> None:
    d = replay_conflict("a" * 40, "CONFLICT (content): Merge conflict in value.txt")
    assert (d.decision, d.reason, d.keep, d.reset) == ("discard", "replay conflict", False, True)
    assert d.notes == (
        "candidate discarded without evaluation because it conflicts with the commit another "
        "lane kept meanwhile",
        "replaying onto aaaaaaaaaaaa failed: CONFLICT (content): Merge conflict in value.txt",
    )
    assert [stop_budget(which) for which in BUDGETS] == [
        "budget exhausted (usd)",
        "budget exhausted (tokens)",
        "budget exhausted (hours)",
    ]


@pytest.mark.parametrize(
    ("budget", "spend", "expected"),
    [
        (Budget(), Spend(1e9, 10**12, 1e6), None),
        (Budget(usd=1.0), Spend(usd=0.99), None),
        (Budget(usd=1.0), Spend(usd=1.0), "budget exhausted (usd)"),
        (Budget(tokens=100), Spend(tokens=100), "budget exhausted (tokens)"),
        (Budget(hours=0.5), Spend(hours=0.6), "budget exhausted (hours)"),
        (Budget(usd=1.0, hours=0.5), Spend(usd=2.0, hours=0.6), "budget exhausted (usd)"),
    ],
)
def test_budget_exhausted(budget: Budget, spend: Spend, expected: str | None) -> None:
    assert budget_exhausted(budget, spend) == expected
    assert budget.limited == (budget != Budget())
