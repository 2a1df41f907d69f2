"""The job engine: start, get, wait, tail, cancel, list, and apply or discard a kept result.

Every front door (MCP tools, `autoresearch job …`) calls these functions. `start` validates
and sandboxes the request, queues the job in the repository's journal and spawns its runner
(`worker.runner`), then returns at once. Every read first ends jobs whose runner died
(`liveness`), so no job stays "running" forever. Waiting never cancels; cancelling returns
only once the job's processes are gone.
"""

from __future__ import annotations

import os
import secrets
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import cast

from autoresearch import children, git, redact
from autoresearch.agents import require_installed, validate_spec
from autoresearch.clock import utc_now_iso
from autoresearch.errors import ContractError, NotFoundError, ProcessError, RefusedError
from autoresearch.fsutil import private_dir
from autoresearch.journal import jobs as store
from autoresearch.journal.db import Journal, Reader, journal_present, open_journal
from autoresearch.jsonshape import json_shape
from autoresearch.paths import STATE_DIR, RepoPaths, job_paths
from autoresearch.proc import kill_stale_group, spawn_detached
from autoresearch.repo_state import ensure_state_dir
from autoresearch.settings import kill_grace
from autoresearch.states import JobState, ResultState
from autoresearch.worker import evidence as ev
from autoresearch.worker import liveness, reliability, sandbox, slots, view
from autoresearch.worker.confinement import job_sandbox, to_stderr
from autoresearch.worker.model import (
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
    check_permission_mode,
    check_policy_version,
)

POLL_SECONDS = 0.2
LOG_NAMES = ("agent", "checks", "runner")


# --- start -----------------------------------------------------------------------------------


def validate(repo_root: Path, req: JobRequest, warn: Callable[[str], None] = to_stderr) -> JobSpec:
    """The request checked and its paths sandboxed inside the repository; the OS sandbox it
    gets chosen (an `auto` that falls back says so through `warn`)."""
    if not req.prompt.strip():
        raise ContractError("prompt is empty")
    if len(req.prompt) > MAX_PROMPT_CHARS:
        raise ContractError(f"prompt is longer than {MAX_PROMPT_CHARS} characters")
    if not 0 < req.timeout_seconds <= MAX_TIMEOUT_SECONDS:
        raise ContractError(f"timeout_seconds must be in (0, {MAX_TIMEOUT_SECONDS:g}]")
    if len(req.checks) > MAX_CHECKS or len(req.allowed_dirs) > MAX_ALLOWED_DIRS:
        raise ContractError(f"at most {MAX_CHECKS} checks and {MAX_ALLOWED_DIRS} allowed_dirs")
    if req.max_turns is not None and req.max_turns < 1:
        raise ContractError("max_turns must be at least 1")
    if not 0 <= req.revise_passes <= MAX_REVISE_PASSES:
        raise ContractError(f"revise passes must be in 0..{MAX_REVISE_PASSES}")
    if req.escalate_model and not req.revise_passes:
        raise ContractError("escalate_model is the last revise pass's model: it needs auto_revise")
    check_policy_version(req.policy_version)
    check_permission_mode(req.permission_mode)
    _check_checks(req.checks)
    if len(req.stages) > MAX_STAGES:
        raise ContractError(f"at most {MAX_STAGES} stages")
    for number, stage in enumerate(req.stages, start=1):
        if not stage.prompt.strip():
            raise ContractError(f"stage {number}: prompt is empty")
        _check_checks(stage.checks)
    allowed = _allowed_dirs(repo_root, req.allowed_dirs or (str(repo_root),))
    spec = JobSpec(
        prompt=req.prompt,
        repo_root=str(repo_root),
        allowed_dirs=allowed,
        task_kind=req.task_kind,
        agent=_installed(req.agent),
        model=req.model,
        scope=None
        if req.scope is None
        else replace(req.scope, paths=_scope(allowed, req.scope.paths)),
        checks=req.checks,
        isolation=req.isolation,
        max_turns=req.max_turns,
        timeout_seconds=req.timeout_seconds,
        include_diff=req.include_diff,
        semantic_gate=req.semantic_gate,
        revise_passes=req.revise_passes,
        escalate_model=req.escalate_model,
        stages=req.stages,
        reliability_tier=req.reliability_tier or reliability.default_tier(),
        blocking_policy=req.blocking_policy or reliability.default_policy(),
        sandbox=job_sandbox(req.sandbox, warn),
    )
    missing = reliability.missing_gates(spec)
    if missing and spec.blocking_policy is BlockingPolicy.ENFORCE:
        raise ContractError(reliability.refusal(spec, missing))
    return spec


