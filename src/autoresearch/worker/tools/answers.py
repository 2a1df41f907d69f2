"""What a model tool answers (`analyze`, `review`, `draft`), typed to the field: the payload
the MCP door validates into its `ModelOutput` and the CLI prints. Pure types."""

from __future__ import annotations

from typing import NotRequired, TypedDict


class RoleJson(TypedDict):
    """One role's call in quality mode high (main, independent, red team, arbiter)."""

    role: str
    model: str
    answered_by: str | None
    finish_reason: str | None
    verdict: str | None
    issues: list[str]
    answer: str | None  # shown only when the result did not pass


class QualityJson(TypedDict):
    contract_version: str
    mode: str
    status: str
    reason_codes: list[str]
    verdict: str | None
    agreement: str | None
    roles: list[RoleJson]
    model_calls: int


class ModelAnswer(TypedDict):
    """A model tool's answer: the model's, or with its circuit open local evidence
    (`degraded`, no model called)."""

    answer: str | None
    degraded: bool
    endpoint: str | None
    model: str | None
    attempts: list[dict[str, object]]  # gateway.Attempt's JSON, one per HTTP attempt
    cost: float | None
    evidence: dict[str, object] | None  # the local evidence of a degraded answer
    quality: NotRequired[QualityJson]  # quality mode high
    receipt: NotRequired[dict[str, object]]  # set by `base.finish`
