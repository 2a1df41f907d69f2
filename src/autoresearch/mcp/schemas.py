"""The typed shapes of the MCP tools: one input model and one output model per result.

An output model is derived from the core dataclass it publishes (`mirrors`): the fields are
defined once, in the core, in its order and with its types (enums as their strings, tuples as
lists); the MCP side adds only what the model reads (descriptions) and the typed shape of a
part the core carries as a JSON object (a `Ref`, `Progress`, `Checks` …), checked key for key
(`extra="forbid"`) against the core's `to_dict()` by the MCP tests. Free-form parts (ASI, the
supervisor's manifest and iterations) stay open objects.
"""

from __future__ import annotations

import dataclasses
import enum
import types
import typing
from collections.abc import Callable, Mapping
from typing import Any, TypeVar, Union

from pydantic import BaseModel, ConfigDict, Field, create_model

from autoresearch.api import (
    InitResult,
    LogReport,
    NotesResult,
    RunReport,
    SessionRecord,
    StatusReport,
    StopOutcome,
    confidence,
    json_keys,
    logger,
    status,
    summary,
)


class _Shape(BaseModel):
    model_config = ConfigDict(extra="forbid")


_M = TypeVar("_M", bound=BaseModel)
_MIRRORED: dict[type, type[BaseModel]] = {}


def _json_type(hint: Any) -> Any:
    """A core field's type as the JSON shows it: an enum as its string, a tuple as a list, a
    mirrored dataclass as its model, a NamedTuple record (its `to_dict`) as an object."""
    args = typing.get_args(hint)
    if typing.get_origin(hint) in (Union, types.UnionType):
        out = _json_type(args[0])
        for arg in args[1:]:
            out = out | _json_type(arg)
        return out
    if typing.get_origin(hint) is tuple and len(args) == 2 and args[1] is Ellipsis:
        return list[_json_type(args[0])]  # type: ignore[misc]
    if isinstance(hint, type) and issubclass(hint, enum.StrEnum):
        return str
    if isinstance(hint, type) and issubclass(hint, tuple) and hasattr(hint, "_fields"):
        return _record_model(hint)
    return _MIRRORED.get(hint, hint)


def _record_model(record: type[tuple[object, ...]]) -> type[BaseModel]:
    """The object a NamedTuple record's `to_dict` writes (jsonshape: its fields as they are),
    as the model pydantic made of it while it was a dataclass: to pydantic a NamedTuple is an
    array. `status` imports such records (noise.Interval), where a frozen dataclass would cost
    its start-up more. One whose JSON differs from its fields (`json_fields`) is mirrored."""
    if record not in _MIRRORED:
        if hasattr(record, "json_fields"):
            raise TypeError(f"{record.__name__}'s JSON is not its fields: mirror it (`mirrors`)")
        hints = typing.get_type_hints(record)
        defaults: dict[str, Any] = getattr(record, "_field_defaults", {})
        fields: dict[str, Any] = {
            name: (_json_type(hints[name]), defaults.get(name, ...))
            for name in getattr(record, "_fields", ())
        }
        _MIRRORED[record] = create_model(
            record.__name__,
            __base__=_Shape,
            __doc__=record.__doc__,
            __module__=record.__module__,
            **fields,
        )
    return _MIRRORED[record]


