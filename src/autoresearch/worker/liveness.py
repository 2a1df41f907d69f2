"""Telling a dead job from a running one, and ending the dead ones for good.

A job is live in the journal while it is queued, running or checking. Its runner records its
process id, and every process of the job carries the job's child tag (`children.job_tag`) in
its environment, so a recycled process id is never mistaken for the runner. A live job whose
runner is gone is ended as `lost` (or `cancelled`, if that was asked for) after what it left
running has been stopped by the one reaper (`children.reap`: the groups the runner
registered, then any process still carrying the tag).
"""

from __future__ import annotations

import time
from datetime import datetime
from pathlib import Path

from autoresearch import children
from autoresearch.clock import utc_now_iso
from autoresearch.journal import jobs as store
from autoresearch.journal.db import Journal
from autoresearch.proc import process_running
from autoresearch.states import JobState

# A runner's id is recorded right after it is spawned; allow that much before calling it lost.
SPAWN_GRACE_SECONDS = 30.0


def runner_alive(job: store.JobRecord, now: float | None = None) -> bool:
    """True while the job's runner process exists (or may still be starting)."""
    created = datetime.fromisoformat(job.created_at).timestamp()
    starting = (now or time.time()) - created < SPAWN_GRACE_SECONDS
    if job.runner_pid is None:
        return starting
    return process_running(job.runner_pid, job.marker, starting=starting)


def stop_processes(journal: Journal, job: store.JobRecord) -> None:
    """Stop whatever of the job still runs: the groups it registered, then anything tagged."""
    children.reap(journal, children.job_tag(job.job_id))


def reconcile(journal: Journal, repo_root: Path) -> list[str]:
    """End every live job whose runner is gone; returns their ids."""
    ended = []
    for job in store.list_jobs(journal, limit=10_000, live_only=True):
        if runner_alive(job):
            continue
        stop_processes(journal, job)
        if end_dead(journal, job.job_id):
            ended.append(job.job_id)
    return ended


def end_dead(journal: Journal, job_id: str) -> bool:
    """Record a dead job's end unless it ended meanwhile; True when this call ended it."""
    with journal.tx() as conn:
        job = store.get_job(conn, job_id)
        if job is None or job.state.terminal:
            return False
        cancelled = job.cancel_requested_at is not None
        state = JobState.CANCELLED if cancelled else JobState.LOST
        pid = "never recorded" if job.runner_pid is None else f"pid {job.runner_pid}"
        store.update_job(
            conn,
            job_id,
            state=state,
            finished_at=utc_now_iso(),
            error=None
            if cancelled
            else f"the job's runner ({pid}) died; its processes are stopped",
        )
    return True
