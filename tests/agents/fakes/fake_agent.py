"""A stand-in for the codex, claude and aider CLIs: same flags, same output format.

It reads the supervisor's instructions like a real agent would (stdin or --message-file),
edits value.txt according to a plan, commits (codex/claude; aider leaves the commit to the
supervisor) and writes the candidate artifact (not aider). The plan is FAKE_PLAN, one action
per iteration: improve | worse | noop | fail | hang | dirty.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path


def instructions_from(args: list[str], name: str) -> str:
    if name == "aider":
        return open(args[args.index("--message-file") + 1]).read()
    return sys.stdin.read()


def field(text: str, label: str) -> str:
    match = re.search(rf"^{label}: (.*)$", text, re.M)
    assert match, f"instructions lack {label!r}"
    return match.group(1).strip()


def check_flags(name: str, args: list[str]) -> None:
    required = {
        "codex": ["exec", "--json", "--sandbox", "workspace-write", "-C", "-"],
        "claude": ["-p", "--output-format", "stream-json", "--permission-mode", "acceptEdits"],
        "aider": ["--message-file", "--yes-always", "--no-auto-commits"],
    }[name]
    missing = [flag for flag in required if flag not in args]
    if name == "claude" and "--verbose" not in args:
        print("Error: When using --print, --output-format=stream-json requires --verbose")
        sys.exit(1)
    if missing:
        print(f"fake {name}: missing flags {missing}", file=sys.stderr)
        sys.exit(2)


def action_for(iteration: int) -> str:
    plan = os.environ.get("FAKE_PLAN", "improve").split(",")
    return plan[min(iteration, len(plan)) - 1]


def git(*args: str) -> str:
    return subprocess.run(["git", *args], check=True, capture_output=True, text=True).stdout.strip()


def edit(action: str) -> None:
    value = float(Path("value.txt").read_text())
    value = value + 1 if action in ("improve", "dirty") else value - 0.5
    with open("value.txt", "w") as handle:
        handle.write(f"{value:g}\n")


def write_artifact(path: str, status: str, commit: str | None, base: str, desc: str) -> None:
    with open(path, "w") as handle:
        json.dump(
            {
                "status": status,
                "candidate_commit": commit,
                "base_commit": base,
                "description": desc,
                "notes": [f"fake agent action {status}"],
                "created_at": datetime.now(UTC).isoformat(),
            },
            handle,
        )


def emit(name: str, ok: bool, session: str) -> None:
    if name == "codex":
        lines = [{"type": "thread.started", "thread_id": session}, {"type": "turn.started"}]
        if ok:
            lines += [
                {
                    "type": "item.completed",
                    "item": {"id": "item_0", "type": "agent_message", "text": "done"},
                },
                {
                    "type": "turn.completed",
                    "usage": {
                        "input_tokens": 1200,
                        "cached_input_tokens": 1000,
                        "output_tokens": 80,
                    },
                },
            ]
        else:
            lines += [
                {"type": "error", "message": "You've hit your usage limit."},
                {"type": "turn.failed", "error": {"message": "You've hit your usage limit."}},
            ]
    elif name == "claude":
        lines = [
            {
                "type": "system",
                "subtype": "init",
                "session_id": session,
                "model": "fake-model",
                "tools": ["Edit"],
                "cwd": os.getcwd(),
            }
        ]
        lines.append(
            {
                "type": "result",
                "subtype": "success" if ok else "error_max_turns",
                "is_error": not ok,
                "duration_ms": 10,
                "num_turns": 3,
                "session_id": session,
                "total_cost_usd": 0.0125,
                "usage": {
                    "input_tokens": 20,
                    "cache_creation_input_tokens": 100,
                    "cache_read_input_tokens": 300,
                    "output_tokens": 45,
                },
                **({} if ok else {"errors": ["Reached maximum number of turns (3)"]}),
            }
        )
    else:
        print("Aider v0.86.2\nModel: fake with whole edit format\nGit repo: .git with 3 files")
        print("Tokens: 2.3k sent, 440 received. Cost: $0.00061 message, $0.00061 session.")
        print("Applied edit to value.txt")
        return
    for line in lines:
        print(json.dumps(line), flush=True)


def main() -> int:
    name, args = sys.argv[1], sys.argv[2:]
    if os.environ.get("FAKE_ARGV_FILE"):  # lets a test see the exact command line
        Path(os.environ["FAKE_ARGV_FILE"]).write_text(json.dumps(args))
    check_flags(name, args)
    if name == "codex":
        os.chdir(args[args.index("-C") + 1])
    text = instructions_from(args, name)
    iteration = int(field(text, "Iteration"))
    candidate_file = field(text, "Candidate artifact")
    base = field(text, "Last kept commit")
    action = action_for(iteration)
    session = f"session-{iteration}"
    if action == "hang":
        edit("improve")  # unsaved work the supervisor must not lose
        time.sleep(120)
    if action == "fail":
        emit(name, ok=False, session=session)
        return 1
    if action == "noop":
        if name != "aider":
            write_artifact(candidate_file, "noop", None, base, "nothing worth trying")
        emit(name, ok=True, session=session)
        return 0
    edit(action)
    if os.environ.get("FAKE_SCRATCH"):  # a file the sandbox declares as runtime output
        Path("scratch.out").write_text("not part of the change")
    if name != "aider":
        git("commit", "-qam", f"{action} value")
        if action == "dirty":
            Path("stray.txt").write_text("uncommitted")
        write_artifact(
            candidate_file, "candidate", git("rev-parse", "HEAD"), base, f"{action} value"
        )
    emit(name, ok=True, session=session)
    return 0


if __name__ == "__main__":
    sys.exit(main())
