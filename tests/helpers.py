"""Test helpers: real git repositories in temp dirs, candidate artifacts, the CLI as a process."""

from __future__ import annotations

import atexit
import contextlib
import ctypes
import json
import os
import shutil
import signal
import sqlite3
import stat
import subprocess
import sys
import tempfile
import textwrap
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

GIT_ENV = {
    "GIT_AUTHOR_NAME": "Test Author",
    "GIT_AUTHOR_EMAIL": "author@example.com",
    "GIT_COMMITTER_NAME": "Test Author",
    "GIT_COMMITTER_EMAIL": "author@example.com",
    "GIT_CONFIG_NOSYSTEM": "1",
}

# The evaluator used by most tests: value.txt is the score; mode.txt picks a misbehaviour.
EVAL_SCRIPT = textwrap.dedent(
    """\
    import json, os, sys, time
    # which process this is, for `host_pid` (in the OS sandbox its pid is its box's own)
    pid_note = f"{os.getpid()} {os.readlink('/proc/self/ns/pid')}"
    mode = open("mode.txt").read().strip() if os.path.exists("mode.txt") else "ok"
    value = float(open("value.txt").read())
    if mode == "crash":
        print("boom", file=sys.stderr); sys.exit(3)
    if mode == "fail":
        print(json.dumps({"pass": False, "score": value})); sys.exit(0)
    if mode == "garbage":
        print("not json at all"); sys.exit(0)
    if mode == "noscore":
        print(json.dumps({"pass": True})); sys.exit(0)
    if mode == "hang":
        os.makedirs(".autoresearch", exist_ok=True)  # runtime dirt: never blocks a reset
        open(".autoresearch/evaluator.pid", "w").write(pid_note)
        time.sleep(60)
    if mode == "slow":  # long enough for a test to act while the evaluation runs
        os.makedirs(".autoresearch", exist_ok=True)
        open(".autoresearch/evaluator.pid", "w").write(pid_note)
        time.sleep(2)
    if mode == "dirty":
        open("stray-output.txt", "w").write("x")
    print("progress line")
    print(json.dumps({"pass": True, "score": value}))
    """
)


def git(cwd: Path, *args: str, check: bool = True) -> str:
    env = {**os.environ, **GIT_ENV}
    done = subprocess.run(
        ["git", *args], cwd=cwd, env=env, capture_output=True, text=True, check=False
    )
    if check and done.returncode != 0:
        raise AssertionError(f"git {' '.join(args)} failed: {done.stderr}")
    return done.stdout.strip()


def sandbox_text(
    command: str = "python3 scripts/eval.py",
    fmt: str = "json",
    extra: str = "",
    body: str = "Only edit value.txt and mode.txt.",
    unboxed: bool = False,
) -> str:
    """A mission's sandbox.md; `unboxed`: its children run without the OS sandbox (a test whose
    agents or evaluators keep state or marks in files outside the repository, or whose pids
    the test reads from /proc: a box hides both)."""
    isolation = "isolation:\n  sandbox: none\n" if unboxed else ""
    head = f"evaluator:\n  command: {command}\n  format: {fmt}\n{extra}{isolation}"
    return f"---\n{head}---\n{body}\n"


@dataclass
class Repo:
    root: Path

    def write(self, rel: str, text: str) -> Path:
        path = self.root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        return path

    def git(self, *args: str) -> str:
        return git(self.root, *args)

    def commit(self, message: str = "change") -> str:
        self.git("add", "-A")
        self.git("commit", "-q", "-m", message)
        return self.git("rev-parse", "HEAD")

    def mission(
        self,
        rel: str = "missions/demo",
        sandbox: str | None = None,
        mission: str = "Make value.txt bigger.\n",
        commit: bool = True,
    ) -> Path:
        self.write(f"{rel}/mission.md", mission)
        self.write(f"{rel}/sandbox.md", sandbox if sandbox is not None else sandbox_text())
        if commit:
            self.commit(f"mission {rel}")
        return self.root / rel


def make_repo(path: Path, value: str = "1") -> Repo:
    """A repository with the test evaluator and value.txt, committed: a copy of one made once per
    test process (`git init`, `add` and `commit` cost ~17 ms of CPU, a copy ~5; most tests make
    one). A folder with files already in it is made anew: its files join the first commit."""
    if path.exists() and any(path.iterdir()):
        return _init_repo(path, value)
    shutil.copytree(_template(value), path, symlinks=True, dirs_exist_ok=True)
    return Repo(path)


