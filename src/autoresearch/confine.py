"""The OS sandbox of a session, an evaluation or a check: one child's argv wrapped in Bubblewrap.

Invariants of a confined child (`Box.wrap`):
* the whole file system is read-only; /dev, /proc and /tmp are its own (a private tmpfs, and
  TMPDIR names it);
* $HOME is an empty tmpfs: the user's credentials (~/.ssh, ~/.aws, ~/.config/gcloud,
  ~/.docker, ~/.netrc, ~/.npmrc, ~/.pypirc) and other projects are not there. Only what an
  agent CLI needs for its own config and login (`AGENT_HOME`, read-write), the programs on
  its PATH that live under $HOME or /tmp, the venv autoresearch runs from and the files its
  command line names by absolute path (read-only) are bound back;
* the repository is read-only and its `.autoresearch/` (journal, backups, other runs, scratch)
  is an empty tmpfs; the tree the child runs in (`cwd`) and the box's `writable` paths are
  read-write, its `readable` ones read-only;
* no network unless the box allows it; the child gets its own PID, IPC and UTS namespaces, so
  it sees no other process (nor its environment) and cannot outlive the box's first process.
  The PID namespace is what keeps a child's signals in its box: the user namespace alone
  already refuses another process's /proc/<pid>/root, cwd and environ, but not kill(), so a
  child could stop the driver or any of the user's processes and read their command lines.
  It also closes the last way out of a tree kill: a double-forked `setsid` grandchild leaves
  the process group, never the namespace, which ends with its first process. The price: a
  child's `os.getpid()` is its box's number, not the host's (tests/helpers.host_pid).

`machine_support` says whether this machine can (Linux, bwrap on PATH, a namespace it may make)
and `choose` turns a requested mode into the one used: `auto` falls back to no sandbox with a
note where the machine cannot, an explicit `bwrap` is refused there.
"""

from __future__ import annotations

import functools
import os
import shlex
import shutil
import signal
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from autoresearch.errors import ContractError, ProcessError
from autoresearch.paths import STATE_DIR
from autoresearch.sandbox_modes import DEFAULT_MODE as DEFAULT_MODE
from autoresearch.sandbox_modes import SandboxMode as SandboxMode

# Entries of $HOME an agent CLI reads or writes for its own config, login and session state
# (codex, Claude Code, aider, git's identity for aider's commits); bound back when present.
AGENT_HOME = (
    ".codex",
    ".claude",
    ".claude.json",
    ".config/claude",
    ".aider",
    ".aider.conf.yml",
    ".aider.model.settings.yml",
    ".aider.model.metadata.json",
    ".gitconfig",
    ".config/git",
)
# ... or wherever the agent's own variable puts them (read-write, wherever they are)
AGENT_HOME_VARIABLES = ("CODEX_HOME", "CLAUDE_CONFIG_DIR")
PROBE_TIMEOUT = 10.0

MSG_FALLBACK = "no OS sandbox: {reason}; sessions and evaluations run as you (--sandbox none)"
MSG_REFUSED = "--sandbox bwrap is not possible here: {reason} (use --sandbox auto or none)"


@dataclass(frozen=True)
class Support:
    """Whether Bubblewrap can confine a child on this machine, and why not."""

    bwrap: str | None  # the program's path, None when it cannot be used
    reason: str = ""


def machine_support(path: str | None = None) -> Support:
    """Can this machine confine a child (`path`: the PATH to find bwrap on; None: the
    process's)? Probed once per PATH by running bwrap itself."""
    if not sys.platform.startswith("linux"):
        return Support(None, f"Bubblewrap needs Linux (this is {sys.platform})")
    program = shutil.which("bwrap", path=path)
    if program is None:
        return Support(None, "bwrap is not installed (Debian: apt-get install bubblewrap)")
    return _probe(program)


@functools.cache
def _probe(program: str) -> Support:
    # imported here: a reader of runs (`status`, MCP) names the modes and starts no process
    from autoresearch.proc import run_capture

    argv = [program, "--unshare-all", "--ro-bind", "/", "/", "--proc", "/proc", "true"]
    try:
        done = run_capture(argv, timeout=PROBE_TIMEOUT, umask=0o077)
    except ProcessError as exc:
        return Support(None, f"bwrap could not run: {exc}")
    if done.returncode != 0:
        detail = done.stderr.decode("utf-8", "replace").strip().splitlines()
        why = detail[-1] if detail else f"exit {done.returncode}"
        return Support(None, f"bwrap cannot make a namespace here ({why})")
    return Support(program)


