"""What a job's runner records of it (worker.md): how its agent session went (`ExecutorRecord`),
each of its checks (`CheckRun`, over the one `CheckRecord` of a run of checks) and the evidence
of its workspace (`JobEvidence`: the `Snapshot` at its start, the `Workspace` at its end). Below
the journal, so that a job's record carries them typed and the verdict reads fields.

Frozen dataclasses; dicts only at the JSON/SQL edge: `to_dict` is what jobs.executor_json,
checks_json and evidence_json hold (the shapes every version of the runner wrote, key for key
and in order), `from_dict` reads it back and raises ValueError, TypeError or KeyError on a value
no version wrote, which the journal refuses as damage naming its table, row and column.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import KW_ONLY, dataclass, field
from enum import StrEnum
from typing import Any, NotRequired, TypedDict, cast

from autoresearch.contracts.agent_record import AgentRecord
from autoresearch.contracts.check_record import CheckRecord
from autoresearch.jsonshape import is_empty, is_none, json_field, json_shape
from autoresearch.states import ProcessState


class Executor(StrEnum):
    """How the agent session went (the verdict's `verification.executor`)."""

    PENDING = "pending"  # queued or still working
    PASSED = "passed"
    FAILED = "failed"  # non-zero exit, an error result, could not start
    LOST = "lost"  # its runner died: nothing is known about how it ended
    NOT_RUN = "not_run"  # cancelled or timed out before or while it ran


class CheckResult(StrEnum):
    PASSED = "passed"
    FAILED = "failed"
    TIMED_OUT = "timed_out"
    SKIPPED = "skipped"  # not run: the agent failed, or the job was cancelled first

    @property
    def bad(self) -> bool:
        return self in (CheckResult.FAILED, CheckResult.TIMED_OUT)


# --- reading stored JSON: a value of the wrong type is damage, never a guess ------------------


class SemanticStatus(StrEnum):
    """What the semantic reviewer said of the change against the job's prompt."""

    PASSED = "passed"
    FAILED = "failed"  # it does not do what the prompt asked
    MISSING = "missing"  # no verdict could be had: no reviewer model, a broken answer, …


def _object(data: Any, what: str) -> Mapping[str, Any]:
    if not isinstance(data, dict):
        raise TypeError(f"{what} is an object, not {type(data).__name__}")
    return data


def _str(data: Mapping[str, Any], key: str) -> str:
    value = data[key]
    if not isinstance(value, str):
        raise TypeError(f"{key} is a string, not {type(value).__name__}")
    return value


def _opt_str(data: Mapping[str, Any], key: str) -> str | None:
    return None if data.get(key) is None else _str(data, key)


def _int(data: Mapping[str, Any], key: str) -> int:
    value = data[key]
    if not isinstance(value, int) or isinstance(value, bool):
        raise TypeError(f"{key} is an integer, not {type(value).__name__}")
    return value


def _opt_int(data: Mapping[str, Any], key: str) -> int | None:
    return None if data.get(key) is None else _int(data, key)


def _opt_float(data: Mapping[str, Any], key: str) -> float | None:
    value = data.get(key)
    if value is not None and (not isinstance(value, int | float) or isinstance(value, bool)):
        raise TypeError(f"{key} is a number, not {type(value).__name__}")
    return value  # an int stays one: the stored JSON is rewritten as it was


def _bool(data: Mapping[str, Any], key: str) -> bool:
    value = data[key]
    if not isinstance(value, bool):
        raise TypeError(f"{key} is true or false, not {type(value).__name__}")
    return value


def _strs(data: Mapping[str, Any], key: str) -> tuple[str, ...]:
    value = data[key]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise TypeError(f"{key} is a list of strings")
    return tuple(value)


# --- the stored JSON shapes (TypedDicts: each `to_dict` is checked key for key) ---------------


class ArtifactJson(TypedDict):
    name: str
    path: str
    bytes: int
    sha256: str


class CheckRunJson(TypedDict):
    name: str
    command: str
    status: str
    exit_code: int | None
    duration_ms: int
    timed_out: bool
    output: ArtifactJson | None
    tail: str


class SnapshotJson(TypedDict):
    repo: str | None
    base_commit: str | None
    preexisting: dict[str, str]
    error: str | None


class SemanticJson(TypedDict):
    status: str
    reason: str
    model: str | None
    answered_by: str | None


class StageJson(TypedDict):
    stage: int
    executor: str
    complete: bool
    checks: list[CheckRunJson]


class JobEvidenceJson(TypedDict):
    """evidence_json: the snapshot, then what is known so far (the workspace once gathered)."""

    snapshot: SnapshotJson
    semantic: NotRequired[SemanticJson]
    revisions: NotRequired[int]
    stages: NotRequired[list[StageJson]]
    out_of_scope_files: NotRequired[list[str]]
    allowed_outside_repo: NotRequired[bool]
    changed_files: NotRequired[list[str]]
    preexisting_files: NotRequired[list[str]]
    unattributed_files: NotRequired[list[str]]
    workspace_complete: NotRequired[bool]
    workspace_note: NotRequired[str | None]
    diff_bytes: NotRequired[int | None]
    patch: NotRequired[ArtifactJson | None]


# --- artifacts -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Artifact:
    """A file a job left (a log, its patch): referenced by name, path, size and sha256."""

    name: str
    path: str
    bytes: int
    sha256: str

    def to_dict(self) -> ArtifactJson:
        return cast(ArtifactJson, json_shape(self))

    @classmethod
    def from_dict(cls, data: Any) -> Artifact:
        d = _object(data, "an artifact")
        return cls(_str(d, "name"), _str(d, "path"), _int(d, "bytes"), _str(d, "sha256"))

    @classmethod
    def maybe(cls, data: Any) -> Artifact | None:
        return None if data is None else cls.from_dict(data)


# --- the executor ----------------------------------------------------------------------------


@dataclass(frozen=True)
class GatewaySpend:
    """A job bridged to an OpenAI-compatible gateway: its requests and their cost by the price
    table, which replaces the agent's own cost figure (kept as `agent_cost_usd`)."""

    cost_usd: float | None  # None while no request had a price
    requests: int


@dataclass(frozen=True)
class ExecutorRecord:
    """How the job's agent session went: the verdict's status of it, the session's own record
    (as an iteration records one) and, on a gateway, what the bridged requests cost."""

    status: Executor
    # the agent record's keys (those it reported) first, then the status: no fixed shape
    agent: AgentRecord = field(metadata=json_field(leads=True))
    gateway: GatewaySpend | None = field(default=None, metadata=json_field(hidden=True))

    def to_dict(self) -> dict[str, object]:
        return json_shape(self)

    def json_extra(self) -> dict[str, object]:
        """On a gateway, its spend: its cost in place of the agent's figure (where that stood,
        else after the status), then the agent's own and the requests."""
        if self.gateway is None:
            return {}
        return {
            "cost_usd": self.gateway.cost_usd,
            "agent_cost_usd": self.agent.usage.cost_usd,
            "gateway_requests": self.gateway.requests,
        }

    @classmethod
    def from_dict(cls, data: Any) -> ExecutorRecord:
        d = dict(_object(data, "an executor"))
        status = Executor(d.pop("status"))
        gateway = None
        if "gateway_requests" in d:
            requests = _int(d, "gateway_requests")
            gateway = GatewaySpend(_opt_float(d, "cost_usd"), requests)
            del d["gateway_requests"]
            # the agent's own figure back in its place (absent: it reported none)
            agent_cost = d.pop("agent_cost_usd", None)
            if agent_cost is None:
                del d["cost_usd"]
            else:
                d["cost_usd"] = agent_cost
        return cls(status, AgentRecord.from_dict(d), gateway)


# --- checks ----------------------------------------------------------------------------------

# What a stored check's status says of how its process ended. The checks_json shape has no
# process state of its own; a failed check is `fail` unless it had no exit code (`error`).
_STATE_OF = {
    CheckResult.PASSED: ProcessState.PASS,
    CheckResult.TIMED_OUT: ProcessState.TIMEOUT,
    CheckResult.FAILED: ProcessState.FAIL,
}


@dataclass(frozen=True)
class CheckRun:
    """How one of a job's checks went (`to_dict`: an entry of the job's `checks` in the journal):
    the one record of a run of checks (`CheckRecord`, made by `evaluate.check_record` as for a
    mission's checks), with the check's name and command and the artifact of its whole log."""

    name: str
    command: str
    run: CheckRecord
    output: Artifact | None  # the artifact of its whole log

    @property
    def status(self) -> CheckResult:
        """The job's check result (worker.md) from how its process ended."""
        if self.run.state is ProcessState.TIMEOUT:
            return CheckResult.TIMED_OUT
        return CheckResult.PASSED if self.run.passed else CheckResult.FAILED

    def to_dict(self) -> CheckRunJson:
        return {
            "name": self.name,
            "command": self.command,
            "status": self.status.value,
            "exit_code": self.run.exit_code,
            "duration_ms": self.run.duration_ms,
            "timed_out": self.run.state is ProcessState.TIMEOUT,
            "output": None if self.output is None else self.output.to_dict(),
            "tail": self.run.tail,
        }

    @classmethod
    def from_dict(cls, data: Any) -> CheckRun:
        d = _object(data, "a check")
        status = CheckResult(d["status"])
        if status not in _STATE_OF:
            raise ValueError(f"a check that ran is passed, failed or timed_out, not {status}")
        exit_code = _opt_int(d, "exit_code")
        state = _STATE_OF[status]
        if state is ProcessState.FAIL and exit_code is None:
            state = ProcessState.ERROR
        if _bool(d, "timed_out") != (state is ProcessState.TIMEOUT):
            raise ValueError(f"a check {status} with timed_out {d['timed_out']}")
        output = Artifact.maybe(d.get("output"))
        run = CheckRecord(
            state=state,
            exit_code=exit_code,
            duration_ms=_int(d, "duration_ms"),
            log_file="" if output is None else output.path,
            tail=_opt_str(d, "tail") or "",
        )
        return cls(_str(d, "name"), _str(d, "command"), run, output)


@dataclass(frozen=True)
class JobChecks:
    """A job's checks in the order they ran (jobs.checks_json, a JSON list)."""

    runs: tuple[CheckRun, ...] = ()

    def to_dict(self) -> list[CheckRunJson]:
        return [c.to_dict() for c in self.runs]

    @classmethod
    def from_dict(cls, data: Any) -> JobChecks:
        if not isinstance(data, list):
            raise TypeError(f"a job's checks are a list, not {type(data).__name__}")
        return cls(tuple(CheckRun.from_dict(c) for c in data))


# --- evidence --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Snapshot:
    """The workspace when the job started: its repository, commit and pre-existing changes."""

    repo: str | None
    base_commit: str | None
    preexisting: dict[str, str] = field(default_factory=dict)  # path → content digest
    error: str | None = None

    def to_dict(self) -> SnapshotJson:
        return cast(SnapshotJson, json_shape(self))

    @classmethod
    def from_dict(cls, data: Any) -> Snapshot:
        d = _object(data, "a snapshot")
        found = _object(d.get("preexisting") or {}, "preexisting")
        if not all(isinstance(v, str) for v in found.values()):
            raise TypeError("preexisting maps paths to digests")
        return cls(
            _opt_str(d, "repo"), _opt_str(d, "base_commit"), dict(found), _opt_str(d, "error")
        )


@dataclass(frozen=True, kw_only=True)
class Workspace:
    """What the job changed, gathered at its end (`worker/evidence.changes_since`, attributed
    against its snapshot) and judged against its allowed dirs and scope. Its fields in the order
    evidence_json has their keys (flat in the evidence, after its other keys)."""

    out_of_scope_files: tuple[str, ...]
    # an allowed dir outside the repository: changes there cannot be seen
    allowed_outside_repo: bool
    changed_files: tuple[str, ...]  # changed by the job (unattributed ones included)
    preexisting_files: tuple[str, ...]  # changed before the job and left as they were
    unattributed_files: tuple[str, ...]  # changed before the job and touched again by it
    # whether the changes could be gathered at all
    complete: bool = field(metadata=json_field(key="workspace_complete"))
    note: str | None = field(metadata=json_field(key="workspace_note"))  # why not
    diff_bytes: int | None
    patch: Artifact | None


@dataclass(frozen=True)
class SemanticReview:
    """The dedicated reviewer model's verdict on a job's change (`semantic_gate`)."""

    status: SemanticStatus
    reason: str
    model: str | None = None  # the model asked for
    answered_by: str | None = None  # the model the gateway says answered

    def to_dict(self) -> SemanticJson:
        return cast(SemanticJson, json_shape(self))

    @classmethod
    def maybe(cls, data: Any) -> SemanticReview | None:
        if data is None:
            return None
        d = _object(data, "a semantic review")
        status = SemanticStatus(_str(d, "status"))
        return cls(status, _str(d, "reason"), _opt_str(d, "model"), _opt_str(d, "answered_by"))


@dataclass(frozen=True)
class StageRecord:
    """How one stage of a staged job went: its session's status and its checks. Complete only
    when the session passed and every one of its checks did: the next stage's precondition."""

    number: int = field(metadata=json_field(key="stage"))  # 1-based
    executor: Executor
    # a field (derived) so that the stored JSON has it between the two it comes from
    complete: bool = field(init=False)
    checks: tuple[CheckRun, ...] = ()

    def __post_init__(self) -> None:
        passed = all(c.status is CheckResult.PASSED for c in self.checks)
        object.__setattr__(self, "complete", self.executor is Executor.PASSED and passed)

    def to_dict(self) -> StageJson:
        return cast(StageJson, json_shape(self))

    @classmethod
    def from_dict(cls, data: Any) -> StageRecord:
        d = _object(data, "a stage")
        checks = tuple(CheckRun.from_dict(c) for c in d.get("checks") or ())
        return cls(_int(d, "stage"), Executor(_str(d, "executor")), checks)


def _is_zero(count: object) -> bool:
    """`omit_when` for a count written only once something was counted."""
    return count == 0


@dataclass(frozen=True)
class JobEvidence:
    """A job's evidence: its snapshot from the start, its workspace once it has ended, and the
    semantic reviewer's verdict when the job asked for one. Each key is written only once it is
    known; the workspace's keys last, flat (evidence_json as every runner wrote it)."""

    snapshot: Snapshot
    _: KW_ONLY
    # None: not asked for, or not run
    semantic: SemanticReview | None = field(default=None, metadata=json_field(omit_when=is_none))
    # auto_revise: the sessions after the first
    revisions: int = field(default=0, metadata=json_field(omit_when=_is_zero))
    # a staged job's stages that ran, in order
    stages: tuple[StageRecord, ...] = field(default=(), metadata=json_field(omit_when=is_empty))
    workspace: Workspace | None = field(  # None: not gathered yet
        default=None, metadata=json_field(omit_when=is_none, inline=True)
    )

    def to_dict(self) -> JobEvidenceJson:
        return cast(JobEvidenceJson, json_shape(self))

    @classmethod
    def from_dict(cls, data: Any) -> JobEvidence:
        d = _object(data, "a job's evidence")
        snapshot = Snapshot.from_dict(d["snapshot"])
        semantic = SemanticReview.maybe(d.get("semantic"))
        revisions = _opt_int(d, "revisions") or 0
        stages = tuple(StageRecord.from_dict(s) for s in d.get("stages") or ())
        if d.keys() <= {"snapshot", "semantic", "revisions", "stages"}:
            return cls(snapshot, semantic=semantic, revisions=revisions, stages=stages)
        workspace = Workspace(
            changed_files=_strs(d, "changed_files"),
            preexisting_files=_strs(d, "preexisting_files"),
            unattributed_files=_strs(d, "unattributed_files"),
            out_of_scope_files=_strs(d, "out_of_scope_files"),
            allowed_outside_repo=_bool(d, "allowed_outside_repo"),
            complete=_bool(d, "workspace_complete"),
            note=_opt_str(d, "workspace_note"),
            diff_bytes=_opt_int(d, "diff_bytes"),
            patch=Artifact.maybe(d.get("patch")),
        )
        return cls(
            snapshot, semantic=semantic, revisions=revisions, stages=stages, workspace=workspace
        )