_TEMPLATES: dict[str, Path] = {}


def _template(value: str) -> Path:
    if value not in _TEMPLATES:
        root = Path(tempfile.mkdtemp(prefix="autoresearch-test-repo-"))
        atexit.register(shutil.rmtree, root, ignore_errors=True)
        _TEMPLATES[value] = _init_repo(root / "repo", value).root
    return _TEMPLATES[value]


def _init_repo(path: Path, value: str) -> Repo:
    path.mkdir(parents=True, exist_ok=True)
    git(path, "init", "-q", "-b", "main")
    repo = Repo(path)
    repo.write("scripts/eval.py", EVAL_SCRIPT)
    repo.write("value.txt", value + "\n")
    repo.write(".gitignore", "__pycache__/\n")
    repo.commit("initial")
    return repo


def edit_and_commit(worktree: Path, files: dict[str, str], message: str = "candidate") -> str:
    for rel, text in files.items():
        target = worktree / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)
    git(worktree, "add", "-A")
    git(worktree, "commit", "-q", "-m", message)
    return git(worktree, "rev-parse", "HEAD")


def artifact(
    status: str = "candidate",
    candidate_commit: str | None = None,
    base_commit: str = "",
    description: str = "a change",
    notes: list[str] | None = None,
    **extra: Any,
) -> dict[str, Any]:
    data: dict[str, Any] = {
        "status": status,
        "candidate_commit": candidate_commit,
        "base_commit": base_commit,
        "description": description,
        "notes": notes if notes is not None else [],
        "created_at": "2026-11-30T00:00:00Z",
    }
    data.update(extra)
    return data


def write_artifact(path: Path, data: Any) -> None:
    path.write_text(data if isinstance(data, str) else json.dumps(data))


def cli(*args: str, cwd: Path, env: dict[str, str] | None = None, timeout: float = 120):
    """Run the real `autoresearch` CLI as a subprocess."""
    full_env = {**os.environ, **GIT_ENV, **(env or {})}
    return subprocess.run(
        [sys.executable, "-m", "autoresearch", *args],
        cwd=cwd,
        env=full_env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def resume_detached(
    repo: Path, run_id: str, env: dict[str, str] | None = None, timeout: float = 180
) -> subprocess.CompletedProcess[str]:
    """`autoresearch resume RUN --json` after a kill, in a session of its own (as a user's
    shell would start it: a tree kill the test sends later never reaches it)."""
    return subprocess.run(
        [sys.executable, "-m", "autoresearch", "resume", run_id, "--json"],
        cwd=repo,
        env={**os.environ, **GIT_ENV, **(env or {})},
        capture_output=True,
        text=True,
        timeout=timeout,
        start_new_session=True,
    )


def host_pid(note: str) -> int | None:
    """The host's pid of the process that wrote `note`: `<its pid> <its PID namespace>` (in
    the OS sandbox, the default where bwrap runs, a child's pid is its box's own) or a bare host
    pid. None once it is gone: a namespace's pids mean nothing outside it."""
    pid, _, namespace = note.strip().partition(" ")
    if not namespace or namespace == os.readlink("/proc/self/ns/pid"):
        return int(pid)
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and _known_as(entry, namespace, pid):
            return int(entry.name)
    return None


def _known_as(proc: Path, namespace: str, pid: str) -> bool:
    """Whether /proc entry `proc` is the process numbered `pid` in PID namespace `namespace`
    (status's NSpid lists its pid in each namespace down to its own)."""
    try:
        if os.readlink(proc / "ns/pid") != namespace:
            return False
        status = (proc / "status").read_text()
    except OSError:
        return False
    numbers = next(
        (line.split()[1:] for line in status.splitlines() if line.startswith("NSpid:")), []
    )
    return bool(numbers) and numbers[-1] == pid


def pid_alive(pid: int | None) -> bool:
    """True while `pid` runs (a zombie waiting for a reaper counts as gone; None: gone)."""
    if pid is None:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    stat = Path(f"/proc/{pid}/stat")
    try:
        text = stat.read_text()
    except OSError:
        return True
    return text[text.rfind(")") + 2 :].split()[0] != "Z"


def loose_modes(root: Path) -> list[str]:
    """Every folder or file under `root` that a group or other user could read or write."""
    found = []
    for path in [root, *root.rglob("*")]:
        if path.is_symlink():
            continue  # a link's own mode means nothing; its target is checked where it lives
        mode = stat.S_IMODE(path.lstat().st_mode)
        if mode & 0o077:
            found.append(f"{oct(mode)} {path.relative_to(root.parent)}")
    return found


def until(condition: Callable[[], object], timeout: float = 30.0, what: str = "") -> None:
    """Poll `condition` until it holds (a timing-sensitive test waits for an event, never for
    a fixed time: on a loaded machine a sleep is too short)."""
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"never happened: {what or condition}"
        time.sleep(0.05)


def decisions(repo: Path, backup: bool = False) -> list[tuple[int, str]]:
    """The decided iterations (number, decision) of the journal in `repo`, or of its newest
    backup, read without writing (a driver may be running). A backup is read as immutable:
    it is never written once rotated in, and has no WAL beside it."""
    path = repo / ".autoresearch" / ("backups/journal.1.sqlite3" if backup else "journal.sqlite3")
    if not path.exists():
        return []
    uri = f"{path.as_uri()}?mode=ro{'&immutable=1' if backup else ''}"
    with contextlib.closing(sqlite3.connect(uri, uri=True)) as conn:
        rows = conn.execute(
            "SELECT iteration, decision FROM iterations WHERE decision IS NOT NULL"
            " ORDER BY iteration"
        ).fetchall()
    return [(int(number), str(decision)) for number, decision in rows]


def run_children(repo: Path) -> list[int]:
    """The processes a run in `repo` started, in any session (evaluators and agents lead their
    own): their AUTORESEARCH_WORKTREE lies under `repo`."""
    ours = f"AUTORESEARCH_WORKTREE={repo}/".encode()
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                env = (entry / "environ").read_bytes().split(b"\0")
            except OSError:
                continue
            if any(e.startswith(ours) for e in env):
                found.append(int(entry.name))
    return found


def kill_tree(driver_pid: int, repo: Path) -> None:
    """SIGKILL a driver that leads its own process group and every process its run in `repo`
    started, as a machine dying would. Only this repository's: tests run side by side, and a
    neighbour's evaluator killed while its driver lives is a verdict, not a tree kill."""
    before = run_children(repo)
    with contextlib.suppress(OSError):
        os.killpg(driver_pid, signal.SIGKILL)
    for pid in before + run_children(repo):  # again: one started while the driver died
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)