@dataclass(frozen=True)
class Choice:
    """The mode a run's children use, and the note `auto` owes the user when it fell back."""

    mode: SandboxMode  # BWRAP or NONE
    bwrap: str | None = None
    note: str | None = None


def choose(requested: SandboxMode, support: Support) -> Choice:
    """The sandbox used for `requested` on a machine with `support` (pure); an explicit
    `bwrap` the machine cannot give is refused in one line."""
    if requested == SandboxMode.NONE:
        return Choice(SandboxMode.NONE)
    if support.bwrap is not None:
        return Choice(SandboxMode.BWRAP, support.bwrap)
    if requested == SandboxMode.BWRAP:
        raise ContractError(MSG_REFUSED.format(reason=support.reason))
    return Choice(SandboxMode.NONE, note=MSG_FALLBACK.format(reason=support.reason))


def sandbox_mode(value: object) -> SandboxMode:
    """A mode named by a flag, a recorded loop or sandbox.md."""
    try:
        return SandboxMode(str(value))
    except ValueError:
        known = ", ".join(SandboxMode)
        raise ContractError(f"unknown sandbox {value!r} (one of: {known})") from None


@dataclass(frozen=True)
class Box:
    """How one kind of child of a repository is confined (see the module's invariants)."""

    bwrap: str
    repo_root: Path
    writable: tuple[Path, ...] = ()
    readable: tuple[Path, ...] = ()
    network: bool = True

    def wrap(self, argv: Sequence[str], cwd: Path, env: Mapping[str, str]) -> list[str]:
        """`argv`, to be run in `cwd` with `env`, as the confined command line."""
        # no --die-with-parent: its signal follows the spawning thread (a lane's), and a
        # child that outlives a killed driver is the reaper's, as without a sandbox
        flags = ["--unshare-all"]
        if self.network:
            flags.append("--share-net")
        # temp files go to the private /tmp, wherever TMPDIR pointed outside
        flags += ["--setenv", "TMPDIR", "/tmp"]
        home = _home(env)
        mounts = _system_mounts() + self._mounts(cwd, env, home) + _named_files(argv, home)
        return [self.bwrap, *flags, *_ordered(mounts), "--chdir", str(_real(cwd)), "--", *argv]

    def exit_code(self, status: int | None) -> int | None:
        """The boxed child's exit status as an unboxed one's: bwrap reports a child a signal
        ended as 128 + the signal, where Popen says -signal (what a tree kill is told by)."""
        if status is not None and 128 < status <= 128 + int(signal.SIGRTMAX):
            return 128 - status
        return status

    def _mounts(self, cwd: Path, env: Mapping[str, str], home: Path | None) -> list[Mount]:
        mounts = [] if home is None else [Mount("--tmpfs", home)]
        mounts += [Mount("--bind", p) for p in _present(home, AGENT_HOME)]
        mounts += [Mount("--bind", p) for p in _named(env, AGENT_HOME_VARIABLES)]
        mounts += [Mount("--ro-bind", p) for p in _programs_under(home, env.get("PATH", ""))]
        mounts += [Mount("--ro-bind", _real(self.repo_root))]
        mounts += [Mount("--tmpfs", _real(self.repo_root) / STATE_DIR)]
        mounts += [Mount("--ro-bind", _real(p)) for p in self.readable if p.exists()]
        writable = (cwd, *self.writable)
        return mounts + [Mount("--bind", _real(p)) for p in writable if p.exists()]


@dataclass(frozen=True)
class Mount:
    """One bwrap mount: `--tmpfs PATH`, or `--bind`/`--ro-bind` of a host path onto itself."""

    kind: str
    path: Path

    def args(self) -> list[str]:
        if self.kind == "--tmpfs":
            return [self.kind, str(self.path)]
        return [self.kind, str(self.path), str(self.path)]


def _system_mounts() -> list[Mount]:
    # /tmp first of the rest: a private, empty one (a repository under /tmp is bound back)
    return [Mount("--ro-bind", Path("/")), Mount("--tmpfs", Path("/tmp"))]


def _ordered(mounts: list[Mount]) -> list[str]:
    """Mount arguments with every parent before what lies inside it (bwrap applies them in
    order, a later one on top), /dev and /proc after the root."""
    ranked = sorted(mounts, key=lambda m: len(m.path.parts))  # stable: same depth keeps order
    args = [*ranked[0].args(), "--dev", "/dev", "--proc", "/proc"]
    for mount in ranked[1:]:
        args += mount.args()
    return args


def _real(path: Path) -> Path:
    # realpath, not Path.resolve: on 3.11 a symbolic link loop ($HOME, CODEX_HOME) made
    # resolve raise RuntimeError, a traceback for every evaluation; realpath leaves the loop
    # as it is, and nothing exists there to bind or to hide
    return Path(os.path.realpath(path))


