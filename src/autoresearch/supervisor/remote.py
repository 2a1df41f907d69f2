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
* when a task returns, none of its processes runs and its folder is gone.
"""

from __future__ import annotations

import io
import shutil
import socket
import tarfile
import tempfile
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from autoresearch import git
from autoresearch.agents import AgentConfig, make_agent
from autoresearch.agents.base import AgentResult, PastIteration, SessionRequest
from autoresearch.children import run_tag
from autoresearch.contracts.sandbox import EvaluatorSpec
from autoresearch.errors import ContractError, GitError
from autoresearch.evaluate import EvaluationRecord, evaluator_env, run_evaluator
from autoresearch.fsutil import atomic_write_bytes, private_dir
from autoresearch.locks import FileLock
from autoresearch.paths import DEFAULT_SHARED_LINKS, RUNTIME_FILES
from autoresearch.proc import kill_marked
from autoresearch.reset import RuntimeRule
from autoresearch.settings import kill_grace
from autoresearch.supervisor.seal import digest

# Loads one bundle's bytes on the node (from the executor's object store, say).
BundleLoader = Callable[[], bytes]
ShouldCancel = Callable[[], bool]


def _never() -> bool:
    return False


@dataclass(frozen=True)
class Code:
    """How a node gets `commit`: bundles to fetch in order, each as (its head, its loader),
    skipping those whose head the node's cache has already."""

    commit: str
    bundles: tuple[tuple[str, BundleLoader], ...]


@dataclass(frozen=True)
class SessionTask:
    """One agent session to run on a node, from `code.commit` on branch `branch`."""

    run_id: str
    iteration: int
    task_id: str
    code: Code
    branch: str
    agent: AgentConfig
    instructions: bytes
    placeholder: bytes  # candidate.json before the session: what it replaces
    timeout: float | None
    sandbox: dict[str, Any] = field(default_factory=dict)
    history: tuple[PastIteration, ...] = ()


@dataclass(frozen=True)
class SessionOutcome:
    """What a session left, as data: its new commits (None: none), the changes it did not
    commit, its artifact (None: it deleted the file) and its whole log."""

    result: AgentResult
    head: str
    on_branch: bool
    bundle: bytes | None
    patch: bytes
    artifact: bytes | None
    log: bytes
    node: str


@dataclass(frozen=True)
class SealedCopy:
    """The verified sealed harness as a tar archive, with the digests prepare recorded."""

    archive: bytes
    digests: dict[str, str]


@dataclass(frozen=True)
class EvaluationTask:
    """One evaluation of `code.commit` on a node."""

    run_id: str
    iteration: int
    task_id: str
    code: Code
    evaluator: dict[str, Any]
    relative_dir: str  # the mission folder inside the repository
    sealed: SealedCopy | None = None


@dataclass(frozen=True)
class EvaluationOutcome:
    record: EvaluationRecord
    log: bytes
    node: str


def node_name() -> str:
    return socket.gethostname()


# --- the node's folders -------------------------------------------------------------------


@dataclass(frozen=True)
class Scratch:
    """A task's folder on a node: its checkout (`tree`) and its private files."""

    folder: Path
    cache: Path

    @property
    def tree(self) -> Path:
        return self.folder / "tree"

    @property
    def files(self) -> Path:
        return self.folder / "run"


def _run_root(root: Path, run_id: str) -> Path:
    return root / run_id


@contextmanager
def scratch(
    root: Path, run_id: str, task_id: str, code: Code, branch: str | None = None
) -> Iterator[Scratch]:
    """A checkout of `code.commit` (on `branch`, else detached) for one task; removed with
    everything it started when the task ends, however it ends."""
    run_root = private_dir(_run_root(root, run_id))
    cache = run_root / "cache.git"
    folder = run_root / "tasks" / task_id
    own = FileLock(folder / "task.lock")
    with FileLock(run_root / "cache.lock"):
        reap_dead_tasks(root, run_id)
        if not (cache / "HEAD").exists():
            git.init_bare(cache)
        _fetch_code(cache, code, run_root)
        private_dir(folder)
        own.acquire()  # under the cache lock: no reaper sees the folder unlocked
        place = Scratch(folder, cache)
        if branch is None:
            git.worktree_add_detached(cache, place.tree, code.commit)
        else:
            git.worktree_add(cache, place.tree, branch, code.commit, replace=True)
    try:
        private_dir(place.files)
        yield place
    finally:
        _stop_strays(run_id, place.tree)
        with FileLock(run_root / "cache.lock"):
            _remove(place)
            own.release()


