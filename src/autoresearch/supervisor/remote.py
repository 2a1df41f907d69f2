"""The far end of a remote executor: one agent session or one evaluation on a cluster node.

A node knows nothing of the driver's files. Each task brings what it needs – the code as git
bundles (`Code`), the instructions, the evaluator and the sealed harness as bytes – and
returns what happened as plain data: the new commits as a bundle (base → candidate), the
uncommitted rest as a patch, the artifact, the logs and the usage or evaluation record. The
journal stays with the driver; nothing here imports an executor library (Ray wraps these
functions in `ray_executor`).

Invariants on a node:
* every task works in its own folder under `<root>/<run>/tasks/<task>`, on a checkout of a
  per-run bare cache (`<root>/<run>/cache.git`) that only grows by verified bundles;
* a task holds the lock of its folder while it runs. A folder whose lock is free belongs to a
  task whose process died (a killed worker): before the next task of the run starts on the
  node, that task's processes are stopped (by their environment tag) and its folder removed;
* when a task returns, none of its processes runs and its folder is gone;
* a task the driver lost while its node lives is reaped there before its slot is free
  (`reap_task`): its evaluator never runs beside the retry.
"""

from __future__ import annotations

import io
import os
import shutil
import socket
import sys
import tarfile
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path

from autoresearch import git
from autoresearch.agents import make_agent
from autoresearch.agents.base import AgentResult
from autoresearch.children import run_tag
from autoresearch.errors import ContractError, GitError
from autoresearch.evaluate import EvaluationRecord, run_evaluator
from autoresearch.fsutil import atomic_write_bytes, private_dir
from autoresearch.locks import FileLock, holder_gone
from autoresearch.paths import NodeRun, NodeTask, node_run
from autoresearch.proc import kill_marked, spawn_detached
from autoresearch.reset import run_dirt, work_patch
from autoresearch.settings import kill_grace
from autoresearch.supervisor import refs
from autoresearch.supervisor.executor import AgentOutcome, AgentTask, EvaluationTask
from autoresearch.supervisor.seal import digest
from autoresearch.supervisor.watcher import stop_strays, task_folders, watching

# Loads one bundle's bytes on the node (from the executor's object store, say).
BundleLoader = Callable[[], bytes]
ShouldCancel = Callable[[], bool]
# How often `reap_task` looks again for a lost task's processes and its worker.
REAP_POLL_SECONDS = 0.1


def _never() -> bool:
    return False


@dataclass(frozen=True)
class Code:
    """How a node gets `commit`: bundles to fetch in order, each as (its head, its loader),
    skipping those whose head the node's cache has already."""

    commit: str
    bundles: tuple[tuple[str, BundleLoader], ...]


@dataclass(frozen=True)
class NodeSession:
    """An agent task as it travels: the driver's task (its paths are replaced by the node's),
    its code, the instructions and the placeholder artifact it starts from."""

    task: AgentTask
    task_id: str
    code: Code
    instructions: bytes
    placeholder: bytes


@dataclass(frozen=True)
class SessionOutcome:
    """What a session left, as data: its new commits (None: none), the changes it did not
    commit, its artifact (None: it deleted the file) and its whole log."""

    result: AgentResult
    head: str | None
    on_branch: bool
    bundle: bytes | None
    patch: bytes
    artifact: bytes | None
    log: bytes
    node: str


@dataclass(frozen=True)
class SealedCopy:
    """The verified sealed harness as a tar archive, with the digest of each entry."""

    archive: bytes
    digests: dict[str, str]


@dataclass(frozen=True)
class NodeEvaluation:
    """An evaluation task as it travels: the driver's task, its code, the sealed harness."""

    task: EvaluationTask
    task_id: str
    code: Code
    sealed: SealedCopy | None = None


@dataclass(frozen=True)
class EvaluationOutcome:
    record: EvaluationRecord
    log: bytes
    node: str


def node_name() -> str:
    return socket.gethostname()


# --- the node's folders (paths.NodeRun, paths.NodeTask) ----------------------------------