def mirrors(
    core: type,
    *,
    required: bool = False,
    fields: Mapping[str, Any] | None = None,
    shapes: Mapping[str, Any] | None = None,
) -> Callable[[type[_M]], type[_M]]:
    """Make the decorated (empty) model the fields of the core record `core` (a dataclass, or
    a NamedTuple that `status` builds), in its order, with its types and defaults (`required`:
    every key is always present, no defaults). The class gives the name and the description;
    `fields` what the MCP side adds to a field (a `Field` with its description, and its
    default when the core has none), `shapes` the typed shape of a field the core carries as
    a JSON object. A field the core's JSON renames (`jsonshape.json_field`) is published
    under its JSON key, a hidden one not at all."""
    hints = typing.get_type_hints(core)
    given, typed = dict(fields or {}), dict(shapes or {})
    unknown = (set(given) | set(typed)) - set(_defaults(core))
    if unknown:
        raise TypeError(f"{core.__name__} has no field {sorted(unknown)}")
    keys = _json_keys(core, typed)

    def derive(shape: type[_M]) -> type[_M]:
        derived: dict[str, Any] = {}
        defaults = _defaults(core)
        for name, key in keys:
            default = defaults[name]
            info = given.get(name, Field(... if required else default))
            derived[key] = (typed.get(name, _json_type(hints[name])), info)
        model: type[BaseModel] = create_model(
            shape.__name__,
            __base__=shape.__bases__,
            __doc__=shape.__doc__,
            __module__=shape.__module__,
            **derived,
        )
        _MIRRORED[core] = model
        return typing.cast(type[_M], model)

    return derive


def _defaults(core: type) -> dict[str, Any]:
    """Each field of the core record in its order, with its default (`...`: none, or made by
    a factory): a dataclass's, or a NamedTuple's (a record `status` builds, run_summary.py)."""
    named: tuple[str, ...] | None = getattr(core, "_fields", None)
    if named is not None and issubclass(core, tuple):
        given: dict[str, Any] = getattr(core, "_field_defaults", {})
        return {name: given.get(name, ...) for name in named}
    return {
        f.name: ... if f.default is dataclasses.MISSING else f.default
        for f in dataclasses.fields(core)
    }


def _json_keys(core: type, typed: Mapping[str, Any]) -> list[tuple[str, str]]:
    """Each field the core's JSON writes and its key; a converted one's type is not the field's,
    so `shapes` must give it."""
    keys = json_keys(core)
    untyped = [name for name, _, converted in keys if converted and name not in typed]
    if untyped:
        raise TypeError(f"{core.__name__} converts {untyped} for its JSON: give their shapes")
    return [(name, key) for name, key, _ in keys]


class RunNoteInput(_Shape):
    """A reason attached to an earlier logged run (flag_runs / justify_runs)."""

    run_id: int = Field(ge=1, description="The run number (#N in experiment_status).")
    reason: str = Field(min_length=1, max_length=500, description="Why, in one line.")


# --- pieces shared by the experiment results -------------------------------------------------


# said of every pooled Δ %: a figure an agent must not take for the drift-free one
_POOLED_DELTA = (
    "Change against the baseline, %, of readings taken at other moments than the baseline's "
    "(drift not excluded); `paired`, when set, is the change from paired readings."
)


class Ref(_Shape):
    """A run a report refers to (baseline or best kept)."""

    run: int
    metric: float
    commit: str | None = None
    delta_pct: float | None = Field(default=None, description=_POOLED_DELTA)
    paired: dict[str, float] | None = Field(
        default=None,
        description="The best kept run's change against the baseline (better is +) from "
        "readings paired with the kept commit's (exp run --repeats N): mean, low, high, n "
        "(pairs), level; null when some keep was not paired.",
    )


class Progress(_Shape):
    """Logged runs of the segment against max_iterations."""

    logged: int
    max: int | None
    reached: bool


@mirrors(confidence.Significance)
class Significance(_Shape):
    """best − baseline (better is +) with a 95 % interval from the spread of repeated runs."""


# mirrored (as pydantic derived it from the dataclass before) so that its intervals, now
# NamedTuples, are objects in its schema as they are in its JSON (`_record_model`)
@mirrors(confidence.LevelDrift)
class LevelDrift(_Shape):
    __doc__ = confidence.LevelDrift.__doc__


@mirrors(confidence.Confidence)
class Confidence(_Shape):
    """|best − baseline| / MAD with its label, or null and the reason why not; significance."""


class Checks(_Shape):
    """The autoresearch.checks.sh result of a run."""

    status: str = Field(description="pass | fail | timeout | error")
    exit_code: int | None
    duration_seconds: float
    log_path: str
    tail: str


