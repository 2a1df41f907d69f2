"""The one door to child processes.

Two shapes:
* `run_capture` – a short helper command (git): arguments, not a shell; output captured whole.
* `run_supervised` – an evaluator, harness or agent: its own process group, stdin closed or fed
  from a file, a timeout that ends the whole group (SIGTERM, then SIGKILL after a grace period),
  the full output streamed to a log file, bounded tails in memory, optional streaming consumers
  (METRIC scanners, JSONL event parsers) and a cancel hook polled while it runs.

Invariant: when `run_supervised` returns, no process of the child's group is left running and
memory use never depended on how much the child printed. A driver that made itself a child
subreaper (`become_subreaper`, Linux) also ends what escaped the group with `setsid`: such an
orphan is reparented to the driver instead of init, and is stopped and reaped when the child
that started it has ended.

A child ended by a kill signal nobody here sent (SIGKILL, SIGTERM, SIGINT, SIGHUP) may be the
first casualty of a whole-tree kill – a machine, container or cgroup going down, `kill -9` of
every process of a run – that reaches the driver a moment later. Its end is reported only after
`settle_seconds`: a driver killed in the same sweep has recorded nothing (its caller measures or
runs again on resume), one asked to stop meanwhile reports it cancelled, and one that lives on
(an OOM kill of the child alone) reports it as it ended.
"""

from __future__ import annotations

import contextlib
import os
import selectors
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Protocol

from autoresearch.clock import utc_now_iso
from autoresearch.errors import ProcessError
from autoresearch.fsutil import child_umask, private_fd, private_open
from autoresearch.proc_group import (
    FIRST_POLL_SECONDS,
    group_alive,
    group_running,
    kill_group,
    poll_delays,
    wait_group_gone,
)
from autoresearch.settings import ENV_PREFIX, OWNER_TAG_NAMES, kill_grace, signal_settle
from autoresearch.streams import Tail

READ_CHUNK = 65536
POLL_SECONDS = 0.1
DEFAULT_TAIL_BYTES = 64 * 1024
DRAIN_SECONDS = 1.0
# How long a SIGKILLed group is waited for to go. Not a grace: nothing can delay SIGKILL, the
# wait only sees the kernel finish. The grace before it is the user's (settings.kill_grace).
KILLED_GONE_SECONDS = 2.0
# The signals that end every process of a tree at once (see the module's docstring).
SWEEP_SIGNALS = frozenset({signal.SIGKILL, signal.SIGTERM, signal.SIGINT, signal.SIGHUP})


_PR_SET_CHILD_SUBREAPER = 36
_subreaper = False
_live_lock = threading.Lock()
_live: set[int] = set()  # supervised children running now, in any thread: not orphans
_PROC = "/proc"
_PROC_SELF_ENVIRON = Path(_PROC, "self", "environ")
_PROC_SELF_STAT = Path(_PROC, "self", "stat")
_PROC_READ = 65536  # an environment is a few kB: one read, and one more to see its end
_PF_KTHREAD = 0x00200000  # /proc/PID/stat's flags: a kernel thread (its environment is empty)


def become_subreaper() -> bool:
    """Make this process the reaper of its orphaned descendants (prctl
    PR_SET_CHILD_SUBREAPER); True when it is one. Only a driver that owns every process it
    spawns in another session should be: its supervised children."""
    global _subreaper
    if _subreaper:
        return True
    if not sys.platform.startswith("linux"):
        return False
    import ctypes  # here: only a driver needs it, and every command imports this module

    try:
        libc = ctypes.CDLL(None, use_errno=True)
        _subreaper = bool(libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0)
    except (OSError, AttributeError):
        return False
    return _subreaper


class StreamConsumer(Protocol):
    """Receives every byte a child writes on one stream, in order."""

    def feed(self, data: bytes) -> None: ...


@dataclass(frozen=True)
class Captured:
    """Result of a short helper command."""

    returncode: int
    stdout: bytes
    stderr: bytes


