"""Environment variables autoresearch reads, in one place (flags win over these)."""

from __future__ import annotations

import math
import os
from pathlib import Path

from autoresearch.errors import ContractError

ENV_JOURNAL_TIMEOUT = "AUTORESEARCH_JOURNAL_TIMEOUT"
ENV_FAILPOINTS = "AUTORESEARCH_FAILPOINTS"
ENV_KILL_GRACE = "AUTORESEARCH_KILL_GRACE_SECONDS"
# Seconds to wait for a journal another process holds (AUTORESEARCH_JOURNAL_TIMEOUT overrides).
DEFAULT_BUSY_TIMEOUT = 10.0
DEFAULT_KILL_GRACE = 3.0
ENV_SIGNAL_SETTLE = "AUTORESEARCH_SIGNAL_SETTLE_SECONDS"
DEFAULT_SIGNAL_SETTLE = 2.0


def _float(name: str, default: float) -> float:
    """A lenient read: a value that is not a finite number >= 0 is taken as unset (inf or nan
    would reach a sleep or a timeout as an OverflowError or a wait that never ends)."""
    raw = os.environ.get(name, "").strip()
    try:
        value = float(raw) if raw else default
    except ValueError:
        return default
    return value if math.isfinite(value) and value >= 0 else default


def parse_seconds(name: str, raw: str, default: float) -> float:
    """A strict read of seconds (pure): `raw` empty or blank is `default`; anything but a
    finite number >= 0 is refused with a one-line error naming the variable `name`."""
    text = raw.strip()
    if not text:
        return default
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and value >= 0):
        raise ContractError(f"{name} must be a finite number of seconds >= 0, not {text!r}")
    return value


def journal_timeout() -> float:
    """Seconds to wait for a journal held by another process."""
    return _float(ENV_JOURNAL_TIMEOUT, DEFAULT_BUSY_TIMEOUT)


def kill_grace() -> float:
    """Seconds between SIGTERM and SIGKILL when a process group is stopped. Refused when not
    a finite number >= 0: a wrong grace is not quietly replaced by another (a process given
    less time than its user set may lose the state it saves on SIGTERM)."""
    return parse_seconds(ENV_KILL_GRACE, os.environ.get(ENV_KILL_GRACE, ""), DEFAULT_KILL_GRACE)


def signal_settle() -> float:
    """Seconds a driver waits before it records a child that a kill signal ended (proc.py):
    the child may be the first casualty of a whole-tree kill that reaches the driver next."""
    return _float(ENV_SIGNAL_SETTLE, DEFAULT_SIGNAL_SETTLE)


# `0` writes reports without their plot, silently: matplotlib's import and the drawing cost ~1 s
# of CPU in each process that writes one (the test suite sets it; its plot tests unset it).
ENV_REPORT_PLOT = "AUTORESEARCH_REPORT_PLOT"


def report_plot() -> bool:
    """Whether a report draws its plot (AUTORESEARCH_REPORT_PLOT=0: no)."""
    return os.environ.get(ENV_REPORT_PLOT, "").strip() != "0"


# The user's state directory (XDG Base Directory): the journal's records outside the repository.
ENV_STATE_HOME = "XDG_STATE_HOME"


def state_home() -> Path:
    """$XDG_STATE_HOME, else ~/.local/state (a relative value is ignored, as the spec says)."""
    raw = os.environ.get(ENV_STATE_HOME, "").strip()
    if raw and Path(raw).is_absolute():
        return Path(raw)
    return Path.home() / ".local" / "state"


def failpoints() -> frozenset[str]:
    """Fault-injection points enabled for this process (`name` or `name@N`, comma-separated)."""
    raw = os.environ.get(ENV_FAILPOINTS, "")
    return frozenset(p.strip() for p in raw.split(",") if p.strip())


# The child environment (supervisor.md, experiments.md): set, never read, by autoresearch;
# children.child_env is the one place that assembles it, and the reapers match these names.
ENV_PREFIX = "AUTORESEARCH_"
# Every child of a supervised run: its run and its worktree (the run's child tag).
ENV_RUN_ID = "AUTORESEARCH_RUN_ID"
ENV_WORKTREE = "AUTORESEARCH_WORKTREE"
# Agent sessions and evaluators of a run: the iteration; evaluators and checks: the mission
# folder inside the tree they measure.
ENV_ITERATION = "AUTORESEARCH_ITERATION"
ENV_MISSION_DIR = "AUTORESEARCH_MISSION_DIR"
# Agent sessions: the instructions to read, the artifact to write, the commit to start from,
# and the lane k of `run --lanes K` with K.
ENV_INSTRUCTIONS_FILE = "AUTORESEARCH_INSTRUCTIONS_FILE"
ENV_CANDIDATE_FILE = "AUTORESEARCH_CANDIDATE_FILE"
ENV_BASE_COMMIT = "AUTORESEARCH_BASE_COMMIT"
ENV_LANE = "AUTORESEARCH_LANE"
ENV_LANES = "AUTORESEARCH_LANES"
# Evaluators, checks and harnesses of a sealed run or session: the verified sealed copy.
ENV_SEALED_DIR = "AUTORESEARCH_SEALED_DIR"
# Set (not read) in every experiment-session harness, so that a stale process group left by a
# killed `exp run` is recognised by its environment before it is stopped.
ENV_EXP_RUN_MARKER = "AUTORESEARCH_EXP_RUN"
# With the run marker, names one harness run on this machine (session numbers repeat per repo).
ENV_EXP_DIR = "AUTORESEARCH_EXP_DIR"

# Delegation jobs that may run at once per repository; the rest wait in line.
ENV_WORKER_MAX_JOBS = "AUTORESEARCH_WORKER_MAX_JOBS"
DEFAULT_WORKER_MAX_JOBS = 2
# Set in every job runner (and so in its agent and checks): names the job's processes.
ENV_JOB_ID = "AUTORESEARCH_JOB_ID"
# The first entry of each owner's child tag (children.run_tag, harness_tag, job_tag): a
# process carrying one belongs to that owner, whose own reaper stops it.
OWNER_TAG_NAMES = (ENV_RUN_ID, ENV_EXP_RUN_MARKER, ENV_JOB_ID)


def worker_max_jobs() -> int:
    """How many delegation jobs may run at once (at least 1)."""
    return max(1, int(_float(ENV_WORKER_MAX_JOBS, DEFAULT_WORKER_MAX_JOBS)))


# Where a Ray node keeps its run caches and task folders (the Ray executor, issue 14).
ENV_RAY_NODE_DIR = "AUTORESEARCH_RAY_DIR"


def ray_node_dir() -> Path:
    """The node folder of the Ray executor: AUTORESEARCH_RAY_DIR, else a per-user temp folder."""
    import tempfile  # a Ray node's only: it brings random and shutil to every command's start

    raw = os.environ.get(ENV_RAY_NODE_DIR, "").strip()
    return Path(raw) if raw else Path(tempfile.gettempdir()) / f"autoresearch-ray-{os.getuid()}"


ENV_MLFLOW_TRACKING_URI = "MLFLOW_TRACKING_URI"


def mlflow_tracking_uri() -> str | None:
    """MLflow's own variable, honoured by `--tracker mlflow` when no `--tracker-uri` is given
    (None: the repository's local store)."""
    return os.environ.get(ENV_MLFLOW_TRACKING_URI, "").strip() or None