def _home(env: Mapping[str, str]) -> Path | None:
    raw = env.get("HOME", "").strip()
    home = _real(Path(raw)) if raw else None
    # a $HOME that does not exist hides nothing (and has no mount point to cover)
    return None if home is None or home == Path("/") or not home.is_dir() else home


def _named_files(argv: Sequence[str], home: Path | None) -> list[Mount]:
    """The files the command line names by absolute path where the box hides them (under /tmp
    or $HOME: a `cmd:` agent's own script or interpreter, also inside `sh -c`'s string),
    read-only: the user chose to run them. A file inside a git checkout brings that checkout
    (its modules, its .venv), never a whole $HOME or /tmp that happens to be one."""
    hidden = [Path("/tmp"), *([home] if home is not None else [])]
    named = [Path(word) for arg in argv for word in _words(arg) if word.startswith("/")]
    shown = {
        _checkout_of(p, root) or p
        for p in named
        if p.is_file()
        for root in hidden
        if p.is_relative_to(root)
    }
    return [Mount("--ro-bind", p) for p in sorted(shown)]


def _checkout_of(path: Path, hidden_root: Path) -> Path | None:
    """The git checkout `path` lies in, strictly below `hidden_root` (None: none)."""
    for folder in path.parents:
        if folder == hidden_root or not folder.is_relative_to(hidden_root):
            return None
        if (folder / ".git").exists():
            return folder
    return None


def _words(arg: str) -> list[str]:
    try:
        return shlex.split(arg)
    except ValueError:  # not shell words (an unbalanced quote): the argument as it is
        return [arg]


def _present(home: Path | None, names: Sequence[str]) -> list[Path]:
    if home is None:
        return []
    return [home / name for name in names if _exists(f"{home}/{name}")]


def _named(env: Mapping[str, str], variables: Sequence[str]) -> list[Path]:
    named = [_real(Path(env[name])) for name in variables if env.get(name, "").strip()]
    return [path for path in named if path.exists() and path != Path("/")]


def _programs_under(home: Path | None, search_path: str) -> list[Path]:
    """What the box must show of the PATH folders it hides (under $HOME or /tmp), read-only,
    with the Python install autoresearch runs on (a project's venv points into it): under
    $HOME the tool's own folder (~/.pyenv, ~/.nvm, ~/.cargo: shims call into it; of ~/.local
    only bin, lib and uv's interpreters), under /tmp the folder itself. Worked on as strings,
    each asked of the file system anew (no plan is kept to go stale): made as Path objects,
    the ~20 folders cost an evaluation's box ~0.3 ms of CPU (issue 36)."""
    hidden = ["/tmp", *([str(home)] if home is not None else [])]
    entries = dict.fromkeys(entry for entry in search_path.split(":") if entry)
    folders = dict.fromkeys(os.path.realpath(entry) for entry in entries)
    found: list[str] = []
    for folder in [*folders, os.path.realpath(sys.base_prefix)]:
        if folder in hidden or not os.path.isdir(folder):
            continue
        if len(hidden) > 1 and _inside(folder, hidden[1]):
            found += _home_tool(hidden[1], folder)
        elif _inside(folder, hidden[0]):
            found.append(folder)
    found += _own_venv(hidden)
    return [Path(p) for p in dict.fromkeys(found) if _exists(p)]


def _exists(path: str) -> bool:
    """`Path(path).exists()` without making the Path (a string is what the box works on)."""
    try:
        os.stat(path)
    except (OSError, ValueError):
        return False
    return True


def _inside(path: str, folder: str) -> bool:
    """`Path(path).is_relative_to(folder)` of two resolved paths, as strings."""
    return path == folder or path.startswith(folder.rstrip("/") + "/")


def _own_venv(hidden: list[str]) -> list[str]:
    """The venv autoresearch runs from where the box hides it, that folder only (never the
    project around it): its `bin` on PATH alone would start the bare interpreter, without the
    venv's packages (a clone under /tmp whose tests' evaluators run `python3`)."""
    venv = os.path.realpath(sys.prefix)
    if venv == os.path.realpath(sys.base_prefix):
        return []
    return [venv] if any(_inside(venv, root) and venv != root for root in hidden) else []


def _home_tool(home: str, folder: str) -> list[str]:
    top = f"{home}/{folder[len(home) :].lstrip('/').split('/')[0]}"
    if not top.endswith("/.local"):
        return [top]
    return [f"{top}/bin", f"{top}/lib", f"{top}/share/uv"]
