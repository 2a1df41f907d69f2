"""What the scripted model asks a real agent CLI to do in one autoresearch session.

The session's iteration comes from its instructions (`Iteration: N`); `actions[N]` names the
plan: `improve` / `worse` (edit value.txt by +1 / -0.5, commit, write the candidate artifact),
`noop` (write a noop artifact) or `api_error` (the model API answers with an error). Each step
is chosen from the tool results so far, with the agent's own tools: codex's `exec_command`,
Claude Code's Read / Write / Bash – as a real model would use them. aider has no tools: its
model answers with the whole new file, and autoresearch commits it and derives the artifact.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from pathlib import Path

from model_server import Exchange, Plan, Reply, ToolCall

API_ERROR = "scripted: the model is unavailable for this key"
DELTAS = {"improve": 1.0, "worse": -0.5}
_SHA = re.compile(r"\b[0-9a-f]{40}\b")


def artifact_json(ex: Exchange, status: str, commit: str | None, description: str) -> str:
    return json.dumps(
        {
            "status": status,
            "candidate_commit": commit,
            "base_commit": ex.field("Last kept commit"),
            "description": description,
            "notes": [f"scripted {status}"],
            "created_at": "2026-01-01T00:00:00Z",
        }
    )


def last_sha(text: str) -> str:
    found = _SHA.findall(text)
    assert found, f"no commit id in {text!r}"
    return found[-1]


def session_plan(agent: str, actions: Mapping[int, str]) -> Plan:
    steps = {"codex": _codex, "claude": _claude, "aider": _aider(actions)}[agent]

    def plan(ex: Exchange) -> Reply:
        action = actions[int(ex.field("Iteration") or 0)]
        if action == "api_error":
            return Reply(error=(400, API_ERROR))
        return steps(ex, action)

    return plan


def escape_targets(ex: Exchange) -> list[Path]:
    """Places a session must not write: the repository root, the git hooks and config."""
    repo = Path(ex.field("Candidate artifact") or "").parents[3]  # .autoresearch/runs/<id>/
    return [repo / "escaped.txt", repo / ".git/hooks/post-checkout", repo / ".git/config"]


def _codex(ex: Exchange, action: str) -> Reply:
    def shell(cmd: str) -> Reply:
        return Reply(tool_calls=(ToolCall("exec_command", {"cmd": cmd}),))

    candidate = ex.field("Candidate artifact")
    done = len(ex.tool_results)
    if action == "escape":  # each write fails in the sandbox; then a noop
        if done == 0:
            return shell("; ".join(f"echo x >> {target}" for target in escape_targets(ex)))
        action, done = "noop", done - 1
    if action == "noop":
        if done == 0:
            text = artifact_json(ex, "noop", None, "nothing worth trying")
            return shell(f"cat > {candidate} <<'EOF'\n{text}\nEOF")
        return Reply(text="nothing to try")
    if done == 0:
        delta = DELTAS[action]
        return shell(
            f"awk '{{print $1 + ({delta})}}' value.txt > value.new && mv value.new value.txt"
            f" && git commit -qam '{action} value' && git rev-parse HEAD"
        )
    if done == 1:
        text = artifact_json(ex, "candidate", last_sha(ex.tool_results[0]), f"{action} value")
        return shell(f"cat > {candidate} <<'EOF'\n{text}\nEOF")
    return Reply(text="candidate written")


def _claude(ex: Exchange, action: str) -> Reply:
    def tool(name: str, **arguments: str) -> Reply:
        return Reply(tool_calls=(ToolCall(name, arguments),))

    candidate = ex.field("Candidate artifact") or ""
    assert ex.cwd, "the system prompt names no working directory"
    value_file = f"{ex.cwd}/value.txt"
    results = ex.tool_results
    prefix = []
    if action == "escape":  # denied by the permission layer; then a noop
        outside, hook, _ = escape_targets(ex)
        prefix = [
            lambda: tool("Write", file_path=str(outside), content="x"),
            lambda: tool("Bash", command=f"touch {hook}", description="Add a hook"),
        ]
        action = "noop"
    # the placeholder artifact exists: Write refuses to replace a file it has not read
    if action == "noop":
        script = [
            lambda: tool("Read", file_path=candidate),
            lambda: tool("Write", file_path=candidate,
                         content=artifact_json(ex, "noop", None, "nothing worth trying")),
        ]  # fmt: skip
    else:
        script = [
            lambda: tool("Read", file_path=value_file),
            lambda: tool("Write", file_path=value_file,
                         content=f"{_read_value(results[0]) + DELTAS[action]:g}\n"),
            lambda: tool("Bash", command=f"git commit -qam '{action} value'",
                         description="Commit the change"),
            lambda: tool("Bash", command="git rev-parse HEAD", description="Show the commit"),
            lambda: tool("Read", file_path=candidate),
            lambda: tool("Write", file_path=candidate,
                         content=artifact_json(ex, "candidate", last_sha(results[3]),
                                               f"{action} value")),
        ]  # fmt: skip
    script = prefix + script
    if len(results) < len(script):
        return script[len(results)]()
    return Reply(text="done")


def _read_value(read_result: str) -> float:
    """The number in Read's `cat -n` style output (`     1\t2`)."""
    match = re.search(r"^\s*1\t(.+)$", read_result, re.M)
    assert match, f"unexpected Read output {read_result!r}"
    return float(match.group(1))


def _aider(actions: Mapping[int, str]) -> Callable[[Exchange, str], Reply]:
    """aider's `whole` edit format; the values follow from the plan (start 1, keep on improve)."""
    values, value = {}, 1.0
    for iteration in sorted(actions):
        delta = DELTAS.get(actions[iteration], 0.0)
        values[iteration] = value + delta
        value += delta if delta > 0 else 0.0

    def reply(ex: Exchange, action: str) -> Reply:
        if action == "noop":
            return Reply(text="Nothing worth changing.")
        new = values[int(ex.field("Iteration") or 0)]
        return Reply(text=f"I will {action} the value.\n\nvalue.txt\n```\n{new:g}\n```\n")

    return reply
