"""The watcher of one remote task on a node: a task's processes do not outlive its worker.

A killed Ray worker cannot stop its task's processes itself (they run in their own process
groups), so `remote.scratch` starts this module as a detached process beside each task. It
imports only what it needs (locks, the child tag, the process killer): it starts with every
task, on machines whose cores the tasks share.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from autoresearch.children import run_tag
from autoresearch.locks import holder_gone
from autoresearch.proc import kill_marked

WATCH_SECONDS = 0.5
MSG_WATCHING = "watching: the task's worker holds its lock"


def stop_strays(run_id: str, tree: Path) -> None:
    """Every child of a task carries the run's tag with the task's tree in its environment."""
    kill_marked(run_tag(run_id, tree).markers())


def watch(run_id: str, folder: Path) -> None:
    """Until the task's folder is gone: when its lock is free, stop its processes."""
    lock = folder / "task.lock"
    said = False
    while True:
        state = holder_gone(lock)
        if state is None:
            return
        if state:
            stop_strays(run_id, folder / "tree")
            return
        if not said:  # into the task's watch.log: what a reader (or a test) can wait for
            print(MSG_WATCHING, flush=True)
            said = True
        time.sleep(WATCH_SECONDS)


if __name__ == "__main__":
    if len(sys.argv) == 3:
        watch(sys.argv[1], Path(sys.argv[2]))
