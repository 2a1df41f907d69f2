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
* Gateway calls (analyze, review, the semantic gate, quality branches) hold a `lite-N.lock`
  slot each; waiters hold a `lite-queue-N.lock` place, so the lite queue is bounded too.
* The per-server cap (`running_max`) is counted by the server itself (mcp/job_tools.py).
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
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
ENV_LITE_MAX = "AUTORESEARCH_WORKER_GLOBAL_LITE_MAX"
ENV_LITE_QUEUE_MAX = "AUTORESEARCH_WORKER_GLOBAL_LITE_QUEUE_MAX"
LITE_POLL_SECONDS = 0.05
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
    lite_max: int = 2  # gateway calls at once on the machine (analyze, review, semantic gate)
    lite_queue_max: int = 12  # gateway calls waiting for one

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
            lite_max=int(number(ENV_LITE_MAX, d.lite_max, 1, 100)),
            lite_queue_max=int(number(ENV_LITE_QUEUE_MAX, d.lite_queue_max, 0, 1000)),
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


# --- slots -----------------------------------------------------------------------------------


def _first_free(root: Path, kind: str, count: int) -> FileLock | None:
    for number in range(count):
        lock = FileLock(root / f"{kind}-{number}.lock")
        if lock.try_acquire():
            return lock
    return None


def try_heavy(limits: Limits, root: Path | None = None) -> FileLock | None:
    """A free machine-wide job slot, taken (the caller holds it while its job runs)."""
    return _first_free(coordination_dir() if root is None else root, "heavy", limits.heavy_max)


@contextmanager
def lite_slot(limits: Limits, root: Path | None = None) -> Iterator[None]:
    """Hold one of the machine's gateway-call slots for the block. A caller that finds none
    free waits holding a place in the lite queue (a lock too: a dead waiter frees its place);
    with the queue full, or past the acquire timeout, it gets the retryable `worker_busy`."""
    root = coordination_dir() if root is None else root
    slot = _first_free(root, "lite", limits.lite_max)
    if slot is None:
        slot = _wait_lite(root, limits)
    try:
        yield
    finally:
        slot.release()


def _wait_lite(root: Path, limits: Limits) -> FileLock:
    place = _first_free(root, "lite-queue", limits.lite_queue_max)
    if place is None:
        raise busy(
            f"{limits.lite_queue_max} gateway calls already wait for one of the machine's "
            f"{limits.lite_max} slots ({ENV_LITE_QUEUE_MAX}={limits.lite_queue_max})"
        )
    give_up = time.monotonic() + limits.acquire_timeout
    try:
        while (slot := _first_free(root, "lite", limits.lite_max)) is None:
            if time.monotonic() >= give_up:
                raise busy(f"no gateway slot came free in {limits.acquire_timeout:g} s")
            time.sleep(LITE_POLL_SECONDS)
        return slot
    finally:
        place.release()