# value.txt + Gaussian noise (sd NOISE_SD, default 1), seeded by a counter kept outside the
# repository (NOISE_STATE): every reading differs and the sequence is reproducible
NOISY_EVAL = textwrap.dedent(
    """\
    import json, os, random
    value = float(open("value.txt").read())
    state = os.environ["NOISE_STATE"]
    n = int(open(state).read()) if os.path.exists(state) else 0
    open(state, "w").write(str(n + 1))
    sd = float(os.environ.get("NOISE_SD", "1"))
    print(json.dumps({"pass": True, "score": value + sd * random.Random(n).gauss(0, 1)}))
    """
)


def run_noisy(
    repo: Repo,
    tmp_path: Path,
    agent: str,
    *args: str,
    env: dict[str, str] | None = None,
    timeout: float = 300,
    value: str = "0",
    eval_source: str = NOISY_EVAL,
) -> subprocess.CompletedProcess[str]:
    """`autoresearch run missions/noisy` (value.txt from `value`, the noisy evaluator, or the
    evaluator whose Python source is `eval_source`) with a `cmd:` agent whose Python source
    is `agent`."""
    repo.write("scripts/noisy.py", eval_source)
    repo.write("value.txt", value + "\n")
    repo.mission("missions/noisy", sandbox=sandbox_text("python3 scripts/noisy.py", unboxed=True))
    script = tmp_path / "agent.py"
    script.write_text(agent)
    full_env = {"NOISE_STATE": str(tmp_path / "noise-counter"), **(env or {})}
    command = f"cmd:{sys.executable} {script}"
    return cli("run", "missions/noisy", "--agent", command, *args, cwd=repo.root, env=full_env,
               timeout=timeout)  # fmt: skip


_REAL_GIT = shutil.which("git") or "git"

