"""Machine-wide coordination of jobs (worker.md "Machine-wide"): every MCP server and CLI of
the user shares heavy job slots and a bounded queue, through flock'd files in one state
directory (`$AUTORESEARCH_WORKER_COORDINATION_DIR`, else `$XDG_STATE_HOME/autoresearch/worker`,
else `~/.local/state/autoresearch/worker`).

* A heavy slot is `heavy-N.lock`, held by a job's runner for as long as it runs (the kernel
  frees it when the runner dies: a crash never leaks a slot).
* The queue: `start` writes a ticket `queue/<job_id>` under the queue mutex, refusing with the
  retryable `worker_busy` error when `queue_max` tickets are live already; the runner holds its
  ticket's lock while it waits and removes it once it has its slots. A ticket nobody holds and
  older than `TICKET_GRACE_SECONDS` (its runner never started, or died) is stale and removed.
* The per-server cap (`running_max`) is counted by the server itself (mcp/job_tools.py).
"""

from __future__ import annotations

import os
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from autoresearch.errors import RefusedError
from autoresearch.fsutil import private_dir
from autoresearch.locks import FileLock, holder_gone

ENV_DIR = "AUTORESEARCH_WORKER_COORDINATION_DIR"
ENV_HEAVY_MAX = "AUTORESEARCH_WORKER_GLOBAL_HEAVY_MAX"
ENV_QUEUE_MAX = "AUTORESEARCH_WORKER_GLOBAL_QUEUE_MAX"
ENV_ACQUIRE_TIMEOUT = "AUTORESEARCH_WORKER_ACQUIRE_TIMEOUT_SECONDS"
ENV_RUNNING_MAX = "AUTORESEARCH_WORKER_MAX_RUNNING_JOBS"
BUSY = "worker_busy"
# A runner takes its ticket's lock within moments of being spawned; until then (and a little
# longer, for a loaded machine) an unheld ticket still counts.
TICKET_GRACE_SECONDS = 60.0


class WorkerBusy(RefusedError):
    """Retryable: the machine's queue (or this server's running-job cap) is full right now."""


@dataclass(frozen=True)
class Limits:
    heavy_max: int = 2  # jobs running at once on the machine
    queue_max: int = 8  # jobs waiting for a heavy slot on the machine
    acquire_timeout: float = 600.0  # seconds a runner waits for a slot before it gives up
    running_max: int = 4  # live jobs one server may have started

    @classmethod
    def from_env(cls, env: Mapping[str, str] = os.environ) -> Limits:
        def number(key: str, default: float, low: float, high: float) -> float:
            try:
                value = float(env[key]) if env.get(key) else default
            except ValueError:
                value = default
            return min(high, max(low, value))

        d = cls()
        return cls(
            heavy_max=int(number(ENV_HEAVY_MAX, d.heavy_max, 1, 100)),
            queue_max=int(number(ENV_QUEUE_MAX, d.queue_max, 0, 1000)),
            acquire_timeout=number(ENV_ACQUIRE_TIMEOUT, d.acquire_timeout, 0.1, 86400),
            running_max=int(number(ENV_RUNNING_MAX, d.running_max, 1, 100)),
        )


def coordination_dir(env: Mapping[str, str] = os.environ) -> Path:
    if env.get(ENV_DIR):
        return Path(env[ENV_DIR])
    base = env.get("XDG_STATE_HOME") or str(Path(env.get("HOME", "~")) / ".local" / "state")
    return Path(base).expanduser() / "autoresearch" / "worker"


def busy(what: str) -> WorkerBusy:
    return WorkerBusy(f"{BUSY} (retryable): {what}; retry later")


# --- the queue -------------------------------------------------------------------------------


def _tickets(root: Path) -> Path:
    return root / "queue"


def live_tickets(root: Path, now: float) -> int:
    """Tickets of jobs still waiting; stale ones are removed on the way."""
    count = 0
    folder = _tickets(root)
    for ticket in sorted(folder.iterdir()) if folder.is_dir() else ():
        try:
            young = now - ticket.stat().st_mtime < TICKET_GRACE_SECONDS
        except FileNotFoundError:
            continue  # its runner just took its slot
        gone = holder_gone(ticket)  # never creates it: a ticket its runner removed stays so
        if gone is None:
            continue
        if young or not gone:
            count += 1
        else:
            ticket.unlink(missing_ok=True)
    return count


def reserve(job_id: str, limits: Limits, root: Path | None = None) -> Path:
    """A queue ticket for `job_id`, or `worker_busy` when the machine's queue is full."""
    root = coordination_dir() if root is None else root
    private_dir(_tickets(root))
    with FileLock(root / "queue.lock"):
        waiting = live_tickets(root, time.time())
        if waiting >= limits.queue_max:
            raise busy(
                f"{waiting} jobs already wait for one of the machine's {limits.heavy_max} job "
                f"slots ({ENV_QUEUE_MAX}={limits.queue_max})"
            )
        ticket = _tickets(root) / job_id
        ticket.touch(mode=0o600)
        return ticket


def release_ticket(ticket: Path, lock: FileLock | None = None) -> None:
    """Remove the ticket (its job has its slots, or never will), then let its lock go."""
    ticket.unlink(missing_ok=True)
    if lock is not None:
        lock.release()


# --- heavy slots -----------------------------------------------------------------------------


def try_heavy(limits: Limits, root: Path | None = None) -> FileLock | None:
    """A free machine-wide job slot, taken (the caller holds it while its job runs)."""
    root = coordination_dir() if root is None else root
    for number in range(limits.heavy_max):
        lock = FileLock(root / f"heavy-{number}.lock")
        if lock.try_acquire():
            return lock
    return None