@contextmanager
def scratch(
    root: Path, run_id: str, task_id: str, code: Code, branch: str | None = None
) -> Iterator[NodeTask]:
    """A checkout of `code.commit` (on `branch`, else detached) for one task; removed with
    everything it started when the task ends, however it ends."""
    node = node_run(root, run_id)
    run_root = private_dir(node.root)
    place = node.task(task_id)
    own = FileLock(place.lock)
    with FileLock(node.cache_lock):
        reap_dead_tasks(root, run_id)
        if not (place.cache / "HEAD").exists():
            git.init_bare(place.cache)
        _fetch_code(place.cache, code, run_root)
        private_dir(place.folder)
        own.acquire()  # under the cache lock: no reaper sees the folder unlocked
        if not watching(run_root):  # under the cache lock: a leaving watcher sees the folder
            start_watcher(run_id, run_root)
        if branch is None:
            git.worktree_add_detached(place.cache, place.tree, code.commit)
        else:
            git.worktree_add(place.cache, place.tree, branch, code.commit, replace=True)
    try:
        private_dir(place.files)
        yield place
    finally:
        stop_strays(run_id, place.tree)
        with FileLock(node.cache_lock):
            _remove(place)
            own.release()


def _fetch_code(cache: Path, code: Code, run_root: Path) -> None:
    """Fetch the bundles of the chain past the newest head the cache has (each bundle builds
    on the one before: the cache has every head before one it has). One git call asks for
    the commit and every head at once; a cache that has the commit fetches nothing."""
    heads = [head for head, _ in code.bundles]
    known = git.resolve_commits(cache, [code.commit, *heads])
    if known[0] == code.commit:
        return
    have = [i for i, (head, got) in enumerate(zip(heads, known[1:], strict=True)) if got == head]
    got = None
    for head, load in code.bundles[have[-1] + 1 if have else 0 :]:
        with tempfile.TemporaryDirectory(dir=run_root) as tmp:
            path = Path(tmp) / "code.bundle"
            atomic_write_bytes(path, load())
            # the cache's worktrees are all the tool's task trees: a half-built one is
            # repaired (it holds nothing of anyone's yet), the fetch tried again
            got = git.fetch_bundle(cache, path, f"refs/autoresearch/have/{head}", _any_tree)
        if got != head:
            raise GitError(f"a bundle for {head[:12]} carried {got[:12]}")
    if got != code.commit and not git.has_commit(cache, code.commit):
        raise GitError(f"no bundle carried commit {code.commit[:12]} to this node")


def _any_tree(tree: git.HalfBuiltWorktree) -> str | None:
    """A node cache's half-built task tree is always the tool's to repair."""
    return None


def reap_dead_tasks(root: Path, run_id: str) -> list[str]:
    """Stop the processes of this run's tasks whose worker died and remove their folders; the
    task ids cleaned. Called under the run's cache lock."""
    node = node_run(root, run_id)
    cleaned = []
    for folder in task_folders(node.root):
        place = node.task(folder.name)
        lock = FileLock(place.lock)
        if not lock.try_acquire():
            continue  # a live task
        try:
            stop_strays(run_id, place.tree)
            _remove(place)
        finally:
            lock.release()
        cleaned.append(folder.name)
    return cleaned


def reap_task(root: Path, run_id: str, task_id: str, patience: float) -> bool:
    """Stop the processes of one lost task of the run on this node; whether they are known
    gone within `patience` seconds: none of them is left and no live worker holds the task's
    lock (one still running it could start another). Its folder goes with the next task's
    `reap_dead_tasks`. The driver gives a lost evaluation's slot back only after this: the
    node's watcher would stop its evaluator too, but seconds later (SIGTERM, then SIGKILL)."""
    place = node_run(root, run_id).task(task_id)
    markers = run_tag(run_id, place.tree).markers()
    deadline = time.monotonic() + patience
    while True:
        found = kill_marked(markers, kill_grace())  # each group stopped, waited for
        if not found and holder_gone(place.lock) is not False:
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(REAP_POLL_SECONDS)


def _remove(place: NodeTask) -> None:
    """The task's folder and the cache's registration of its checkout, gone. The checkout's
    `.git` file names that registration: both are removed as files (under the cache lock),
    not by `git worktree remove` and the `git rev-parse` that finds the registrations, two
    processes per task on the node; a checkout whose `.git` does not name one inside the
    cache (cut off while it was made) is removed by git as before."""
    admin = _registration(place)
    if admin is None and place.tree.exists() and (place.cache / "HEAD").exists():
        git.worktree_remove(place.cache, place.tree)
    shutil.rmtree(place.folder, ignore_errors=True)
    if admin is not None:
        shutil.rmtree(admin, ignore_errors=True)


