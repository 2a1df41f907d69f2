"""Keep policies as pure objects: sequences of observations → the request or decision they
produce (no temp dirs, no evaluator), and the registry that finds them by name."""

from __future__ import annotations

from importlib import metadata

import pytest

from autoresearch import decide, plugins, policies
from autoresearch.decide import EvalSummary
from autoresearch.errors import ContractError
from autoresearch.noise import NoiseMode, NoisePolicy, Spread
from autoresearch.policies import (
    Checks,
    Final,
    Need,
    Observations,
    PassOnly,
    Reading,
    Request,
    ScoreImprovement,
    Situation,
)
from autoresearch.states import DecisionKind, Direction, EvalStatus

C, INC, K = Need.CANDIDATE, Need.INCUMBENT, Need.CONFIRM
NOISY = Spread(1.0, 10)
PLAIN = Situation(Direction.HIGHER, last_kept_score=1.0)
# a noisy run whose incumbent read 0, 0.5, -0.5: the sequential test applies
TESTED = Situation(Direction.HIGHER, last_kept_score=0.0, spread=NOISY, incumbent=(0.0, 0.5, -0.5))
SINGLE_MODE = Situation(
    Direction.HIGHER,
    last_kept_score=0.0,
    noise=NoisePolicy(mode=NoiseMode.SINGLE),
    spread=NOISY,
    incumbent=(0.0, 0.5, -0.5),
)
PASSED, FAILED = Checks(None, "checks.log"), Checks("exited with code 1", "checks.log")


def reading(need: Need, score: float | None, status: EvalStatus = EvalStatus.PASS) -> Reading:
    return Reading(need, EvalSummary(status, status == EvalStatus.PASS, score), NOISY)


def seen(
    known: Situation, *readings: tuple[Need, float | None], checks: Checks | None = None
) -> Observations:
    return Observations(known, tuple(reading(need, score) for need, score in readings), checks)


def crashed(need: Need) -> Reading:
    return reading(need, None, EvalStatus.ERROR)


CONFIRMED = tuple((K, 9.0) for _ in range(5))
# a clear win as the test sees it: no keep rests on fewer than 3 readings of the candidate
# (heavy tails, noise.py), and one incumbent reading of this iteration
WON = ((C, 10.0), (INC, 0.0), (C, 10.0), (C, 10.0))

ASKS = [
    ("nothing measured yet", ScoreImprovement(), seen(PLAIN), Request(C)),
    ("pass_only too", PassOnly(), seen(PLAIN), Request(C)),
    ("a better score is checked first", ScoreImprovement(), seen(PLAIN, (C, 2.0)), Request(Need.CHECKS)),
    ("a pass under pass_only is checked first", PassOnly(), seen(PLAIN, (C, None)), Request(Need.CHECKS)),
    ("the test wants the incumbent", ScoreImprovement(), seen(TESTED, (C, 10.0)), Request(INC)),
    ("an accepted keep is checked before it is confirmed", ScoreImprovement(), seen(TESTED, *WON), Request(Need.CHECKS)),
    ("checked, it is confirmed with fresh readings", ScoreImprovement(), seen(TESTED, *WON, checks=PASSED), Request(K, 5)),
    ("a clear loss is judged on a fresh incumbent reading", ScoreImprovement(), seen(TESTED, (C, -5.0)), Request(INC)),
    ("a close one wants another candidate reading", ScoreImprovement(), seen(TESTED, (C, -0.2), (INC, 0.1)), Request(C)),
]  # fmt: skip


@pytest.mark.parametrize(("case", "policy", "observed", "expected"), ASKS, ids=[a[0] for a in ASKS])
def test_what_a_policy_asks_for(
    case: str, policy: policies.Policy, observed: Observations, expected: Request
) -> None:
    assert policy.next(observed) == expected