def _check_checks(checks: tuple[CheckSpec, ...]) -> None:
    for check in checks:
        if not check.command.strip() or not 0 < check.timeout_seconds <= MAX_TIMEOUT_SECONDS:
            raise ContractError(f"check {check.label!r}: a command and a timeout in (0, 86400]")


def _allowed_dirs(repo_root: Path, dirs: tuple[str, ...]) -> tuple[str, ...]:
    roots = [sandbox.Root.of(repo_root)]
    state = os.path.join(os.path.realpath(repo_root), STATE_DIR)
    found = []
    for raw in dirs:
        path = sandbox.resolve(raw, roots, base=str(repo_root))
        if sandbox.is_within(os.path.realpath(path), [state]):
            raise ContractError(f"{sandbox.CODE}: {raw!r} is autoresearch's own state folder")
        if not os.path.isdir(path):
            raise ContractError(f"allowed_dirs: {raw!r} is not a directory")
        found.append(path)
    return tuple(found)


def _scope(allowed: tuple[str, ...], paths: tuple[str, ...]) -> tuple[str, ...]:
    if not paths or len(paths) > MAX_SCOPE_PATHS:
        raise ContractError(f"scoped_patch.paths: give 1 to {MAX_SCOPE_PATHS} paths")
    roots = [sandbox.Root.of(d) for d in allowed]
    return tuple(sandbox.resolve(p, roots, base=allowed[0]) for p in paths)


def _installed(agent: str) -> str:
    """The job's agent, refused before the job is queued when its program is not on PATH, as
    `run` refuses it: a job that cannot start its session would only end failed later."""
    spec = validate_spec(agent)
    require_installed(spec)
    return spec


def start(
    repo_root: Path, req: JobRequest, warn: Callable[[str], None] = to_stderr
) -> view.JobView:
    """Queue a job and spawn its runner; returns at once with the job queued (`warn`: where
    the one warning of an `auto` sandbox this machine cannot give goes)."""
    spec = validate(repo_root, req, warn)
    # the detached runner inherits this environment and reads the grace at its first stop:
    # a bad value is refused here, where the user sees it, not in the runner's log
    kill_grace()
    job_id = f"job_{secrets.token_hex(6)}"
    ticket = slots.reserve(job_id, slots.Limits.from_env())  # worker_busy: the queue is full
    ensure_state_dir(RepoPaths(repo_root))
    paths = job_paths(repo_root, job_id)
    private_dir(paths.root)
    with open_journal(repo_root) as journal:
        with journal.tx() as conn:
            store.insert_job(
                conn,
                job_id=job_id,
                spec=spec,
                marker=children.job_tag(job_id).marker,
                workdir=spec.cwd,
            )
        argv = [sys.executable, "-m", "autoresearch.worker.runner", str(repo_root), job_id]
        env = children.job_tag(job_id).env()
        try:
            pid = spawn_detached(argv, repo_root, env, paths.runner_log)
        except (ProcessError, OSError):
            slots.release_ticket(ticket)
            _end(journal, job_id, JobState.FAILED, "could not start the job's runner")
            raise
        with journal.tx() as conn:
            store.update_job(conn, job_id, runner_pid=pid)
        return _load(journal, job_id)


# --- reading ---------------------------------------------------------------------------------


def _job(src: Reader, job_id: str) -> store.JobRecord:
    job = store.get_job(src, job_id)
    if job is None:
        raise NotFoundError(f"autoresearch_job_not_found: {job_id}")
    return job


def _load(journal: Journal, job_id: str) -> view.JobView:
    job = _job(journal, job_id)
    if not job.state.terminal and not liveness.runner_alive(job):
        liveness.stop_processes(journal, job)
        liveness.end_dead(journal, job_id)
        job = _job(journal, job_id)
    return view.build(job)


def get(repo_root: Path, job_id: str) -> view.JobView:
    """The job's state, verdict and evidence."""
    with open_journal(repo_root) as journal:
        return _load(journal, job_id)


def wait(
    repo_root: Path,
    job_id: str,
    timeout_seconds: float,
    sleep: Callable[[float], None] = time.sleep,
    should_stop: Callable[[], bool] | None = None,
) -> view.JobView:
    """Wait until the job ends or `timeout_seconds` pass; a timeout never cancels the job."""
    end = time.monotonic() + max(0.0, timeout_seconds)
    with open_journal(repo_root) as journal:
        while True:
            current = _load(journal, job_id)
            stop = should_stop is not None and should_stop()
            if current.state.terminal or time.monotonic() >= end or stop:
                return current
            sleep(min(POLL_SECONDS, max(0.0, end - time.monotonic())))


def list_jobs(repo_root: Path, limit: int = 20, live_only: bool = False) -> list[view.JobView]:
    """The newest jobs first."""
    if not journal_present(RepoPaths(repo_root).journal):
        return []
    with open_journal(repo_root) as journal:
        liveness.reconcile(journal, repo_root)
        return [view.build(j) for j in store.list_jobs(journal, limit, live_only)]


