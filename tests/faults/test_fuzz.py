"""Property-based fuzzing of every parser: only the documented errors, never a crash."""

from __future__ import annotations

import json
import math
import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from autoresearch.contracts import candidate as cand
from autoresearch.contracts import evaluator_output as eo
from autoresearch.contracts import sandbox as sb
from autoresearch.contracts.candidate import ArtifactError, parse_artifact
from autoresearch.contracts.metric_lines import (
    MetricScanner,
    parse_asi_line,
    parse_metric_line,
    parse_text,
)
from autoresearch.contracts.sandbox import parse_sandbox
from autoresearch.decide import EvalSummary, decide
from autoresearch.errors import ContractError

FAST = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)
SANDBOX_ERRORS = ("sandbox.md ",)
# every message parse_sandbox may raise, as documented (exact, or exact up to its detail)
SANDBOX_MESSAGES = re.compile(
    "|".join(
        [
            re.escape(sb.MSG_NO_FRONTMATTER),
            re.escape(sb.MSG_BAD_YAML.format(detail="")) + ".+",
            re.escape(sb.MSG_NO_EVALUATOR),
            re.escape(sb.MSG_BAD_POLICY.format(policies=", ".join(sb.KEEP_POLICIES))),
            re.escape(sb.MSG_NO_COMMAND),
            re.escape(sb.MSG_NO_FORMAT),
            re.escape(sb.MSG_BAD_FORMAT),
            re.escape(sb.MSG_NO_METRIC),
            re.escape(sb.MSG_BAD_DIRECTION),
            re.escape(sb.MSG_BAD_TIMEOUT),
            re.escape(sb.MSG_NUL_COMMAND),
            re.escape("sandbox.md frontmatter worktree.")
            + "(link|runtime)"
            + re.escape(" must be a list of relative paths."),
            re.escape("sandbox.md frontmatter tune")
            + r"(\..+| must be a mapping with file and parameters\.)",
        ]
    )
)
ARTIFACT_ERRORS = {
    cand.MSG_NOT_JSON, cand.MSG_NOT_OBJECT, cand.MSG_STATUS, cand.MSG_COMMIT_TYPE,
    cand.MSG_BASE_REQUIRED, cand.MSG_DESCRIPTION, cand.MSG_NOTES, cand.MSG_CREATED_AT,
}  # fmt: skip
# the documented limits of json_input, after the contract's message
ARTIFACT_JSON_DETAIL = re.compile(
    re.escape(cand.MSG_NOT_JSON)
    + r": (duplicate key .*|nested deeper than \d+ levels|\S+ is not a JSON number|.* is out of range)",
    re.S,
)


def assert_artifact_error(exc: ArtifactError) -> None:
    message = str(exc)
    documented = message in ARTIFACT_ERRORS or message == cand.MSG_DESCRIPTION_LONG
    assert documented or ARTIFACT_JSON_DETAIL.fullmatch(message), message


EVAL_ERRORS = {eo.MSG_NOT_JSON, eo.MSG_NOT_OBJECT, eo.MSG_NO_PASS, eo.MSG_BAD_SCORE}


@FAST
@given(st.text(max_size=400))
def test_sandbox_any_text(text: str) -> None:
    try:
        parse_sandbox(text)
    except ContractError as exc:
        assert SANDBOX_MESSAGES.fullmatch(str(exc)), str(exc)


@FAST
@given(st.dictionaries(st.sampled_from(["evaluator", "worktree", "tune", "x"]), json_values))
def test_sandbox_structured(frontmatter: dict) -> None:
    text = "---\n" + json.dumps(frontmatter) + "\n---\nbody\n"
    try:
        sandbox = parse_sandbox(text)
    except ContractError as exc:
        assert SANDBOX_MESSAGES.fullmatch(str(exc)), str(exc)
    else:
        assert sandbox.evaluator.command.strip()
        assert sandbox.evaluator.format in ("json", "metric")


@FAST
@given(st.one_of(st.text(max_size=200), json_values.map(json.dumps)))
def test_candidate_artifact(text: str) -> None:
    try:
        parse_artifact(text)
    except ArtifactError as exc:
        assert_artifact_error(exc)


