"""The worker's vocabulary: what a job asks for (`contracts/job.py`, named from here too; its
states, kinds and isolations are `states.JobState`, `states.TaskKind` and `states.Isolation`)
and how one of its checks went (`CheckRun`, one of the records of `contracts/job_result.py`).

Frozen dataclasses across layers; dicts only at the JSON/SQL edge (`to_dict` / `from_dict`).
"""

from __future__ import annotations

from autoresearch.contracts.job import (
    DEFAULT_AGENT,
    DEFAULT_CHECK_TIMEOUT_SECONDS,
    DEFAULT_TIMEOUT_SECONDS,
    MAX_ALLOWED_DIRS,
    MAX_CHECKS,
    MAX_PROMPT_CHARS,
    MAX_REVISE_PASSES,
    MAX_SCOPE_PATHS,
    MAX_STAGES,
    MAX_TIMEOUT_SECONDS,
    BlockingPolicy,
    CheckSpec,
    JobRequest,
    JobSpec,
    ReliabilityTier,
    ScopeSpec,
    SemanticGate,
    StageSpec,
    check_permission_mode,
    check_policy_version,
    check_timeout,
)
from autoresearch.contracts.job_result import CheckRun
from autoresearch.states import Isolation, TaskKind

__all__ = [  # the job's contract and records are contracts/', its kinds states.py's
    "DEFAULT_AGENT",
    "DEFAULT_CHECK_TIMEOUT_SECONDS",
    "DEFAULT_TIMEOUT_SECONDS",
    "MAX_ALLOWED_DIRS",
    "MAX_CHECKS",
    "MAX_PROMPT_CHARS",
    "MAX_REVISE_PASSES",
    "MAX_SCOPE_PATHS",
    "MAX_STAGES",
    "MAX_TIMEOUT_SECONDS",
    "BlockingPolicy",
    "CheckRun",
    "CheckSpec",
    "Isolation",
    "JobRequest",
    "JobSpec",
    "ReliabilityTier",
    "ScopeSpec",
    "SemanticGate",
    "StageSpec",
    "TaskKind",
    "check_permission_mode",
    "check_policy_version",
    "check_timeout",
]
