"""OpenAI Codex CLI: `codex exec --json --sandbox workspace-write -C <worktree> -`.

The instructions go on stdin. Success and usage come from the JSONL events, not the exit code:
`turn.completed.usage` is the thread's running total; `turn.failed` or a fatal `error` event
means the session failed.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from autoresearch.agents.base import SessionRequest, Usage, json_int
from autoresearch.agents.external import ExternalAgent, with_extra


def parse_codex_line(line: str, usage: Usage) -> None:
    """Fold one JSONL event into the usage record."""
    event = _json(line)
    kind = event.get("type")
    if kind == "thread.started":
        usage.session_id = str(event.get("thread_id") or usage.session_id or "") or None
    elif kind == "turn.completed":
        u = event.get("usage") or {}
        usage.input_tokens = json_int(u.get("input_tokens"))
        usage.cached_tokens = json_int(u.get("cached_input_tokens"))
        usage.output_tokens = json_int(u.get("output_tokens"))
        usage.turns = (usage.turns or 0) + 1
        if usage.success is None:
            usage.success = True
    elif kind == "turn.failed":
        usage.success = False
        usage.error = str((event.get("error") or {}).get("message") or "turn failed")
    elif kind == "error":
        message = str(event.get("message") or "error")
        if not message.startswith("Reconnecting"):  # transient retries are not failures
            usage.error = message
            usage.success = False


def _json(line: str) -> dict[str, Any]:
    try:
        value = json.loads(line)
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def codex_agent(model: str | None = None, extra: Sequence[str] = ()) -> ExternalAgent:
    def argv(req: SessionRequest) -> list[str]:
        base = ["codex", "exec", "--json", "--sandbox", "workspace-write", "-C", str(req.worktree)]
        return [*with_extra(base, model, extra), "-"]

    return ExternalAgent(
        name="codex",
        build_argv=argv,
        parse_line=parse_codex_line,
        stdin_from_instructions=True,
    )
