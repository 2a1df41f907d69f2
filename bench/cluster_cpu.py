"""CPU seconds spent by this process's descendants, read from /proc, for the lanes bench.

A Ray cluster the bench starts (gcs, raylets, Ray's helpers, the workers and their git and
evaluator children) and an `autoresearch run` driver are all descendants of the bench. A
process's CPU is its own (utime + stime) and, once its parent has waited for it, part of
that parent's cutime + cstime: a git or an evaluator shows in its Ray worker's, the agent's
and the evaluator's in the driver's. Not every parent waits (a raylet's workers leave
without adding to it), so a sampler follows each process by its pid and start time and
keeps the last CPU it saw of one that left: a window's CPU is, for every process seen, its
CPU at the window's end (or when last seen) less that at its start (0 if it was not there
yet). The bench's own children times are left out: a process it waits for was followed
already (an orphan of a cluster shut down, reparented to the bench, would count twice). A
process that lived less than a sampling period under a parent that does not wait is missed;
the bench makes itself a child subreaper so that a detached one (the node watcher
`remote.start_watcher` starts) stays in the tree, and waits for those (`reap_orphans`). CPU
is grouped by what each process is (`label`), a waited-for child's under "children of <its
parent's label>".
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import threading
import time
from collections import defaultdict
from pathlib import Path

PR_SET_CHILD_SUBREAPER = 36
TICK = os.sysconf("SC_CLK_TCK")


def become_subreaper() -> None:
    """Orphaned descendants come to this process (Linux), which waits for them."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)


def _stat(pid: int) -> tuple[int, str, int, list[int]] | None:
    """(parent pid, state, start time, [utime, stime, cutime, cstime]; in ticks) of `pid`."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    rest = text[text.rindex(")") + 2 :].split()
    return int(rest[1]), rest[0], int(rest[19]), [int(x) for x in rest[11:15]]


def label(pid: int) -> str:
    """What a process is, short: a Ray worker's title, a Python program's script or
    module, else its program's name."""
    try:
        argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return "?"
    words = [a.decode("utf-8", "replace") for a in argv if a]
    if not words:
        return "?"
    if words[0].startswith("ray::"):  # a worker's title: ray::IDLE, ray::NodeWorker.agent
        return words[0].split()[0].split(".")[0]
    name = os.path.basename(words[0])
    if name.startswith("python"):
        for i, word in enumerate(words[1:], 1):
            if word == "-m" and i + 1 < len(words):
                return f"python -m {words[i + 1]}"
            if word.endswith(".py"):
                return f"python {os.path.basename(word)}"
    return name


def descendants(root: int) -> dict[int, int]:
    """Every living descendant of `root`: pid -> parent pid."""
    parents = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            found = _stat(int(entry))
            if found is not None:
                parents[int(entry)] = found[0]
    tree: dict[int, int] = {}
    frontier = [root]
    while frontier:
        parent = frontier.pop()
        for pid, ppid in parents.items():
            if ppid == parent and pid not in tree:
                tree[pid] = ppid
                frontier.append(pid)
    return tree


def reap_orphans() -> None:
    """Wait for this process's ended children: orphans it took in as a subreaper. Called
    between runs only, while no `subprocess.run` of ours waits for its own child."""
    me = os.getpid()
    for pid, ppid in descendants(me).items():
        found = _stat(pid)
        if ppid == me and found is not None and found[1] == "Z":
            with contextlib.suppress(ChildProcessError):
                os.waitpid(pid, os.WNOHANG)


Split = dict[str, float]  # CPU (seconds, or ms) by what spent it
# a process by (pid, start time in ticks) -> (label, own CPU s, waited-for children's CPU s)
Sample = dict[tuple[int, int], tuple[str, float, float]]


def snapshot() -> Sample:
    """The CPU of every living descendant of this process now."""
    out: Sample = {}
    for pid in descendants(os.getpid()):
        found = _stat(pid)
        if found is not None:
            _, _, started, (utime, stime, cutime, cstime) = found
            out[(pid, started)] = (label(pid), (utime + stime) / TICK, (cutime + cstime) / TICK)
    return out


def spent(samples: list[Sample]) -> Split:
    """CPU seconds by label from the first sample to the last, of every process seen in any:
    one that left counts until it was last seen, one that came from 0."""
    first, seen = samples[0], dict(samples[0])
    for sample in samples[1:]:
        for key, (name, own, children) in sample.items():
            if name == "?" and key in seen:  # a zombie has no command line: keep its name
                name = seen[key][0]
            seen[key] = (name, own, children)
    out: Split = defaultdict(float)
    for key, (name, own, children) in seen.items():
        _, own_before, children_before = first.get(key, (name, 0.0, 0.0))
        out[name] += own - own_before
        out[f"children of {name}"] += children - children_before
    return {name: value for name, value in out.items() if value}


class Sampler:
    """Snapshots every `every` seconds in a thread while a run goes on, so that the CPU of a
    window known only afterwards (first session to last decision) can be read: `between`."""

    def __init__(self, every: float = 0.25) -> None:
        self._every = every
        self._samples: list[tuple[float, Sample]] = []
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)

    def __enter__(self) -> Sampler:
        reap_orphans()
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._done.set()
        self._thread.join()

    def _loop(self) -> None:
        while True:
            self._samples.append((time.time(), snapshot()))
            if self._done.wait(self._every):
                self._samples.append((time.time(), snapshot()))
                return

    def between(self, start: float, end: float) -> Split:
        """CPU seconds by label from the last sample at or before `start` to the first at
        or after `end` (the window grows by at most `every` at each side)."""
        times = [t for t, _ in self._samples]
        first = max([i for i, t in enumerate(times) if t <= start], default=0)
        last = min([i for i, t in enumerate(times) if t >= end], default=len(times) - 1)
        return spent([sample for _, sample in self._samples[first : last + 1]])