DECIDES = [
    ("a better score, checked", ScoreImprovement(), seen(PLAIN, (C, 2.0), checks=PASSED), DecisionKind.KEEP, "score improved over last kept score", 2.0),
    ("a worse score: no checks asked, no rescore", ScoreImprovement(), seen(PLAIN, (C, 0.5)), DecisionKind.DISCARD, "score did not improve", None),
    ("checks failed: the kept score stays", ScoreImprovement(), seen(PLAIN, (C, 2.0), checks=FAILED), DecisionKind.DISCARD, decide.REASON_CHECKS_FAILED, 1.0),
    ("pass_only keeps a pass without score", PassOnly(), seen(PLAIN, (C, None), checks=PASSED), DecisionKind.KEEP, "pass_only keep policy accepted evaluator pass=true", 1.0),
    ("no kept score: ambiguous", ScoreImprovement(), seen(Situation(Direction.HIGHER, None), (C, 2.0)), DecisionKind.AMBIGUOUS, "evaluator pass without comparable score", None),
    ("noise mode single is the single rule", ScoreImprovement(), seen(SINGLE_MODE, (C, 0.1), checks=PASSED), DecisionKind.KEEP, "score improved over last kept score", 0.1),
    ("the test rejects a clear loss", ScoreImprovement(), seen(TESTED, (C, -5.0), (INC, 0.0)), DecisionKind.DISCARD, decide.REASON_NOT_BETTER, 0.0),
    ("the test's keep failed its checks: no confirmation", ScoreImprovement(), seen(TESTED, *WON, checks=FAILED), DecisionKind.DISCARD, decide.REASON_CHECKS_FAILED, 0.0),
    ("confirmed: reported at the confirmations' mean", ScoreImprovement(), seen(TESTED, *WON, *CONFIRMED, checks=PASSED), DecisionKind.KEEP, decide.REASON_SIGNIFICANT, 9.0),
]  # fmt: skip


@pytest.mark.parametrize(
    ("case", "policy", "observed", "kind", "reason", "kept_score"),
    DECIDES,
    ids=[d[0] for d in DECIDES],
)
def test_what_a_policy_decides(
    case: str,
    policy: policies.Policy,
    observed: Observations,
    kind: DecisionKind,
    reason: str,
    kept_score: float | None,
) -> None:
    final = policy.next(observed)
    assert isinstance(final, Final)
    assert (final.decision.decision, final.decision.reason) == (kind, reason)
    assert final.rescore == (kept_score is not None)
    assert final.kept_score == (pytest.approx(kept_score) if kept_score is not None else None)


def test_a_failed_reading_ends_the_test() -> None:
    first = reading(C, 10.0)
    on_incumbent = Observations(TESTED, (first, crashed(INC)))
    final = ScoreImprovement().next(on_incumbent)
    assert isinstance(final, Final) and final.decision.reason == decide.REASON_INCUMBENT_FAILED
    assert final.kept_score == pytest.approx(0.0)
    on_candidate = Observations(TESTED, (first, reading(INC, 0.1), crashed(C)))
    final = ScoreImprovement().next(on_candidate)
    assert isinstance(final, Final) and final.decision.reason == "evaluator error"


def test_a_crashed_first_reading_is_the_single_rule_without_test_notes() -> None:
    final = ScoreImprovement().next(Observations(TESTED, (crashed(C),)))
    assert isinstance(final, Final)
    assert final.decision.notes == ("candidate discarded because evaluator errored or crashed",)
    assert not final.rescore


def test_the_built_ins_are_registered_as_entry_points() -> None:
    found = plugins.discover(plugins.POLICIES)
    assert found["score_improvement"].target == "autoresearch.policies:ScoreImprovement"
    assert found["pass_only"].target == "autoresearch.policies:PassOnly"
    assert isinstance(policies.policy("pass_only"), PassOnly)
    assert isinstance(policies.policy("score_improvement"), ScoreImprovement)


def test_an_unknown_policy_is_one_line() -> None:
    with pytest.raises(ContractError, match="^keep policy 'nope' is not installed"):
        policies.policy("nope")


def test_the_registry_is_importlib_metadata() -> None:
    names = {p.name for p in metadata.entry_points(group=plugins.POLICIES)}
    assert {"score_improvement", "pass_only"} <= names
