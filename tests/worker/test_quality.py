"""The pure rules of quality_mode high (worker/tools/quality.py), as tables."""

from __future__ import annotations

import pytest

from autoresearch.worker.tools.quality import (
    ArbiterView,
    Checked,
    QualityReason,
    QualityStatus,
    Role,
    Said,
    decide,
    invalid_citations,
    model_matches,
    parse_arbiter,
    verdict_of,
)

R = QualityReason
CITABLE = {"src/app.py": 10, "README.md": None}
VERDICTS = ("ship", "fix_first")


@pytest.mark.parametrize(
    ("asked", "answered", "ok"),
    [
        ("gpt-4o", "gpt-4o", True),
        ("gpt-4o", "gpt-4o-2024-08-06", True),
        ("gpt-4o", "gpt-4o-mini", False),  # another model, not a snapshot
        ("cheap", "other", False),
        ("cheap", None, False),  # unreported: cannot be verified
    ],
)
def test_model_matches(asked: str, answered: str | None, ok: bool) -> None:
    assert model_matches(asked, answered) is ok


@pytest.mark.parametrize(
    ("text", "bad"),
    [
        ("see src/app.py:3 and src/app.py:9-10", []),
        ("see ./src/app.py:4", []),
        ("README.md:500 (path only)", []),
        ("src/app.py:11", ["src/app.py:11"]),
        ("src/app.py:0", ["src/app.py:0"]),
        ("src/app.py:5-3", ["src/app.py:5-3"]),
        ("src/other.py:1", ["src/other.py:1"]),
        ("no citation at 12:30", []),
    ],
)
def test_invalid_citations(text: str, bad: list[str]) -> None:
    assert invalid_citations(text, CITABLE) == bad


@pytest.mark.parametrize(
    ("text", "verdict"),
    [
        ("looks fine\nVERDICT: ship", "ship"),
        ("**Verdict:** fix first", "fix_first"),
        ("VERDICT: ship\n...\nVERDICT: fix-first", "fix_first"),  # the last one counts
        ("VERDICT: maybe", None),
        ("no verdict", None),
    ],
)
def test_verdict_of(text: str, verdict: str | None) -> None:
    assert verdict_of(text, VERDICTS) == verdict


def test_parse_arbiter() -> None:
    good = 'Here: {"answer": "a", "agreement": "agree", "verdict": "ship", "resolution": ""}'
    assert parse_arbiter(good, VERDICTS) == ArbiterView("a", "agree", "ship", "")
    for bad in (
        "no json",
        '{"answer": "a", "agreement": "mostly", "verdict": "ship"}',
        '{"answer": "a", "agreement": "agree", "verdict": "maybe"}',
        '{"answer": 3, "agreement": "agree", "verdict": "ship"}',
        '{"answer": "a", "agreement": "agree"',
    ):
        assert parse_arbiter(bad, VERDICTS) is None, bad


def branch(verdict: str | None, *issues: QualityReason) -> Checked:
    return Checked(Said(Role.MAIN, "m", "m", "stop", "x"), issues, verdict)


ARBITER = branch(None)


@pytest.mark.parametrize(
    ("branches", "arbiter", "view", "cut", "status", "reasons"),
    [
        ([branch("ship")] * 3, ARBITER, ArbiterView("a", "agree", "ship", ""), False,
         QualityStatus.PASSED, (R.QUALITY_PASSED,)),
        ([branch("ship")] * 3, ARBITER, ArbiterView("a", "agree", "ship", ""), True,
         QualityStatus.NEEDS_DIRECT_REVIEW, (R.INPUT_TRUNCATED,)),
        ([branch("ship"), branch("fix_first"), branch("ship")], ARBITER,
         ArbiterView("a", "agree", "ship", ""), False,
         QualityStatus.NEEDS_DIRECT_REVIEW, (R.UNRESOLVED_DISAGREEMENT,)),
        ([branch("ship"), branch("fix_first"), branch("ship")], ARBITER,
         ArbiterView("a", "resolved", "ship", "  "), False,
         QualityStatus.NEEDS_DIRECT_REVIEW, (R.UNRESOLVED_DISAGREEMENT,)),
        ([branch("ship"), branch("fix_first"), branch("ship")], ARBITER,
         ArbiterView("a", "resolved", "ship", "line 3 shows it"), False,
         QualityStatus.PASSED, (R.QUALITY_PASSED,)),
        ([branch("ship", R.TRUNCATED_OUTPUT, R.INVALID_CITATION)], None, None, False,
         QualityStatus.FAILED, (R.TRUNCATED_OUTPUT, R.INVALID_CITATION)),
        ([branch("ship")] * 3, branch(None, R.ARBITER_UNPARSABLE), None, False,
         QualityStatus.FAILED, (R.ARBITER_UNPARSABLE,)),
        ([branch("ship")], None, None, False, QualityStatus.NEEDS_DIRECT_REVIEW, ()),
    ],
)  # fmt: skip
def test_decide(
    branches: list[Checked],
    arbiter: Checked | None,
    view: ArbiterView | None,
    cut: bool,
    status: QualityStatus,
    reasons: tuple[QualityReason, ...],
) -> None:
    verdict = decide(branches, arbiter, view, cut)
    assert (verdict.status, verdict.reasons) == (status, reasons)
