"""sandbox.md's `isolation` block: the OS sandbox of a run's children (docs/operations.md:
Security)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TypedDict, cast

from autoresearch.errors import ContractError
from autoresearch.jsonshape import json_shape
from autoresearch.sandbox_modes import SandboxMode

ISOLATION_KEYS = ("sandbox", "agent_network", "evaluator_network")
MSG_BAD_ISOLATION = "sandbox.md frontmatter isolation.{key} must be {what}."


@dataclass(frozen=True)
class Isolation:
    """The OS sandbox of the run's children (docs/operations.md: Security): which one (None:
    `--sandbox`, else confine.DEFAULT_MODE) and whether sessions and evaluations (with the
    checks) may use the network."""

    sandbox: SandboxMode | None = None
    agent_network: bool = True  # agents call their model
    evaluator_network: bool = False  # a candidate's code reaches nothing outside

    def to_dict(self) -> IsolationJson:
        return cast(IsolationJson, json_shape(self))

    @classmethod
    def from_dict(cls, data: Mapping[str, object] | None) -> Isolation:
        d = data or {}
        mode = d.get("sandbox")
        return cls(
            sandbox=None if mode is None else SandboxMode(str(mode)),
            agent_network=bool(d.get("agent_network", True)),
            evaluator_network=bool(d.get("evaluator_network", False)),
        )


class IsolationJson(TypedDict):
    sandbox: str | None
    agent_network: bool
    evaluator_network: bool


def isolation_of(block: Mapping[str, object]) -> Isolation:
    """The block's values checked (its keys are, by `contracts/sandbox.parse_sandbox`)."""
    mode = block.get("sandbox")
    if mode is not None and str(mode) not in tuple(SandboxMode):
        what = "one of: " + ", ".join(SandboxMode)
        raise ContractError(MSG_BAD_ISOLATION.format(key="sandbox", what=what))
    for key in ISOLATION_KEYS[1:]:
        if not isinstance(block.get(key, True), bool):
            raise ContractError(MSG_BAD_ISOLATION.format(key=key, what="true or false"))
    return Isolation.from_dict(block)
