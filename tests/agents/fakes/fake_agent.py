"""A stand-in for the codex, claude and aider CLIs: same flags, same output format.

It reads the supervisor's instructions like a real agent would (stdin or --message-file),
edits value.txt according to a plan, commits (codex/claude; aider leaves the commit to the
supervisor) and writes the candidate artifact (not aider). The plan is FAKE_PLAN, one action
per iteration: improve | worse | noop | fail | api_error | hang | dirty | escape (tries to
write outside the worktree, then writes a noop artifact) | unread (claude: Write over the
placeholder without reading it first).

It denies what the real CLIs deny with the flags it is given (`Permissions`):
* codex `--sandbox workspace-write`: writes outside `-C` and every `--add-dir`, and writes into
  any git directory that no `--add-dir` names (so `git commit` in a linked worktree fails).
  Stricter than codex on one point: codex also lets sessions write /tmp, where the tests live.
* claude `--permission-mode acceptEdits`: Bash commands other than read-only ones unless
  `--allowedTools` grants them, writes outside the working directory and `--add-dir`, and a
  Write over an existing file that was not read first; denials are listed in the result's
  `permission_denials`.
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
        "codex": ["exec", "--json", "-C", "-"],
        "claude": ["-p", "--output-format", "stream-json"],
        "aider": ["--message-file", "--yes-always", "--no-auto-commits"],
    }[name]
    missing = [flag for flag in required if flag not in args]
    if name == "claude" and "--verbose" not in args:
        print("Error: When using --print, --output-format=stream-json requires --verbose")
        sys.exit(1)
    if name == "codex" and args.count("--sandbox") + args.count("-s") > 1:
        print("error: the argument '--sandbox <SANDBOX_MODE>' cannot be used multiple times",
              file=sys.stderr)  # fmt: skip
        sys.exit(2)
    if missing:
        print(f"fake {name}: missing flags {missing}", file=sys.stderr)
        sys.exit(2)


def values(args: list[str], flag: str) -> list[str]:
    """Every value of a repeatable flag (`--flag v` or `--flag=v`)."""
    found = [args[i + 1] for i, arg in enumerate(args[:-1]) if arg == flag]
    return found + [arg.split("=", 1)[1] for arg in args if arg.startswith(flag + "=")]


class Permissions:
    """What the real CLI would let this session do, from its command line."""

    READ_ONLY = ("git rev-parse", "git status", "git diff", "git log", "git show", "cat ", "ls")

    def __init__(self, name: str, args: list[str], cwd: Path) -> None:
        self.name = name
        self.denials: list[dict] = []
        self.read: set[Path] = set()
        roots = [cwd, *(Path(d) for d in values(args, "--add-dir"))]
        self.roots = [root.resolve() for root in roots]
        mode = (values(args, "--sandbox") or values(args, "-s") or ["read-only"])[-1]
        if name == "codex":
            self.unrestricted = mode == "danger-full-access" or any(
                flag in args for flag in ("--dangerously-bypass-approvals-and-sandbox", "--yolo")
            )
        else:
            permission = (values(args, "--permission-mode") or ["default"])[-1]
            self.unrestricted = permission == "bypassPermissions" or (
                "--dangerously-skip-permissions" in args
            )
            self.accept_edits = permission == "acceptEdits"
        self.allowed = [
            tool.strip() for value in values(args, "--allowedTools") for tool in value.split(",")
        ]

    def _under_root(self, path: Path) -> bool:
        path = path.resolve()
        return any(path == root or root in path.parents for root in self.roots)

    def may_write(self, path: Path) -> bool:
        if self.unrestricted:
            return True
        if self.name == "codex":
            # every .git under a writable root is read-only, unless itself an --add-dir
            if any(part == ".git" for part in path.resolve().parts):
                return any(
                    path.resolve() == root or root in path.resolve().parents
                    for root in self.roots[1:]
                )
            return self._under_root(path)
        return self.accept_edits and self._under_root(path)

    def may_run(self, command: str) -> bool:
        """Claude's Bash: read-only commands, or a granted `Bash(<prefix>:*)`."""
        if self.unrestricted or self.name != "claude":
            return True
        if command.startswith(self.READ_ONLY):
            return True
        prefixes = [t[5:-3] for t in self.allowed if t.startswith("Bash(") and t.endswith(":*)")]
        return any(command.startswith(prefix) for prefix in prefixes)

    def deny(self, tool: str, tool_input: dict) -> None:
        self.denials.append({"tool_name": tool, "tool_use_id": f"toolu_{len(self.denials)}",
                             "tool_input": tool_input})  # fmt: skip


