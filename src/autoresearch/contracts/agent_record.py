"""How one agent session ended, as an iteration records it (`iterations.agent_json`).

Typed once here so the views, the report and the totals read fields, not string keys. What
`agents.base.AgentResult.record` builds, with the run's lane and autoresearch's own reason
for a failed session. The agent's self-report (tokens, cost, success, error, denials) is one
`Usage`, the type a back-end fills while it reads the agent's events, so its fields are
defined once. `to_dict` / `from_dict` are the JSON edge and keep the stored shape byte for
byte: one flat object, a key written only when it has a value (a row from an older version
that lacks one reads back without it), in the order every version wrote, and keys this
version does not know survive a rewrite (`extra`, after the known ones).
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields


@dataclass
class Usage:
    """Tokens and cost as the agent reported them (None when it reported nothing)."""

    input_tokens: int | None = None
    output_tokens: int | None = None
    cached_tokens: int | None = None
    cache_write_tokens: int | None = None
    reasoning_tokens: int | None = None
    cost_usd: float | None = None
    turns: int | None = None
    session_id: str | None = None
    model: str | None = None
    success: bool | None = None
    error: str | None = None
    # what the agent's own permission layer refused (tool and target), in order
    denials: list[str] = field(default_factory=list)

    def add_tokens(self, inp: int | None, out: int | None, cached: int | None = None) -> None:
        self.input_tokens = _add(self.input_tokens, inp)
        self.output_tokens = _add(self.output_tokens, out)
        self.cached_tokens = _add(self.cached_tokens, cached)


def _add(a: int | None, b: int | None) -> int | None:
    if b is None:
        return a
    return (a or 0) + b


@dataclass(frozen=True)
class AgentRecord:
    """A session's agent, exit, time, usage and log; None: not reported (never written)."""

    agent: str | None = None
    exit_code: int | None = None
    duration_ms: int | None = None
    timed_out: bool | None = None
    cancelled: bool | None = None
    usage: Usage = field(default_factory=Usage)  # the agent's own report, flat in the JSON
    log_file: str | None = None
    lane: int | None = None  # `run --lanes K`: the lane whose session this was
    failure: str | None = None  # why the session counts as failed, beside its self-report
    extra: dict[str, object] = field(default_factory=dict)

    def __bool__(self) -> bool:
        return bool(self.to_dict())  # an empty record says no more than none

    def to_dict(self) -> dict[str, object]:
        data = {k: v for k, v in self._flat().items() if v is not None}
        data = {k: data[k] for k in sorted(data, key=_rank)}
        return {**data, **{k: v for k, v in self.extra.items() if k not in data}}

    def _flat(self) -> dict[str, object]:
        own = {f.name: getattr(self, f.name) for f in fields(self)}
        usage = {f.name: getattr(self.usage, f.name) for f in fields(Usage)}
        usage["denials"] = list(self.usage.denials) or None  # none refused: not written
        return {**{k: v for k, v in own.items() if k not in _NESTED}, **usage}

    @classmethod
    def from_dict(cls, data: object) -> AgentRecord:
        if not isinstance(data, dict):
            raise TypeError(f"an agent record is an object, not {type(data).__name__}")
        values = {k: v for k, v in data.items() if k in _KNOWN and v is not None}
        if "denials" in values:
            values["denials"] = list(values["denials"])
            if not values["denials"]:
                del values["denials"]  # an empty list is not written: kept as an extra
        # a known key stored as null (or empty), or an unknown one, is kept where `to_dict`
        # puts extras
        rest = {k: v for k, v in data.items() if k not in values}
        usage = Usage(**{k: v for k, v in values.items() if k in _USAGE})
        own = {k: v for k, v in values.items() if k not in _USAGE}
        return cls(**own, usage=usage, extra=rest)


_NESTED = ("usage", "extra")
_USAGE = frozenset(f.name for f in fields(Usage))
_KNOWN = _USAGE | ({f.name for f in fields(AgentRecord)} - set(_NESTED))
# The keys of iterations.agent_json in the order every version wrote them (the agent's
# success before its tokens, its error before the log, denials after): the stored contract.
_STORED_ORDER = (
    "agent",
    "exit_code",
    "duration_ms",
    "timed_out",
    "cancelled",
    "success",
    "input_tokens",
    "output_tokens",
    "cached_tokens",
    "cache_write_tokens",
    "reasoning_tokens",
    "cost_usd",
    "turns",
    "session_id",
    "model",
    "error",
    "log_file",
    "denials",
    "lane",
    "failure",
)


def _rank(key: str) -> int:
    # a field added later and not yet ranked is still written, after the ranked ones
    return _STORED_ORDER.index(key) if key in _STORED_ORDER else len(_STORED_ORDER)
