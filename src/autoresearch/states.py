"""Every state, decision and direction of the tool, defined once.

The members are `StrEnum`s: they equal the contract's strings, so they go into JSON, SQL and
messages unchanged, and mypy rejects a misspelt one. Values read back from the journal are
turned into members by the journal's codecs.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from enum import StrEnum
from typing import TypeVar

T = TypeVar("T")


class RunStatus(StrEnum):
    """A supervised run (supervisor.md §7)."""

    RUNNING = "running"
    STOPPED = "stopped"
    COMPLETED = "completed"
    FAILED = "failed"


TERMINAL_STATUSES = (RunStatus.STOPPED, RunStatus.COMPLETED, RunStatus.FAILED)


class Phase(StrEnum):
    """How far `prepare` got: a run is `preparing` until its worktree and baseline exist."""

    PREPARING = "preparing"
    READY = "ready"


class IterationState(StrEnum):
    """An iteration moves forward only: evaluating → decided → applied (supervisor/record.py)."""

    EVALUATING = "evaluating"
    DECIDED = "decided"
    APPLIED = "applied"


class IterationKind(StrEnum):
    BASELINE = "baseline"
    ITERATION = "iteration"


class Role(StrEnum):
    """Why a reading was taken (the `role` of its journal row)."""

    BASELINE = "baseline"  # calibration readings of the baseline at prepare
    CANDIDATE = "candidate"  # the candidate under test
    INCUMBENT = "incumbent"  # the kept commit, re-measured interleaved with a candidate
    CONFIRM = "confirm"  # fresh readings of a newly kept candidate
    CERTIFY = "certify"  # `autoresearch certify`


class EvalPurpose(StrEnum):
    """Why a run's evaluation was taken (the `purpose` of its journal row): the iteration's
    kind, or `autoresearch certify`."""

    BASELINE = "baseline"  # an IterationKind's value (string literals: the mypy plugin reads them)
    ITERATION = "iteration"
    CERTIFY = "certify"


class ChildRole(StrEnum):
    """What a registered child process group is (the `role` of its journal row, named when a
    stale one is stopped)."""

    AGENT = "agent"  # an agent session (a run's or a job's)
    EVALUATOR = "evaluator"  # a run's evaluator
    CERTIFY = "certify"  # an evaluator reading of `autoresearch certify`
    CHECKS = "checks"  # the checks of a run, a session or a job
    HARNESS = "harness"  # a session's benchmark (`exp run`)


class ArtifactStatus(StrEnum):
    """The `status` of candidate.json (supervisor.md §4)."""

    CANDIDATE = "candidate"
    NOOP = "noop"
    ABORT = "abort"
    INTERRUPTED = "interrupted"


class DecisionKind(StrEnum):
    """The decision recorded for an iteration (supervisor.md §3)."""

    BASELINE = "baseline"
    KEEP = "keep"
    DISCARD = "discard"
    AMBIGUOUS = "ambiguous"
    NOOP = "noop"
    ABORT = "abort"
    INTERRUPTED = "interrupted"
    ERROR = "error"


# An evaluated candidate that is rejected: the reset's safety is checked before the decision is
# committed, and afterwards the tree is at the kept commit and known clean.
REJECTS_CANDIDATE = frozenset({DecisionKind.DISCARD, DecisionKind.AMBIGUOUS})


class LaneState(StrEnum):
    """What a lane of `run --lanes K` is doing (status, the live display, MCP run_status)."""

    IDLE = "idle"
    AGENT = "agent"  # an agent session runs
    WAITING = "waiting"  # a candidate waits to be replayed and measured
    EVALUATING = "evaluating"  # its candidate is being measured
    STOPPED = "stopped"  # the lane starts no more sessions


# Iterations without an improvement that make a plateau (why 20: supervisor/plateau.py); an
# experiment session's status counts its logged runs the same. Here, not in decide.py: a
# session's Stop hook names it and decides no keep (issue 36: tests/test_import_graph.py).
DEFAULT_PLATEAU = 20


class OnPlateau(StrEnum):
    """What a run does when its search reaches a plateau (`run --on-plateau`, sandbox.md
    `search.on_plateau`; supervisor/plateau.py)."""

    EXPLORE = "explore"  # tell the next sessions the obvious direction is exhausted
    STOP = "stop"  # end the run, completed
    ASK = "ask"  # pause (no session runs) until `autoresearch continue`


class ExecutorKind(StrEnum):
    """Where a run's agent sessions and evaluations execute (`run --executor`)."""

    LOCAL = "local"  # threads and child processes on this machine (the default)
    RAY = "ray"  # Ray tasks on a cluster's nodes (supervisor/ray_executor.py)


