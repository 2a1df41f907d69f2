"""The evaluator contract as a run froze it at prepare (runs.evaluator_json): its own module,
apart from sandbox.md's parser, so that a reader of run records (`status`, a hook) decodes it
without importing the parser and the contracts of the rest of sandbox.md (issue 36)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from autoresearch.jsonshape import json_field, json_shape, number, optional_text, text
from autoresearch.states import MISSION_DEFAULT_DIRECTION, Direction, EvalFormat, KeepPolicy

DEFAULT_TIMEOUT_SECONDS = 3600.0
EVALUATOR_KEYS = ("command", "format", "keep_policy", "metric", "direction", "timeout_seconds")


@dataclass(frozen=True)
class EvaluatorSpec:
    """The evaluator contract, frozen into the manifest at prepare."""

    command: str
    format: EvalFormat
    keep_policy: KeepPolicy = KeepPolicy.SCORE_IMPROVEMENT
    metric: str | None = None
    direction: Direction = MISSION_DEFAULT_DIRECTION
    timeout_seconds: float = DEFAULT_TIMEOUT_SECONDS
    # unknown keys, JSON-safe (first in the JSON, as they always were)
    extra: dict[str, object] = field(default_factory=dict, metadata=json_field(leads=True))

    def to_dict(self) -> dict[str, object]:
        return json_shape(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, object]) -> EvaluatorSpec:
        return cls(
            command=str(data["command"]),
            format=EvalFormat(text(data["format"])),
            keep_policy=KeepPolicy(text(data.get("keep_policy", KeepPolicy.SCORE_IMPROVEMENT))),
            metric=optional_text(data.get("metric")),
            direction=Direction(text(data.get("direction", MISSION_DEFAULT_DIRECTION))),
            timeout_seconds=number(data.get("timeout_seconds", DEFAULT_TIMEOUT_SECONDS)),
            extra={k: v for k, v in data.items() if k not in EVALUATOR_KEYS},
        )
