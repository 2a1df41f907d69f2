"""Trackers: an optional mirror of a run into an experiment tracker (`run --tracker mlflow`;
W&B or trackio would be plugins of the entry point group `autoresearch.trackers`).

The journal stays the truth; a tracker is only told what the journal holds. A mirror is
idempotent by iteration: `Tracker.open` says which iteration the tracker already has, and only
later ones are sent, so a resumed run (or a tracker that failed and is tried again by the next
driver) catches up without a duplicate step. A tracker that fails is named once and left alone
for the rest of the driver's life: the run never stops, waits or loses anything for it.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Protocol
from urllib.parse import urlsplit

from autoresearch.contracts.tune import tried_values
from autoresearch.errors import ContractError
from autoresearch.journal.iteration_records import IterationRecord
from autoresearch.journal.runs import RunRecord
from autoresearch.noise import Interval

# MLflow's own limit on a tag's value is larger; a reason or description is clipped to this
TAG_LIMIT = 500


@dataclass(frozen=True)
class TrackedRun:
    """What a tracker is told of a run when it opens it: the tracker's run is keyed by
    `run_id`, its experiment named by the mission."""

    run_id: str
    mission: str
    params: Mapping[str, str] = field(default_factory=dict)
    tags: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class TrackedIteration:
    """One recorded iteration, one step of the tracker's run (the baseline is step 0)."""

    iteration: int
    metrics: Mapping[str, float]
    tags: Mapping[str, str]


@dataclass(frozen=True)
class TrackedEnd:
    """How the run ended, and the certification at its end when it has one."""

    metrics: Mapping[str, float]
    tags: Mapping[str, str]


class Tracker(Protocol):
    """An experiment tracker's side of the mirror; every call may raise (it is caught)."""

    # where it writes, said once when a run starts (a URI, a project name)
    location: str

    def open(self, run: TrackedRun) -> int:
        """Find or make the tracker's run of `run`; the highest iteration it already holds
        (-1: none)."""

    def log_iteration(self, step: TrackedIteration) -> None: ...

    def log_end(self, end: TrackedEnd) -> None: ...


@dataclass(frozen=True)
class TrackerConfig:
    """What a tracker is built from: the local store folder it defaults to and the URI the
    user gave (`--tracker-uri`), if any."""

    store: Path
    uri: str | None = None


# what an entry point of `autoresearch.trackers` names: a tracker from its config
TrackerFactory = Callable[[TrackerConfig], Tracker]


# the built-in trackers' modules (each with a `make` factory), found without the metadata the
# way policies.BUILT_INS are; pyproject.toml registers them as entry points too
BUILT_INS = {"mlflow": "autoresearch.trackers.mlflow_tracker"}
# `--tracker none`: no tracker, over the ones a run recorded (resume, continue)
NO_TRACKER = "none"
# what a built-in tracker's missing library is answered with
HINT_EXTRA = "pip install '.[trackers]' in a clone of autoresearch"


def installed() -> list[str]:
    """The trackers' names: the built-ins and the plugins' (metadata only, nothing imported)."""
    from autoresearch import plugins  # here: importlib.metadata is for plugins' names only

    return sorted({*BUILT_INS, *plugins.discover(plugins.TRACKERS)})


def check_tracker(name: str) -> TrackerFactory:
    """Tracker `name`'s factory, imported (its library with it); one line (ContractError)
    when it is unknown or cannot be imported."""
    if name in BUILT_INS:
        try:
            module = importlib.import_module(BUILT_INS[name])
        except ImportError as exc:
            raise ContractError(f"tracker {name!r} cannot be used: {exc} ({HINT_EXTRA})") from exc
        factory: TrackerFactory = module.make
        return factory
    from autoresearch import plugins  # a plugin's name: only now is its metadata read

    found = plugins.discover(plugins.TRACKERS).get(name)
    if found is None:
        known = ", ".join(installed())
        raise ContractError(f"unknown tracker {name!r} (installed: {known})")
    loaded = plugins.load(found)
    if not callable(loaded):
        raise ContractError(f"tracker {name!r} ({found.origin}) is not a factory of trackers")
    return loaded


MSG_URI_SECRET = (
    "--tracker-uri holds a password ({shown}): it would be recorded with the run and shown by "
    "status; give the credentials to the tracker in its own variables (MLflow: "
    "MLFLOW_TRACKING_USERNAME and MLFLOW_TRACKING_PASSWORD)"
)


def check_uri(uri: str | None) -> None:
    """Refuse a tracker URI that carries a password (`scheme://user:secret@host`)."""
    if uri is None:
        return
    parts = urlsplit(uri)
    if parts.password:
        shown = uri.replace(parts.password, "***", 1)
        raise ContractError(MSG_URI_SECRET.format(shown=shown))


