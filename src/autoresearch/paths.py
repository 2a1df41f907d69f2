"""Every file and folder name autoresearch uses, in one place."""

from __future__ import annotations

import contextlib
import functools
import importlib
import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple

from autoresearch.settings import state_home

STATE_DIR = ".autoresearch"
JOURNAL_FILE = "journal.sqlite3"
# Beside the journal: the identity of the journal that belongs here (a truncated, deleted or
# swapped journal no longer matches it) and the rotating online backups.
JOURNAL_ID_SUFFIX = ".id"
BACKUPS_DIR = "backups"
JOURNAL_BACKUPS_KEPT = 3
# The same records outside the repository, in the user's state directory (XDG), so that
# deleting `.autoresearch/` loses nothing `doctor --restore` cannot bring back:
# <state home>/autoresearch/<repository id>/{journal.sqlite3.id, backups/, repository}.
USER_STATE_APP = "autoresearch"
USER_REPO_NOTE = "repository"
# Beside them: the key of the journal's seals (journal/seals.py).
SEAL_KEY_FILE = "seal.key"
# ...and the note of the journal a whole check last found sound (journal/checked.py).
CHECKED_NOTE_FILE = "journal.checked"
ACTIVE_RUN_FILE = "active-run.json"
RUNS_DIR = "runs"
WORKTREES_DIR = "worktrees"
SESSIONS_DIR = "sessions"
CRASH_DIR = "crash"

MISSION_FILE = "mission.md"
SANDBOX_FILE = "sandbox.md"
RESULTS_FILE = "results.tsv"
RUN_LOG_FILE = "run.log"
REPORT_DIR = "report"
REPORT_FILE = "report.html"
PLOT_FILE = "progress.png"

# Per-run folders the agent back-ends are never granted (RunPaths.scratch).
SCRATCH_DIR = "scratch"
# The local store of `run --tracker mlflow` (trackers/mlflow_tracker.py), one per repository.
TRACKING_DIR = "tracking"
# Parallel lanes (`run --lanes K`): worktrees/lanes/<run>/<k>, runs/<run>/lanes/<k>.
LANES_DIR = "lanes"

# Untracked names that may appear in a worktree without blocking a reset (spec §6).
RUNTIME_FILES = (RESULTS_FILE, RUN_LOG_FILE)
# Directories that are caches, never work: allowed as runtime dirt wherever they appear.
RUNTIME_DIR_NAMES = ("__pycache__",)
# Untracked environment folders at the repo root that are linked into every worktree.
DEFAULT_SHARED_LINKS = (".venv", "node_modules")


# The path records are NamedTuples: every command imports this module (`status`, the hooks),
# and a frozen dataclass compiles its generated methods with exec at import (~0.4 ms each).
# They hold paths only: nothing copies them with `replace`, serialises or compares them.
class RepoPaths(NamedTuple):
    """Paths under one repository's `.autoresearch/` folder."""

    repo_root: Path

    @property
    def state_dir(self) -> Path:
        return self.repo_root / STATE_DIR

    @property
    def journal(self) -> Path:
        return self.state_dir / JOURNAL_FILE

    @property
    def journal_id(self) -> Path:
        return journal_marker(self.journal)

    @property
    def backups(self) -> Path:
        return journal_backup_dir(self.journal)

    @property
    def active_run(self) -> Path:
        return self.state_dir / ACTIVE_RUN_FILE

    @property
    def worktrees(self) -> Path:
        return self.state_dir / WORKTREES_DIR

    @property
    def tracking(self) -> Path:
        return self.state_dir / TRACKING_DIR

    def run(self, run_id: str) -> RunPaths:
        return RunPaths(self.state_dir / RUNS_DIR / run_id)

    def worktree(self, run_id: str) -> Path:
        return self.worktrees / run_id

    def lane_worktree(self, run_id: str, lane: int) -> Path:
        """Lane `lane` of `run --lanes K` (a run id always holds a `-`: never `lanes`)."""
        return self.worktrees / LANES_DIR / run_id / str(lane)

    def session_dir(self, session_id: int) -> Path:
        return self.state_dir / SESSIONS_DIR / str(session_id)