def _registration(place: NodeTask) -> Path | None:
    """The cache's folder for the task's checkout (`<cache>/worktrees/<name>`), read from the
    checkout's `.git` file; None unless it is one inside the cache that points back here."""
    try:
        text = (place.tree / ".git").read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    admin = Path(os.path.realpath(text.removeprefix("gitdir:").strip()))
    if admin.parent != Path(os.path.realpath(place.cache / "worktrees")):
        return None
    try:
        back = (admin / "gitdir").read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError):
        return None
    return admin if os.path.realpath(back) == os.path.realpath(place.tree / ".git") else None


# --- an agent session ---------------------------------------------------------------------


def run_session(
    root: Path, session: NodeSession, should_cancel: ShouldCancel = _never
) -> SessionOutcome:
    """Run one session in a fresh checkout of its base and return what it left."""
    task = session.task
    with scratch(root, task.run_id, session.task_id, session.code, task.branch) as place:
        here = replace(
            task,
            worktree=place.tree,
            instructions_file=place.files / "instructions.md",
            candidate_file=place.files / "candidate.json",
            log_path=place.files / "agent.log",
            leftover_patch=place.files / "leftover.patch",
        )
        atomic_write_bytes(here.instructions_file, session.instructions)
        atomic_write_bytes(here.candidate_file, session.placeholder)
        result = make_agent(here.agent).run(here.request(), should_cancel, lambda _pgid: None)
        return _collect(here, place, result)


def _collect(task: AgentTask, place: NodeTask, result: AgentResult) -> SessionOutcome:
    tree = place.tree
    try:  # HEAD, its branch and whether anything is uncommitted: one git process
        state = git.checkout_state(tree)
    except GitError:  # a session may leave the checkout broken
        state = git.CheckoutState(None, None, dirty=False)
    head = state.head
    bundle_path = place.files / "session.bundle"
    # a head still at the base has nothing to bundle (git took a process to say so)
    bundled = head not in (None, task.base_commit) and git.bundle_checkout_head(
        tree, bundle_path, head, exclude=[task.base_commit]
    )
    patch = b""
    # what the worktree's reset would spare stays out, as on the driver; a clean checkout has
    # nothing to save, and its patch took five processes to come out empty
    if head is not None and state.dirty:
        patch = work_patch(tree, head, run_dirt(task.sandbox.shared_links, task.sandbox.runtime))
    return SessionOutcome(
        result=result,
        head=head,
        on_branch=state.branch == task.branch,
        bundle=bundle_path.read_bytes() if bundled else None,
        patch=patch,
        artifact=_read(task.candidate_file),
        log=_read(task.log_path) or b"",
        node=node_name(),
    )


