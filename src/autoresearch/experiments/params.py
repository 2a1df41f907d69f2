"""The parameters of the session tools (experiments.md "Tools"), validated without side effects.

`None` always means "omitted": a re-init keeps the stored value of every omitted field. Both
front doors (CLI and MCP) build these dataclasses, so validation happens once, here.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass

from autoresearch.contracts.metric_lines import parse_metric_line
from autoresearch.errors import ContractError
from autoresearch.jsonshape import json_shape
from autoresearch.paths import SESSION_BRANCH_PREFIX, slug
from autoresearch.states import Direction, Verdict

DIRECTIONS = tuple(Direction)
STATUSES = tuple(Verdict)
DEFAULT_COMMAND = "bash autoresearch.sh"
DEFAULT_RUN_TIMEOUT = 600.0
DEFAULT_CHECKS_TIMEOUT = 300.0


@dataclass(frozen=True)
class InitParams:
    """`init`: every field but the flags may be omitted on a re-init."""

    name: str | None = None
    goal: str | None = None
    metric: str | None = None
    unit: str | None = None
    direction: Direction | None = None
    secondary: tuple[str, ...] | None = None
    scope: tuple[str, ...] | None = None
    off_limits: tuple[str, ...] | None = None
    constraints: tuple[str, ...] | None = None
    max_iterations: int | None = None
    command: str | None = None
    new_segment: bool = False
    worktree: bool = False
    seal: bool = False  # seal the harness files as they are now (experiments/sealed.py)
    allow_secrets: bool = False  # commit files that look like secrets in the setup commit

    def to_dict(self) -> dict[str, object]:
        return json_shape(self)

    def given(self) -> dict[str, object]:
        """The session fields this call sets (0 max_iterations clears the limit)."""
        flags = ("new_segment", "worktree", "seal", "allow_secrets")
        fields = {k: v for k, v in asdict(self).items() if k not in flags}
        given = {k: v for k, v in fields.items() if v is not None}
        if given.get("max_iterations") == 0:
            given["max_iterations"] = None
        return given


@dataclass(frozen=True)
class RunParams:
    """`run`: timeouts in seconds; ≤ 0 means none."""

    timeout_seconds: float = DEFAULT_RUN_TIMEOUT
    checks_timeout_seconds: float = DEFAULT_CHECKS_TIMEOUT
    repeats: int = 1  # readings of the benchmark in this run (their mean is the value)

    def to_dict(self) -> dict[str, object]:
        return json_shape(self)


@dataclass(frozen=True)
class RunNote:
    """A reason attached to an earlier run: `flag_runs` / `justify_runs` entries."""

    run_id: int
    reason: str

    def to_dict(self) -> dict[str, object]:
        return json_shape(self)


@dataclass(frozen=True)
class LogParams:
    """`log`: the verdict on the pending run."""

    status: Verdict
    description: str
    metric: float | None = None
    metrics: Mapping[str, float] | None = None
    asi: Mapping[str, object] | None = None
    justification: str | None = None
    flag_runs: tuple[RunNote, ...] = ()
    justify_runs: tuple[RunNote, ...] = ()
    force: bool = False

    def to_dict(self) -> dict[str, object]:
        return json_shape(self)


# --- validation ----------------------------------------------------------------------------


def is_metric_name(name: str) -> bool:
    """A name a `METRIC name=value` line can carry (the grammar decides, not a copy of it)."""
    return bool(name) and parse_metric_line(f"METRIC {name}=0") is not None


def validate_init(params: InitParams) -> None:
    """Refuse malformed fields; whether required ones are present depends on the session."""
    if params.name is not None and not params.name.strip():
        raise ContractError("init: name must not be empty")
    if params.metric is not None and not is_metric_name(params.metric):
        raise ContractError(
            f"init: invalid metric name {params.metric!r} (letters, digits, _ . µ -)"
        )
    if params.direction is not None and params.direction not in DIRECTIONS:
        raise ContractError(f"init: direction must be lower or higher, not {params.direction!r}")
    bad = [n for n in params.secondary or () if not is_metric_name(n)]
    if bad:
        raise ContractError(f"init: invalid secondary metric name(s): {', '.join(bad)}")
    if params.max_iterations is not None and params.max_iterations < 0:
        raise ContractError("init: max_iterations must be a positive number (0 clears it)")
    if params.command is not None and not params.command.strip():
        raise ContractError("init: command must not be empty")


def validate_new_session(params: InitParams) -> None:
    missing = [f for f in ("name", "metric") if getattr(params, f) is None]
    if missing:
        raise ContractError(f"init: {' and '.join(missing)} required for a new session")


def validate_log(params: LogParams) -> None:
    if params.status not in STATUSES:
        raise ContractError(f"log: status must be one of {', '.join(STATUSES)}")
    if not params.description.strip():
        raise ContractError("log: description is required (one line: what this run tried)")
    if params.metric is not None and not math.isfinite(params.metric):
        raise ContractError("log: metric must be a finite number")
    for name, value in (params.metrics or {}).items():
        if not is_metric_name(name):
            raise ContractError(f"log: invalid metric name {name!r}")
        if not isinstance(value, int | float) or not math.isfinite(value):
            raise ContractError(f"log: metric {name} must be a finite number")
    validate_notes((*params.flag_runs, *params.justify_runs))


def validate_notes(notes: tuple[RunNote, ...], required: bool = False) -> None:
    """Every flag / justify note has a reason; `required`: a call made only of notes has one."""
    if required and not notes:
        raise ContractError(
            "log: give a status and a description to log the pending run, or only flag / "
            "justify notes (RUN:REASON) for logged runs"
        )
    for note in notes:
        if not note.reason.strip():
            raise ContractError(f"log: run {note.run_id} needs a reason")


def run_timeout(seconds: float) -> float | None:
    return None if seconds <= 0 else float(seconds)


# --- branch names --------------------------------------------------------------------------


def session_branch(name: str, date: str, existing: Iterable[str]) -> str:
    """`autoresearch/<slug>-<YYYYMMDD>`, with `-2`, `-3` … when the name is taken."""
    base = f"{SESSION_BRANCH_PREFIX}{slug(name, 'session')}-{date}"
    taken = set(existing)
    if base not in taken:
        return base
    n = 2
    while f"{base}-{n}" in taken:
        n += 1
    return f"{base}-{n}"


def is_session_branch(branch: str | None) -> bool:
    return branch is not None and branch.startswith(SESSION_BRANCH_PREFIX)
