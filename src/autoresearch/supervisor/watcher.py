"""The watcher of a run's tasks on a node: a task's processes do not outlive its worker.

A killed Ray worker cannot stop its task's processes itself (they run in their own process
groups), so `remote.scratch` makes sure one watcher runs beside the run's tasks on each node:
a detached process that, every WATCH_SECONDS, stops the processes of every task whose lock
is free (its holder died). One per run and node, not one per task: a watcher is a Python
start-up (tens of milliseconds of CPU), and a task started one beside every session and
every reading, on machines whose cores the tasks share. It holds `watcher.lock` in the run's
node folder while it runs and leaves once no live task has held a lock for IDLE_SECONDS; the
decision to leave is taken under the run's cache lock, under which every task makes its
folder, takes its lock and checks for a watcher, so a task never runs unwatched. It imports
only what it needs (locks, the child tag, the process killer and its kill grace).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from autoresearch.children import run_tag
from autoresearch.locks import FileLock, holder_gone
from autoresearch.paths import NodeRun
from autoresearch.proc import kill_marked
from autoresearch.settings import kill_grace

WATCH_SECONDS = 0.5
# A node without a live task of the run for this long loses its watcher (the next task starts
# one): short, so that a cluster shut down leaves no process of ours behind for long.
IDLE_SECONDS = 3.0
MSG_WATCHING = "watching: a task's worker holds its lock"


def stop_strays(run_id: str, tree: Path) -> None:
    """Every child of a task carries the run's tag with the task's tree in its environment;
    each group found gets the kill grace (AUTORESEARCH_KILL_GRACE_SECONDS) between SIGTERM
    and SIGKILL, as every other stop does: the driver's wait for a dead node's watcher
    (`ray_executor.lost_node_seconds`) is reckoned from the same setting."""
    kill_marked(run_tag(run_id, tree).markers(), kill_grace())


def task_folders(run_root: Path) -> list[Path]:
    tasks = NodeRun(run_root).tasks
    return sorted(p for p in tasks.iterdir() if p.is_dir()) if tasks.is_dir() else []


def watching(run_root: Path) -> bool:
    """Whether a watcher holds the run's watcher lock on this node right now."""
    return holder_gone(NodeRun(run_root).watcher_lock) is False


def watch(run_id: str, run_root: Path, idle_seconds: float = IDLE_SECONDS) -> None:
    """Until no task of the run has run for `idle_seconds`: stop the processes of every task
    whose lock is free. A second watcher of the run leaves at once."""
    node = NodeRun(run_root)
    mine = FileLock(node.watcher_lock)
    if not mine.try_acquire():
        return
    last_live = time.monotonic()
    said = False
    while run_root.is_dir():  # a node folder removed whole (`clean`) has nothing to watch
        if _sweep(run_id, run_root):
            last_live = time.monotonic()
            if not said:  # into watch.log: what a reader (or a test) can wait for
                print(MSG_WATCHING, flush=True)
                said = True
        elif time.monotonic() - last_live >= idle_seconds:
            # under the cache lock a task makes its folder and takes its lock: none can start
            # between this last look and the release
            with FileLock(node.cache_lock):
                if not _sweep(run_id, run_root):
                    mine.release()  # a task that comes now starts a watcher of its own
                    return
        time.sleep(WATCH_SECONDS)


def _sweep(run_id: str, run_root: Path) -> bool:
    """Stop the processes of every task whose lock is free (its holder died); whether a live
    task holds its lock. A folder without a lock file is being made or removed."""
    live = False
    node = NodeRun(run_root)
    for folder in task_folders(run_root):
        task = node.task(folder.name)
        gone = holder_gone(task.lock)
        if gone:
            stop_strays(run_id, task.tree)
        live = live or gone is False
    return live


if __name__ == "__main__":
    if len(sys.argv) in (3, 4):
        idle = float(sys.argv[3]) if len(sys.argv) == 4 else IDLE_SECONDS
        watch(sys.argv[1], Path(sys.argv[2]), idle)
