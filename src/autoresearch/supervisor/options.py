"""The loop's options: what `run` records and what `resume` continues with.

Precedence on resume (supervisor.md §9): a flag given now > what the run recorded > the
default. A different agent does not inherit the recorded agent's model and arguments. Every
front door (CLI, MCP, the worker) builds its loop through these functions.
"""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from autoresearch.agents import AgentConfig, validate_spec
from autoresearch.decide import DEFAULT_MAX_AGENT_FAILURES, DEFAULT_MAX_NOOPS
from autoresearch.supervisor.loop import LoopLimits


def limits_from(values: dict[str, Any]) -> LoopLimits:
    """Limits from recorded or given values, defaults for what is missing."""
    return LoopLimits(
        max_iterations=values.get("max_iterations"),
        max_noops=values.get("max_noops", DEFAULT_MAX_NOOPS),
        max_agent_failures=values.get("max_agent_failures", DEFAULT_MAX_AGENT_FAILURES),
        agent_timeout=values.get("agent_timeout"),
    )


def loop_record(
    config: AgentConfig, limits: LoopLimits, earlier: dict[str, Any] | None = None
) -> dict[str, Any]:
    """The `loop` object a run records (over what it recorded before)."""
    return {**(earlier or {}), **config.to_dict(), **asdict(limits)}


def resumed_loop(
    recorded: dict[str, Any] | None,
    spec: str,
    max_iterations: int | None,
    agent_timeout: float | None,
) -> tuple[AgentConfig, LoopLimits]:
    """The agent and limits a resumed loop runs with."""
    loop = dict(recorded or {})
    spec = validate_spec(spec)
    config = AgentConfig.from_dict(loop) if spec == loop.get("agent") else AgentConfig(spec)
    limits = limits_from(loop)
    return config, LoopLimits(
        max_iterations=max_iterations if max_iterations is not None else limits.max_iterations,
        max_noops=limits.max_noops,
        max_agent_failures=limits.max_agent_failures,
        agent_timeout=agent_timeout if agent_timeout is not None else limits.agent_timeout,
    )