@dataclass(frozen=True)
class Tail:
    job_id: str
    log: str
    path: str
    text: str

    def to_dict(self) -> dict[str, str]:
        return cast(dict[str, str], json_shape(self))


def tail(repo_root: Path, job_id: str, lines: int = 50, log: str = "agent") -> Tail:
    """The last `lines` lines of the job's agent log, latest check log or runner log."""
    if log not in LOG_NAMES:
        raise ContractError(f"log must be one of {', '.join(LOG_NAMES)}")
    job = get(repo_root, job_id).job
    paths = job_paths(repo_root, job_id)
    path = {"agent": paths.agent_log, "runner": paths.runner_log}.get(log)
    if path is None:
        path = paths.check_log(max(1, len(job.check_runs)))
    text = redact.redact(ev.log_tail(path, lines=lines, chars=64 * 1024))
    return Tail(job_id, log, str(path), text)


# --- cancel ----------------------------------------------------------------------------------


def cancel(repo_root: Path, job_id: str, wait_seconds: float | None = None) -> view.JobView:
    """Ask the job to stop and wait until its processes are gone (the whole process group)."""
    limit = kill_grace() + 10.0 if wait_seconds is None else wait_seconds
    with open_journal(repo_root) as journal:
        with journal.tx() as conn:
            job = _job(conn, job_id)
            if job.state.terminal:
                return view.build(job)
            if job.cancel_requested_at is None:
                store.update_job(conn, job_id, cancel_requested_at=utc_now_iso())
        end = time.monotonic() + limit
        current = _load(journal, job_id)
        while not current.state.terminal and time.monotonic() < end:
            time.sleep(POLL_SECONDS)
            current = _load(journal, job_id)
        if not current.state.terminal:
            # The runner did not stop in time: stop its processes ourselves, then end it.
            _stop_runner(journal, current.job)
            liveness.end_dead(journal, job_id)
        liveness.stop_processes(journal, current.job)
        return _load(journal, job_id)


def _stop_runner(journal: Journal, job: store.JobRecord) -> None:
    if job.runner_pid is not None:
        kill_stale_group(job.runner_pid, job.marker)
    liveness.stop_processes(journal, job)


def _end(journal: Journal, job_id: str, state: JobState, error: str) -> None:
    with journal.tx() as conn:
        store.update_job(conn, job_id, state=state, error=error, finished_at=utc_now_iso())


# --- results of worktree jobs ----------------------------------------------------------------


def apply(repo_root: Path, job_id: str) -> view.JobView:
    """Apply a worktree job's patch to the working tree it was started from; drop the worktree.

    Nothing is committed: the changes land as uncommitted edits for the caller to review. A
    patch that does not apply cleanly changes nothing (git apply is all or nothing).
    """
    with open_journal(repo_root) as journal:
        job = _pending_result(journal, job_id)
        assert job.patch_path is not None
        top = git.toplevel(Path(job.spec.cwd))
        if top is None:
            raise RefusedError(f"the job's directory is no longer in a git repository: {job_id}")
        git.apply_patch(top, Path(job.patch_path))
        _drop_worktree(repo_root, job)
        with journal.tx() as conn:
            store.update_job(conn, job_id, result_state=ResultState.APPLIED)
        return _load(journal, job_id)


def discard(repo_root: Path, job_id: str) -> view.JobView:
    """Remove a job's worktree and branch; the patch stays under .autoresearch/jobs/."""
    with open_journal(repo_root) as journal:
        job = _job(journal, job_id)
        if not job.state.terminal:
            raise RefusedError(f"job {job_id} is still {job.state}: cancel it first")
        if job.worktree_path is None:
            raise RefusedError(f"job {job_id} ran in place: there is no worktree to discard")
        if job.result_state is ResultState.APPLIED:
            raise RefusedError(f"job {job_id} was already applied")
        _drop_worktree(repo_root, job)
        with journal.tx() as conn:
            store.update_job(conn, job_id, result_state=ResultState.DISCARDED)
        return _load(journal, job_id)


def _pending_result(journal: Journal, job_id: str) -> store.JobRecord:
    job = _job(journal, job_id)
    if job.result_state is not ResultState.PENDING or job.patch_path is None:
        why = (
            "ran in place" if job.worktree_path is None else f"has result state {job.result_state}"
        )
        raise RefusedError(f"job {job_id} {why}: nothing to apply")
    return job


def _drop_worktree(repo_root: Path, job: store.JobRecord) -> None:
    if job.worktree_path is not None:
        git.worktree_remove(repo_root, Path(job.worktree_path))
    if job.branch is not None:
        git.delete_branch(repo_root, job.branch)
