"""`shell`: one bounded command, and a digest that separates "the tool worked" from "the
tests failed".

The command runs through proc.run_supervised (its own process group, a timeout that ends the
whole group, output streamed to a private log, bounded tails). `failure_kind` is decided by
a pure function from structured facts – spawn error, timeout, exit code, and which tool the
command runs – never from its output text. Destructive commands (`rm`, `git reset --hard`,
`git clean`, `git push`, …) are refused unless `allow_destructive`.
"""

from __future__ import annotations

import os
import re
import secrets
import shlex
from collections.abc import Iterator
from dataclasses import dataclass
from enum import StrEnum
from typing import NotRequired, TypedDict

from autoresearch.errors import ContractError, RefusedError
from autoresearch.proc import SupervisedOutcome, SupervisedSpec, run_supervised
from autoresearch.worker.tools.base import Receipt, ReceiptJson, Workspace, finish

SHELL_DIR = "shell"
DEFAULT_TIMEOUT_SECONDS = 120.0
MAX_TIMEOUT_SECONDS = 1800.0
TAIL_LIMIT = 4 * 1024
MAX_ARTIFACT_BYTES = 4 * 1024 * 1024
CODE_DESTRUCTIVE = "autoresearch_destructive_command"
EXIT_NOT_FOUND = 127
EXIT_NOT_EXECUTABLE = 126


class FailureKind(StrEnum):
    NONE = "none"
    TEST_FAILURE = "test_failure"
    TYPECHECK_FAILURE = "typecheck_failure"
    LINT_FAILURE = "lint_failure"
    BUILD_FAILURE = "build_failure"
    MISSING_COMMAND = "missing_command"
    TIMEOUT = "timeout"
    COMMAND_FAILED = "command_failed"


_TOOLS: dict[FailureKind, frozenset[str]] = {
    FailureKind.TEST_FAILURE: frozenset(
        {
            "pytest",
            "py.test",
            "unittest",
            "tox",
            "nox",
            "jest",
            "vitest",
            "mocha",
            "ctest",
            "rspec",
            "phpunit",
        }
    ),
    FailureKind.TYPECHECK_FAILURE: frozenset({"mypy", "pyright", "tsc", "pytype"}),
    FailureKind.LINT_FAILURE: frozenset({"ruff", "flake8", "pylint", "eslint", "shellcheck"}),
    FailureKind.BUILD_FAILURE: frozenset({"make", "cmake", "ninja", "gcc", "cc", "clang"}),
}
# `cargo test`, `go test`, `npm test`: the tool is the subcommand.
_SUBCOMMANDS = {
    ("cargo", "test"): FailureKind.TEST_FAILURE,
    ("go", "test"): FailureKind.TEST_FAILURE,
    ("npm", "test"): FailureKind.TEST_FAILURE,
    ("cargo", "check"): FailureKind.TYPECHECK_FAILURE,
    ("go", "vet"): FailureKind.LINT_FAILURE,
    ("cargo", "build"): FailureKind.BUILD_FAILURE,
    ("go", "build"): FailureKind.BUILD_FAILURE,
}
_DESTRUCTIVE_WORDS = frozenset(
    {
        "rm",
        "rmdir",
        "shred",
        "dd",
        "mkfs",
        "shutdown",
        "reboot",
        "truncate",
        "sudo",
        "kill",
        "pkill",
        "killall",
    }
)
_DESTRUCTIVE_GIT = (
    ("reset", "--hard"),
    ("clean",),
    ("push",),
    ("checkout", "--"),
    ("restore",),
    ("branch", "-D"),
    ("stash", "drop"),
    ("worktree", "remove"),
)
_SEGMENT = re.compile(r"&&|\|\||[;|&\n()`]|\$\(")


def words_of(command: str) -> list[list[str]]:
    """The commands of a shell line, each as its words, environment assignments dropped."""
    out: list[list[str]] = []
    for segment in _SEGMENT.split(command):
        try:
            words = shlex.split(segment)
        except ValueError:
            words = segment.split()
        while words and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*=.*", words[0]):
            words = words[1:]
        if words:
            out.append(words)
    return out


def _program(words: list[str]) -> list[str]:
    # `python -m pytest`, `uv run mypy`, `env X=1 pytest`: look through the launcher.
    while words:
        name = os.path.basename(words[0])
        if name in {"env", "time", "nice", "timeout", "xargs"}:
            words = [w for w in words[1:] if not w.startswith("-") and "=" not in w]
            if name == "timeout" and words:
                words = words[1:]
        elif re.fullmatch(r"python[0-9.]*", name) and len(words) > 2 and words[1] == "-m":
            words = words[2:]
        elif name in {"uv", "poetry", "pipenv", "npx", "pnpm", "yarn"} and len(words) > 1:
            words = words[2:] if words[1] in {"run", "exec"} else words[1:]
        else:
            break
    return words


