"""Circuit breakers per tool and error class (worker.md "Operations").

A failure is classified from structured facts only – the exception's class, the shell's
`failure_kind` – never from message text (`classify`, pure). Caller mistakes (a path outside
the sandbox, a missing file, a count mismatch, a refused command) are not the tool's fault
and never count. After THRESHOLD consecutive failures of one class a tool's circuit for that
class opens: the tool is refused for COOLDOWN_SECONDS with an alternative the planner can
use instead. Then one trial call is let through (half-open); a success closes every circuit
of the tool, a failure opens it again.

State is one JSON file, `.autoresearch/worker/circuits.json`, written atomically with a
SHA-256 of its body; a file that is torn, edited or from another version is ignored (all
circuits closed), never fatal. Concurrent servers on one repository may lose each other's
counts (last writer wins): a breaker is a heuristic, the metrics are the record.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass
from enum import StrEnum
from pathlib import Path

from autoresearch.errors import (
    AutoresearchError,
    ContractError,
    GitError,
    NotFoundError,
    ProcessError,
    RefusedError,
)
from autoresearch.fsutil import atomic_write_text
from autoresearch.worker.tools.base import Workspace
from autoresearch.worker.tools.shell import FailureKind

CIRCUITS_FILE = "circuits.json"
VERSION = 1
THRESHOLD = 5
COOLDOWN_SECONDS = 60.0
CODE_OPEN = "autoresearch_circuit_open"

ALTERNATIVES = {
    "search": "read_pack on the files you suspect, or shell with `git grep`",
    "read_pack": "search in lines mode, or get_artifact on an earlier pack",
    "diff_digest": "shell with `git diff --stat`",
    "shell": "a delegation job (job_start) with the command as a check",
    "apply_edits": "a delegation job (job_start) scoped to the files",
    "history": "shell with `git log -n 20 -- <path>`",
    "get_artifact": "call the tool that made the artifact again",
    "draft": "write it from diff_digest yourself",
}


class ErrorClass(StrEnum):
    TIMEOUT = "timeout"
    UNAVAILABLE = "unavailable"  # a helper process could not run (rg, git, bash)
    GIT = "git"
    GATEWAY = "gateway"  # every endpoint and model of the gateway failed
    INTERNAL = "internal"


def classify_exception(exc: BaseException) -> ErrorClass | None:
    """The error class of a raised failure, or None for a caller mistake (pure)."""
    from autoresearch.worker.gateway import GatewayError

    if isinstance(exc, GatewayError):
        return ErrorClass.GATEWAY
    if isinstance(exc, ContractError | NotFoundError | RefusedError):
        return None
    if isinstance(exc, GitError):
        return ErrorClass.GIT
    if isinstance(exc, ProcessError):
        return ErrorClass.UNAVAILABLE
    if isinstance(exc, AutoresearchError):
        return None
    return ErrorClass.INTERNAL


def classify_result(result: Mapping[str, object]) -> ErrorClass | None:
    """The error class of an answered call: only a shell timeout is the tool's failure (a
    failing test is the code's, a missing command the caller's)."""
    return ErrorClass.TIMEOUT if result.get("failure_kind") == FailureKind.TIMEOUT else None


@dataclass
class Circuit:
    failures: int = 0
    opened_at: float | None = None

    def is_open(self, now: float) -> bool:
        return self.opened_at is not None and now - self.opened_at < COOLDOWN_SECONDS


def checksum(body: str) -> str:
    return hashlib.sha256(body.encode()).hexdigest()


def encode(circuits: dict[str, Circuit]) -> str:
    body = json.dumps({k: asdict(v) for k, v in sorted(circuits.items())}, sort_keys=True)
    return json.dumps({"version": VERSION, "sha256": checksum(body), "circuits": body}) + "\n"


def decode(text: str) -> dict[str, Circuit]:
    """The circuits in a state file; {} for anything torn, tampered or foreign (pure)."""
    try:
        data = json.loads(text)
        body = data["circuits"]
        if data["version"] != VERSION or data["sha256"] != checksum(body):
            return {}
        return {k: Circuit(int(v["failures"]), v["opened_at"]) for k, v in json.loads(body).items()}
    except (ValueError, KeyError, TypeError):
        return {}


_lock = threading.Lock()


class Breakers:
    """The circuits of one repository, read and written around each call."""

    def __init__(self, ws: Workspace, clock: Callable[[], float] = time.time) -> None:
        self.path: Path = ws.state / CIRCUITS_FILE
        self.clock = clock

    def _load(self) -> dict[str, Circuit]:
        try:
            return decode(self.path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError):
            return {}

    def check(self, tool: str) -> None:
        """Refuse `tool` while one of its circuits is open."""
        now = self.clock()
        with _lock:
            circuits = self._load()
        for key, circuit in sorted(circuits.items()):
            name, _, error_class = key.partition("/")
            if name == tool and circuit.is_open(now):
                wait = COOLDOWN_SECONDS - (now - (circuit.opened_at or now))
                raise RefusedError(
                    f"{CODE_OPEN}: {tool} is paused after {circuit.failures} {error_class} "
                    f"failures in a row; retry in {wait:.0f}s or use "
                    f"{ALTERNATIVES.get(tool, 'another tool')}"
                )

    def record(self, tool: str, error_class: ErrorClass | None) -> None:
        """Count a call's outcome: a failure of a class, or a success (None)."""
        with _lock:
            circuits = self._load()
            before = encode(circuits)
            if error_class is None:
                for key in [k for k in circuits if k.partition("/")[0] == tool]:
                    del circuits[key]
            else:
                circuit = circuits.setdefault(f"{tool}/{error_class.value}", Circuit())
                circuit.failures += 1
                if circuit.failures >= THRESHOLD:
                    circuit.opened_at = self.clock()  # half-open trial failed, or first open
            after = encode(circuits)
            if after != before:
                # A breaker must never fail the call it guards.
                with contextlib.suppress(OSError):
                    atomic_write_text(self.path, after)