def run_capture(
    argv: Sequence[str],
    cwd: Path | None = None,
    env: Mapping[str, str] | None = None,
    stdin: bytes | None = None,
    timeout: float | None = 300.0,
    umask: int | None = None,
) -> Captured:
    """Run a helper command to completion and return its whole output.

    `umask` defaults to the private one in the state folder (`fsutil.child_umask`)."""
    try:
        done = subprocess.run(
            list(argv),
            cwd=cwd,
            env=dict(env) if env is not None else None,
            input=stdin,
            stdin=None if stdin is not None else subprocess.DEVNULL,
            capture_output=True,
            timeout=timeout,
            check=False,
            umask=child_umask(cwd) if umask is None else umask,
        )
    except FileNotFoundError as exc:
        # subprocess raises the same error for a missing cwd as for a missing program: name
        # the one that is missing (a wrong --repo is no missing git).
        if cwd is not None and str(exc.filename) == str(cwd):
            raise ProcessError(f"working directory does not exist: {cwd}") from exc
        raise ProcessError(f"command not found: {argv[0]}") from exc
    except subprocess.TimeoutExpired as exc:
        raise ProcessError(f"command timed out after {timeout}s: {' '.join(argv)}") from exc
    return Captured(done.returncode, done.stdout, done.stderr)


class Confinement(Protocol):
    """An OS sandbox (`confine.Box`): the command line that runs `argv` inside it."""

    def wrap(self, argv: Sequence[str], cwd: Path, env: Mapping[str, str]) -> list[str]: ...

    def exit_code(self, status: int | None) -> int | None: ...


@dataclass
class SupervisedSpec:
    """How to run one supervised child process."""

    argv: Sequence[str]
    cwd: Path
    env: Mapping[str, str]
    log_path: Path
    timeout: float | None = None
    stdin_path: Path | None = None
    tail_bytes: int = DEFAULT_TAIL_BYTES
    grace_seconds: float = field(default_factory=kill_grace)  # read before the spawn
    stdout_consumers: Sequence[StreamConsumer] = ()
    stderr_consumers: Sequence[StreamConsumer] = ()
    should_cancel: Callable[[], bool] | None = None
    on_spawn: Callable[[int], None] | None = None
    settle_seconds: float = field(default_factory=signal_settle)
    box: Confinement | None = None  # the OS sandbox the child runs in (None: as the user)


@dataclass
class SupervisedOutcome:
    """What happened to a supervised child."""

    started_at: str
    duration_ms: int
    exit_code: int | None
    timed_out: bool = False
    cancelled: bool = False
    spawn_error: str | None = None
    stdout: str = ""
    stderr: str = ""
    stdout_bytes: int = 0
    stderr_bytes: int = 0
    log_path: Path | None = None
    extra: dict[str, object] = field(default_factory=dict)


def run_supervised(spec: SupervisedSpec) -> SupervisedOutcome:
    """Run a child in its own process group until it exits, times out or is cancelled."""
    started_at = utc_now_iso()
    t0 = time.monotonic()
    # Unbuffered: a tail of the log (job_tail, a person with `tail -f`) sees output at once.
    with private_open(spec.log_path, "wb", buffering=0) as log:
        try:
            with _live_lock:  # registered before any orphan scan can see it
                proc = _spawn(spec)
                _live.add(proc.pid)
        except OSError as exc:
            message = f"could not start {spec.argv[0]}: {exc.strerror or exc}"
            log.write(f"[autoresearch] {message}\n".encode())
            return SupervisedOutcome(
                started_at, _ms_since(t0), None, spawn_error=message, log_path=spec.log_path
            )
        try:
            try:
                if spec.on_spawn is not None:
                    spec.on_spawn(proc.pid)
            except BaseException:
                # A child nobody supervises must not keep running.
                _terminate_group(proc, spec.grace_seconds)
                proc.wait()
                raise
            return _supervise(spec, proc, log, started_at, t0)
        finally:
            with _live_lock:
                _live.discard(proc.pid)
            if _subreaper:
                reap_orphans(_tag_markers(spec.env))


def _spawn(spec: SupervisedSpec) -> subprocess.Popen[bytes]:
    stdin: IO[bytes] | int = subprocess.DEVNULL
    if spec.stdin_path is not None:
        stdin = spec.stdin_path.open("rb")
    argv = list(spec.argv)
    if spec.box is not None:  # the one place a supervised child is confined
        argv = spec.box.wrap(argv, spec.cwd, spec.env)
    try:
        return subprocess.Popen(
            argv,
            cwd=spec.cwd,
            env=dict(spec.env),
            stdin=stdin,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
            umask=child_umask(spec.cwd),
        )
    finally:
        if not isinstance(stdin, int):
            stdin.close()


