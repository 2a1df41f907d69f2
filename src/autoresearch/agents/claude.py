"""Anthropic Claude Code: `claude -p --output-format stream-json --verbose
--permission-mode acceptEdits --add-dir <run folder> --allowedTools <git add, git commit>`,
the instructions on stdin.

`acceptEdits` accepts file edits in the working directory; anything else needs an approval
that a non-interactive session cannot get, so it is denied. A session needs exactly two more
grants: the run folder (to write the artifact) and `git add` / `git commit` (to make its
candidate commit). Read-only git commands need no grant.

The final `result` message carries `subtype`, `is_error`, `result` (the text; an API failure's
message), `total_cost_usd`, `usage`, `num_turns`, `session_id` and `permission_denials`.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from autoresearch.agents.base import Backend, SessionRequest, Usage, json_int
from autoresearch.agents.external import ExternalAgent, with_extra

ALLOWED_TOOLS = ("Bash(git add:*)", "Bash(git commit:*)")
# a user's own permission choice replaces ours
PERMISSION_FLAGS = ("--permission-mode", "--dangerously-skip-permissions")
DENIAL_TARGETS = ("command", "file_path", "notebook_path", "path", "url", "pattern")


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
    usage.cache_write_tokens = created
    usage.output_tokens = json_int(u.get("output_tokens"))
    cost = event.get("total_cost_usd")
    usage.cost_usd = float(cost) if isinstance(cost, int | float) else None
    turns = event.get("num_turns")
    usage.turns = turns if isinstance(turns, int) else None
    usage.session_id = str(event.get("session_id") or usage.session_id or "") or None
    usage.denials = denials(event.get("permission_denials"))
    # an API failure arrives as subtype "success" with is_error: its text is in `result`
    usage.success = not event.get("is_error") and event.get("subtype") == "success"
    if not usage.success:
        usage.error = _error_text(event)


def _error_text(event: dict[str, object]) -> str:
    result = event.get("result")
    if isinstance(result, str) and result.strip():
        return result.strip()
    errors = event.get("errors")
    detail = "; ".join(map(str, errors)) if isinstance(errors, list) and errors else ""
    return f"{event.get('subtype')}" + (f": {detail}" if detail else "")


def denials(value: object) -> list[str]:
    """`permission_denials` as `<tool>: <target>` lines (the command or the path refused)."""
    found = []
    for item in value if isinstance(value, list) else []:
        if not isinstance(item, dict):
            continue
        tool_input = item.get("tool_input")
        tool_input = tool_input if isinstance(tool_input, dict) else {}
        target = next((str(tool_input[k]) for k in DENIAL_TARGETS if k in tool_input), "")
        found.append(f"{item.get('tool_name', '?')}: {target}".rstrip(": "))
    return found


def _sum(*values: int | None) -> int | None:
    present = [v for v in values if v is not None]
    return sum(present) if present else None


def claude_argv(
    req: SessionRequest, model: str | None, extra: Sequence[str], max_turns: int | None
) -> list[str]:
    base = ["claude", "-p", "--output-format", "stream-json", "--verbose"]
    if not any(arg.split("=")[0] in PERMISSION_FLAGS for arg in extra):
        base += ["--permission-mode", "acceptEdits"]
    base += ["--add-dir", str(req.candidate_file.parent)]
    base += ["--allowedTools", ",".join(ALLOWED_TOOLS)]
    if max_turns is not None:
        base += ["--max-turns", str(max_turns)]
    return with_extra(base, model, extra)


def claude_agent(
    model: str | None = None, extra: Sequence[str] = (), max_turns: int | None = None
) -> ExternalAgent:
    return ExternalAgent(
        name="claude",
        build_argv=lambda req: claude_argv(req, model, extra, max_turns),
        parse_line=parse_claude_line,
        stdin_from_instructions=True,
        model=model,
    )


# the `claude` entry point of autoresearch.agents (pyproject.toml)
BACKEND = Backend(
    make=lambda config: claude_agent(config.model, config.args, config.max_turns),
    executable="claude",
)
