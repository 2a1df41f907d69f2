"""The one small interface every agent back-end implements, and what a back-end registers.

An agent runs one short-lived session per iteration in the run's worktree. The candidate
artifact is the contract; what the agent reports about itself (exit status, success, tokens,
cost) is recorded but never decides. A back-end is a `Backend` named by an entry point of the
group `autoresearch.agents` (the built-ins register the same way, in pyproject.toml).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Protocol

from autoresearch import git
from autoresearch.children import ChildEnv, run_tag, spawn_env
from autoresearch.confine import Box
from autoresearch.contracts.agent_record import AgentRecord
from autoresearch.contracts.agent_record import Usage as Usage  # what a back-end fills
from autoresearch.contracts.frozen import FrozenMission
from autoresearch.contracts.sandbox import Sandbox
from autoresearch.jsonshape import json_field, json_shape
from autoresearch.states import DecisionKind


@dataclass(frozen=True)
class AgentConfig:
    """An agent spec and its options, as recorded in the journal for `resume`."""

    spec: str = field(metadata=json_field(key="agent"))
    model: str | None = None
    args: tuple[str, ...] = field(default=(), metadata=json_field(key="agent_args"))
    max_turns: int | None = None
    seed: int | None = None
    # a portfolio member's name (`claude (haiku)`), which its sessions record: the same agent
    # with two models is two members (supervisor/portfolio.py); None: the agent's own name.
    # Not in the JSON: the journal records the portfolio (`loop.agents`, `loop.models`)
    member: str | None = field(default=None, metadata=json_field(hidden=True))

    def to_dict(self) -> dict[str, object]:
        return json_shape(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> AgentConfig:
        return cls(
            spec=str(data["agent"]),
            model=data.get("model"),
            args=tuple(data.get("agent_args") or ()),
            max_turns=data.get("max_turns"),
            seed=data.get("seed"),
        )


@dataclass(frozen=True)
class PastIteration:
    """A recorded iteration as an agent may see it."""

    iteration: int
    decision: DecisionKind | None
    description: str
    notes: tuple[str, ...]  # the notes the session's artifact carried
    # the tune block's values its candidate tried, as its notes say (contracts/tune.tried_values)
    tried: Mapping[str, float] | None = None
    # the commit its session started from, and the commit the run kept of it (None: not kept):
    # the parent edges from which an agent reads a line of descent (the frontier's elites)
    base_commit: str | None = None
    kept_commit: str | None = None


# The recorded iterations numbered above `after`, oldest first (read incrementally: O(new)).
History = Callable[[int], Sequence[PastIteration]]


@dataclass(frozen=True)
class SessionRequest:
    """Everything a back-end needs to run one session."""

    run_id: str
    iteration: int
    worktree: Path
    instructions_file: Path
    candidate_file: Path
    base_commit: str
    log_path: Path
    timeout: float | None
    sandbox: FrozenMission = field(default_factory=FrozenMission)  # the run's frozen mission
    history: History | None = None  # the run's recorded iterations, never the journal itself
    lane: int = 0  # the parallel lane (1..K) of `run --lanes K`; 0 for a run without lanes
    lanes: int = 0  # K of `run --lanes K`
    extra_env: Mapping[str, str] = field(default_factory=dict)  # e.g. a job's model bridge
    box: Box | None = None  # the OS sandbox the session runs in (None: as the user)

    def confinement(self) -> Box | None:
        """The session's sandbox with what this session must write beyond its worktree."""
        if self.box is None:
            return None
        extra = tuple(writable_dirs(self))
        return replace(self.box, writable=(*self.box.writable, *extra))

    def env(self) -> dict[str, str]:
        """The session's environment: the caller's plus the AUTORESEARCH_* variables."""
        return spawn_env(
            ChildEnv(
                run_tag(self.run_id, self.worktree),
                iteration=self.iteration,
                instructions_file=self.instructions_file,
                candidate_file=self.candidate_file,
                base_commit=self.base_commit,
                lane=self.lane,
                lanes=self.lanes,
                extra=self.extra_env,
            )
        )


def writable_dirs(req: SessionRequest) -> list[Path]:
    """What a session must write beyond the worktree: its git data and the run folder (the
    artifact). A linked worktree's git data lives outside it: the common git dir's `objects`,
    `refs` and `logs`, and the worktree's own git dir; hooks and the repository config stay
    read-only, so nothing a session writes runs outside its sandbox later."""
    own, common = git.git_dirs(req.worktree)
    dirs = [common / name for name in ("objects", "refs", "logs")] if own != common else [own]
    dirs += [own, req.candidate_file.parent]
    unique = dict.fromkeys(d for d in dirs if d.is_dir())
    return list(unique)


def json_int(value: object) -> int | None:
    """An integer from an agent's JSON event (booleans are not counts)."""
    return value if isinstance(value, int) and not isinstance(value, bool) else None


@dataclass(frozen=True)
class AgentResult:
    """How one session ended."""

    agent: str
    exit_code: int | None
    duration_ms: int
    timed_out: bool = False
    cancelled: bool = False
    spawn_error: str | None = None
    usage: Usage = field(default_factory=Usage)
    log_file: str | None = None

    @property
    def failure_reason(self) -> str | None:
        """Why the session itself broke (not a judgement on its candidate), or None."""
        if self.spawn_error is not None:
            return f"agent could not start: {self.spawn_error}"
        if self.timed_out:
            return f"agent timed out after {self.duration_ms / 1000:.0f} s"
        if self.cancelled:
            return None  # an operator's or a signal's stop, not the agent's failure
        if self.exit_code not in (0, None) or self.usage.success is False:
            detail = f": {self.usage.error}" if self.usage.error else ""
            return f"agent exited with code {self.exit_code}{detail}"
        if self.usage.denials:
            return "agent was denied: " + "; ".join(self.usage.denials)
        return None

    @property
    def failed(self) -> bool:
        return self.failure_reason is not None

    def record(self, lane: int | None = None, failure: str | None = None) -> AgentRecord:
        """What an iteration records of this session (`lane`: of `run --lanes K`; `failure`:
        autoresearch's reason the session failed, beside the agent's self-report)."""
        u = self.usage
        return AgentRecord(
            agent=self.agent,
            exit_code=self.exit_code,
            duration_ms=self.duration_ms,
            timed_out=self.timed_out,
            cancelled=self.cancelled,
            # a copy: the record keeps what the session reported, whatever the result's does
            usage=replace(u, error=u.error or self.spawn_error, denials=list(u.denials)),
            log_file=self.log_file,
            lane=lane,
            failure=failure,
        )


ShouldCancel = Callable[[], bool]
OnSpawn = Callable[[int], None]


class Agent(Protocol):
    """A back-end: `run` performs one session and returns how it ended."""

    @property
    def name(self) -> str: ...

    # True for agents that cannot write the artifact themselves (aider): the supervisor
    # derives it from git after the session (changes → candidate, none → noop).
    @property
    def artifact_from_git(self) -> bool: ...

    def run(
        self, request: SessionRequest, should_cancel: ShouldCancel, on_spawn: OnSpawn
    ) -> AgentResult: ...


@dataclass(frozen=True)
class Backend:
    """An agent back-end as its entry point names it (`--agent NAME`, NAME the entry point's):
    how to build its Agent from the run's agent options; the program it starts, which must be
    on PATH before a run is prepared (None: it starts none, or checks for itself); and, when it
    cannot work on every mission, a check that refuses one (a ContractError) before then."""

    make: Callable[[AgentConfig], Agent]
    executable: str | None = None
    check_mission: Callable[[Sandbox], None] | None = None