def _supervise(
    spec: SupervisedSpec,
    proc: subprocess.Popen[bytes],
    log: IO[bytes],
    started_at: str,
    t0: float,
) -> SupervisedOutcome:
    tails = {"stdout": Tail(spec.tail_bytes), "stderr": Tail(spec.tail_bytes)}
    consumers: dict[str, list[StreamConsumer]] = {
        "stdout": [tails["stdout"], *spec.stdout_consumers],
        "stderr": [tails["stderr"], *spec.stderr_consumers],
    }
    assert proc.stdout is not None and proc.stderr is not None
    sel = selectors.DefaultSelector()
    sel.register(proc.stdout, selectors.EVENT_READ, "stdout")
    sel.register(proc.stderr, selectors.EVENT_READ, "stderr")
    deadline = None if spec.timeout is None else t0 + spec.timeout
    timed_out = cancelled = False
    # the kernel said the group has no member left (killpg 0: ESRCH): nothing left to kill
    group_ended = False
    boxed = spec.box is not None  # Bubblewrap leads the group: proc_group.box_emptied
    drain_until: float | None = None
    try:
        while True:
            _wait_for_output_or_exit(sel, proc, log, consumers)
            now = time.monotonic()
            if drain_until is not None:
                if not sel.get_map() or now >= drain_until:
                    break
            elif proc.poll() is not None:
                # Stragglers in the leader's group must not outlive it or hold our pipes.
                if group_alive(proc.pid):
                    _terminate_group(proc, spec.grace_seconds, leader_done=True, boxed=boxed)
                # only the kernel's answer ends the group: a /proc scan can miss a member that
                # forks as it is read, or one whose main thread exited while others run
                group_ended = not group_alive(proc.pid)
                if not sel.get_map():
                    break
                drain_until = now + DRAIN_SECONDS
            elif deadline is not None and now >= deadline:
                timed_out = True
                _terminate_group(proc, spec.grace_seconds)
                drain_until = time.monotonic() + DRAIN_SECONDS
            elif spec.should_cancel is not None and spec.should_cancel():
                cancelled = True
                _terminate_group(proc, spec.grace_seconds)
                drain_until = time.monotonic() + DRAIN_SECONDS
    finally:
        sel.close()
        proc.stdout.close()
        proc.stderr.close()
        if proc.poll() is None:
            _terminate_group(proc, spec.grace_seconds)
        proc.wait()
        if not group_ended and kill_group(proc.pid, signal.SIGKILL):
            wait_group_gone(proc.pid, 2.0, boxed=boxed)
    status = proc.returncode if spec.box is None else spec.box.exit_code(proc.returncode)
    if not (timed_out or cancelled) and killed_by_sweep(status):
        cancelled = _settle(spec)
    for name in ("stdout", "stderr"):
        for consumer in consumers[name]:
            close = getattr(consumer, "close", None)
            if callable(close):
                close()
    return SupervisedOutcome(
        started_at=started_at,
        duration_ms=_ms_since(t0),
        exit_code=status,
        timed_out=timed_out,
        cancelled=cancelled,
        stdout=tails["stdout"].text(),
        stderr=tails["stderr"].text(),
        stdout_bytes=tails["stdout"].total,
        stderr_bytes=tails["stderr"].total,
        log_path=spec.log_path,
    )


def killed_by_sweep(returncode: int | None) -> bool:
    """Whether a child's exit status is a death by one of SWEEP_SIGNALS (pure)."""
    return returncode is not None and returncode < 0 and -returncode in SWEEP_SIGNALS


def _settle(spec: SupervisedSpec) -> bool:
    """Wait out a possible whole-tree kill before reporting a child it may have ended; True
    when the caller was asked to stop meanwhile (the child's end is then no verdict)."""
    deadline = time.monotonic() + spec.settle_seconds
    while True:
        if spec.should_cancel is not None and spec.should_cancel():
            return True
        left = deadline - time.monotonic()
        if left <= 0:
            return False
        time.sleep(min(POLL_SECONDS, left))