def _fetch_code(cache: Path, code: Code, run_root: Path) -> None:
    for head, load in code.bundles:
        if git.has_commit(cache, head):
            continue
        with tempfile.TemporaryDirectory(dir=run_root) as tmp:
            path = Path(tmp) / "code.bundle"
            atomic_write_bytes(path, load())
            got = git.fetch_bundle(cache, path, f"refs/autoresearch/have/{head}")
        if got != head:
            raise GitError(f"a bundle for {head[:12]} carried {got[:12]}")
    if not git.has_commit(cache, code.commit):
        raise GitError(f"no bundle carried commit {code.commit[:12]} to this node")


def reap_dead_tasks(root: Path, run_id: str) -> list[str]:
    """Stop the processes of this run's tasks whose worker died and remove their folders; the
    task ids cleaned. Called under the run's cache lock."""
    tasks = _run_root(root, run_id) / "tasks"
    if not tasks.is_dir():
        return []
    cleaned = []
    for folder in sorted(p for p in tasks.iterdir() if p.is_dir()):
        lock = FileLock(folder / "task.lock")
        if not lock.try_acquire():
            continue  # a live task
        try:
            place = Scratch(folder, _run_root(root, run_id) / "cache.git")
            _stop_strays(run_id, place.tree)
            _remove(place)
        finally:
            lock.release()
        cleaned.append(folder.name)
    return cleaned


def _stop_strays(run_id: str, tree: Path) -> None:
    """Every child of a task carries the run's tag with the task's tree in its environment."""
    kill_marked(run_tag(run_id, tree).markers())


def _remove(place: Scratch) -> None:
    if place.tree.exists() and (place.cache / "HEAD").exists():
        git.worktree_remove(place.cache, place.tree)
    shutil.rmtree(place.folder, ignore_errors=True)


# --- an agent session ---------------------------------------------------------------------


def run_session(
    root: Path, task: SessionTask, should_cancel: ShouldCancel = _never
) -> SessionOutcome:
    """Run one session in a fresh checkout of its base and return what it left."""
    with scratch(root, task.run_id, task.task_id, task.code, task.branch) as place:
        request = _request(task, place)
        atomic_write_bytes(request.instructions_file, task.instructions)
        atomic_write_bytes(request.candidate_file, task.placeholder)
        agent = make_agent(task.agent)
        result = agent.run(request, should_cancel, lambda _pgid: None)
        return _collect(task, place, request, result)


def _request(task: SessionTask, place: Scratch) -> SessionRequest:
    history = task.history
    return SessionRequest(
        run_id=task.run_id,
        iteration=task.iteration,
        worktree=place.tree,
        instructions_file=place.files / "instructions.md",
        candidate_file=place.files / "candidate.json",
        base_commit=task.code.commit,
        log_path=place.files / "agent.log",
        timeout=task.timeout,
        sandbox=task.sandbox,
        history=lambda after: [p for p in history if p.iteration > after],
    )


def _collect(
    task: SessionTask, place: Scratch, request: SessionRequest, result: AgentResult
) -> SessionOutcome:
    tree = place.tree
    head = git.head(tree)
    bundle_path = place.files / "candidate.bundle"
    bundled = git.create_bundle(tree, bundle_path, head, exclude=[task.code.commit])
    rule = session_dirt(task.sandbox)
    patch = git.diff_patch(tree, head, keep_untracked=lambda p: not rule.spares(p))
    return SessionOutcome(
        result=result,
        head=head,
        on_branch=git.head_branch(tree) == f"refs/heads/{task.branch}",
        bundle=bundle_path.read_bytes() if bundled else None,
        patch=patch,
        artifact=_read(request.candidate_file),
        log=_read(request.log_path) or b"",
        node=node_name(),
    )


def session_dirt(sandbox: dict[str, Any]) -> RuntimeRule:
    """What a session may leave untracked without it being work (the run's own rule)."""
    links = tuple(dict.fromkeys((*DEFAULT_SHARED_LINKS, *sandbox.get("links", []))))
    return RuntimeRule(RUNTIME_FILES, links, tuple(sandbox.get("runtime", [])))


