"""A supervised child's process group: whether a member still runs, and waiting until none does.

Every evaluation ends here: when its leader has exited, the group is checked for stragglers
(a sandboxed one always leaves Bubblewrap's own init, exiting or a zombie, for a moment), so
the check is on the step's hot path (issue 36). Linux names a group's members nowhere but in
`/proc/<pid>/stat`; the scan reads each with raw `os` calls (pathlib's objects and text
decoding made it ~2 ms of CPU a scan), and a wait polls first after a millisecond, then less
and less often, instead of sleeping a fixed 10-20 ms for a straggler that is gone in one.

`group_running` is a scan, good for waiting, never for deciding that a group is gone: a
member that forks and exits in a loop can be missed by every scan, and one whose main thread
exited while others run reads as a zombie. Whether a group still has a member is the kernel's
answer (`group_alive`); proc.py kills every group that has one.

A sandboxed child's group (`boxed`) is Bubblewrap's: the leader and the pid namespace it made,
whose init (pid 1 inside) lingers as a zombie for a second or two after the box exits, so its
group stays alive and every wait used to end in a whole scan of /proc (~0.6 ms of CPU and a
few ms of wall time each, twice an evaluation: issue 36). The kernel kills and reaps every
process of a namespace before its init becomes a zombie, and nothing in the box can run
outside it: once the leader is gone and that init is a zombie, the group runs nothing, which
a look at a few pids tells (`box_emptied`).
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path

_PROC = "/proc"
_PROC_SELF_STAT = Path(_PROC, "self", "stat")
_STAT_HEAD = 512  # pid, (comm: at most 64 bytes), state, ppid, pgrp: well inside this
_STATUS_HEAD = 4096  # the status lines up to NSpid (a long Groups line included)
FIRST_POLL_SECONDS = 0.001
_NEAR = 4  # pids after the leader's looked at first


def poll_delays(first: float, cap: float) -> Iterator[float]:
    """The pauses of a wait (pure): `first`, then each twice the one before, up to `cap`."""
    delay = first
    while True:
        yield min(delay, cap)
        delay = min(delay * 2, cap)


def kill_group(pgid: int, sig: int) -> bool:
    """Send `sig` to the group; False when it has no member (or is not ours to signal)."""
    try:
        os.killpg(pgid, sig)
    except (ProcessLookupError, PermissionError):
        return False
    return True


def group_alive(pgid: int) -> bool:
    """The group has a member, zombies included."""
    return kill_group(pgid, 0)  # signal 0: a check, no signal is sent


def group_running(pgid: int) -> bool:
    """True while a non-zombie member of the group exists (zombies await a reaper only)."""
    return running_member(pgid) is not None


def running_member(pgid: int, boxed: bool = False) -> str | None:
    """The pid of a non-zombie member of the group, or None when there is none; "" when
    there is a member but no /proc to tell whether it runs (assume it does). `boxed`: the
    group is a sandbox's, Bubblewrap its leader (`box_emptied` may spare the scan)."""
    if not group_alive(pgid):
        return None
    if not _PROC_SELF_STAT.exists():
        return ""
    wanted = str(pgid).encode()
    # a straggler is most often a child the leader started first (Bubblewrap's init): looked
    # at before the scan, which alone can tell that there is none
    near = (str(pgid + n) for n in range(1, _NEAR + 1))
    found = next((n for n in near if _running_member(n, wanted)), None)
    if found is not None or (boxed and box_emptied(pgid)):
        return found
    return next((n for n in os.listdir(_PROC) if n.isdigit() and _running_member(n, wanted)), None)


def box_emptied(pgid: int) -> bool:
    """Whether the group of a sandbox whose leader is Bubblewrap runs nothing: the leader is
    gone (or a zombie) and the init of the pid namespace it made – one of the pids just after
    the leader's, pid 1 inside – is a zombie. False: not known (a whole scan tells)."""
    wanted = str(pgid).encode()
    if _running_member(str(pgid), wanted):
        return False
    near = (str(pgid + n) for n in range(1, _NEAR + 1))
    return any(_ended_namespace_init(pid, wanted) for pid in near)


def _ended_namespace_init(pid: str, pgid: bytes) -> bool:
    """Whether `pid` is a zombie of group `pgid` that was the init of a pid namespace one
    level below ours (its last NSpid is 1): the kernel emptied that namespace before."""
    if _member_state(pid, pgid) != b"Z":
        return False
    try:
        with open(f"{_PROC}/{pid}/status", "rb") as status:
            head = status.read(_STATUS_HEAD)
    except OSError:
        return False
    ids = _namespace_pids(head)
    return ids is not None and len(ids) == _own_namespace_depth() + 1 and ids[-1] == b"1"


def _namespace_pids(status: bytes) -> list[bytes] | None:
    """The NSpid line of a /proc status (its pid in each namespace, ours first), or None."""
    for line in status.splitlines():
        if line.startswith(b"NSpid:"):
            return line.split()[1:]
    return None


_depth: list[int] = []  # how many pid namespaces /proc shows this process in, read once


def _own_namespace_depth() -> int:
    if not _depth:
        try:
            with open(f"{_PROC}/self/status", "rb") as status:
                ids = _namespace_pids(status.read(_STATUS_HEAD))
        except OSError:
            ids = None
        _depth.append(len(ids) if ids else -1)  # -1: unknown, never matches
    return _depth[0]


def _running_member(pid: str, pgid: bytes) -> bool:
    """Whether process `pid` is in group `pgid` and no zombie (False: gone meanwhile)."""
    state = _member_state(pid, pgid)
    return state is not None and state != b"Z"


def _member_state(pid: str, pgid: bytes) -> bytes | None:
    """The state letter of process `pid` when it is in group `pgid`, else None (or gone)."""
    try:
        fd = os.open(f"{_PROC}/{pid}/stat", os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        head = os.read(fd, _STAT_HEAD)
    except OSError:
        return None
    finally:
        os.close(fd)
    # the command name may hold spaces and parentheses: the fields start after the last ')'
    fields = head[head.rfind(b")") + 2 :].split(b" ", 3)
    return fields[0] if len(fields) > 3 and fields[2] == pgid else None


def wait_group_gone(pgid: int, limit: float, cap: float = 0.01, boxed: bool = False) -> bool:
    """Signals are delivered asynchronously: wait up to `limit` seconds until no member of the
    group still runs; True when none does. While one member is seen running, only its own
    stat is read again (an exiting sandbox's init may take a while under load); the whole of
    /proc is scanned again once it stops (`boxed`: unless the sandbox is seen empty)."""
    end = time.monotonic() + limit
    delays = poll_delays(FIRST_POLL_SECONDS, cap)
    member = running_member(pgid, boxed)
    wanted = str(pgid).encode()
    while member is not None:
        if time.monotonic() >= end:
            return False
        time.sleep(next(delays))
        if not member or not _running_member(member, wanted):
            member = running_member(pgid, boxed)
    return True