def _wait_for_output_or_exit(
    sel: selectors.BaseSelector,
    proc: subprocess.Popen[bytes],
    log: IO[bytes],
    consumers: dict[str, list[StreamConsumer]],
) -> None:
    """Block up to POLL_SECONDS for output, or – once both pipes are closed – for the leader
    to exit (a child may close its output and keep running)."""
    if sel.get_map():
        _pump(sel, log, consumers, POLL_SECONDS)
        return
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(timeout=POLL_SECONDS)


def _pump(
    sel: selectors.BaseSelector,
    log: IO[bytes],
    consumers: dict[str, list[StreamConsumer]],
    wait: float,
) -> None:
    for key, _ in sel.select(timeout=wait):
        stream = key.fileobj
        data = os.read(stream.fileno(), READ_CHUNK)  # type: ignore[union-attr]
        if not data:
            sel.unregister(stream)
            continue
        log.write(data)
        for consumer in consumers[key.data]:
            consumer.feed(data)


def _terminate_group(
    proc: subprocess.Popen[bytes], grace: float, leader_done: bool = False, boxed: bool = False
) -> None:
    """SIGTERM the whole group, give it `grace` seconds, then SIGKILL what is left."""
    if not kill_group(proc.pid, signal.SIGTERM):
        return
    end = time.monotonic() + grace
    delays = poll_delays(FIRST_POLL_SECONDS, 0.02)
    while not leader_done and proc.poll() is None and time.monotonic() < end:
        time.sleep(next(delays))
    left = end - time.monotonic()
    if left > 0 and wait_group_gone(proc.pid, left, cap=0.02, boxed=boxed):
        return
    kill_group(proc.pid, signal.SIGKILL)
    wait_group_gone(proc.pid, KILLED_GONE_SECONDS, boxed=boxed)


def stop_grace(asked: float | None) -> float:
    """The seconds a stop gives a group between SIGTERM and SIGKILL: `asked`, else the user's
    kill grace (AUTORESEARCH_KILL_GRACE_SECONDS). Every stop of a group the tool started asks
    here, so a process that saves its state on SIGTERM gets the same time whichever stop
    comes: a timeout, resume's reaping of a crashed driver's strays, a job stop, an abandoned
    experiment run, a Ray node's reaper. Only the second Ctrl-C asks for 0."""
    return kill_grace() if asked is None else asked


def kill_stale_group(pgid: int, marker: str | None = None, grace: float | None = None) -> bool:
    """Kill a process group left behind by a crashed driver; True when something was killed.

    When `/proc` is available the group leader's environment must contain `marker`, so that a
    recycled process id never leads us to kill an unrelated program. `grace`: see stop_grace.
    """
    if not group_running(pgid):
        return False
    if marker is not None and not _leader_has_marker(pgid, marker):
        return False
    _stop_group(pgid, stop_grace(grace))
    return True


def _stop_group(pgid: int, grace: float) -> None:
    """SIGTERM, `grace` seconds to exit, then SIGKILL for whatever is left of a group."""
    kill_group(pgid, signal.SIGTERM)
    wait_group_gone(pgid, grace)
    if kill_group(pgid, signal.SIGKILL):
        wait_group_gone(pgid, KILLED_GONE_SECONDS)


def _leader_has_marker(pgid: int, marker: str) -> bool:
    environ = Path(f"/proc/{pgid}/environ")
    if not Path("/proc/self/environ").exists():
        return True
    try:
        return marker.encode() in environ.read_bytes().split(b"\0")
    except OSError:
        # The leader may be gone while members of its group live on; their environments
        # carry the same marker, so look for any member of the group.
        return _any_member_has_marker(pgid, marker)


def _any_member_has_marker(pgid: int, marker: str) -> bool:
    needle = marker.encode()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if os.getpgid(int(entry.name)) != pgid:
                continue
            if needle in (entry / "environ").read_bytes().split(b"\0"):
                return True
        except OSError:
            continue
    return False


def kill_marked(markers: Sequence[str], grace: float | None = None) -> list[int]:
    """Kill the process groups of processes whose environment holds every `markers` entry.

    Closes the window between a child's spawn and the journal recording its group: a driver
    killed in between leaves a child nobody registered, but its environment still names it.
    Linux only (reads /proc); the caller's own group and its ancestors' groups are spared.
    `grace`: see stop_grace.
    """
    if not markers or not _PROC_SELF_ENVIRON.exists():
        return []
    found = _marked_groups([m.encode() for m in markers])
    for pgid in found:
        _stop_group(pgid, stop_grace(grace))
    return sorted(found)


