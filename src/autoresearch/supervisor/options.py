"""The loop's options: what `run` records and what `resume` continues with.

Precedence on resume (supervisor.md §9): a flag given now > what the run recorded > the
default. A different agent does not inherit the recorded agent's model and arguments. Every
front door (CLI, MCP, the worker) builds its loop through these functions.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from autoresearch.agents import AgentConfig, validate_spec
from autoresearch.decide import DEFAULT_MAX_AGENT_FAILURES, DEFAULT_MAX_NOOPS
from autoresearch.errors import ContractError
from autoresearch.states import ExecutorKind
from autoresearch.supervisor.loop import LoopLimits


def limits_from(values: dict[str, Any]) -> LoopLimits:
    """Limits from recorded or given values, defaults for what is missing."""
    return LoopLimits(
        max_iterations=values.get("max_iterations"),
        max_noops=values.get("max_noops", DEFAULT_MAX_NOOPS),
        max_agent_failures=values.get("max_agent_failures", DEFAULT_MAX_AGENT_FAILURES),
        agent_timeout=values.get("agent_timeout"),
        budget_usd=values.get("budget_usd"),
        budget_tokens=values.get("budget_tokens"),
        budget_hours=values.get("budget_hours"),
        lanes=int(values.get("lanes") or 0),
    )


def loop_record(
    config: AgentConfig,
    limits: LoopLimits,
    earlier: dict[str, Any] | None = None,
    where: Where | None = None,
) -> dict[str, Any]:
    """The `loop` object a run records (over what it recorded before)."""
    placed = asdict(where) if where is not None else {}
    return {**(earlier or {}), **config.to_dict(), **asdict(limits), **placed}


@dataclass(frozen=True)
class Where:
    """Where a loop's sessions and evaluations run: this machine or Ray (with its address)."""

    executor: ExecutorKind = ExecutorKind.LOCAL
    address: str | None = None


def executor_kind(value: object) -> ExecutorKind:
    """The executor a flag or a recorded loop names (the JSON edge keeps the string)."""
    try:
        return ExecutorKind(str(value))
    except ValueError:
        kinds = ", ".join(kind.value for kind in ExecutorKind)
        raise ContractError(f"unknown executor {value!r} (one of: {kinds})") from None


def where_from(
    executor: str | None, address: str | None, recorded: dict[str, Any] | None = None
) -> Where:
    """`--executor`/`--address` given now over what the run recorded, else local. An address
    alone means Ray; `--executor ray` alone keeps a recorded address; `--executor local`
    drops it (a resume must not silently fall back to this machine, nor leave it)."""
    loop = recorded or {}
    if executor is None and address is None:
        return Where(executor_kind(loop.get("executor") or ExecutorKind.LOCAL), loop.get("address"))
    kind = executor_kind(executor or ExecutorKind.RAY)
    if kind == ExecutorKind.LOCAL:
        if address:
            raise ContractError("--address names a Ray cluster: use it with --executor ray")
        return Where()
    if address is None and loop.get("executor") == ExecutorKind.RAY:
        address = loop.get("address")
    return Where(ExecutorKind.RAY, address)


AGENT_OPTION_KEYS = ("model", "agent_args", "max_turns", "seed")
LIMIT_KEYS = (
    "max_iterations", "max_noops", "max_agent_failures", "agent_timeout",
    "budget_usd", "budget_tokens", "budget_hours", "lanes",
)  # fmt: skip


def resumed_loop(
    recorded: dict[str, Any] | None, spec: str, given: dict[str, Any]
) -> tuple[AgentConfig, LoopLimits]:
    """The agent and limits a resumed or continued loop runs with: each option in `given`
    (agent options and limits; None or empty: not given) wins over the recorded one."""
    loop = dict(recorded or {})
    spec = validate_spec(spec)
    if spec != loop.get("agent"):
        loop.update(agent=spec, model=None, agent_args=[], max_turns=None, seed=None)
    for key in (*AGENT_OPTION_KEYS, *LIMIT_KEYS):
        value = given.get(key)
        if value is not None and value != () and value != []:
            loop[key] = list(value) if key == "agent_args" else value
    return AgentConfig.from_dict(loop), limits_from(loop)
