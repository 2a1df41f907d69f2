"""OpenAI Codex CLI: `codex exec --json --sandbox workspace-write -C <worktree> --add-dir … -`.

The instructions go on stdin. Success and usage come from the JSONL events, not the exit code:
`turn.completed.usage` is the thread's running total; `turn.failed` or a fatal `error` event
means the session failed.

`workspace-write` lets commands write the worktree (and the temp dirs) but keeps every `.git`
read-only, and a linked worktree's git data lives outside it: a session could neither commit
nor write the artifact. Each session gets exactly what it needs on top: the common git dir's
`objects`, `refs` and `logs`, the worktree's own git dir, and the run folder (the artifact).
Hooks and the repository config stay read-only, so nothing the agent writes runs outside the
sandbox later.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from autoresearch.agents.base import Backend, SessionRequest, Usage, json_int
from autoresearch.agents.base import writable_dirs as writable_dirs  # codex's --add-dir
from autoresearch.agents.external import ExternalAgent, with_extra

# a user's own sandbox choice replaces ours (codex refuses `--sandbox` twice)
SANDBOX_FLAGS = (
    "--sandbox", "-s", "--full-auto", "--dangerously-bypass-approvals-and-sandbox", "--yolo",
)  # fmt: skip


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
        usage.cache_write_tokens = json_int(u.get("cache_write_input_tokens"))
        usage.output_tokens = json_int(u.get("output_tokens"))
        usage.reasoning_tokens = json_int(u.get("reasoning_output_tokens"))
        usage.turns = (usage.turns or 0) + 1
        if usage.success is None:
            usage.success = True
    elif kind == "turn.failed":
        usage.success = False
        usage.error = api_message(str((event.get("error") or {}).get("message") or "turn failed"))
    elif kind == "error":
        message = str(event.get("message") or "error")
        if not message.startswith("Reconnecting"):  # transient retries are not failures
            usage.error = api_message(message)
            usage.success = False


def api_message(text: str) -> str:
    """codex passes an API error body through as its message: keep the API's own words."""
    data = _json(text)
    error = data.get("error")
    if isinstance(error, dict) and isinstance(error.get("message"), str):
        return str(error["message"])
    return text


def _json(line: str) -> dict[str, Any]:
    try:
        value = json.loads(line)
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def codex_argv(req: SessionRequest, model: str | None, extra: Sequence[str]) -> list[str]:
    base = ["codex", "exec", "--json"]
    if not any(arg.split("=")[0] in SANDBOX_FLAGS for arg in extra):
        base += ["--sandbox", "workspace-write"]
    base += ["-C", str(req.worktree)]
    for directory in writable_dirs(req):
        base += ["--add-dir", str(directory)]
    return [*with_extra(base, model, extra), "-"]


def codex_agent(model: str | None = None, extra: Sequence[str] = ()) -> ExternalAgent:
    return ExternalAgent(
        name="codex",
        build_argv=lambda req: codex_argv(req, model, extra),
        parse_line=parse_codex_line,
        stdin_from_instructions=True,
        model=model,
    )


# the `codex` entry point of autoresearch.agents (pyproject.toml)
BACKEND = Backend(make=lambda config: codex_agent(config.model, config.args), executable="codex")
