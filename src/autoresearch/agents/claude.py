"""Anthropic Claude Code: `claude -p --output-format stream-json --verbose
--permission-mode acceptEdits`, the instructions on stdin.

The final `result` message carries `subtype`, `is_error`, `total_cost_usd`, `usage`,
`num_turns` and `session_id`.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from autoresearch.agents.base import SessionRequest, Usage, json_int
from autoresearch.agents.external import ExternalAgent, with_extra


def parse_claude_line(line: str, usage: Usage) -> None:
    """Fold one stream-json message into the usage record."""
    try:
        event = json.loads(line)
    except ValueError:
        return
    if not isinstance(event, dict):
        return
    if event.get("type") == "system" and event.get("subtype") == "init":
        usage.session_id = event.get("session_id") or usage.session_id
        usage.model = event.get("model") or usage.model
    elif event.get("type") == "result":
        _result(event, usage)


def _result(event: dict[str, object], usage: Usage) -> None:
    u = event.get("usage")
    u = u if isinstance(u, dict) else {}
    cached = json_int(u.get("cache_read_input_tokens"))
    created = json_int(u.get("cache_creation_input_tokens"))
    usage.input_tokens = _sum(json_int(u.get("input_tokens")), cached, created)
    usage.cached_tokens = cached
    usage.output_tokens = json_int(u.get("output_tokens"))
    cost = event.get("total_cost_usd")
    usage.cost_usd = float(cost) if isinstance(cost, int | float) else None
    turns = event.get("num_turns")
    usage.turns = turns if isinstance(turns, int) else None
    usage.session_id = str(event.get("session_id") or usage.session_id or "") or None
    is_error = bool(event.get("is_error"))
    usage.success = not is_error and event.get("subtype") == "success"
    if not usage.success:
        errors = event.get("errors")
        detail = "; ".join(map(str, errors)) if isinstance(errors, list) and errors else ""
        usage.error = f"{event.get('subtype')}" + (f": {detail}" if detail else "")


def _sum(*values: int | None) -> int | None:
    present = [v for v in values if v is not None]
    return sum(present) if present else None


def claude_agent(
    model: str | None = None, extra: Sequence[str] = (), max_turns: int | None = None
) -> ExternalAgent:
    def argv(req: SessionRequest) -> list[str]:
        base = [
            "claude", "-p", "--output-format", "stream-json", "--verbose",
            "--permission-mode", "acceptEdits",
        ]  # fmt: skip
        if max_turns is not None:
            base += ["--max-turns", str(max_turns)]
        return with_extra(base, model, extra)

    return ExternalAgent(
        name="claude",
        build_argv=argv,
        parse_line=parse_claude_line,
        stdin_from_instructions=True,
    )
