"""What a run froze of its mission at prepare: the `sandbox` of a run record (runs.sandbox_json).

Typed once here so no layer reads it by string key. `to_dict` / `from_dict` are the JSON edge
and keep the stored shape: a run prepared by an older version (keys missing) reads back with
the defaults it always had, and keys this version does not know survive a rewrite (`extra`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from autoresearch.contracts.isolation import Isolation
from autoresearch.contracts.sandbox import BudgetSpec, ChecksSpec, EvaluationSlots
from autoresearch.contracts.tune import TuneSpec, parse_tune
from autoresearch.jsonshape import (
    items,
    json_field,
    json_shape,
    mapping,
    number,
    optional_text,
    text,
    whole,
)
from autoresearch.noise import NoisePolicy
from autoresearch.paths import DEFAULT_SHARED_LINKS

_KEYS = (
    "body",
    "links",
    "runtime",
    "tune",
    "noise",
    "sealed",
    "checks",
    "evaluation",
    "budget",
    "isolation",
    "mission_text",
    "sandbox_text",
    "relative_dir",
    "start_commit",
)


@dataclass(frozen=True)
class FrozenMission:
    """mission.md and sandbox.md as a run froze them, and where its mission stood."""

    body: str = ""  # sandbox.md's instructions, below its frontmatter
    links: tuple[str, ...] = ()
    runtime: tuple[str, ...] = ()
    tune: TuneSpec | None = None
    noise: NoisePolicy | None = None  # None: prepared before noise-aware keeps
    sealed: tuple[str, ...] = ()
    checks: ChecksSpec | None = None
    evaluation: EvaluationSlots = field(default_factory=EvaluationSlots)
    budget: BudgetSpec = field(default_factory=BudgetSpec)
    isolation: Isolation = field(default_factory=Isolation)  # before it existed: the defaults
    mission_text: str = ""
    sandbox_text: str = ""
    relative_dir: str = "."  # the mission folder inside the repository (and the worktree)
    start_commit: str | None = None  # the commit the run's branch started from
    # keys of a newer version, kept (first in the JSON, as they always were)
    extra: dict[str, object] = field(default_factory=dict, metadata=json_field(leads=True))

    @property
    def noise_policy(self) -> NoisePolicy:
        """The policy the run decides by (an older run without one: the single rule)."""
        return self.noise if self.noise is not None else NoisePolicy.from_dict(None)

    @property
    def shared_links(self) -> tuple[str, ...]:
        """The paths linked from the repository into the worktree: the defaults and sandbox.md's."""
        return tuple(dict.fromkeys((*DEFAULT_SHARED_LINKS, *self.links)))

    def to_dict(self) -> dict[str, object]:
        return json_shape(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, object] | None) -> FrozenMission:
        d = data or {}
        noise = d.get("noise")
        return cls(
            body=str(d.get("body") or ""),
            links=_texts(d.get("links")),
            runtime=_texts(d.get("runtime")),
            tune=parse_tune(d.get("tune")),
            noise=None if noise is None else NoisePolicy.from_dict(dict(mapping(noise))),
            sealed=_texts(d.get("sealed")),
            checks=ChecksSpec.from_dict(mapping(d.get("checks"))),
            evaluation=EvaluationSlots.from_dict(mapping(d.get("evaluation"))),
            budget=_budget(mapping(d.get("budget"))),
            isolation=Isolation.from_dict(mapping(d.get("isolation"))),
            mission_text=str(d.get("mission_text") or ""),
            sandbox_text=str(d.get("sandbox_text") or ""),
            relative_dir=str(d.get("relative_dir") or "."),
            start_commit=optional_text(d.get("start_commit")),
            extra={k: v for k, v in d.items() if k not in _KEYS},
        )


def _texts(value: object) -> tuple[str, ...]:
    return tuple(text(item) for item in items(value))


def _budget(d: Mapping[str, object]) -> BudgetSpec:
    usd, tokens, hours = d.get("usd"), d.get("tokens"), d.get("hours")
    return BudgetSpec(
        usd=None if usd is None else number(usd),
        tokens=None if tokens is None else whole(tokens),
        hours=None if hours is None else number(hours),
    )