class KeepPolicy(StrEnum):
    """How a run decides to keep a candidate (sandbox.md `evaluator.keep_policy`, §3): the
    built-ins are its members; the name of a keep policy a plugin registers (an entry point
    of `autoresearch.policies`) is a value too, made when it is first read (`_missing_`), so a
    run under it is stored and read like any other. Iterating gives the built-ins only."""

    SCORE_IMPROVEMENT = "score_improvement"  # the default: a better score than the kept one
    PASS_ONLY = "pass_only"  # whatever the evaluator passes

    @classmethod
    def _missing_(cls, value: object) -> KeepPolicy | None:
        # imported here: importlib.metadata costs every command's start-up, a plugin's name few
        from autoresearch import plugins

        if not isinstance(value, str) or value not in plugins.discover(plugins.POLICIES):
            return None  # Enum's own error: "'x' is not a valid KeepPolicy"
        made = str.__new__(cls, value)
        made._name_, made._value_ = value, value
        return cls._value2member_map_.setdefault(value, made)  # type: ignore[return-value]

    @classmethod
    def registered(cls) -> tuple[str, ...]:
        """Every name a run may be under: the built-ins, then each plugin's (sorted)."""
        from autoresearch import plugins

        builtin = tuple(member.value for member in cls)
        found = plugins.discover(plugins.POLICIES)
        return (*builtin, *sorted(set(found) - set(builtin)))


class EvalFormat(StrEnum):
    """How an evaluator reports (sandbox.md `evaluator.format`, §1): a JSON verdict on stdout,
    or METRIC lines (a session's harness is always `metric`)."""

    JSON = "json"
    METRIC = "metric"


class EvalStatus(StrEnum):
    """An evaluation's outcome; `error` carries no score (crash is an outcome, never a score)."""

    PASS = "pass"
    FAIL = "fail"
    ERROR = "error"


class Direction(StrEnum):
    """Which way a score improves."""

    LOWER = "lower"
    HIGHER = "higher"


# The contracts' defaults differ on purpose: a supervisor score is "higher is better"
# (supervisor.md §1), an experiment metric is a cost such as seconds (experiments.md "init").
MISSION_DEFAULT_DIRECTION = Direction.HIGHER
SESSION_DEFAULT_DIRECTION = Direction.LOWER


def is_better(direction: Direction, candidate: float, incumbent: float) -> bool:
    """Strictly better in `direction`: the one comparison of scores in the tool."""
    return candidate < incumbent if direction == Direction.LOWER else candidate > incumbent


def best_of(direction: Direction, scores: list[float]) -> float | None:
    """The best of `scores` in `direction` (None for none)."""
    return best_by(direction, scores, float)


def best_by(direction: Direction, items: Iterable[T], score: Callable[[T], float]) -> T | None:
    """The item whose `score` is best in `direction`, the earliest of equals (None for none):
    `best_of` for records (a report's rows, a session's kept runs)."""
    best: list[tuple[T, float]] = []  # empty until the first item
    for item in items:
        value = score(item)
        if not best or is_better(direction, value, best[0][1]):
            best = [(item, value)]
    return best[0][0] if best else None