def journal_marker(journal: Path) -> Path:
    """The file that names the journal that belongs beside it (`journal.sqlite3.id`)."""
    return journal.with_name(journal.name + JOURNAL_ID_SUFFIX)


def journal_backup_dir(journal: Path) -> Path:
    return journal.parent / BACKUPS_DIR


def journal_backup(journal: Path, generation: int) -> Path:
    """Backup `generation` of the journal: 1 is the newest."""
    return journal_backup_dir(journal) / f"{journal.stem}.{generation}{journal.suffix}"


def repository_id(repo_root: Path) -> str:
    """A stable name for a repository: its folder's name, then a digest of its absolute path
    and of the folder's inode, so a repository cloned again at the same path (a new folder)
    starts afresh while deleting `.autoresearch/` keeps the name."""
    root = repo_root.absolute()
    try:
        info = os.stat(root)
        inode = f"{info.st_dev}:{info.st_ino}"
    except OSError:
        inode = "?"
    digest = _sha256_hex(f"{root}\0{inode}".encode())[:16]
    return f"{slug(root.name, 'repo')}-{digest}"


def _sha256_hex(data: bytes) -> str:
    return str(_sha256()(data).hexdigest())


@functools.cache
def _sha256() -> Callable[[bytes], Any]:
    """SHA-256 by CPython's own module when it has one: hashlib's import loads OpenSSL, ~2.5 ms
    of every command that opens a journal (`status`, a hook), which asks for one digest. Found
    once: a module that is not there is searched for on sys.path at every import (an opening
    of the journal asks three times)."""
    for name in ("_sha2", "_sha256"):  # its name since 3.12, and before
        with contextlib.suppress(ImportError):
            found: Callable[[bytes], Any] = importlib.import_module(name).sha256
            return found
    import hashlib

    return hashlib.sha256


def user_records(repo_root: Path) -> Path:
    """The folder of a repository's records in the user's state directory."""
    return state_home() / USER_STATE_APP / repository_id(repo_root)


def user_journal(journal: Path, repo_root: Path) -> Path:
    """Where the journal's outside records are named as if it lived there: its marker and
    `backups/` beside this path, so the rules for the repository's copies apply to them."""
    return user_records(repo_root) / journal.name


