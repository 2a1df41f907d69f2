"""What a delegation job asks for, as a caller gives it (`JobRequest`) and as the journal
stores it once checked (`JobSpec`, JSON only in jobs.spec_json): the worker's contract
(worker.md), below the journal so that a job's record carries it typed.

Frozen dataclasses; dicts only at the JSON/SQL edge (`to_dict` / `from_dict`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import NotRequired, TypedDict, cast

from autoresearch.errors import ContractError
from autoresearch.jsonshape import json_field, json_shape
from autoresearch.sandbox_modes import SandboxMode
from autoresearch.states import Isolation, TaskKind

DEFAULT_AGENT = "claude"
DEFAULT_TIMEOUT_SECONDS = 1800.0
DEFAULT_CHECK_TIMEOUT_SECONDS = 600.0
MAX_TIMEOUT_SECONDS = 86400.0
MAX_PROMPT_CHARS = 200_000
MAX_CHECKS = 20
MAX_ALLOWED_DIRS = 20
MAX_SCOPE_PATHS = 200
MAX_REVISE_PASSES = 3  # auto_revise: agent sessions after the first, each after failed checks
MAX_STAGES = 10
# The source's request shapes (ide-super-worker), accepted verbatim: its policy version and
# the one Claude Code permission mode a job runs with.
POLICY_VERSION = 1
PERMISSION_MODE = "acceptEdits"


def check_policy_version(version: int | None) -> None:
    """Refuse a `verification_policy.version` other than the one this contract speaks."""
    if version is not None and version != POLICY_VERSION:
        raise ContractError(
            f"verification_policy.version {version} is not supported: use "
            f"{POLICY_VERSION} or leave it out"
        )


def check_permission_mode(mode: str | None) -> None:
    """Refuse a permission mode other than the one every job's claude session runs with."""
    if mode is not None and mode != PERMISSION_MODE:
        raise ContractError(
            f"permission_mode {mode} is not supported: jobs run with {PERMISSION_MODE} "
            "(leave it out)"
        )


def check_timeout(label: str, seconds: float | None, milliseconds: float | None) -> float:
    """A check's timeout in seconds, given in either unit (the source's is `timeout_ms`)."""
    if seconds is not None and milliseconds is not None:
        raise ContractError(f"check {label!r}: give timeout_ms or timeout_seconds, not both")
    if milliseconds is not None:
        return milliseconds / 1000
    return DEFAULT_CHECK_TIMEOUT_SECONDS if seconds is None else seconds


class SemanticGate(StrEnum):
    """Whether a dedicated reviewer model judges the job's change against its prompt: `warn`
    reports its doubt beside the verdict, `required` fails closed on it."""

    OFF = "off"
    WARN = "warn"
    REQUIRED = "required"


class ReliabilityTier(StrEnum):
    """What a job's request must carry to be trusted (`worker/reliability.py` maps each tier to
    its gates): the source's `reliability_tier`."""

    LITE = "lite"
    STANDARD = "standard"
    STRICT = "strict"
    CRITICAL = "critical"


class BlockingPolicy(StrEnum):
    """What a request missing its tier's gates gets: `observe` records them, `warn` adds
    `reliability_gates_missing` to the verdict, `enforce` refuses the request at start."""

    OBSERVE = "observe"
    WARN = "warn"
    ENFORCE = "enforce"


# --- the stored JSON shape (jobs.spec_json; keys a job stored earlier may lack: NotRequired) --


class CheckSpecJson(TypedDict):
    name: NotRequired[str]
    command: str
    timeout_seconds: float


class StageSpecJson(TypedDict):
    prompt: str
    checks: NotRequired[list[CheckSpecJson]]


class VerificationPolicyJson(TypedDict):
    task_kind: NotRequired[str]


class ScopedPatchJson(TypedDict):
    paths: list[str]
    max_diff_bytes: NotRequired[int | None]


class JobSpecJson(TypedDict):
    prompt: str
    repo_root: str
    allowed_dirs: list[str]
    verification_policy: NotRequired[VerificationPolicyJson | None]
    agent: str
    model: NotRequired[str | None]
    scoped_patch: NotRequired[ScopedPatchJson | None]
    checks: NotRequired[list[CheckSpecJson]]
    isolation: str
    max_turns: NotRequired[int | None]
    timeout_seconds: float
    include_diff: NotRequired[bool]
    semantic_gate: NotRequired[str]
    revise_passes: NotRequired[int]
    escalate_model: NotRequired[str | None]
    stages: NotRequired[list[StageSpecJson]]
    reliability_tier: NotRequired[str]
    blocking_policy: NotRequired[str]
    sandbox: NotRequired[str]  # absent in a job stored before the sandbox


@dataclass(frozen=True)
class CheckSpec:
    """A command run in the job's directory after the agent; it passes with exit code 0.
    `CheckSpec(command, name=…, timeout_seconds=…)`: the name is the first field for the stored
    spec's key order, and keyword-only so that the command stays the one positional argument."""

    name: str = field(default="", kw_only=True)
    command: str
    timeout_seconds: float = field(default=DEFAULT_CHECK_TIMEOUT_SECONDS, kw_only=True)

    @property
    def label(self) -> str:
        return self.name or self.command

    def to_dict(self) -> CheckSpecJson:
        return cast(CheckSpecJson, json_shape(self))

    @classmethod
    def from_dict(cls, data: CheckSpecJson) -> CheckSpec:
        return cls(
            str(data["command"]),
            name=str(data.get("name") or ""),
            timeout_seconds=float(data["timeout_seconds"]),
        )


