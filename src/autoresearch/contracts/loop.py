"""A loop's settings: what a front door was given for a loop, and what a run recorded of it
(the `loop` of a run record, runs.loop_json; the manifest's `agent`).

One type for both, so precedence is one rule (`LoopSettings.over`): every field given (not
None) replaces the recorded one. `to_dict` / `from_dict` are the JSON edge and keep the stored
shape: the placement keys only once a placement was recorded, `counts_from` only once a run was
continued, `sandbox` and `certify` only once given, and keys this version does not know survive
a rewrite (`extra`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from typing import Any

# the agent's own options: a different agent does not inherit them (supervisor.md §9)
AGENT_OPTION_FIELDS = ("model", "agent_args", "max_turns", "seed")
_PLACEMENT = ("executor", "address")
_LISTS = ("agent_args", "trackers", "agents", "models")  # tuples here, lists in the JSON
# stored only once set: a run recorded before them reads back, and writes back, the same
_OMITTED_UNSET = (
    "counts_from", "sandbox", "certify", "plateau", "on_plateau", "plateau_from", "paused",
    "trackers", "tracker_uri", "strategy", "archive_size", "agents", "models",
)  # fmt: skip


@dataclass(frozen=True)
class LoopSettings:
    """An agent spec with its options, the loop's limits and where it runs; None: not given
    (or not recorded), so the default applies."""

    agent: str | None = None
    model: str | None = None
    agent_args: tuple[str, ...] | None = None
    max_turns: int | None = None
    seed: int | None = None
    max_iterations: int | None = None
    max_noops: int | None = None
    max_agent_failures: int | None = None
    agent_timeout: float | None = None
    budget_usd: float | None = None
    budget_tokens: int | None = None
    budget_hours: float | None = None
    lanes: int | None = None
    executor: str | None = None  # `local` | `ray`
    address: str | None = None
    counts_from: int | None = None  # the iteration a continued run's limits count from
    sandbox: str | None = None  # `--sandbox`; None: sandbox.md's, else confine.DEFAULT_MODE
    certify: bool | None = None  # `--no-certify`: False; None: certify at the end (default)
    plateau: int | None = None  # `--plateau N` (None: sandbox.md's, else the default)
    on_plateau: str | None = None  # `--on-plateau explore|stop|ask`
    # the plateau's state (supervisor/plateau.py), kept with the loop so a resume keeps it:
    plateau_from: int | None = None  # the iteration the plateau counts from after `explore`
    paused: str | None = None  # the notice of a run paused on a plateau (`ask`)
    trackers: tuple[str, ...] | None = None  # `--tracker NAME`s (tracking.py); None: none
    tracker_uri: str | None = None  # `--tracker-uri`; None: the tracker's default store
    strategy: str | None = None  # `--strategy` (else sandbox.md's search.strategy, else greedy)
    archive_size: int | None = None  # `--archive-size` (the frontier's)
    agents: tuple[str, ...] | None = None  # a portfolio: `--agent` given more than once
    models: tuple[str, ...] | None = None  # `--model` given once per portfolio agent, in order
    extra: dict[str, object] = field(default_factory=dict)

    def over(self, given: LoopSettings) -> LoopSettings:
        """These settings with every field `given` has (not None, not empty) in their place; a
        different agent drops this one's own options first."""
        base = self
        if given.agent is not None and given.agent != self.agent:
            base = replace(self, model=None, agent_args=(), max_turns=None, seed=None)
            base = replace(base, agents=None, models=None) if given.agents is None else base
        elif given.model is not None and given.models is None and base.models:
            # `--model` once: the first agent's, the others keep theirs
            base = replace(base, models=(given.model, *base.models[1:]))
        chosen = {
            f.name: getattr(given, f.name)
            for f in fields(given)
            if f.name != "extra" and getattr(given, f.name) not in (None, ())
        }
        return replace(base, **chosen)

    def to_dict(self) -> dict[str, object]:
        data: dict[str, object] = dict(self.extra)
        for f in fields(self):
            value = getattr(self, f.name)
            if f.name == "extra" or (f.name in _OMITTED_UNSET and value is None):
                continue
            if f.name in _PLACEMENT and self.executor is None:
                continue  # a loop recorded before (or without) a placement
            data[f.name] = list(value or ()) if f.name in _LISTS else value
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, object]) -> LoopSettings:
        names = {f.name for f in fields(cls)} - {"extra"}
        # the loop's own record, written by to_dict: its values are given to the fields as stored
        known: dict[str, Any] = {k: v for k, v in data.items() if k in names}
        for name in _LISTS:
            if name in known:
                known[name] = tuple(known[name] or ())
        extra = {k: v for k, v in data.items() if k not in names}
        return cls(**known, extra=extra)