class RunPaths(NamedTuple):
    """Files of one supervised run (spec §5).

    `lane` (1..K, `run --lanes K`) gives a lane its own handoff files and logs under
    `lanes/<k>/`; the ledger, manifest, scratch folder and driver lock stay the run's.
    """

    root: Path
    lane: int = 0

    @property
    def lane_root(self) -> Path:
        return self.root / LANES_DIR / str(self.lane) if self.lane else self.root

    @property
    def manifest(self) -> Path:
        return self.root / "manifest.json"

    @property
    def candidate(self) -> Path:
        return self.lane_root / "candidate.json"

    @property
    def ledger(self) -> Path:
        return self.root / "iteration-ledger.json"

    @property
    def latest_evaluator(self) -> Path:
        return self.root / "latest-evaluator-result.json"

    @property
    def instructions(self) -> Path:
        return self.lane_root / "instructions.md"

    @property
    def logs(self) -> Path:
        return self.lane_root / "logs"

    @property
    def report(self) -> Path:
        """The default folder of `autoresearch report` (report.html, progress.png)."""
        return self.root / REPORT_DIR

    @property
    def driver_lock(self) -> Path:
        return self.root / "driver.lock"

    def evaluator_log(self, iteration: int, attempt: int = 1) -> Path:
        suffix = "" if attempt == 1 else f"-{attempt}"
        return self.logs / f"iteration-{iteration:04d}-evaluator{suffix}.log"

    def checks_log(self, iteration: int) -> Path:
        return self.logs / f"iteration-{iteration:04d}-checks.log"

    def screen_log(self, iteration: int, side: str) -> Path:
        """evaluator.screen's output on `side` (candidate, reference) at `iteration`."""
        return self.logs / f"iteration-{iteration:04d}-screen-{side}.log"

    @property
    def scratch(self) -> Path:
        """The run's private scratch folder, `.autoresearch/scratch/<run>`: outside both the
        worktree and the run folder, because agent back-ends are granted write access to the
        run folder (for candidate.json) and what measures a candidate must be out of reach."""
        return self.root.parent.parent / SCRATCH_DIR / self.root.name

    @property
    def sealed(self) -> Path:
        """The sealed copy of the harness, made at prepare, out of the agent's reach."""
        return self.scratch / "sealed"

    @property
    def certification(self) -> Path:
        """The last `certify` report (readings stay in the journal), out of the agent's reach."""
        return self.scratch / "certification.json"

    @property
    def incumbent(self) -> Path:
        """Where the kept commit is checked out to be re-measured, out of the agent's reach."""
        return self.scratch / "incumbent"

    def agent_log(self, iteration: int) -> Path:
        return self.logs / f"iteration-{iteration:04d}-agent.log"

    def patch(self, iteration: int, label: str) -> Path:
        return self.logs / f"iteration-{iteration:04d}-{label}.patch"

    # A lane's sessions are numbered by the lane (iterations are numbered when decided).
    def session_log(self, session: int) -> Path:
        return self.logs / f"session-{session:04d}-agent.log"

    def session_patch(self, session: int, label: str) -> Path:
        return self.logs / f"session-{session:04d}-{label}.patch"

    def cut_patch(self, number: int) -> Path:
        """The work of a session a crash cut off: the single loop's by its iteration, a lane's
        by its session (docs/supervisor.md:
        `lanes/<k>/logs/session-NNNN-unfinished-session.patch`)."""
        if self.lane:
            return self.session_patch(number, "unfinished-session")
        return self.patch(number, "interrupted")

    def reading_log(self, session: int, attempt: int) -> Path:
        """A lane candidate's first reading, taken before the journal numbers its iteration."""
        return self.logs / f"session-{session:04d}-evaluator-{attempt}.log"


# --- a Ray node's folder (settings.ray_node_dir(): the far end of `--executor ray`) ----------


class NodeTask(NamedTuple):
    """A task's folder on a node: its lock (held while the task runs), its checkout (`tree`)
    of the run's cache and its private files."""

    folder: Path
    cache: Path

    @property
    def lock(self) -> Path:
        return self.folder / "task.lock"

    @property
    def tree(self) -> Path:
        return self.folder / "tree"

    @property
    def files(self) -> Path:
        return self.folder / "run"

    @property
    def sealed(self) -> Path:
        return self.folder / "sealed"


class NodeRun(NamedTuple):
    """A run's folder on a node (`<node dir>/<run-id>`): the bare cache the code's bundles
    grow, the locks the run's tasks and its watcher share, and one folder per task. The
    node side (supervisor/remote.py) and the watcher (supervisor/watcher.py) both read it."""

    root: Path

    @property
    def cache(self) -> Path:
        return self.root / "cache.git"

    @property
    def cache_lock(self) -> Path:
        return self.root / "cache.lock"

    @property
    def watcher_lock(self) -> Path:
        return self.root / "watcher.lock"

    @property
    def watch_log(self) -> Path:
        return self.root / "watch.log"

    @property
    def tasks(self) -> Path:
        return self.root / "tasks"

    def task(self, task_id: str) -> NodeTask:
        return NodeTask(self.tasks / task_id, self.cache)


def node_run(node_dir: Path, run_id: str) -> NodeRun:
    return NodeRun(node_dir / run_id)


# --- experiment sessions (experiments.md) ---------------------------------------------------

