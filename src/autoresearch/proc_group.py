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
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path

_PROC = "/proc"
_PROC_SELF_STAT = Path(_PROC, "self", "stat")
_STAT_HEAD = 512  # pid, (comm: at most 64 bytes), state, ppid, pgrp: well inside this
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


def running_member(pgid: int) -> str | None:
    """The pid of a non-zombie member of the group, or None when there is none; "" when
    there is a member but no /proc to tell whether it runs (assume it does)."""
    if not group_alive(pgid):
        return None
    if not _PROC_SELF_STAT.exists():
        return ""
    wanted = str(pgid).encode()
    # a straggler is most often a child the leader started first (Bubblewrap's init): looked
    # at before the scan, which alone can tell that there is none
    near = (str(pgid + n) for n in range(1, _NEAR + 1))
    return next((n for n in near if _running_member(n, wanted)), None) or next(
        (n for n in os.listdir(_PROC) if n.isdigit() and _running_member(n, wanted)), None
    )


def _running_member(pid: str, pgid: bytes) -> bool:
    """Whether process `pid` is in group `pgid` and no zombie (False: gone meanwhile)."""
    try:
        fd = os.open(f"{_PROC}/{pid}/stat", os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return False
    try:
        head = os.read(fd, _STAT_HEAD)
    except OSError:
        return False
    finally:
        os.close(fd)
    # the command name may hold spaces and parentheses: the fields start after the last ')'
    fields = head[head.rfind(b")") + 2 :].split(b" ", 3)
    return len(fields) > 3 and fields[2] == pgid and fields[0] != b"Z"


def wait_group_gone(pgid: int, limit: float, cap: float = 0.01) -> bool:
    """Signals are delivered asynchronously: wait up to `limit` seconds until no member of the
    group still runs; True when none does. While one member is seen running, only its own
    stat is read again (an exiting sandbox's init may take a while under load); the whole of
    /proc is scanned again once it stops."""
    end = time.monotonic() + limit
    delays = poll_delays(FIRST_POLL_SECONDS, cap)
    member = running_member(pgid)
    wanted = str(pgid).encode()
    while member is not None:
        if time.monotonic() >= end:
            return False
        time.sleep(next(delays))
        if not member or not _running_member(member, wanted):
            member = running_member(pgid)
    return True
