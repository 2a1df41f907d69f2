"""`reliability_tier` and `blocking_policy` of a job (worker.md "Quality first"): what each tier
asks of a request, and what the request lacks of it. Pure: `worker/jobs.validate` refuses a
request that lacks gates under `enforce`, the verdict warns under `warn` (worker/outcome.py),
and `observe` only records them in `outcome.policy.reliability`.

tier       policy  checks  scope  semantic_gate  isolation   (policy: verification_policy;
lite       –       –       –      off            any          scope: scoped_patch, unless
standard   yes     –       –      off            any          the job is read_only)
strict     yes     ≥ 1     yes    ≥ warn         any
critical   yes     ≥ 1     yes    required       worktree
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TypeVar

from autoresearch.contracts.job import BlockingPolicy, JobSpec, ReliabilityTier, SemanticGate
from autoresearch.errors import ContractError
from autoresearch.states import Isolation, TaskKind

# The defaults of a request that names no tier or policy (the source's WORKER_RELIABILITY_TIER
# and WORKER_BLOCKING_POLICY): standard and observe, so that old callers are never blocked.
ENV_TIER = "AUTORESEARCH_WORKER_RELIABILITY_TIER"
ENV_POLICY = "AUTORESEARCH_WORKER_BLOCKING_POLICY"

_GATE_RANK = {SemanticGate.OFF: 0, SemanticGate.WARN: 1, SemanticGate.REQUIRED: 2}


@dataclass(frozen=True)
class TierGates:
    """What a tier asks of a job's request."""

    policy: bool  # a verification_policy (task_kind)
    checks: bool  # at least one check (the job's or a stage's)
    scope: bool  # a scoped_patch, unless the job is read_only
    semantic: SemanticGate  # the least semantic gate
    worktree: bool  # isolation worktree: the result stays off the user's tree until applied


TIERS: dict[ReliabilityTier, TierGates] = {
    ReliabilityTier.LITE: TierGates(False, False, False, SemanticGate.OFF, False),
    ReliabilityTier.STANDARD: TierGates(True, False, False, SemanticGate.OFF, False),
    ReliabilityTier.STRICT: TierGates(True, True, True, SemanticGate.WARN, False),
    ReliabilityTier.CRITICAL: TierGates(True, True, True, SemanticGate.REQUIRED, True),
}


def default_tier(env: Mapping[str, str] = os.environ) -> ReliabilityTier:
    return _choice(env, ENV_TIER, ReliabilityTier, ReliabilityTier.STANDARD)


def default_policy(env: Mapping[str, str] = os.environ) -> BlockingPolicy:
    return _choice(env, ENV_POLICY, BlockingPolicy, BlockingPolicy.OBSERVE)


_E = TypeVar("_E", ReliabilityTier, BlockingPolicy)


def _choice(env: Mapping[str, str], key: str, kind: type[_E], default: _E) -> _E:
    raw = env.get(key, "").strip()
    if not raw:
        return default
    try:
        return kind(raw)
    except ValueError:
        names = ", ".join(k.value for k in kind)
        raise ContractError(f"{key}={raw!r} is none of {names}") from None


def missing_gates(spec: JobSpec) -> tuple[str, ...]:
    """The gates of the job's tier its request lacks, named as the request's fields."""
    gates = TIERS[spec.reliability_tier]
    checks = len(spec.checks) + sum(len(s.checks) for s in spec.stages)
    found: list[str] = []
    if gates.policy and spec.task_kind is None:
        found.append("verification_policy")
    if gates.checks and checks == 0:
        found.append("checks")
    if gates.scope and spec.task_kind is not TaskKind.READ_ONLY and spec.scope_paths is None:
        found.append("scoped_patch")
    if _GATE_RANK[spec.semantic_gate] < _GATE_RANK[gates.semantic]:
        least = "required" if gates.semantic is SemanticGate.REQUIRED else "warn or required"
        found.append(f"semantic_gate {least}")
    if gates.worktree and spec.isolation is not Isolation.WORKTREE:
        found.append("isolation worktree")
    return tuple(found)


def refusal(spec: JobSpec, missing: tuple[str, ...]) -> str:
    """The one-line refusal of a request that lacks its tier's gates under `enforce`."""
    return (
        f"reliability_tier {spec.reliability_tier.value} needs {', '.join(missing)} "
        "(blocking_policy enforce refuses the job without them)"
    )