HARNESS_FILE = "autoresearch.sh"
CHECKS_FILE = "autoresearch.checks.sh"
# The fixed measuring instruments of a session: never cleaned away, never part of an experiment.
HARNESS_FILES = (HARNESS_FILE, CHECKS_FILE)
SESSION_BRANCH_PREFIX = "autoresearch/"
SESSION_WORKTREE_PREFIX = "exp-"
SESSION_LOCK_FILE = "session.lock"


class SessionPaths(NamedTuple):
    """Files of one experiment session, under `.autoresearch/sessions/<session_id>/`."""

    root: Path

    @property
    def lock(self) -> Path:
        return self.root / SESSION_LOCK_FILE

    @property
    def report(self) -> Path:
        return self.root / REPORT_DIR

    def run_log(self, number: int) -> Path:
        return self.root / f"run-{number:04d}.log"

    def checks_log(self, number: int) -> Path:
        return self.root / f"run-{number:04d}-checks.log"

    def patch(self, number: int) -> Path:
        return self.root / f"run-{number:04d}-discarded.patch"

    def repeat_log(self, number: int, repeat: int) -> Path:
        """The log of the `repeat`-th reading of a run measured several times (the first is
        run_log)."""
        return self.run_log(number) if repeat <= 1 else self.root / f"run-{number:04d}-{repeat}.log"

    @property
    def sealed(self) -> Path:
        """The sealed copy of the session's harness (`exp init --seal`)."""
        return self.root / "sealed"

    @property
    def sealed_digests(self) -> Path:
        return self.root / "sealed.json"


def session_paths(repo_root: Path, session_id: int) -> SessionPaths:
    return SessionPaths(RepoPaths(repo_root).session_dir(session_id))


def session_worktree(repo_root: Path, branch: str) -> Path:
    """Where a session that asked for its own worktree checks its branch out."""
    name = branch.removeprefix(SESSION_BRANCH_PREFIX).replace("/", "-")
    return RepoPaths(repo_root).worktrees / f"{SESSION_WORKTREE_PREFIX}{name}"


# --- delegation jobs (worker.md) ------------------------------------------------------------

JOBS_DIR = "jobs"
JOB_BRANCH_PREFIX = "autoresearch-job/"
JOB_WORKTREE_PREFIX = "job-"


class JobPaths(NamedTuple):
    """Artifacts of one job, under `.autoresearch/jobs/<job_id>/` (they survive reboots)."""

    root: Path

    @property
    def prompt(self) -> Path:
        return self.root / "prompt.md"

    @property
    def candidate(self) -> Path:
        return self.root / "candidate.json"

    @property
    def agent_log(self) -> Path:
        return self.root / "agent.log"

    @property
    def runner_log(self) -> Path:
        return self.root / "runner.log"

    @property
    def changes_patch(self) -> Path:
        return self.root / "changes.patch"

    def check_log(self, index: int) -> Path:
        return self.root / f"check-{index:02d}.log"


def job_paths(repo_root: Path, job_id: str) -> JobPaths:
    return JobPaths(RepoPaths(repo_root).state_dir / JOBS_DIR / job_id)


def job_worktree(repo_root: Path, job_id: str) -> Path:
    return RepoPaths(repo_root).worktrees / f"{JOB_WORKTREE_PREFIX}{job_id}"


SLUG_MAX = 48


def slug(text: str, fallback: str, limit: int = SLUG_MAX) -> str:
    """The one slug rule, for mission slugs and session branches, exactly as supervisor.md §1
    states it (a contract: users match on run ids): lowercased, every run outside `[a-z0-9]`
    becomes one `-` (so `Café` → `caf`), no `-` at either end, at most 48 characters,
    `fallback` when nothing is left. `limit`: another length, for a word that is no run id
    (a review branch's topic).

    A slug names a run or a branch only when it is made: run ids, branches and worktree paths
    are read back from the journal, so a change of this rule never renames an existing run.
    """
    out = re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")
    return out[:limit].rstrip("-") or fallback