class Verdict(StrEnum):
    """The status `exp log` records for a run (experiments.md "log")."""

    KEEP = "keep"
    DISCARD = "discard"
    CRASH = "crash"
    CHECKS_FAILED = "checks_failed"


SCORED_VERDICTS = (Verdict.KEEP, Verdict.DISCARD)


class GitAction(StrEnum):
    """What `exp log` did to the session directory (its `git.action`)."""

    COMMITTED = "committed"
    NOTHING_TO_COMMIT = "nothing to commit"
    REVERTED = "reverted"
    NOTHING_TO_REVERT = "nothing to revert"


class ProcessState(StrEnum):
    """How a harness or checks process ended (experiments.md "run")."""

    PASS = "pass"
    FAIL = "fail"
    TIMEOUT = "timeout"
    ERROR = "error"
    CANCELLED = "cancelled"


def process_state(
    timed_out: bool, spawn_error: str | None, exit_code: int | None, cancelled: bool = False
) -> ProcessState:
    """How a process ended (pure; here, beside its states, so that a hook reads it without
    evaluate.py): `cancelled` (by the caller), `timeout`, `error` (could not
    start, or no exit code), else `pass` for exit 0 and `fail` for any other."""
    if cancelled:
        return ProcessState.CANCELLED
    if timed_out:
        return ProcessState.TIMEOUT
    if spawn_error is not None or exit_code is None:
        return ProcessState.ERROR
    return ProcessState.PASS if exit_code == 0 else ProcessState.FAIL


class SessionState(StrEnum):
    """What `exp list` says of a session."""

    ACTIVE = "active"  # open and bound to this checkout's branch
    OPEN = "open"
    CLOSED = "closed"


class RunState(StrEnum):
    """What `exp status` says of the pending run."""

    RUNNING = "running"
    COMPLETED = "completed"
    INTERRUPTED = "interrupted"


class JobState(StrEnum):
    """Where a delegation job is in its life (worker.md); the last five are terminal.

    Not a `RunStatus`: a job is queued behind others, is checked after its agent, and can be
    `lost` (its runner died) or `timed_out`; a run is none of these.
    """

    QUEUED = "queued"
    RUNNING = "running"  # the agent works
    CHECKING = "checking"  # the agent is done, the checks run
    COMPLETED = "completed"  # evidence recorded (the verdict says whether it is any good)
    CANCELLED = "cancelled"
    TIMED_OUT = "timed_out"
    FAILED = "failed"  # the runner could not carry the job (git, disk): `error` says why
    LOST = "lost"  # its runner process died before recording an end

    @property
    def terminal(self) -> bool:
        return self in TERMINAL_JOB_STATES


TERMINAL_JOB_STATES = frozenset(
    {JobState.COMPLETED, JobState.CANCELLED, JobState.TIMED_OUT, JobState.FAILED, JobState.LOST}
)
# A job holds one of the worker's slots while its agent or its checks run.
ACTIVE_JOB_STATES = (JobState.RUNNING, JobState.CHECKING)
LIVE_JOB_STATES = (JobState.QUEUED, *ACTIVE_JOB_STATES)


class ReviewState(StrEnum):
    """What `review` did with a review branch."""

    PLANNED = "planned"  # computed (a dry run stops here)
    CREATED = "created"
    UNCHANGED = "unchanged"  # the branch already exists with the same tip


class ResultState(StrEnum):
    """What became of a worktree-isolated job's branch."""

    NONE = "none"  # in place, or nothing to keep
    PENDING = "pending"  # branch and patch kept, waiting for apply or discard
    APPLIED = "applied"
    DISCARDED = "discarded"


class TaskKind(StrEnum):
    """What a delegation job may do to its directory (worker.md `verification_policy`)."""

    READ_ONLY = "read_only"
    MODIFYING = "modifying"


class Isolation(StrEnum):
    """Where a delegation job's agent works: the caller's directory or a worktree of its own."""

    IN_PLACE = "in_place"
    WORKTREE = "worktree"
