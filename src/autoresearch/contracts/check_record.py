"""How a mission's checks ran once (the correctness gate beside the benchmark): one record for
the supervisor's `checks:` of sandbox.md and a session's autoresearch.checks.sh.

`to_dict` / `from_dict` are the JSON edge: the `checks` of a session run (session_runs.
checks_json, `exp run --json`), keys as experiments.md names them. Built from a process outcome
by `evaluate.check_record`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from autoresearch.jsonshape import json_field, json_shape, whole
from autoresearch.states import ProcessState


def _seconds(duration_ms: object) -> float:
    """The stored record's time: seconds, to the millisecond."""
    return round(whole(duration_ms) / 1000, 3)


@dataclass(frozen=True)
class CheckRecord:
    """The checks' end (`process_state`), exit code, time, log and the tail of their output."""

    state: ProcessState = field(metadata=json_field(key="status"))
    exit_code: int | None
    duration_ms: int = field(metadata=json_field(key="duration_seconds", convert=_seconds))
    log_file: str = field(metadata=json_field(key="log_path"))
    tail: str = ""
    # why they could not start; read at once by the supervisor, not part of the stored record
    spawn_error: str | None = field(default=None, metadata=json_field(hidden=True))

    @property
    def passed(self) -> bool:
        return self.state == ProcessState.PASS

    def failure(self, timeout_seconds: float) -> str | None:
        """What failed, as a decision's reason names it (None: the checks passed)."""
        if self.spawn_error:
            return f"could not start ({self.spawn_error})"
        if self.state == ProcessState.TIMEOUT:
            return f"timed out after {timeout_seconds:g} s"
        return None if self.exit_code == 0 else f"exited {self.exit_code}"

    def to_dict(self) -> dict[str, object]:
        return json_shape(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> CheckRecord:
        return cls(
            state=ProcessState(data["status"]),
            exit_code=data.get("exit_code"),
            duration_ms=round(float(data.get("duration_seconds") or 0) * 1000),
            log_file=str(data.get("log_path") or ""),
            tail=str(data.get("tail") or ""),
        )