def _programs(command: str) -> Iterator[tuple[str, list[str]]]:
    """Each program a shell line runs, looked through its launcher: its name and its words."""
    for raw in words_of(command):
        words = _program(raw)
        if words:
            yield os.path.basename(words[0]), words


def destructive(command: str) -> str | None:
    """Why `command` is destructive, or None (pure)."""
    for name, words in _programs(command):
        if name in _DESTRUCTIVE_WORDS:
            return name
        if name == "git":
            rest = _git_subcommand(words[1:])
            for pattern in _DESTRUCTIVE_GIT:
                if rest[: len(pattern)] == list(pattern) or (
                    pattern[0] in rest[:1] and all(p in rest for p in pattern)
                ):
                    return "git " + " ".join(pattern)
    return None


def _git_subcommand(args: list[str]) -> list[str]:
    """git's arguments from the subcommand on (global options such as `-C dir` dropped)."""
    while args and args[0].startswith("-"):
        args = args[2:] if args[0] in ("-C", "-c", "--git-dir", "--work-tree") else args[1:]
    return [a for a in args if a != "-f"]


def tool_kind(command: str) -> FailureKind:
    """Which failure a non-zero exit of `command` means, from the last tool it runs (pure)."""
    kind = FailureKind.COMMAND_FAILED
    for name, words in _programs(command):
        sub = _SUBCOMMANDS.get((name, words[1] if len(words) > 1 else ""))
        found = sub or next((k for k, names in _TOOLS.items() if name in names), None)
        if found is not None:
            kind = found
    return kind


def classify(command: str, outcome: SupervisedOutcome) -> FailureKind:
    """The failure kind of a finished command from structured facts only (pure)."""
    if outcome.timed_out:
        return FailureKind.TIMEOUT
    if outcome.spawn_error is not None or outcome.exit_code in (
        EXIT_NOT_FOUND,
        EXIT_NOT_EXECUTABLE,
    ):
        return FailureKind.MISSING_COMMAND
    if outcome.exit_code == 0:
        return FailureKind.NONE
    return tool_kind(command)


@dataclass(frozen=True)
class ShellRequest:
    command: str
    cwd: str = "."
    timeout_seconds: float = DEFAULT_TIMEOUT_SECONDS
    allow_destructive: bool = False


class ShellAnswer(TypedDict):
    command: str
    exit_code: int | None
    ok: bool  # it ran and exited 0
    tool_ok: bool  # False: the command could not run or timed out
    failure_kind: str
    duration_ms: int
    stdout_tail: str
    stderr_tail: str
    receipt: NotRequired[ReceiptJson]


def shell(ws: Workspace, request: ShellRequest) -> ShellAnswer:
    if not request.command.strip():
        raise ContractError("shell: empty command")
    if not 0 < request.timeout_seconds <= MAX_TIMEOUT_SECONDS:
        raise ContractError(f"shell: timeout_seconds must be in (0, {MAX_TIMEOUT_SECONDS:.0f}]")
    reason = destructive(request.command)
    if reason is not None and not request.allow_destructive:
        raise RefusedError(
            f"{CODE_DESTRUCTIVE}: refused ({reason}); pass allow_destructive=true if the "
            "planner really means it, or use apply_edits for file changes"
        )
    cwd = ws.path(request.cwd)
    if not cwd.is_dir():
        raise ContractError(f"shell: {request.cwd!r} is not a directory")
    receipt = Receipt()
    log = ws.state / SHELL_DIR / f"{secrets.token_hex(6)}.log"
    outcome = run_supervised(
        SupervisedSpec(
            argv=["bash", "-c", request.command],
            cwd=cwd,
            env=dict(os.environ),
            log_path=log,
            timeout=request.timeout_seconds,
            tail_bytes=TAIL_LIMIT,
        )
    )
    kind = classify(request.command, outcome)
    receipt.bytes_read = outcome.stdout_bytes + outcome.stderr_bytes
    # proc keeps the last TAIL_LIMIT bytes of each stream; the whole log is the artifact.
    receipt.truncated = outcome.stdout_bytes > len(
        outcome.stdout.encode()
    ) or outcome.stderr_bytes > len(outcome.stderr.encode())
    if receipt.truncated and log.is_file():
        with log.open("rb") as handle:
            size = log.stat().st_size
            handle.seek(max(0, size - MAX_ARTIFACT_BYTES))
            ws.store_artifact(handle.read().decode("utf-8", "replace"), receipt)
    answer: ShellAnswer = {
        "command": request.command,
        "exit_code": outcome.exit_code,
        "ok": kind is FailureKind.NONE,
        "tool_ok": kind not in (FailureKind.MISSING_COMMAND, FailureKind.TIMEOUT),
        "failure_kind": kind.value,
        "duration_ms": outcome.duration_ms,
        "stdout_tail": outcome.stdout,
        "stderr_tail": outcome.stderr,
    }
    return finish(receipt, answer)