def load_tracker(name: str, config: TrackerConfig) -> Tracker:
    """Import and build tracker `name` (ContractError when it cannot be imported)."""
    return check_tracker(name)(config)


def tracked_run(run: RunRecord, agent: str | None) -> TrackedRun:
    """The run's parameters: the keep policy, direction, evaluator, agent and, for a mission
    with a `tune:` block, each parameter's range."""
    params = {
        "keep_policy": str(run.keep_policy),
        "direction": str(run.direction),
        "evaluator": run.evaluator.command,
        "baseline_commit": run.baseline_commit or "",
    }
    if agent:
        params["agent"] = agent
    tune = run.sandbox.tune
    for p in tune.parameters if tune is not None else ():
        params[f"tune.{p.name}"] = f"{p.low}..{p.high}"
    tags = {"autoresearch.run_id": run.run_id, "autoresearch.branch": run.branch_name}
    return TrackedRun(run.run_id, run.mission_slug, params, tags)


def tracked_iteration(it: IterationRecord) -> TrackedIteration:
    """An iteration's step: its score and the evaluator's metrics, the values a tune
    candidate tried, whether it was kept; its decision and lineage as tags."""
    metrics: dict[str, float] = {"kept": 1.0 if it.decision == "keep" else 0.0}
    evaluation = it.evaluator
    if evaluation is not None and evaluation.score is not None:
        metrics["score"] = float(evaluation.score)
    for name, value in (evaluation.metrics if evaluation is not None else {}).items():
        metrics[f"metric.{name}"] = float(value)
    for name, value in (tried_values(it.artifact_notes) or {}).items():
        metrics[f"tried.{name}"] = float(value)
    tags = {
        "decision": str(it.decision or ""),
        "reason": clip(it.decision_reason or ""),
        "commit": it.candidate_commit or "",
        "parent": it.base_commit or "",
        "kept_commit": it.kept_commit or "",
        "lane": str(it.lane),
        "description": clip(it.description),
    }
    return TrackedIteration(it.iteration, metrics, tags)


def tracked_end(run: RunRecord, improvement: Interval | None, significant: bool) -> TrackedEnd:
    """The run's end: its status and reason, its best, and the certification's paired
    improvement (better is +) when the loop certified one."""
    metrics: dict[str, float] = {}
    if run.last_kept_score is not None:
        metrics["best_score"] = float(run.last_kept_score)
    tags = {
        "autoresearch.status": str(run.status),
        "autoresearch.stop_reason": clip(run.stop_reason or ""),
        "autoresearch.best_commit": run.last_kept_commit or "",
    }
    if improvement is not None:
        metrics["certified.improvement"] = improvement.mean
        metrics["certified.low"] = improvement.low
        metrics["certified.high"] = improvement.high
        tags["autoresearch.certified_significant"] = str(significant).lower()
    return TrackedEnd(metrics, tags)


def clip(text: str) -> str:
    return text if len(text) <= TAG_LIMIT else text[: TAG_LIMIT - 1] + "…"


# the journal's recorded iterations numbered above a given one
Reader = Callable[[int], Iterable[IterationRecord]]


class Mirror:
    """The run's trackers, each told what it lacks; a failing one is named once (`note`) and
    dropped, and the run goes on."""

    def __init__(self, trackers: Mapping[str, Tracker], note: Callable[[str], None]) -> None:
        self._live = dict(trackers)
        self._note = note
        self._holds: dict[str, int] = {}  # each opened tracker's highest iteration

    def sync(self, run: TrackedRun, iterations: Reader) -> None:
        """Send every tracker the recorded iterations past the ones it holds (`iterations`
        reads those numbered above a given one from the journal)."""
        for name in list(self._live):
            self._guard(name, partial(self._catch_up, name, run, iterations))

    def end(self, run: TrackedRun, end: TrackedEnd, iterations: Reader) -> None:
        """Catch every tracker up, then tell it how the run ended."""
        self.sync(run, iterations)
        for name, tracker in list(self._live.items()):
            self._guard(name, partial(tracker.log_end, end))

    def _catch_up(self, name: str, run: TrackedRun, iterations: Reader) -> None:
        tracker = self._live[name]
        if name not in self._holds:
            self._holds[name] = tracker.open(run)
        for it in iterations(self._holds[name]):
            tracker.log_iteration(tracked_iteration(it))
            self._holds[name] = it.iteration

    def _guard(self, name: str, call: Callable[[], None]) -> None:
        try:
            call()
        except Exception as exc:  # noqa: BLE001 – a tracker's failure is never the run's
            del self._live[name]
            self._note(failure_note(name, exc))


def failure_note(name: str, exc: BaseException) -> str:
    """The one line that says a tracker failed (its building or any call)."""
    detail = " ".join(f"{type(exc).__name__}: {exc}".split())[:300]
    return (
        f"tracker {name} failed and is off for this driver (the run goes on; the next "
        f"resume catches it up): {detail}"
    )