def git_dirs() -> tuple[Path, Path]:
    out = git("rev-parse", "--path-format=absolute", "--git-dir", "--git-common-dir")
    own, common = out.splitlines()
    return Path(own), Path(common)


def commit(perms: Permissions, message: str) -> str | None:
    """`git commit -qam <message>` as the agent runs it; None when it was not allowed."""
    command = f"git commit -qam '{message}'"
    if not perms.may_run(command):
        perms.deny("Bash", {"command": command, "description": "Commit"})
        return None
    own, common = git_dirs()  # codex sandboxes the command itself; claude's Bash is not
    writable = perms.may_write(own / "index.lock") and perms.may_write(common / "objects")
    if perms.name == "codex" and not writable:
        print(f"fatal: Unable to create '{own}/index.lock': Read-only file system",
              file=sys.stderr)  # fmt: skip
        return None
    git("commit", "-qam", message)
    return git("rev-parse", "HEAD")


def write_file(perms: Permissions, path: Path, text: str) -> bool:
    """Write `path` as the agent's edit tool (claude) or shell (codex) would; False if refused."""
    if not perms.may_write(path):
        if perms.name == "claude":
            perms.deny("Write", {"file_path": str(path), "content": text})
        else:
            print(f"/bin/bash: line 1: {path}: Read-only file system", file=sys.stderr)
        return False
    if perms.name == "claude" and path.exists() and path.resolve() not in perms.read:
        return False  # "File has not been read yet. Read it first before writing to it."
    path.write_text(text)
    return True


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


def write_artifact(
    perms: Permissions, path: str, status: str, commit: str | None, base: str, desc: str,
    read_first: bool = True,
) -> bool:  # fmt: skip
    if read_first:  # what a careful model does before it replaces the placeholder
        perms.read.add(Path(path).resolve())
    data = {
        "status": status,
        "candidate_commit": commit,
        "base_commit": base,
        "description": desc,
        "notes": [f"fake agent action {status}"],
        "created_at": datetime.now(UTC).isoformat(),
    }
    return write_file(perms, Path(path), json.dumps(data))


API_ERROR = "scripted: the model is unavailable for this key"
# What aider 0.86 prints when every model call fails with HTTP 500: litellm's exception, its
# own description, a retry with a doubled delay until RETRY_TIMEOUT, the last error; exit 0.
_AIDER_500 = (
    "litellm.InternalServerError: InternalServerError: OpenAIException - "
    "Internal Server Error\nThe API provider's servers are down or overloaded."
)
AIDER_API_ERROR = "\n".join(
    [*(f"{_AIDER_500}\nRetrying in {delay} seconds..." for delay in ("0.2", "0.5", "1.0")),
     _AIDER_500]
)  # fmt: skip


def aider_own_files(args: list[str]) -> None:
    """What aider 0.86.2 leaves in the repository it edits (seen with the real one): `.aider*`
    added to .gitignore unless --no-gitignore, the chat history unless it goes elsewhere,
    the tags cache always."""
    if "--no-gitignore" not in args:
        with open(".gitignore", "a") as handle:
            handle.write(".aider*\n")
    history = (values(args, "--chat-history-file") or [".aider.chat.history.md"])[-1]
    with open(history, "a") as handle:
        handle.write("# aider chat started\n")
    Path(".aider.tags.cache.v4").mkdir(exist_ok=True)
    Path(".aider.tags.cache.v4/cache.db").write_bytes(b"SQLite format 3\0")