@mirrors(
    logger.GitEffect,
    fields={
        "action": Field(description="committed | nothing to commit | reverted | nothing to revert"),
        "patch_path": Field(description="The saved diff of a discarded run."),
    },
)
class GitEffect(_Shape):
    """What log_experiment did to the session directory."""


@mirrors(SessionRecord, required=True)  # json_shape: every key, tuples as lists
class Session(_Shape):
    """The session's stored fields."""


@mirrors(
    status.HistoryLine,
    fields={
        "delta_pct": Field(description=_POOLED_DELTA),
        "measured": Field(
            default=None, description="The parsed value, when the logged metric differs from it."
        ),
    },
)
class HistoryEntry(_Shape):
    """One logged run as experiment_status shows it."""


@mirrors(status.UnjustifiedKeep)
class Unjustified(_Shape):
    pass


@mirrors(
    status.PendingRun, fields={"state": Field(description="running | interrupted | completed")}
)
class Pending(_Shape):
    """The unlogged run: running, interrupted, or completed and waiting for log_experiment."""


# --- the experiment results ------------------------------------------------------------------


@mirrors(
    InitResult,
    fields={
        "directory": Field(description="Where the session's files live (edit here)."),
        "setup_files": Field(description="The files the setup commit took."),
    },
)
class InitOutput(_Shape):
    """What init_experiment did: a new session or an update of the active one."""


@mirrors(
    RunReport,
    fields={
        "status": Field(description="pass | fail | timeout | error (the benchmark)"),
        "metric": Field(description="The parsed primary metric: use it in log."),
        "delta_pct": Field(description=_POOLED_DELTA),
        "metrics": Field(description="Parsed secondary metrics."),
        "readings": Field(
            default_factory=list,
            description="With repeats > 1: every reading (metric: their mean).",
        ),
        "suggested_status": Field(description="What the numbers point to; you decide."),
    },
    shapes={
        "checks": Checks | None,
        "baseline": Ref | None,
        "best": Ref | None,
        "progress": Progress,
    },
)
class RunOutput(_Shape):
    """What one benchmark run measured; log it next with log_experiment."""


@mirrors(
    LogReport,
    fields={
        "delta_pct": Field(description=_POOLED_DELTA),
        "measured": Field(
            default=None, description="The parsed value, when the logged metric differs from it."
        ),
    },
    shapes={"baseline": Ref | None, "best": Ref | None, "progress": Progress},
)
class LogOutput(_Shape):
    """The verdict as recorded, with the segment's numbers after it."""


@mirrors(NotesResult)
class NotesOutput(_Shape):
    pass


@mirrors(
    status.HookStatus,
    fields={
        "failure_streak": Field(description="Latest results that failed in a row."),
        "failure_streak_limit": Field(description="Auto-resume stops above this streak."),
        "notice": Field(description="Why auto-resume last stopped at a limit."),
    },
)
class HookCounts(_Shape):
    """The auto-resume counters of the host hooks (`exp hooks install`) in this segment."""


@mirrors(
    StatusReport,
    fields={
        "plateau": Field(
            default=None,
            description="Set when none of the segment's last 20 logged runs was kept: the "
            "obvious direction is exhausted, try a different kind of change.",
        ),
    },
    shapes={"baseline": Ref | None, "best": Ref | None, "progress": Progress},
)
class SessionStatus(_Shape):
    """The context an agent needs at the start of every turn."""


class StatusOutput(SessionStatus):
    """The context an agent needs at the start of every turn (and, asked for, what next)."""

    # Claude Code and codex hand the model the structured content, not the text: the resume
    # message must be here to reach it.
    resume_message: str | None = Field(
        default=None,
        description="With resume=true: the status text followed by what to do next.",
    )


# --- supervised runs -------------------------------------------------------------------------


_INTERVAL = dict[str, float] | None  # Interval.to_dict: mean, low, high, n, level