# A `git` first on PATH that kills the whole process group of its caller at the NTH call of
# subcommand MATCH: `worktree` runs the real `worktree add` without its checkout first (the
# state a kill mid-checkout leaves: branch and registration made, no index, no files);
# `commit` takes the index lock first, as the real commit does at its start.
_GIT_KILLER = f"""#!/bin/sh
real={_REAL_GIT}
for a in "$@"; do
  if [ "$a" = "$KILL_MATCH" ]; then
    n=$(cat "$KILL_COUNTER" 2>/dev/null || echo 0); n=$((n+1)); echo $n > "$KILL_COUNTER"
    if [ "$n" = "$KILL_NTH" ]; then
      if [ "$KILL_MATCH" = worktree ]; then
        shift 2; "$real" worktree add --no-checkout "$@" >/dev/null 2>&1
      elif [ "$KILL_MATCH" = rebase ]; then
        # a rebase killed inside its checkout of --onto: that commit's files written into the
        # tree, the index never updated (so they read as edits and untracked files)
        onto=; prev=
        for b in "$@"; do [ "$prev" = --onto ] && onto=$b; prev=$b; done
        "$real" diff --name-only --no-renames --diff-filter=AM HEAD "$onto" | while read -r p; do
          mkdir -p "$(dirname "$p")"; "$real" show "$onto:$p" > "$p"
        done
        : > "$("$real" rev-parse --git-dir)/index.lock"
      else
        : > "$("$real" rev-parse --git-dir)/index.lock"
      fi
      kill -9 0
    fi
    break
  fi
done
exec "$real" "$@"
"""


def git_killer(tmp: Path, match: str, nth: int) -> dict[str, str]:
    bindir = tmp / "killer-bin"
    bindir.mkdir()
    wrapper = bindir / "git"
    wrapper.write_text(_GIT_KILLER)
    wrapper.chmod(wrapper.stat().st_mode | stat.S_IXUSR)
    return {
        "PATH": f"{bindir}:{os.environ['PATH']}",
        "KILL_MATCH": match,
        "KILL_NTH": str(nth),
        "KILL_COUNTER": str(tmp / "killer-count"),
    }


_PR_SET_CHILD_SUBREAPER, _PR_GET_CHILD_SUBREAPER = 36, 37


@contextlib.contextmanager
def not_a_subreaper() -> Iterator[None]:
    """This pytest worker as a plain parent for the block: an in-process run_loop earlier in the
    worker made it a subreaper (as a driver must be), and a subreaper stops a door's setsid
    strays (those carrying the child's tag or none) the moment the door's child ends."""
    if not sys.platform.startswith("linux"):
        yield
        return
    libc = ctypes.CDLL(None, use_errno=True)
    was = ctypes.c_int(0)
    libc.prctl(_PR_GET_CHILD_SUBREAPER, ctypes.byref(was), 0, 0, 0)
    libc.prctl(_PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0)
    try:
        yield
    finally:
        libc.prctl(_PR_SET_CHILD_SUBREAPER, was.value, 0, 0, 0)


class QuietLanes:
    """A lanes observer that shows nothing (supervisor.lanes.LaneObserver), for tests that
    drive the lanes in process."""

    def session_started(self, iteration: int, lane: int = 0) -> None: ...

    def evaluation_started(self, iteration: int, lane: int = 0) -> None: ...

    def step_recorded(self, result: Any, agent: Any, lane: int = 0) -> None: ...

    def note(self, message: str) -> None: ...

    def lanes_changed(self, lanes: list[Any]) -> None: ...


# what a cut-off session leaves in its tree, by how: committed past its base, edited, staged,
# untracked (leave_work); and runtime dirt, which a save-then-reset spares
LEFT_WORK = {
    "past.txt": "committed past the base\n",
    "value.txt": "7\n",
    "staged.txt": "staged, never committed\n",
    "notes/untracked.md": "untracked\n",
}
RUNTIME_LITTER = ("results.tsv", "pkg/__pycache__/m.cpython-311.pyc", "old.pyc")


def leave_work(tree: Path) -> None:
    """Leave LEFT_WORK in `tree` as a session would (one commit, an edit, a staged file, an
    untracked one), and RUNTIME_LITTER beside it."""
    edit_and_commit(tree, {"past.txt": LEFT_WORK["past.txt"]}, "the session's commit")
    (tree / "value.txt").write_text(LEFT_WORK["value.txt"])
    (tree / "staged.txt").write_text(LEFT_WORK["staged.txt"])
    git(tree, "add", "staged.txt")
    (tree / "notes").mkdir()
    (tree / "notes/untracked.md").write_text(LEFT_WORK["notes/untracked.md"])
    for rel in RUNTIME_LITTER:
        (tree / rel).parent.mkdir(parents=True, exist_ok=True)
        (tree / rel).write_text("runtime\n")