def emit(name: str, outcome: str, session: str, denials: list[dict]) -> None:
    """The CLI's machine-readable output for a session that ended `ok`, `fail` or `api_error`."""
    if name == "codex":
        lines = [{"type": "thread.started", "thread_id": session}, {"type": "turn.started"}]
        if outcome == "ok":
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
                        "cache_write_input_tokens": 0,
                        "output_tokens": 80,
                        "reasoning_output_tokens": 16,
                    },
                },
            ]
        else:
            message = "You've hit your usage limit."
            if outcome == "api_error":  # codex passes the API's error body through
                message = json.dumps({"error": {"message": API_ERROR, "type": "invalid_request"}})
            lines += [
                {"type": "error", "message": message},
                {"type": "turn.failed", "error": {"message": message}},
            ]
    elif name == "claude":
        lines = [
            {
                "type": "system",
                "subtype": "init",
                "session_id": session,
                "model": "fake-model",
                "tools": ["Bash", "Edit", "Read", "Write"],
                "cwd": os.getcwd(),
                "permissionMode": "acceptEdits",
            }
        ]
        result = {
            "type": "result",
            "subtype": "error_max_turns" if outcome == "fail" else "success",
            "is_error": outcome != "ok",
            "duration_ms": 10,
            "num_turns": 3,
            "result": "done",
            "session_id": session,
            "total_cost_usd": 0.0125,
            "usage": {
                "input_tokens": 20,
                "cache_creation_input_tokens": 100,
                "cache_read_input_tokens": 300,
                "output_tokens": 45,
            },
            "permission_denials": denials,
        }
        if outcome == "fail":  # an error subtype carries `errors`, no `result` text
            del result["result"]
            result["errors"] = ["Reached maximum number of turns (3)"]
        if outcome == "api_error":  # the real shape: subtype success, is_error, text in result
            result.update(result=f"API Error: 400 {API_ERROR}", api_error_status=400, num_turns=1)
        lines.append(result)
    else:
        print("Aider v0.86.2\nModel: fake with whole edit format\nGit repo: .git with 3 files")
        if outcome == "api_error":
            print(AIDER_API_ERROR)
            return
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
    perms = Permissions(name, args, Path.cwd())
    text = instructions_from(args, name)
    iteration = int(field(text, "Iteration"))
    candidate_file = field(text, "Candidate artifact")
    base = field(text, "Last kept commit")
    action = action_for(iteration)
    session = f"session-{iteration}"
    if name == "aider":
        aider_own_files(args)
    if action == "hang":
        edit("improve")  # unsaved work the supervisor must not lose
        time.sleep(120)
    if action in ("fail", "api_error"):
        emit(name, action, session, perms.denials)
        return 0 if name == "aider" and action == "api_error" else 1  # aider exits 0 all the same
    if action == "escape":
        write_file(perms, Path.cwd().parent / "escaped.txt", "outside the worktree")
        action = "noop"
    if action == "noop":
        if name != "aider":
            write_artifact(perms, candidate_file, "noop", None, base, "nothing worth trying")
        emit(name, "ok", session, perms.denials)
        return 0
    edit(action)
    if os.environ.get("FAKE_SCRATCH"):  # a file the sandbox declares as runtime output
        Path("scratch.out").write_text("not part of the change")
    if name != "aider":
        head = commit(perms, f"{action} value")
        if action == "dirty":
            Path("stray.txt").write_text("uncommitted")
        if head is not None:  # a model whose commit failed has no candidate to report
            write_artifact(perms, candidate_file, "candidate", head, base, f"{action} value",
                           read_first=action != "unread")  # fmt: skip
    emit(name, "ok", session, perms.denials)
    return 0


if __name__ == "__main__":
    sys.exit(main())