def _marked_groups(needles: Sequence[bytes]) -> set[int]:
    """The groups of the processes whose environment has every `needles` entry, but ours and
    our ancestors'. Every Ray task on a node ends with this scan of the machine's processes
    (`remote.scratch`): it reads each environment with raw `os` calls, as proc_group reads
    stat files (pathlib's objects and a split per process made it ~3x the CPU: issue 36)."""
    found: set[int] = set()
    for name in os.listdir(_PROC):
        if name.isdigit() and _environ_holds(name, needles):
            with contextlib.suppress(OSError):  # it ended meanwhile
                found.add(os.getpgid(int(name)))
    return found - _own_groups() if found else found


def _environ_holds(pid: str, needles: Sequence[bytes]) -> bool:
    """Whether process `pid`'s environment has each of `needles` as a whole entry. A
    substring search rules out nearly every process; only one that passes it is split."""
    try:
        data = _read_proc_file(f"{_PROC}/{pid}/environ")
    except OSError:  # gone, or not ours to read
        return False
    if not all(needle in data for needle in needles):
        return False
    entries = data.split(b"\0")
    return all(needle in entries for needle in needles)


def _read_proc_file(path: str) -> bytes:
    """A whole /proc file (its size is unknown beforehand: read to the end)."""
    fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    try:
        chunks = []
        while chunk := os.read(fd, _PROC_READ):
            chunks.append(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


def _own_groups() -> set[int]:
    """This process's group and those of its ancestors (never ours to kill)."""
    groups = set()
    pid = os.getpid()
    while pid > 1:
        try:
            groups.add(os.getpgid(pid))
            stat = Path(f"/proc/{pid}/stat").read_text()
            pid = int(stat[stat.rfind(")") + 2 :].split()[1])
        except (OSError, ValueError, IndexError):
            break
    return groups


def _tag_markers(env: Mapping[str, str]) -> list[str]:
    """The AUTORESEARCH_* entries a child got beyond our own environment: its owner's tag."""
    return [
        f"{k}={v}" for k, v in env.items() if k.startswith(ENV_PREFIX) and os.environ.get(k) != v
    ]


# The entries that name an owner: a run, a session's harness run, a delegation job.
_OWNER_TAG_ENTRIES = tuple(f"{name}=".encode() for name in OWNER_TAG_NAMES)


def owner_tagged(environ: Sequence[bytes]) -> bool:
    """Whether a process environment (`/proc/<pid>/environ` split at NUL) carries the tag of
    an owner, as every child of a run, harness run or job is started with (children.child_env).
    """
    return any(entry.startswith(_OWNER_TAG_ENTRIES) for entry in environ)


def reap_orphans(markers: Sequence[str]) -> list[int]:
    """Stop and reap the orphans reparented to this (subreaper) process: children of ours in
    another session that are not supervised children still running. One that carries
    `markers`, or no owner's tag at all (a scrubbed environment), is killed with its group;
    one that carries another owner's tag (another run's, a harness run's, a delegation job's
    runner this process started) is left to that owner's reaper. Returns the killed."""
    killed: list[int] = []
    for _ in range(10):  # killing an orphan may orphan its own children: look again
        found = _orphans(markers)
        if not found:
            break
        for pid in found:
            with contextlib.suppress(OSError):
                os.killpg(os.getpgid(pid), signal.SIGKILL)
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
            with contextlib.suppress(ChildProcessError, OSError):
                os.waitpid(pid, 0)
            killed.append(pid)
    return killed


def _orphans(markers: Sequence[str]) -> list[int]:
    """The processes reparented to us from another session that `reap_orphans` must stop.
    A subreaper's every supervised child ends with this scan of the machine's processes: it
    reads them with raw `os` calls, and an environment only of a process whose parent is us
    (pathlib's objects per process made the scan ~1.5 ms with ~100 processes: issue 36)."""
    if not _PROC_SELF_STAT.exists():
        return []
    me, my_sid = os.getpid(), os.getsid(0)
    needles = [m.encode() for m in markers]
    with _live_lock:
        live = set(_live)
    found = []
    for name in os.listdir(_PROC):
        if name.isdigit() and int(name) not in live and _is_orphan(name, me, my_sid, needles):
            found.append(int(name))
    return found


def _is_orphan(pid: str, me: int, my_sid: int, needles: Sequence[bytes]) -> bool:
    """Whether process `pid` is a child of ours (`me`) outside our session `my_sid` that holds
    every `needles` entry or no owner's tag at all; one that already ended is only reaped."""
    try:
        stat = _read_proc_file(f"{_PROC}/{pid}/stat")
        fields = stat[stat.rfind(b")") + 2 :].split()
        if int(fields[1]) != me or int(fields[3]) == my_sid:
            return False
        if fields[0] == b"Z":  # an orphan that already ended: only reap it
            with contextlib.suppress(ChildProcessError, OSError):
                os.waitpid(int(pid), os.WNOHANG)
            return False
        env = _read_proc_file(f"{_PROC}/{pid}/environ").split(b"\0")
    except (OSError, ValueError, IndexError):
        return False
    return bool(needles and all(n in env for n in needles)) or not owner_tagged(env)


def _ms_since(t0: float) -> int:
    return round((time.monotonic() - t0) * 1000)


def spawn_detached(argv: Sequence[str], cwd: Path, env: Mapping[str, str], log_path: Path) -> int:
    """Start `argv` in a new session, reparented away from us; returns its process id.

    A shell in its own session backgrounds the program and exits at once, so the program
    outlives whoever started it (an MCP server, a CLI command) and is never our zombie.
    """
    os.close(private_fd(log_path, os.O_WRONLY))  # 0600 before the shell appends to it
    script = 'log="$1"; shift; "$@" </dev/null >>"$log" 2>&1 & echo $!'
    done = subprocess.run(
        ["sh", "-c", script, "autoresearch-spawn", str(log_path), *argv],
        cwd=cwd,
        env=dict(env),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        start_new_session=True,
        timeout=30,
        check=False,
    )
    text = done.stdout.decode("ascii", "replace").strip()
    if done.returncode != 0 or not text.isdigit():
        err = done.stderr.decode("utf-8", "replace").strip()
        raise ProcessError(f"could not start {argv[0]}: {err or 'no process id'}")
    return int(text)


def process_running(pid: int, marker: str, starting: bool = False) -> bool:
    """True while process `pid` runs (not a zombie) and its environment holds `marker`.

    The marker guards against a recycled process id; without /proc only existence is known.
    `starting` (spawned moments ago): a live process whose environment reads empty, as one
    does in the midst of its exec, counts as running (a kernel thread never does).
    """
    if not _PROC_SELF_STAT.exists():
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            return True
        return True
    try:
        stat = _read_proc_file(f"{_PROC}/{pid}/stat")
        environ = _read_proc_file(f"{_PROC}/{pid}/environ")
    except OSError:
        return False
    fields = stat[stat.rfind(b")") + 2 :].split()
    if len(fields) < 7 or fields[0] == b"Z":
        return False
    if not environ:
        return starting and not int(fields[6]) & _PF_KTHREAD
    return marker.encode() in environ.split(b"\0")


def git_running_in(roots: Sequence[Path]) -> bool:
    """True while some git process works in one of `roots` (its current directory lies under
    one), or holds a file under one of them open. Git changes into the repository it acts on
    (also with `-C`), so a live git is seen whatever directory it was started from. Without
    /proc nothing can be known: assume one runs."""
    proc_root = Path("/proc")
    if not (proc_root / "self" / "cwd").exists():
        return True
    wanted = [os.path.realpath(r) for r in roots]

    def under(target: str) -> bool:
        return any(target == w or target.startswith(w.rstrip("/") + "/") for w in wanted)

    me = os.getpid()
    for entry in proc_root.iterdir():
        if not entry.name.isdigit() or int(entry.name) == me:
            continue
        try:
            if not (entry / "comm").read_text().startswith("git"):
                continue
            if under(os.readlink(entry / "cwd")):
                return True
            for fd in (entry / "fd").iterdir():
                with contextlib.suppress(OSError):
                    if under(os.readlink(fd)):
                        return True
        except OSError:
            continue
    return False