@FAST
@given(
    st.dictionaries(
        st.sampled_from(
            ["status", "candidate_commit", "base_commit", "description", "notes", "created_at"]
        ),
        json_values,
    )
)
def test_candidate_artifact_fields(data: dict) -> None:
    try:
        artifact = parse_artifact(json.dumps(data))
    except ArtifactError as exc:
        assert_artifact_error(exc)
    else:
        assert artifact.status in cand.STATUSES


@FAST
@given(st.one_of(st.text(max_size=300), json_values.map(json.dumps)))
def test_evaluator_json_output(stdout: str) -> None:
    verdict = eo.parse_json_verdict(stdout)
    if verdict.parse_error is not None:
        assert verdict.parse_error in EVAL_ERRORS and verdict.passed is None
    else:
        assert isinstance(verdict.passed, bool)
        assert verdict.score is None or math.isfinite(verdict.score)


@FAST
@given(st.text(max_size=120))
def test_metric_and_asi_lines(line: str) -> None:
    metric = parse_metric_line(line)
    if metric is not None:
        assert math.isfinite(metric[1])
    parse_asi_line(line)
    parse_metric_line("METRIC " + line)
    parse_asi_line("ASI " + line)


@FAST
@given(st.binary(max_size=2000), st.integers(min_value=1, max_value=64))
def test_scanner_on_arbitrary_bytes_and_chunking(data: bytes, chunk: int) -> None:
    scanner = MetricScanner()
    for i in range(0, len(data), chunk):
        scanner.feed(data[i : i + chunk])
    scanner.close()
    whole = parse_text(data.decode("utf-8", "replace"))
    assert scanner.result.metrics == whole.metrics
    assert all(math.isfinite(v) for v in scanner.result.metrics.values())


@FAST
@given(
    st.sampled_from(["score_improvement", "pass_only"]),
    st.sampled_from(["higher", "lower"]),
    st.none() | st.floats(allow_nan=False, allow_infinity=False),
    st.sampled_from(["candidate", "noop", "abort", "interrupted"]),
    st.sampled_from(["pass", "fail", "error"]),
    st.none() | st.floats(allow_nan=False, allow_infinity=False),
    st.booleans(),
)
def test_decide_is_total(policy, direction, kept, status, ev_status, score, dirty) -> None:
    evaluation = EvalSummary(
        ev_status, ev_status == "pass", score if ev_status != "error" else None
    )
    decision = decide(policy, direction, kept, status, evaluation, dirty)
    assert decision.decision in (
        "keep",
        "discard",
        "ambiguous",
        "noop",
        "abort",
        "interrupted",
        "error",
    )
    assert not (decision.keep and ev_status != "pass")


HUGE = "9" * 400
ENORMOUS = "9" * 5000


def test_huge_numbers_are_documented_errors_not_crashes() -> None:
    verdict = eo.parse_json_verdict('{"pass": true, "score": ' + HUGE + "}")
    assert verdict.parse_error == eo.MSG_BAD_SCORE
    assert parse_asi_line("ASI x=" + ENORMOUS) == ("x", ENORMOUS)
    assert parse_metric_line("METRIC x=" + ENORMOUS) is None  # not finite as a float
    for frontmatter in (
        f"evaluator: {{command: x, format: json, timeout_seconds: {HUGE}}}",
        f"evaluator: {{command: x, format: json}}\ntune: {{file: f, parameters: {{A: {{min: 0, max: {HUGE}}}}}}}",
    ):
        with pytest.raises(ContractError) as info:  # a clear error, not an OverflowError
            parse_sandbox(f"---\n{frontmatter}\n---\n")
        assert "timeout_seconds" in str(info.value) or "tune.parameters.A" in str(info.value)


@FAST
@given(st.integers(min_value=-(10**500), max_value=10**500))
def test_any_integer_score(score: int) -> None:
    verdict = eo.parse_json_verdict(json.dumps({"pass": True, "score": score}))
    assert verdict.parse_error in (None, eo.MSG_BAD_SCORE)


def test_yaml_values_that_are_not_json_are_kept_as_text() -> None:
    sandbox = parse_sandbox(
        "---\nevaluator:\n  command: x\n  format: json\n  since: 2001-01-01\n---\n"
    )
    assert sandbox.evaluator.extra == {"since": "2001-01-01"}