@dataclass(frozen=True)
class StageSpec:
    """One sub-task of a staged job, run in order on the job's workspace; its checks run after
    it, and the next stage runs only when it ended well and every one of them passed."""

    prompt: str
    checks: tuple[CheckSpec, ...] = ()

    def to_dict(self) -> StageSpecJson:
        return cast(StageSpecJson, json_shape(self))

    @classmethod
    def from_dict(cls, data: StageSpecJson) -> StageSpec:
        checks = tuple(CheckSpec.from_dict(c) for c in data.get("checks") or ())
        return cls(str(data["prompt"]), checks)


@dataclass(frozen=True)
class ScopeSpec:
    """The paths a modifying job may change and the largest diff it may produce."""

    paths: tuple[str, ...]
    max_diff_bytes: int | None = None


@dataclass(frozen=True)
class JobRequest:
    """A job as a caller asks for it (paths not yet checked)."""

    prompt: str
    allowed_dirs: tuple[str, ...] = ()
    task_kind: TaskKind | None = None
    agent: str = DEFAULT_AGENT
    model: str | None = None
    scope: ScopeSpec | None = None
    checks: tuple[CheckSpec, ...] = ()
    isolation: Isolation = Isolation.IN_PLACE
    max_turns: int | None = None
    timeout_seconds: float = DEFAULT_TIMEOUT_SECONDS
    include_diff: bool = False
    semantic_gate: SemanticGate = SemanticGate.OFF
    revise_passes: int = 0  # auto_revise: at most this many revise sessions
    escalate_model: str | None = None  # the model of the last revise pass
    stages: tuple[StageSpec, ...] = ()
    reliability_tier: ReliabilityTier | None = None  # None: the machine's default
    blocking_policy: BlockingPolicy | None = None  # None: the machine's default
    sandbox: SandboxMode | None = None  # the OS sandbox asked for; None: confine.DEFAULT_MODE
    policy_version: int | None = None  # verification_policy.version, checked, not stored
    permission_mode: str | None = None  # checked, not stored: every job runs acceptEdits


def _policy_of(task_kind: object) -> object:
    """A task kind as the request's `verification_policy` carried it."""
    return None if task_kind is None else {"task_kind": task_kind}


@dataclass(frozen=True)
class JobSpec:
    """A validated job as stored: absolute, sandboxed paths relative to its repository. Its
    JSON (jobs.spec_json) is its fields in order, in the request's words: the task kind as the
    `verification_policy`, the scope as the `scoped_patch`."""

    prompt: str
    repo_root: str  # the repository whose journal holds the job
    allowed_dirs: tuple[str, ...]  # absolute; the first is the agent's working directory
    task_kind: TaskKind | None = field(
        metadata=json_field(key="verification_policy", convert=_policy_of)
    )
    agent: str
    model: str | None
    # its paths absolute, inside the allowed dirs; None: no scope declared
    scope: ScopeSpec | None = field(metadata=json_field(key="scoped_patch"))
    checks: tuple[CheckSpec, ...]
    isolation: Isolation
    max_turns: int | None
    timeout_seconds: float
    include_diff: bool
    semantic_gate: SemanticGate = SemanticGate.OFF
    revise_passes: int = 0
    escalate_model: str | None = None
    stages: tuple[StageSpec, ...] = ()
    reliability_tier: ReliabilityTier = ReliabilityTier.STANDARD
    blocking_policy: BlockingPolicy = BlockingPolicy.OBSERVE
    sandbox: SandboxMode = SandboxMode.NONE  # the OS sandbox it got: bwrap or none

    @property
    def cwd(self) -> str:
        return self.allowed_dirs[0]

    @property
    def scope_paths(self) -> tuple[str, ...] | None:
        return None if self.scope is None else self.scope.paths

    @property
    def max_diff_bytes(self) -> int | None:
        return None if self.scope is None else self.scope.max_diff_bytes

    def model_of(self, revision: int) -> str | None:
        """The agent's model for session `revision` (0: the first): the escalation model for
        the last revise pass – the hard one, after cheaper passes failed – when one is given."""
        last = self.revise_passes > 0 and revision == self.revise_passes
        return self.escalate_model if last and self.escalate_model else self.model

    def to_dict(self) -> JobSpecJson:
        return cast(JobSpecJson, json_shape(self))

    @classmethod
    def from_dict(cls, data: JobSpecJson) -> JobSpec:
        policy = data.get("verification_policy")
        task_kind = policy.get("task_kind") if policy else None
        scope = data.get("scoped_patch")
        return cls(
            prompt=str(data["prompt"]),
            repo_root=str(data["repo_root"]),
            allowed_dirs=tuple(data["allowed_dirs"]),
            task_kind=TaskKind(task_kind) if task_kind else None,
            agent=str(data["agent"]),
            model=data.get("model"),
            scope=None
            if scope is None
            else ScopeSpec(tuple(scope["paths"]), scope.get("max_diff_bytes")),
            checks=tuple(CheckSpec.from_dict(c) for c in data.get("checks") or ()),
            isolation=Isolation(data["isolation"]),
            max_turns=data.get("max_turns"),
            timeout_seconds=float(data["timeout_seconds"]),
            include_diff=bool(data.get("include_diff")),
            semantic_gate=SemanticGate(data.get("semantic_gate") or SemanticGate.OFF.value),
            revise_passes=int(data.get("revise_passes") or 0),
            escalate_model=data.get("escalate_model"),
            stages=tuple(StageSpec.from_dict(s) for s in data.get("stages") or ()),
            # a job stored before tiers existed: the defaults it ran under
            reliability_tier=ReliabilityTier(data.get("reliability_tier") or "standard"),
            blocking_policy=BlockingPolicy(data.get("blocking_policy") or "observe"),
            # and before the sandbox: it ran as the user
            sandbox=SandboxMode(str(data.get("sandbox") or SandboxMode.NONE.value)),
        )