def _read(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        return None


# --- an evaluation ------------------------------------------------------------------------


def run_evaluation(
    root: Path, evaluation: NodeEvaluation, should_cancel: ShouldCancel = _never
) -> EvaluationOutcome:
    """Run the frozen evaluator on a fresh checkout of the commit, with the sealed harness
    unpacked and verified beside it."""
    task = evaluation.task
    with scratch(root, task.run_id, evaluation.task_id, evaluation.code) as place:
        sealed = None
        if evaluation.sealed is not None:
            sealed = unpack_sealed(evaluation.sealed, place.sealed)
        log_path = place.files / "evaluator.log"
        record = run_evaluator(
            task.evaluator,
            place.tree,
            task.env(place.tree, sealed),
            log_path,
            grace_seconds=task.grace_seconds,
            should_cancel=should_cancel,
        )
        return EvaluationOutcome(record, _read(log_path) or b"", node_name())


def pack_sealed(sealed_dir: Path) -> SealedCopy:
    """The driver's sealed copy (verified just before) as an archive, with a digest of each
    of its entries so that the node can tell a copy damaged in transit."""
    entries = sorted(p.name for p in sealed_dir.iterdir())
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        for name in entries:
            tar.add(sealed_dir / name, arcname=name)
    return SealedCopy(buffer.getvalue(), {name: digest(sealed_dir / name) for name in entries})


def unpack_sealed(copy: SealedCopy, target: Path) -> Path:
    """Unpack the sealed harness into `target` (a task's `sealed` folder) and check it
    against prepare's digests."""
    private_dir(target)
    with tarfile.open(fileobj=io.BytesIO(copy.archive), mode="r:gz") as tar:
        tar.extractall(target, filter="data")
    for rel, expected in copy.digests.items():
        if not (target / rel).exists() or digest(target / rel) != expected:
            raise ContractError(f"sealed harness copy damaged in transit: {rel}")
    return target


# --- the driver's side of the wire --------------------------------------------------------


def land_session(task: AgentTask, outcome: SessionOutcome) -> AgentOutcome:
    """Rule 5 of executor.py: the session's commits on the lane branch in the lane's worktree
    (or HEAD detached there, as the session left it), the uncommitted rest as a patch at
    `task.leftover_patch`, the artifact and the log in the driver's files."""
    worktree = task.worktree
    fetched = None
    if outcome.bundle is not None:
        with tempfile.TemporaryDirectory(prefix="autoresearch-bundle-") as tmp:
            path = Path(tmp) / "session.bundle"
            path.write_bytes(outcome.bundle)
            incoming = f"{refs.prefix(task.run_id)}incoming/{task.lane}"
            # the driver's side only: a node never loads the journal's modules for it
            from autoresearch import worktree_repair
            from autoresearch.paths import RepoPaths

            repo = RepoPaths(git.main_root(worktree) or worktree)
            refuse = worktree_repair.refusal(repo, task.run_id)
            fetched = git.fetch_bundle(worktree, path, incoming, refuse)
    # the head just fetched is here: asking git again was one process per session
    known = outcome.head == fetched or (outcome.head and git.has_commit(worktree, outcome.head))
    head = outcome.head if known else None
    if head is not None and head != git.head(worktree):
        if outcome.on_branch:
            git.checkout_branch_at(worktree, task.branch, head)
        else:
            git.checkout_detached(worktree, head)
    if outcome.patch:
        atomic_write_bytes(task.leftover_patch, outcome.patch)
    atomic_write_bytes(task.log_path, outcome.log)
    if outcome.artifact is None:
        task.candidate_file.unlink(missing_ok=True)
    else:
        atomic_write_bytes(task.candidate_file, outcome.artifact)
    return AgentOutcome(task, replace(outcome.result, log_file=str(task.log_path)), head)


def land_evaluation(outcome: EvaluationOutcome, log_path: Path) -> EvaluationRecord:
    """The evaluation's log in the driver's log file, and the record pointing at it."""
    atomic_write_bytes(log_path, outcome.log)
    return replace(outcome.record, log_file=str(log_path))


def bundle_of(repo: Path, tip: str, exclude: Sequence[str] = ()) -> bytes | None:
    """The bytes of a bundle of `tip` past `exclude` (None: nothing new), made in a temp dir.
    One past a root is made from the checkout's HEAD (`git.bundle_checkout_head`: the lane's
    worktree is at the commit it ships, one git process instead of four); a whole history
    never is: a HEAD elsewhere would cost a whole bundle made in vain."""
    bundle = git.bundle_checkout_head if exclude else git.create_bundle
    with tempfile.TemporaryDirectory(prefix="autoresearch-bundle-") as tmp:
        path = Path(tmp) / "code.bundle"
        return path.read_bytes() if bundle(repo, path, tip, exclude) else None


# --- the watcher: a task's processes do not outlive its worker ----------------------------


def start_watcher(run_id: str, run_root: Path, idle_seconds: float | None = None) -> None:
    """A detached process (`watcher.py`) that stops the processes of the run's tasks on this
    node whose worker died (a killed Ray worker cannot stop them itself; they run in their own
    process groups). It carries the run's tag for the node's folder, no task's tree: a driver
    that started the node (a local cluster) adopts it as subreaper and leaves it to the run
    (`proc.reap_orphans`), and no task's stop matches it."""
    argv = [sys.executable, "-m", "autoresearch.supervisor.watcher", run_id, str(run_root)]
    if idle_seconds is not None:
        argv.append(str(idle_seconds))
    spawn_detached(argv, run_root, run_tag(run_id, run_root).env(), NodeRun(run_root).watch_log)