def _read(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        return None


# --- an evaluation ------------------------------------------------------------------------


def run_evaluation(
    root: Path, task: EvaluationTask, should_cancel: ShouldCancel = _never
) -> EvaluationOutcome:
    """Run the frozen evaluator on a fresh checkout of the commit, with the sealed harness
    unpacked and verified beside it."""
    with scratch(root, task.run_id, task.task_id, task.code) as place:
        mission_dir = place.tree / task.relative_dir
        env = evaluator_env(task.run_id, task.iteration, place.tree, mission_dir)
        if task.sealed is not None:
            env["AUTORESEARCH_SEALED_DIR"] = str(unpack_sealed(task.sealed, place.folder))
        log_path = place.files / "evaluator.log"
        record = run_evaluator(
            EvaluatorSpec.from_dict(task.evaluator),
            place.tree,
            env,
            log_path,
            grace_seconds=kill_grace(),
            should_cancel=should_cancel,
        )
        return EvaluationOutcome(record, _read(log_path) or b"", node_name())


def pack_sealed(sealed_dir: Path, digests: dict[str, str]) -> SealedCopy:
    """The driver's verified sealed copy as an archive (no links: seal copied files only)."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        for rel in sorted(digests):
            tar.add(sealed_dir / rel, arcname=rel)
    return SealedCopy(buffer.getvalue(), dict(digests))


def unpack_sealed(copy: SealedCopy, folder: Path) -> Path:
    """Unpack the sealed harness into `folder/sealed` and check it against prepare's digests."""
    target = private_dir(folder / "sealed")
    with tarfile.open(fileobj=io.BytesIO(copy.archive), mode="r:gz") as tar:
        tar.extractall(target, filter="data")
    for rel, expected in copy.digests.items():
        if not (target / rel).exists() or digest(target / rel) != expected:
            raise ContractError(f"sealed harness copy damaged in transit: {rel}")
    return target


# --- the driver's side of the wire --------------------------------------------------------


def land_session(
    cache: Path,
    worktree: Path,
    branch: str,
    outcome: SessionOutcome,
    paths: SessionFiles,
) -> AgentResult:
    """Make the driver's worktree look as if the session had run there: its commits on
    `branch`, its uncommitted changes in the tree, its artifact and log in the run's files.

    `cache` is the repository the commits are fetched into (the worktree's own); the tree was
    at the session's base, clean, when the task was submitted.
    """
    if outcome.bundle is not None:
        with tempfile.TemporaryDirectory(prefix="autoresearch-bundle-") as tmp:
            path = Path(tmp) / "candidate.bundle"
            path.write_bytes(outcome.bundle)
            git.fetch_bundle(cache, path, paths.incoming_ref)
        git.checkout_branch_at(worktree, branch, outcome.head)
    if outcome.patch:
        with tempfile.TemporaryDirectory(prefix="autoresearch-patch-") as tmp:
            patch = Path(tmp) / "uncommitted.patch"
            patch.write_bytes(outcome.patch)
            git.apply_patch(worktree, patch)
    atomic_write_bytes(paths.log, outcome.log)
    if outcome.artifact is None:
        paths.candidate.unlink(missing_ok=True)
    else:
        atomic_write_bytes(paths.candidate, outcome.artifact)
    return replace(outcome.result, log_file=str(paths.log))


@dataclass(frozen=True)
class SessionFiles:
    """Where the driver keeps what a remote session returned."""

    candidate: Path
    log: Path
    incoming_ref: str


def land_evaluation(outcome: EvaluationOutcome, log_path: Path) -> EvaluationRecord:
    """The evaluation's log in the driver's log file, and the record pointing at it."""
    atomic_write_bytes(log_path, outcome.log)
    return replace(outcome.record, log_file=str(log_path))


def bundle_of(repo: Path, tip: str, exclude: Sequence[str] = ()) -> bytes | None:
    """The bytes of a bundle of `tip` past `exclude` (None: nothing new), made in a temp dir."""
    with tempfile.TemporaryDirectory(prefix="autoresearch-bundle-") as tmp:
        path = Path(tmp) / "code.bundle"
        return path.read_bytes() if git.create_bundle(repo, path, tip, exclude) else None
