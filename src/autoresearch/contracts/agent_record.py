"""How one agent session ended, as an iteration records it (`iterations.agent_json`).

Typed once here so the views, the report and the totals read fields, not string keys. What
`agents.base.AgentResult.record` builds, with the run's lane and autoresearch's own reason
for a failed session. `to_dict` / `from_dict` are the JSON edge and keep the stored shape
byte for byte: a key is written only when it has a value (a row from an older version that
lacks one reads back without it), in this order, and keys this version does not know survive
a rewrite (`extra`, after the known ones).
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any


@dataclass(frozen=True)
class AgentRecord:
    """A session's agent, exit, time, usage and log; None: not reported (never written)."""

    agent: str | None = None
    exit_code: int | None = None
    duration_ms: int | None = None
    timed_out: bool | None = None
    cancelled: bool | None = None
    success: bool | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None
    cached_tokens: int | None = None
    cache_write_tokens: int | None = None
    reasoning_tokens: int | None = None
    cost_usd: float | None = None
    turns: int | None = None
    session_id: str | None = None
    model: str | None = None
    error: str | None = None
    log_file: str | None = None
    denials: tuple[str, ...] | None = None  # what the agent's permission layer refused
    lane: int | None = None  # `run --lanes K`: the lane whose session this was
    failure: str | None = None  # why the session counts as failed, beside its self-report
    extra: dict[str, Any] = field(default_factory=dict)

    def __bool__(self) -> bool:
        return bool(self.to_dict())  # an empty record says no more than none

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {}
        for f in fields(self):
            value = getattr(self, f.name)
            if f.name != "extra" and value is not None:
                data[f.name] = list(value) if isinstance(value, tuple) else value
        return {**data, **{k: v for k, v in self.extra.items() if k not in data}}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> AgentRecord:
        if not isinstance(data, dict):
            raise TypeError(f"an agent record is an object, not {type(data).__name__}")
        known = {f.name for f in fields(cls)} - {"extra"}
        values = {k: v for k, v in data.items() if k in known and v is not None}
        if "denials" in values:
            values["denials"] = tuple(values["denials"])
        # a known key stored as null, or an unknown one, is kept where `to_dict` puts extras
        rest = {k: v for k, v in data.items() if k not in values}
        return cls(**values, extra=rest)
