"""The semantic gate of a job (worker.md "Quality first"): a dedicated reviewer model judges the
job's change against its prompt, after the checks passed.

Invariants: the reviewer is `AUTORESEARCH_GATEWAY_SEMANTIC_MODEL` and nothing else (pinned: no
fallback model or endpoint answers in its place); what it is sent is redacted and never cut –
a diff too large to send whole gives no verdict, as does a missing model, a failing gateway, a
truncated, empty, unparsable or other model's answer. Every such case is `missing`, which a
`required` gate turns into `needs_evidence`: the gate fails closed. `judge` is pure.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from autoresearch.contracts.job_result import SemanticReview, SemanticStatus
from autoresearch.errors import AutoresearchError
from autoresearch.redact import redact
from autoresearch.worker import gateway
from autoresearch.worker.gateway import model_matches

MAX_MATERIAL_BYTES = 48 * 1024
MAX_ANSWER_TOKENS = 512
SYSTEM = (
    "You are a strict reviewer. An agent was given the task below and produced the diff below; "
    "its checks passed. Judge only whether the diff does what the task asked – all of it, and "
    'nothing it was not asked – and answer with one JSON object only: {"verdict": "pass" or '
    '"fail", "reason": one sentence citing path:line}.'
)


@dataclass(frozen=True)
class Answer:
    model: str
    answered_by: str | None
    finish_reason: str | None
    text: str


def missing(reason: str, model: str | None = None) -> SemanticReview:
    return SemanticReview(SemanticStatus.MISSING, reason, model)


def judge(answer: Answer) -> SemanticReview:
    """The reviewer's verdict from its answer, or `missing` with why (pure)."""
    model, by = answer.model, answer.answered_by
    if answer.finish_reason == "length":
        return SemanticReview(SemanticStatus.MISSING, "the reviewer's answer was cut", model, by)
    if not model_matches(model, by):
        why = f"answered by {by or 'an unnamed model'}, not {model}"
        return SemanticReview(SemanticStatus.MISSING, why, model, by)
    start, end = answer.text.find("{"), answer.text.rfind("}")
    try:
        data = json.loads(answer.text[start : end + 1]) if 0 <= start < end else None
    except ValueError:
        data = None
    verdict = data.get("verdict") if isinstance(data, dict) else None
    if verdict not in ("pass", "fail") or not isinstance(data, dict):
        return SemanticReview(SemanticStatus.MISSING, "no verdict in the answer", model, by)
    status = SemanticStatus.PASSED if verdict == "pass" else SemanticStatus.FAILED
    return SemanticReview(status, str(data.get("reason") or "")[:1000], model, by)


def review_change(prompt: str, patch: str) -> SemanticReview:
    """Ask the dedicated reviewer whether `patch` does what `prompt` asked."""
    try:
        config = gateway.load_config()
    except AutoresearchError as exc:
        return missing(f"no gateway: {exc.message}")
    model = config.semantic_model
    if model is None:
        return missing(f"set {gateway.ENV_PREFIX}SEMANTIC_MODEL: the gate needs its own reviewer")
    material = redact(f"Task:\n{prompt}\n\nDiff:\n{patch}")
    if len(material.encode()) > MAX_MATERIAL_BYTES:
        return missing(f"the diff is too large to review whole ({MAX_MATERIAL_BYTES} bytes)", model)
    messages = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": material}]
    try:
        done = gateway.complete(config.pinned(model), messages, max_tokens=MAX_ANSWER_TOKENS)
    except AutoresearchError as exc:
        return missing(exc.message, model)
    return judge(Answer(model, done.answered_by, done.finish_reason, done.text))
