"""The worker's vocabulary: what a job asks for (`contracts/job.py`, named from here too; its
states, kinds and isolations are `states.JobState`, `states.TaskKind` and `states.Isolation`)
and how one of its checks went (`CheckRun`).

Frozen dataclasses across layers; dicts only at the JSON/SQL edge (`to_dict` / `from_dict`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from autoresearch.contracts.check_record import CheckRecord
from autoresearch.contracts.job import (
    DEFAULT_AGENT,
    DEFAULT_CHECK_TIMEOUT_SECONDS,
    DEFAULT_TIMEOUT_SECONDS,
    MAX_ALLOWED_DIRS,
    MAX_CHECKS,
    MAX_PROMPT_CHARS,
    MAX_SCOPE_PATHS,
    MAX_TIMEOUT_SECONDS,
    CheckSpec,
    JobRequest,
    JobSpec,
    ScopeSpec,
)
from autoresearch.states import Isolation, ProcessState, TaskKind
from autoresearch.worker.outcome import CheckResult

__all__ = [  # the job's contract and kinds are contracts/job.py's and states.py's
    "DEFAULT_AGENT",
    "DEFAULT_CHECK_TIMEOUT_SECONDS",
    "DEFAULT_TIMEOUT_SECONDS",
    "MAX_ALLOWED_DIRS",
    "MAX_CHECKS",
    "MAX_PROMPT_CHARS",
    "MAX_SCOPE_PATHS",
    "MAX_TIMEOUT_SECONDS",
    "CheckRun",
    "CheckSpec",
    "Isolation",
    "JobRequest",
    "JobSpec",
    "ScopeSpec",
    "TaskKind",
]


@dataclass(frozen=True)
class CheckRun:
    """How one of a job's checks went (`to_dict`: an entry of the job's `checks` in the journal):
    the one record of a run of checks (`CheckRecord`, made by `evaluate.check_record` as for a
    mission's checks), with the check's name and command and the artifact of its whole log."""

    name: str
    command: str
    run: CheckRecord
    output: dict[str, Any] | None  # the artifact of its whole log

    @property
    def status(self) -> CheckResult:
        """The job's check result (worker.md) from how its process ended."""
        if self.run.state is ProcessState.TIMEOUT:
            return CheckResult.TIMED_OUT
        return CheckResult.PASSED if self.run.passed else CheckResult.FAILED

    def to_dict(self) -> dict[str, object]:
        return {
            "name": self.name,
            "command": self.command,
            "status": self.status.value,
            "exit_code": self.run.exit_code,
            "duration_ms": self.run.duration_ms,
            "timed_out": self.run.state is ProcessState.TIMEOUT,
            "output": self.output,
            "tail": self.run.tail,
        }