@mirrors(
    summary.RunSummary,
    fields={
        "best_interval": Field(
            default=None,
            description="The best's 95 % interval: mean, low, high, n (readings), level.",
        ),
        "baseline_interval": Field(
            default=None,
            description="The baseline's 95 % interval: mean, low, high, n (readings), level.",
        ),
        "certified_improvement": Field(
            default=None,
            description="final − baseline (better is +) from certify's paired rounds, with its "
            "95 % interval; None: the run's result was not certified.",
        ),
        "drift": Field(
            default_factory=list,
            description="The drift the run saw: a commit read at two moments (label, then, now, "
            "since, significant, text).",
        ),
        "best_note": Field(
            default=None,
            description="Why the best reads worse than an earlier level of the run, when it does.",
        ),
        "improvement": Field(
            default=None,
            description="best − baseline as every view reports it (better is +): change, "
            "percent (of the baseline), interval (95 %) and paired – true: certify's paired "
            "change (drift cancels), false: the difference of the pooled means (readings taken "
            "at other moments). None: no baseline or no best yet.",
        ),
        "stop_note": Field(description="The operator's reason given with `stop`."),
        "cleaned_at": Field(
            default=None, description="When `autoresearch clean` removed its worktree and branch."
        ),
        "resume_command": Field(
            default=None, description="How to continue a running run (None once it ended)."
        ),
        "paused": Field(
            default=None,
            description="Why a running run is paused (a plateau under `--on-plateau ask`) and "
            "how to go on; None: not paused.",
        ),
    },
    shapes={
        "best_interval": _INTERVAL,
        "baseline_interval": _INTERVAL,
        "certified_improvement": _INTERVAL,
        "drift": list[dict[str, Any]],
        "improvement": dict[str, Any] | None,
    },
)
class RunHeadline(_Shape):
    """A run's headline numbers, as supervisor/summary.RunSummary has them."""


class RunSummary(RunHeadline):
    """One supervised run with its headline numbers."""

    driver_alive: bool = Field(
        default=False, description="Whether a process is driving the run right now."
    )


class RunListOutput(_Shape):
    repo_root: str
    runs: list[RunSummary]


class RunDetailsOutput(RunSummary):
    """One supervised run with its manifest and (the last of) its iterations."""

    manifest: dict[str, Any]
    iterations: list[dict[str, Any]] = Field(
        description="The most recent iterations, oldest first; `evaluation` says what each "
        "evaluation came to (pass, fail, error, or `not run: <reason>` for a discard decided "
        "without a reading, such as `not run: replay conflict`)."
    )
    iterations_total: int
    report_file: str | None = Field(
        default=None, description="The run's report.html, once `autoresearch report` wrote it."
    )
    lanes: list[dict[str, Any]] = Field(
        default_factory=list,
        description="Each lane of `run --lanes K` (empty without lanes): state (idle, agent, "
        "waiting, evaluating, stopped), detail, last_decision, last_iteration, last_reason, "
        "last_evaluation, sessions, iterations, keeps, cost_usd, tokens.",
    )
    archive: list[dict[str, Any]] = Field(
        default_factory=list,
        description="A frontier run's archive of elites, best first (empty for greedy): "
        "commit, score, parent (the elite it was kept against; null: the root), lineage, "
        "entered (the iteration that kept it; 0: the root), tries (sessions started from "
        "it). Each iteration of a frontier run also has `parent`: the elite it started from.",
    )
    agents: list[dict[str, object]] = Field(
        default_factory=list,
        description="A portfolio run's agents (`run --agent A --agent B`; empty with one "
        "agent), as given: agent, sessions, keeps, cost_usd and tokens (null: not reported "
        "by every session), seconds.",
    )


@mirrors(
    StopOutcome,
    fields={
        "status": Field(description="The run's status after the call."),
        "stop_reason": Field(description="Always `operator stop`."),
        "note": Field(description="The reason text given with the stop, if any."),
        "requested": Field(
            description="True when a live driver was asked to stop the run after its current step."
        ),
    },
)
class StopOutput(_Shape):
    pass