def applied_patch(tree: Path, base: str, patch: Path, scratch: Path) -> dict[str, str]:
    """The files `patch` changes, as they are once it is applied to `base` (in a worktree of
    `tree`'s repository at `scratch`)."""
    git(tree, "worktree", "add", "-q", "--detach", str(scratch), base)
    git(scratch, "apply", "--binary", "--index", str(patch))
    names = git(scratch, "diff", "--cached", "--name-only", base).splitlines()
    return {name: (scratch / name).read_text() for name in names}


def assert_work_reset(tree: Path, branch: str, at: str) -> None:
    """After leave_work was saved and reset: on `branch` at `at` with a clean index and
    tracked files; only RUNTIME_LITTER is left."""
    assert git(tree, "rev-parse", "HEAD") == at
    assert git(tree, "symbolic-ref", "-q", "HEAD") == f"refs/heads/{branch}"
    assert (tree / "value.txt").read_text() == "1\n"
    assert not any((tree / rel).exists() for rel in ("past.txt", "staged.txt", "notes"))
    assert all((tree / rel).read_text() == "runtime\n" for rel in RUNTIME_LITTER)
    left = git(tree, "status", "--porcelain", "--untracked-files=all").splitlines()
    assert left and all(x.startswith("?? ") and x[3:] in RUNTIME_LITTER for x in left), left


class QuietObserver:
    """A loop observer that shows nothing (a test reads the journal instead)."""

    def session_started(self, iteration: int, lane: int = 0) -> None: ...
    def evaluation_started(self, iteration: int, lane: int = 0) -> None: ...
    def step_recorded(self, result: object, agent: object, lane: int = 0) -> None: ...
    def note(self, message: str) -> None: ...


NULL_OID = "0" * 40
# run by git as a new worktree's HEAD moves off the null id: the whole add dies right there
_KILL_ADD_HOOK = """#!/bin/sh
if [ "$1" = prepared ] && grep -q ' HEAD$'; then kill -KILL 0; fi
exit 0
"""


def killed_add(repo: Path, folder: Path, fresh: bool = False) -> Path:
    """Kill a real `git worktree add --detach folder HEAD` at the instant git has registered
    the tree with its null HEAD, before it checked anything out (what a SIGKILL or a power cut
    there leaves: every `git fetch` of the repository fails); the registration's admin folder.
    Deterministic: a reference-transaction hook kills the add's process group as it moves that
    HEAD. Its files are dated an hour back unless `fresh` (a repair leaves a registration
    younger than worktree_repair.SETTLE_SECONDS that is not the driving run's own)."""
    hooks = Path(tempfile.mkdtemp(prefix="kill-hooks-", dir=repo.parent))
    (hooks / "reference-transaction").write_text(_KILL_ADD_HOOK)
    (hooks / "reference-transaction").chmod(0o755)
    folder.parent.mkdir(parents=True, exist_ok=True)
    args = ["git", "-c", f"core.hooksPath={hooks}", "worktree", "add", "-q", "--detach"]
    done = subprocess.run(
        [*args, str(folder), "HEAD"],
        cwd=repo,
        env={**os.environ, **GIT_ENV},
        start_new_session=True,  # its own process group: the hook kills that, not pytest
        capture_output=True,
        check=False,
    )
    assert done.returncode == -signal.SIGKILL, done.stderr
    (admin,) = [
        p
        for p in (repo / ".git/worktrees").iterdir()
        if (p / "gitdir").read_text().strip() == str(folder.resolve() / ".git")
    ]
    assert (admin / "HEAD").read_text().strip() == NULL_OID  # exactly what git leaves
    if not fresh:  # killed long ago: a repair does not wait for it as for an add in progress
        long_ago = time.time() - 3600
        for path in admin.iterdir():
            os.utime(path, (long_ago, long_ago))
    return admin


def forge_away_iteration(journal: Path, iteration: int) -> None:
    """Delete one iteration and its evaluations as an attacker with the seal key would: the
    seals are kept valid (autoresearch's own TEMP triggers), so only a backup can tell."""
    from autoresearch.journal import integrity, seals

    forger = sqlite3.connect(journal, isolation_level=None)
    try:
        seals.register(forger, seals.load_key(integrity.seal_key(journal))[0])
        seals.install_triggers(forger)
        forger.execute("DELETE FROM evaluations WHERE iteration = ?", (iteration,))
        forger.execute("DELETE FROM iterations WHERE iteration = ?", (iteration,))
    finally:
        forger.close()
