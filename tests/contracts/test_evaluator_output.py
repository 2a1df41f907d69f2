"""Evaluator output interpretation (supervisor.md §2)."""

from __future__ import annotations

import pytest

from autoresearch.contracts.evaluator_output import (
    MSG_BAD_SCORE,
    MSG_NO_PASS,
    MSG_NOT_JSON,
    MSG_NOT_OBJECT,
    metric_verdict,
    parse_json_verdict,
)


@pytest.mark.parametrize(
    ("stdout", "error"),
    [
        ("", MSG_NOT_JSON),
        ("hello", MSG_NOT_JSON),
        ("[1, 2]", MSG_NOT_OBJECT),
        ("42", MSG_NOT_OBJECT),
        ('"text"', MSG_NOT_OBJECT),
        ("{}", MSG_NO_PASS),
        ('{"pass": 1}', MSG_NO_PASS),
        ('{"pass": "true"}', MSG_NO_PASS),
        ('{"pass": true, "score": null}', MSG_BAD_SCORE),
        ('{"pass": true, "score": "3"}', MSG_BAD_SCORE),
        ('{"pass": true, "score": true}', MSG_BAD_SCORE),
        ('{"pass": true, "score": NaN}', MSG_BAD_SCORE),
        ('{"pass": true, "score": Infinity}', MSG_BAD_SCORE),
        ('{"pass": true, "score": -Infinity}', MSG_BAD_SCORE),
        ("log\n[1]\nmore log", MSG_NOT_JSON),
    ],
)
def test_json_errors(stdout: str, error: str) -> None:
    verdict = parse_json_verdict(stdout)
    assert verdict.parse_error == error
    assert verdict.passed is None


def test_exact_messages() -> None:
    assert MSG_NOT_JSON == (
        "Evaluator output must be valid JSON with required boolean pass and optional numeric score."
    )
    assert MSG_NOT_OBJECT == "Evaluator output must be a JSON object."
    assert MSG_NO_PASS == "Evaluator output must include boolean pass."
    assert MSG_BAD_SCORE == "Evaluator output score must be numeric when provided."


@pytest.mark.parametrize(
    ("stdout", "passed", "score", "extra"),
    [
        ('{"pass": true, "score": 2.5}', True, 2.5, {}),
        ('  {"pass": false}  \n', False, None, {}),
        ('{"pass": true, "score": 3, "detail": {"x": 1}}', True, 3, {"detail": {"x": 1}}),
        ('step 1\nstep 2\n{"pass": true, "score": 7}\n\n', True, 7, {}),
        ('{"pass": true, "score": 1}\nnoise after\n', True, 1, {}),
        ('{"pass": false, "score": 1}\n{"broken": \n', False, 1, {}),
    ],
)
def test_json_ok(stdout: str, passed: bool, score: float | None, extra: dict) -> None:
    verdict = parse_json_verdict(stdout)
    assert verdict.parse_error is None
    assert (verdict.passed, verdict.score, verdict.extra) == (passed, score, extra)


def test_metric_verdict() -> None:
    ok = metric_verdict({"loss": 0.5, "time_s": 2.0}, "loss", 0)
    assert (ok.passed, ok.score, ok.metrics) == (True, 0.5, {"loss": 0.5, "time_s": 2.0})
    failed = metric_verdict({"loss": 0.5}, "loss", 1)
    assert failed.passed is False
    missing = metric_verdict({"time_s": 2.0}, "loss", 0)
    assert missing.parse_error == "Evaluator output must include a METRIC loss=<number> line."
