"""The only module that runs git.

Every call is hermetic: the caller's GIT_* environment is scrubbed, prompts are disabled, and
the tool's own commits use a fixed identity with hooks and signing off. Functions return parsed
values; paths are read NUL-separated.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import re
import shutil
import tempfile
import time
import uuid
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

from autoresearch import git_files, git_objects
from autoresearch.errors import GitError, ProcessError
from autoresearch.fsutil import child_umask
from autoresearch.proc import Captured, git_running_in, run_capture

TOOL_NAME = "autoresearch"
TOOL_EMAIL = "autoresearch@localhost"
_KEEP_GIT_VARS = ("GIT_EXEC_PATH", "GIT_SSH", "GIT_SSH_COMMAND", "GIT_ASKPASS")


def _env(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_") or k in _KEEP_GIT_VARS}
    env["GIT_TERMINAL_PROMPT"] = "0"
    env["GIT_OPTIONAL_LOCKS"] = "0"
    # Paths we pass are file names, never pathspec magic: a file called `:(exclude)x` or
    # `:memory:` must be added like any other.
    env["GIT_LITERAL_PATHSPECS"] = "1"
    if extra:
        env.update(extra)
    return env


def _run(
    cwd: Path,
    args: Sequence[str],
    *,
    check: bool = True,
    stdin: bytes | None = None,
    env: Mapping[str, str] | None = None,
    umask: int | None = None,
) -> Captured:
    try:
        done = run_capture(["git", *args], cwd=cwd, env=_env(env), stdin=stdin, umask=umask)
    except ProcessError as exc:
        raise GitError(f"git {' '.join(args[:3])} failed: {exc}") from exc
    if check and done.returncode != 0:
        raise GitError(_failure(args, done))
    return done


def _failure(args: Sequence[str], done: Captured) -> str:
    detail = (done.stderr or done.stdout).decode("utf-8", "replace").strip().splitlines()
    tail = " | ".join(detail[-3:]) if detail else "no output"
    # "Unable to create '<path>.lock': File exists." comes first, before git's advice: the
    # one line that names the lock must not be cut off
    lock = next((line for line in detail if ".lock'" in line), None)
    if lock is not None and lock not in detail[-3:]:
        tail = f"{lock.strip()} | {tail}"
    return f"git {' '.join(args[:3])} failed (exit {done.returncode}): {tail}"


def _text(done: Captured) -> str:
    return done.stdout.decode("utf-8", "replace").strip()


def _commit_flags() -> list[str]:
    return [
        "-c", f"user.name={TOOL_NAME}",
        "-c", f"user.email={TOOL_EMAIL}",
        "-c", "commit.gpgsign=false",
    ]  # fmt: skip


# --- repository and refs -------------------------------------------------------------------


def toplevel(path: Path) -> Path | None:
    """The realpath of the repository containing `path`, or None outside any repository."""
    done = _run(path, ["rev-parse", "--show-toplevel"], check=False)
    if done.returncode != 0:
        return None
    return Path(os.path.realpath(_text(done)))


def main_root(path: Path) -> Path | None:
    """The main working tree of the repository containing `path` (also from a worktree)."""
    found = git_files.main_root(path)  # a worktree's top folder: no process
    if found is not None:
        return found
    done = _run(path, ["rev-parse", "--path-format=absolute", "--git-common-dir"], check=False)
    if done.returncode != 0:
        return None
    common = Path(os.path.realpath(_text(done)))
    if common.name == ".git":
        return common.parent
    return toplevel(path)


def resolve_commits(cwd: Path, names: Sequence[str]) -> list[str | None]:
    """Full SHAs for `names` peeled to commits (like `rev-parse --verify <n>^{commit}`)."""
    return _peeled(cwd, [(name, "commit") for name in names])


def trees(cwd: Path, names: Sequence[str]) -> list[str | None]:
    """The tree ids of `names` (commits), by one git process at most however many; None where
    a name does not resolve (the duplicate check's lookup key: a tree is what an evaluator
    measures)."""
    return _peeled(cwd, [(name, "tree") for name in names])


# How far `candidate_facts` follows a candidate's first parents looking for the kept commit
# before `descends_from` asks `git merge-base` (a session usually commits once or a few times).
LINEAGE = 16


@dataclass(frozen=True)
class CandidateFacts:
    """What one `git cat-file` process (or the loose objects, git_objects) tells of a candidate
    before it is judged: the base, candidate and HEAD commits' SHAs, the trees of the candidate
    and of the kept commit, and the candidate's first parents, nearest first (at most LINEAGE;
    read from objects, they end at the kept commit). None: does not resolve."""

    base: str | None
    commit: str | None
    head: str | None
    tree: str | None
    kept_tree: str | None
    lineage: tuple[str, ...]


def candidate_facts(cwd: Path, base: str, commit: str, kept: str) -> CandidateFacts:
    """`CandidateFacts` of the names an artifact gives, against the run's `kept` commit: read
    from loose objects where that is certain (git_objects, no process), else asked of git."""
    read = git_objects.candidate_facts(cwd, base, commit, kept, LINEAGE)
    if read is not None:
        return CandidateFacts(
            read.base, read.commit, read.head, read.tree, read.kept_tree, read.lineage
        )
    queries = [(base, "commit"), (commit, "commit"), ("HEAD", "commit")]
    queries += [(commit, "tree"), (kept, "tree")]
    queries += [(f"{commit}~{n}", "commit") for n in range(1, LINEAGE + 1)] if commit else []
    found = _peeled(cwd, queries)
    lineage: list[str] = []
    for parent in found[5:]:  # `~n` past the root commit resolves to nothing
        if parent is None:
            break
        lineage.append(parent)
    return CandidateFacts(found[0], found[1], found[2], found[3], found[4], tuple(lineage))


def descends_from(cwd: Path, ancestor: str, facts: CandidateFacts) -> bool:
    """Whether `ancestor` is the candidate or one of its ancestors: found among its first
    parents without a process, else asked of git (a merge, a longer history, or not at all)."""
    if facts.commit is None:
        return False
    if ancestor == facts.commit or ancestor in facts.lineage:
        return True
    return is_ancestor(cwd, ancestor, facts.commit)


def _peeled(cwd: Path, queries: Sequence[tuple[str, str]]) -> list[str | None]:
    """Each name peeled to an object of its kind: from loose objects where that is certain
    (git_objects, no process), else all by one `git cat-file --batch-check`."""
    if not queries:
        return []
    read = git_objects.peeled(cwd, queries)
    if read is not None:
        return read
    payload = "".join(_peel_query(name, kind) for name, kind in queries)
    fmt = "--batch-check=%(objectname) %(objecttype)"
    done = _run(cwd, ["cat-file", fmt], stdin=payload.encode())
    results: list[str | None] = []
    lines = done.stdout.decode("utf-8", "replace").splitlines()
    for line, (_, kind) in zip(lines, queries, strict=False):
        parts = line.split(" ")
        ok = len(parts) == 2 and parts[1] == kind and len(parts[0]) >= 40
        results.append(parts[0] if ok else None)
    if len(lines) != len(queries):
        raise GitError(f"git cat-file answered {len(lines)} lines for {len(queries)} names")
    return results


def _peel_query(name: str, kind: str) -> str:
    if not name.strip() or any(c in name for c in "\r\n\0"):
        name = "refs/autoresearch-invalid/\x7f"  # DEL is never valid in a ref: always missing
    return f"{name}^{{{kind}}}\n"


def same_tree(cwd: Path, a: str, b: str) -> bool:
    """True when commits `a` and `b` record the same tree (an empty commit changes nothing)."""
    if a == b:
        return True
    done = _run(cwd, ["rev-parse", f"{a}^{{tree}}", f"{b}^{{tree}}"], check=False)
    trees = _text(done).split()
    return done.returncode == 0 and len(trees) == 2 and trees[0] == trees[1]


def head(cwd: Path) -> str:
    """The full SHA of HEAD in `cwd`; a repository with no commit yet is named as such, not
    with git's 'Needed a single revision'."""
    args = ["rev-parse", "--verify", "HEAD^{commit}"]
    done = _run(cwd, args, check=False)
    if done.returncode == 0:
        return _text(done)
    if _run(cwd, ["symbolic-ref", "-q", "HEAD"], check=False).returncode == 0:
        # HEAD names a branch that does not exist yet: an unborn branch, nothing committed
        raise GitError(
            f"the repository has no commits yet: commit your project in {cwd} first "
            "(git add -A && git commit -m 'initial')"
        )
    raise GitError(_failure(args, done))


def current_branch(cwd: Path) -> str | None:
    """The checked-out branch name, or None on a detached HEAD."""
    done = _run(cwd, ["symbolic-ref", "--quiet", "--short", "HEAD"], check=False)
    return _text(done) or None if done.returncode == 0 else None


def head_branch(cwd: Path) -> str | None:
    """The full ref HEAD points at (`refs/heads/<name>`), or None on a detached HEAD; read
    from the HEAD file when `cwd` is a worktree's top folder (git_files), else from git."""
    read = git_files.head_ref(cwd)
    if read.known:
        return read.ref
    done = _run(cwd, ["symbolic-ref", "--quiet", "HEAD"], check=False)
    return _text(done) or None if done.returncode == 0 else None


def is_ancestor(cwd: Path, ancestor: str, commit: str) -> bool:
    """True when `ancestor` is `commit` or one of its ancestors."""
    done = _run(cwd, ["merge-base", "--is-ancestor", ancestor, commit], check=False)
    return done.returncode == 0


def checkout_branch_at(cwd: Path, branch: str, commit: str) -> None:
    """Point `branch` at `commit` and check it out, discarding tracked changes (the caller has
    saved them). Works from a detached HEAD or another branch alike."""
    args = ["checkout", "-q", "-f", "--ignore-other-worktrees", "-B", branch, commit]
    _run(cwd, args)


def branch_exists(cwd: Path, branch: str) -> bool:
    done = _run(cwd, ["show-ref", "--verify", "--quiet", f"refs/heads/{branch}"], check=False)
    return done.returncode == 0


def local_branches(cwd: Path, pattern: str) -> list[str]:
    done = _run(cwd, ["for-each-ref", "--format=%(refname:short)", f"refs/heads/{pattern}"])
    return [line for line in _text(done).splitlines() if line]


def update_ref(cwd: Path, ref: str, commit: str) -> None:
    """Point `ref` at `commit` (creating it), so that the commit survives `git gc`."""
    _run(cwd, ["update-ref", ref, commit])


def keep_reachable(repo: Path, ref: str, commit: str) -> None:
    """`update_ref` for a full SHA in the main worktree `repo`, written as a loose ref file
    when the repository is plain (git_files.create_ref: no process), else by git."""
    if not git_files.create_ref(repo, ref, commit):
        update_ref(repo, ref, commit)


def refs_under(cwd: Path, prefix: str) -> list[str]:
    """Full names of the refs below `prefix` (e.g. `refs/autoresearch/<run>/`)."""
    return list(ref_targets(cwd, prefix))


def ref_targets(cwd: Path, prefix: str) -> dict[str, str]:
    """The refs below `prefix`, each with the object it points at."""
    done = _run(cwd, ["for-each-ref", "--format=%(refname) %(objectname)", prefix])
    return dict(line.rsplit(" ", 1) for line in _text(done).splitlines() if line)


def rename_refs(
    cwd: Path, renames: Mapping[str, tuple[str, str]], created: Mapping[str, str] | None = None
) -> None:
    """Give each ref (key) a new name, `(new name, the object both point at)`, and make each
    ref of `created` (name: object), in one transaction: all of it is done, or none (a new
    name that exists refuses it all)."""
    created = created or {}
    if not renames and not created:
        return
    payload = "".join(
        f"create {new} {target}\ndelete {old} {target}\n" for old, (new, target) in renames.items()
    )
    payload += "".join(f"create {ref} {target}\n" for ref, target in created.items())
    _run(cwd, ["update-ref", "--stdin"], stdin=payload.encode())


def delete_refs(cwd: Path, refs: Sequence[str]) -> None:
    if not refs:
        return
    payload = "".join(f"delete {ref}\n" for ref in refs)
    _run(cwd, ["update-ref", "--stdin"], stdin=payload.encode())


def checkout_new_branch(cwd: Path, branch: str) -> None:
    """Create `branch` at HEAD and check it out, keeping the working tree as it is."""
    _run(cwd, ["checkout", "-q", "-b", branch])


def git_path(cwd: Path, name: str) -> Path:
    """Resolve a path inside the git directory (e.g. `info/exclude`, shared by worktrees)."""
    out = _text(_run(cwd, ["rev-parse", "--git-path", name]))
    path = Path(out)
    return path if path.is_absolute() else (cwd / path)


def git_dirs(cwd: Path) -> tuple[Path, Path]:
    """The worktree's own git directory and the common one it shares (equal outside a
    linked worktree), absolute."""
    found = git_files.dirs(cwd)  # a worktree's top folder: no process
    if found is not None:
        return found
    out = _text(_run(cwd, ["rev-parse", "--path-format=absolute", "--git-dir", "--git-common-dir"]))
    own, common = out.splitlines()
    return Path(own), Path(common)


# --- stale locks --------------------------------------------------------------------------

# Lock files git leaves behind when it is killed: they make every later git command in that
# repository fail with "Unable to create '….lock': File exists".
_TOP_LOCKS = ("index.lock", "HEAD.lock", "ORIG_HEAD.lock", "config.lock", "packed-refs.lock")
_SHARED_LOCKS = ("packed-refs.lock", "config.lock")


def lock_files(cwd: Path, whole_repository: bool = False, own_dir: bool = True) -> list[Path]:
    """Lock files in the git directories of the worktree at `cwd`: its own (index, HEAD;
    not with `own_dir=False`) and the shared refs; with `whole_repository`, those of the main
    checkout and every worktree too."""
    own, common = git_dirs(cwd)
    found = {own / name for name in _TOP_LOCKS} if own_dir else set()
    found |= {common / name for name in _SHARED_LOCKS}
    if whole_repository:
        found |= {common / name for name in _TOP_LOCKS}
        if (common / "worktrees").is_dir():
            found |= {p / name for p in (common / "worktrees").iterdir() for name in _TOP_LOCKS}
    found = {p for p in found if p.is_file()}
    if (common / "refs").is_dir():
        found |= {p for p in (common / "refs").rglob("*.lock") if p.is_file()}
    return sorted(found)


def stale_locks(cwd: Path, whole_repository: bool = False, own_dir: bool = True) -> list[Path]:
    """The lock files of `lock_files` while no git process works in this repository."""
    found = lock_files(cwd, whole_repository, own_dir)
    if not found:
        return []
    own, common = git_dirs(cwd)
    roots = [own, common, cwd, *[r for r in (main_root(cwd),) if r is not None]]
    return [] if git_running_in(roots) else found


def clear_stale_locks(
    cwd: Path, whole_repository: bool = False, own_dir: bool = True
) -> list[Path]:
    """Remove the locks a killed git left (none while a git process is running); returns
    what was removed."""
    removed = []
    for lock in stale_locks(cwd, whole_repository, own_dir):
        with contextlib.suppress(FileNotFoundError):
            lock.unlink()
            removed.append(lock)
    return removed


def worktree_problem(path: Path, branch: str) -> str | None:
    """Why the worktree at `path` is not a whole checkout of `branch`, or None.

    A `git worktree add` or a reset killed half-way leaves HEAD unborn or on no branch, no
    index, an index that differs from HEAD, or files missing from the working tree: a commit
    made on such a tree would record the missing files as deleted."""
    ref = _run(path, ["symbolic-ref", "-q", "HEAD"], check=False)
    if ref.returncode != 0 or _text(ref) != f"refs/heads/{branch}":
        return f"HEAD is not on {branch}"
    if (half_built := unfinished_add(path, branch)) is not None:
        return half_built
    staged = _run(path, ["diff-index", "--cached", "--quiet", "HEAD", "--"], check=False)
    if staged.returncode != 0:
        return "the index differs from HEAD"
    missing = _run(path, ["diff-files", "--name-only", "--diff-filter=D", "-z"], check=False)
    if missing.returncode != 0 or missing.stdout.strip(b"\0"):
        return "files of HEAD are missing from the working tree"
    return None


def unfinished_add(path: Path, branch: str) -> str | None:
    """The damage of `worktree_problem` that only a `git worktree add` killed half-way leaves,
    or None: HEAD naming no commit (git writes a zero HEAD first), or no index (the checkout
    writes it last). A session's own work – staged edits, deleted files, another branch or a
    detached HEAD – is never taken for it."""
    if resolve_commits(path, ["HEAD"]) == [None]:
        return "HEAD does not name a commit"
    own, _ = git_dirs(path)
    if not (own / "index").is_file():
        return "the index is missing"
    return None


# --- worktrees -----------------------------------------------------------------------------


def ensure_worktree(
    repo: Path,
    path: Path,
    branch: str,
    start: str,
    damaged: Callable[[Path, str], str | None] = worktree_problem,
) -> bool:
    """Make `path` a worktree of `repo` with `branch` checked out (created at `start` when it
    does not exist); whether it had to be (re)built. A registered worktree that `damaged`
    finds half-built (a kill inside `git worktree add` or a reset: committing there would
    record the project's files as deleted) and a directory that is no worktree are built
    anew; the branch, and so every commit on it, is kept. The caller has made `path.parent`."""
    if is_worktree_of(path, repo):
        if damaged(path, branch) is None:
            return False
        worktree_remove(repo, path)
    if path.exists():
        shutil.rmtree(path)  # a half-created directory: nothing of anyone's is in it
    worktree_remove(repo, path)  # prune a registration without a directory
    if branch_exists(repo, branch):
        worktree_add_existing(repo, path, branch)
    else:
        worktree_add(repo, path, branch, start)
    return True


def worktree_add(repo: Path, path: Path, branch: str, start: str, replace: bool = False) -> None:
    """Create `branch` at `start` and check it out in a new worktree at `path`; with `replace`,
    a branch of that name that no worktree has checked out is moved to `start` instead."""
    flag = "-B" if replace else "-b"
    _add_worktree(repo, path, [flag, branch, str(path), start])


def worktree_add_existing(repo: Path, path: Path, branch: str) -> None:
    """Check an existing branch out in a new worktree at `path`."""
    _add_worktree(repo, path, [str(path), branch])


def worktree_add_detached(repo: Path, path: Path, commit: str) -> None:
    """A scratch worktree at `path` with `commit` checked out on no branch."""
    _add_worktree(repo, path, ["--detach", str(path), commit])


def _add_worktree(repo: Path, path: Path, args: list[str]) -> None:
    with _worktrees_still(repo):
        _run(repo, ["worktree", "add", "-q", *args], umask=child_umask(path))


# `git worktree add` writes the new worktree's HEAD as the null object id before it checks
# anything out, and a fetch checks the commits it brings against every worktree's HEAD: a
# fetch beside an add fails with "fatal: bad object worktrees/<name>/HEAD" (git 2.39; a Ray
# driver landing one lane's session while it starts a reading ahead for another); and one
# beside a removal fails on the registration it listed and can no longer read. Adds, removals
# and fetches take this lock in the shared git directory, so threads of one driver and other
# processes wait for each other alike; the kernel drops it when its holder dies. The file
# is opened to read only: flock needs no write access, and in a repository a group shares
# (core.sharedRepository) the first user's file is the others' to lock too, whatever its mode.
WORKTREES_LOCK = "autoresearch-worktrees.lock"
# A git directory this process cannot write: git's own add or fetch fails there in its own
# words (exit 2), which the lock would turn into an internal error
_UNWRITABLE = frozenset({errno.EACCES, errno.EPERM, errno.EROFS})


@contextlib.contextmanager
def _worktrees_still(cwd: Path) -> Iterator[None]:
    """Hold the repository's worktree lock (`WORKTREES_LOCK`) for the block (none where the
    git directory cannot be written: nothing can be added or fetched there either)."""
    common = _common_dir(cwd)
    path = common / WORKTREES_LOCK
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CREAT | os.O_CLOEXEC, 0o666)
    except OSError as exc:
        if exc.errno not in _UNWRITABLE:
            raise
        if os.access(common, os.W_OK):  # only the file is closed to us: git would add unlocked
            raise GitError(
                f"cannot open {path} to lock the repository's worktrees ({exc.strerror}): "
                f"another user made it; let every user of the repository read it "
                f"(chmod a+r {path})"
            ) from None
        fd = None  # the block runs outside the handler: its errors are not "during" this one
    if fd is None:
        yield
        return
    try:
        _readable_by_all(fd)
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing drops the lock


def _readable_by_all(fd: int) -> None:
    """The lock file this user made (under a umask of 077, say) made readable to the others
    who may add worktrees here: closed to them, it would stop their adds and fetches."""
    found = os.fstat(fd)
    if found.st_uid == os.geteuid() and found.st_mode & 0o044 != 0o044:
        with contextlib.suppress(OSError):
            os.fchmod(fd, (found.st_mode & 0o777) | 0o044)


def _common_dir(cwd: Path) -> Path:
    """The shared git directory of the worktree or bare repository at `cwd`."""
    if not (cwd / ".git").exists() and (cwd / "HEAD").is_file() and (cwd / "objects").is_dir():
        return cwd  # a bare repository (a node's cache): no process
    # (a working tree may track a HEAD file and an objects folder at its top: test data)
    return git_dirs(cwd)[1]


# --- half-built worktrees (a kill inside `git worktree add`) --------------------------------
#
# `git worktree add` (2.39) registers the tree first – `<git dir>/worktrees/<name>/` with its
# `gitdir`, a `locked` file ("initializing") and HEAD written as the null object id – then
# points HEAD at the commit, checks the files out (writing the index) and removes `locked`.
# Killed in between (SIGKILL, a power cut: git removes its junk on SIGTERM), the registration
# stays. A null HEAD, or one naming a commit the repository lacks, breaks every `git fetch`
# of the repository ("fatal: bad object worktrees/<name>/HEAD": fetch checks what it brings
# against every worktree's HEAD) and `git gc`; `git worktree prune` keeps it (it is locked).

MSG_BREAKS_FETCH = (
    "every `git fetch` in the repository fails because of it "
    "(fatal: bad object worktrees/{name}/HEAD), and `git gc` too"
)


@dataclass(frozen=True)
class HalfBuiltWorktree:
    """A worktree registration a killed `git worktree add` left half-built."""

    name: str  # its folder under `<git dir>/worktrees/`
    admin: Path  # that folder
    folder: Path | None  # the worktree's own folder, as its `gitdir` file names it
    problem: str  # what is wrong, in plain words
    breaks_fetch: bool  # HEAD names no commit: every fetch (and gc) of the repository fails
    unfinished: bool  # git's own "add in progress" lock is still there, the index is not
    age_seconds: float = 0.0  # since git last wrote the registration (its newest admin file)

    @property
    def nothing_inside(self) -> bool:
        """The folder is gone, or holds only the `.git` file an add writes before HEAD is
        set: removing it loses nothing."""
        if self.folder is None or not self.folder.is_dir():
            return True
        return all(entry.name == ".git" for entry in self.folder.iterdir())


def half_built_problem(
    head: str | None, locked: bool, has_index: bool, commit_known: bool | None
) -> tuple[str, bool] | None:
    """What a killed `git worktree add` left wrong in one registration, and whether it breaks
    fetch; None when nothing is. `head`: the admin HEAD file's text (None: no file);
    `locked`: a `locked` file is there; `commit_known`: whether the repository has the commit
    a detached HEAD names (None: not asked)."""
    if head is None:
        return "its HEAD file is missing (`git worktree add` stopped before writing it)", False
    if _OBJECT_ID_TEXT.fullmatch(head) and set(head) == {"0"}:
        return (
            "HEAD is the null object id (`git worktree add` was stopped before it checked "
            "anything out)",
            True,
        )
    if _OBJECT_ID_TEXT.fullmatch(head) and commit_known is False:
        return f"HEAD names {head[:12]}, a commit the repository does not have", True
    if locked and not has_index:
        return "`git worktree add` was stopped while checking the files out (no index)", False
    return None


_OBJECT_ID_TEXT = re.compile(r"[0-9a-f]{40}([0-9a-f]{24})?")


def half_built_worktrees(cwd: Path, check_objects: bool = False) -> list[HalfBuiltWorktree]:
    """Every half-built registration of the repository at `cwd` (`half_built_problem`), read
    from the files of `<git dir>/worktrees/` – no git process unless `check_objects` asks
    whether the commits detached HEADs name exist (one `git cat-file`, for doctor)."""
    admin_root = _common_dir(cwd) / "worktrees"
    entries = sorted(p for p in admin_root.iterdir() if p.is_dir()) if admin_root.is_dir() else []
    heads = {entry: _small_text(entry / "HEAD") for entry in entries}
    known: dict[str, bool] = {}
    if check_objects:
        ids = sorted(
            {h for h in heads.values() if h and _OBJECT_ID_TEXT.fullmatch(h) and set(h) != {"0"}}
        )
        known = {oid: got == oid for oid, got in zip(ids, resolve_commits(cwd, ids), strict=True)}
    found = []
    for entry in entries:
        head = heads[entry]
        locked, has_index = (entry / "locked").exists(), (entry / "index").is_file()
        problem = half_built_problem(head, locked, has_index, known.get(head or ""))
        if problem is None:
            continue
        gitdir = _small_text(entry / "gitdir")
        folder = Path(os.path.normpath(gitdir)).parent if gitdir else None
        found.append(
            HalfBuiltWorktree(
                entry.name, entry, folder, problem[0], problem[1], locked and not has_index,
                _age_seconds(entry),
            )
        )  # fmt: skip
    return found


def _age_seconds(admin: Path) -> float:
    """Seconds since git last wrote the registration at `admin` (its newest file)."""
    times = []
    for name in ("HEAD", "locked", "gitdir"):
        with contextlib.suppress(OSError):
            times.append((admin / name).stat().st_mtime)
    return max(0.0, time.time() - max(times)) if times else 0.0


def settled_half_built_worktrees(cwd: Path, check_objects: bool = False) -> list[HalfBuiltWorktree]:
    """`half_built_worktrees`, read again under the worktree lock when any is found: the null
    HEAD a live `git worktree add` of the tool has for a moment is never reported."""
    found = half_built_worktrees(cwd, check_objects)
    if not found:
        return found
    with _worktrees_still(cwd):
        return half_built_worktrees(cwd, check_objects)


def _small_text(path: Path) -> str | None:
    """A short git admin file's text, stripped; None when it is not there or unreadable."""
    try:
        return path.read_text(encoding="utf-8", errors="replace").strip()
    except OSError:
        return None


@dataclass(frozen=True)
class HalfBuiltRepair:
    """What a repair did with one half-built registration: removed it, or why not."""

    tree: HalfBuiltWorktree
    removed: bool
    refused: str | None = None  # why it was left (a run drives it, files in it)


def repair_half_built(
    cwd: Path,
    refuse: Callable[[HalfBuiltWorktree], str | None],
    check_objects: bool = False,
) -> list[HalfBuiltRepair]:
    """Remove the half-built registrations of the repository at `cwd` that `refuse` lets go
    (it answers why not, or None), with their folders – each only when that loses nothing
    (`removable`).

    Under the worktree lock (`WORKTREES_LOCK`): a live `git worktree add` of the tool holds
    it, so the null HEAD it has for a moment is never taken for a killed one; the list is
    read again once the lock is held."""
    with _worktrees_still(cwd):
        return _repair_half_built(cwd, refuse, check_objects)


def _repair_half_built(
    cwd: Path, refuse: Callable[[HalfBuiltWorktree], str | None], check_objects: bool
) -> list[HalfBuiltRepair]:
    done = []
    for tree in half_built_worktrees(cwd, check_objects):
        why = refuse(tree) or removable(tree)
        if why is None:
            _remove_registration(tree)
        done.append(HalfBuiltRepair(tree, why is None, why))
    return done


def removable(tree: HalfBuiltWorktree) -> str | None:
    """Why removing this half-built worktree could lose something, or None: its folder holds
    nothing but `.git`, or git's add never finished (its lock is there and the index is not:
    only git's own checkout wrote there, no session ever worked in it)."""
    if tree.nothing_inside or tree.unfinished:
        return None
    return (
        f"{tree.folder} holds files besides .git: move what you want out of it first "
        f"(then: rm -rf {tree.folder} {tree.admin})"
    )


def _remove_registration(tree: HalfBuiltWorktree) -> None:
    """The folder, then the registration (`git worktree remove` refuses a locked tree, and
    `git worktree prune` would touch the user's other registrations)."""
    if tree.folder is not None and tree.folder.is_dir():
        shutil.rmtree(tree.folder, ignore_errors=True)
    shutil.rmtree(tree.admin, ignore_errors=True)


def checkout_detached(cwd: Path, commit: str) -> None:
    """Move a scratch worktree to `commit`, dropping any change in it."""
    _run(cwd, ["checkout", "-q", "-f", "--detach", commit])


def worktree_remove(repo: Path, path: Path) -> None:
    """Remove one worktree: its directory and its registration (never anyone else's).

    Under the worktree lock (`WORKTREES_LOCK`), as an add is: a fetch lists every worktree's
    registration and then reads each, and one removed in between failed it ("fatal: Invalid
    path '<git dir>/worktrees/<name>'")."""
    with _worktrees_still(repo):
        _run(repo, ["worktree", "remove", "--force", str(path)], check=False)
        if path.exists():
            shutil.rmtree(path, ignore_errors=True)
        _forget_worktree(repo, path)


def _forget_worktree(repo: Path, path: Path) -> None:
    """Drop the registration of a worktree whose directory is gone.

    `git worktree prune` would also drop the registrations of the user's other worktrees that
    happen to be unreachable right now (an unmounted disk); this touches only `path`'s.
    """
    admin = git_path(repo, "worktrees")
    if not admin.is_dir():
        return
    wanted = os.path.realpath(path / ".git")
    for entry in admin.iterdir():
        gitdir = entry / "gitdir"
        try:
            target = gitdir.read_text(encoding="utf-8").strip()
        except OSError:
            continue
        if os.path.realpath(target) == wanted:
            shutil.rmtree(entry, ignore_errors=True)


def delete_branch(repo: Path, branch: str) -> None:
    _run(repo, ["branch", "-q", "-D", branch], check=False)


def is_worktree_of(path: Path, repo: Path) -> bool:
    """True when `path` is a working tree whose repository is `repo`'s."""
    if not path.is_dir():
        return False
    if _same_repository_by_files(path, repo):
        return True
    done = _run(path, ["rev-parse", "--git-common-dir"], check=False)
    if done.returncode != 0:
        return False
    common = Path(_text(done))
    common = common if common.is_absolute() else path / common
    mine = git_path(repo, ".")
    return os.path.realpath(common) == os.path.realpath(mine)


def _same_repository_by_files(path: Path, repo: Path) -> bool:
    """`is_worktree_of` answered yes from the git folders' files (git_files.dirs): `path`'s
    common git directory is `repo`'s own. False when unsure (git is asked)."""
    mine, theirs = git_files.dirs(path), git_files.dirs(repo)
    return mine is not None and theirs is not None and mine[1] == theirs[0]


# --- status, commits, resets ---------------------------------------------------------------


@dataclass(frozen=True)
class StatusEntry:
    """One `git status --porcelain` entry: two status letters and a path."""

    code: str
    path: str
    orig_path: str | None = None

    @property
    def untracked(self) -> bool:
        return self.code == "??"

    def line(self) -> str:
        if self.orig_path:
            return f"{self.code} {self.orig_path} -> {self.path}"
        return f"{self.code} {self.path}"


def status(cwd: Path) -> list[StatusEntry]:
    """Porcelain status including every untracked file (spec §6)."""
    done = _run(cwd, ["status", "--porcelain", "--untracked-files=all", "-z"])
    return parse_status_z(done.stdout)


def parse_status_z(raw: bytes) -> list[StatusEntry]:
    """Parse `git status --porcelain -z` output."""
    fields = raw.decode("utf-8", "surrogateescape").split("\0")
    entries: list[StatusEntry] = []
    i = 0
    while i < len(fields):
        item = fields[i]
        i += 1
        if len(item) < 4:
            continue
        code, path = item[:2], item[3:]
        orig = None
        if code[0] in "RC" or code[1] in "RC":
            orig = fields[i] if i < len(fields) else None
            i += 1
        entries.append(StatusEntry(code, path, orig))
    return entries


def commit_all(
    cwd: Path,
    message: str,
    pathspec: Sequence[str] = (),
    author: tuple[str, str] | None = None,
) -> str | None:
    """Stage everything (or `pathspec`) and commit; the new SHA, or None when nothing changed."""
    if pathspec:  # through stdin: any number of paths, whatever their names
        spec = "\0".join(pathspec).encode("utf-8", "surrogateescape")
        _run(cwd, ["add", "-A", "--pathspec-from-file=-", "--pathspec-file-nul"], stdin=spec)
    else:
        _run(cwd, ["add", "-A"])
    staged = _run(cwd, ["diff", "--cached", "--quiet"], check=False)
    if staged.returncode == 0:
        return None
    extra = None
    if author is not None:
        extra = {"GIT_AUTHOR_NAME": author[0], "GIT_AUTHOR_EMAIL": author[1]}
    _run(
        cwd,
        [*_commit_flags(), "commit", "-q", "--no-verify", "--allow-empty-message", "-F", "-"],
        stdin=message.encode(),
        env=extra,
    )
    return head(cwd)


def replay_onto(cwd: Path, base: str, onto: str) -> tuple[str | None, str]:
    """Replay the commits `base..HEAD` of the branch checked out in `cwd` onto `onto`
    (`git rebase --onto`, the tool's identity, hooks off): (the new HEAD, ""), or (None, what
    git said) on a conflict, after which the branch is back where it was. Commits that become
    empty are dropped."""
    flags = [*_commit_flags(), "-c", "core.hooksPath=/dev/null"]
    done = _run(cwd, [*flags, "rebase", "-q", "--no-autostash", "--onto", onto, base], check=False)
    if done.returncode == 0:
        return head(cwd), ""
    abort_rebase(cwd)
    lines = (done.stdout + done.stderr).decode("utf-8", "replace").strip().splitlines()
    conflicts = [line for line in lines if line.startswith("CONFLICT")]
    return None, " | ".join((conflicts or lines or ["git rebase failed"])[:3])


def rebase_in_progress(cwd: Path) -> bool:
    """A rebase stopped half-way in `cwd` (a driver killed during a replay)."""
    return any(git_path(cwd, name).exists() for name in ("rebase-merge", "rebase-apply"))


def abort_rebase(cwd: Path) -> None:
    _run(cwd, ["rebase", "--abort"], check=False)


def reset_hard(cwd: Path, commit: str) -> None:
    _run(cwd, ["reset", "-q", "--hard", commit])


def clean_untracked(cwd: Path, keep: Iterable[str] = ()) -> None:
    """Remove untracked files and folders (not ignored ones), sparing `keep` patterns."""
    args = ["clean", "-q", "-f", "-d"]
    for pattern in keep:
        args += ["-e", pattern]
    _run(cwd, args)


def changed_paths(cwd: Path, base: str) -> list[str]:
    """Paths that differ from `base`: committed, staged, unstaged and untracked."""
    done = _run(cwd, ["diff", "--name-only", "-z", base])
    paths = {p for p in done.stdout.decode("utf-8", "surrogateescape").split("\0") if p}
    for entry in status(cwd):
        paths.add(entry.path)
    return sorted(paths)


def diff_patch(cwd: Path, base: str, keep_untracked: Callable[[str], bool] | None = None) -> bytes:
    """A binary patch from `base` to the working tree, untracked and staged files included.

    Untracked files are those git does not ignore, filtered by `keep_untracked`; files staged
    as new (`git add` without a commit) are always included, as they are in the working tree.
    A throw-away index is used, so the real index and working tree are untouched.
    """
    listed = _run(cwd, ["ls-files", "--others", "--exclude-standard", "-z"]).stdout
    untracked = [p for p in listed.decode("utf-8", "surrogateescape").split("\0") if p]
    if keep_untracked is not None:
        untracked = [p for p in untracked if keep_untracked(p)]
    untracked += [p for p in _staged_new(cwd) if os.path.lexists(cwd / p)]
    with tempfile.TemporaryDirectory(prefix="autoresearch-index-") as tmp:
        env = {"GIT_INDEX_FILE": str(Path(tmp) / "index")}
        _run(cwd, ["read-tree", "HEAD"], env=env)
        _run(cwd, ["add", "-u"], env=env)
        if untracked:
            spec = "\0".join(untracked).encode("utf-8", "surrogateescape")
            args = ["add", "--pathspec-from-file=-", "--pathspec-file-nul"]
            _run(cwd, args, env=env, stdin=spec)
        done = _run(cwd, ["diff", "--cached", "--binary", base], env=env)
    return done.stdout


def _staged_new(cwd: Path) -> list[str]:
    """Paths the real index adds to HEAD: in neither HEAD's tree nor the untracked list."""
    done = _run(cwd, ["diff", "--cached", "--name-only", "--diff-filter=A", "-z", "HEAD"])
    return [p for p in done.stdout.decode("utf-8", "surrogateescape").split("\0") if p]


def apply_patch(cwd: Path, patch: Path) -> None:
    """Apply a patch made by `diff_patch` to the working tree."""
    _run(cwd, ["apply", "--binary", str(patch)])


def list_files(cwd: Path) -> list[str]:
    """Files under `cwd` that git tracks or would add (not ignored), relative to `cwd`."""
    done = _run(cwd, ["ls-files", "--cached", "--others", "--exclude-standard", "-z"])
    names = done.stdout.decode("utf-8", "surrogateescape").split("\0")
    return sorted({name for name in names if name and (cwd / name).is_file()})


def is_tracked(cwd: Path, path: str) -> bool:
    """Whether git tracks `path` (relative to `cwd`) in the index."""
    done = _run(cwd, ["ls-files", "--error-unmatch", "--", path], check=False)
    return done.returncode == 0


def commit_message(cwd: Path, commit: str) -> str:
    return _text(_run(cwd, ["log", "-1", "--format=%B", commit]))


def init_repo(path: Path) -> None:
    """Create a repository with `main` as its first branch (used by the demo)."""
    path.mkdir(parents=True, exist_ok=True)
    _run(path, ["init", "-q", "-b", "main"])


# --- reading history (reports, review branches) --------------------------------------------


def commits_between(cwd: Path, base: str, tip: str) -> list[str]:
    """Commits reachable from `tip` but not from `base`, oldest first."""
    done = _run(cwd, ["rev-list", "--reverse", f"{base}..{tip}"])
    return _text(done).split()


def changed_files(cwd: Path, base: str, tip: str) -> list[str]:
    """Paths that differ between two commits; a rename counts as both of its paths."""
    done = _run(cwd, ["diff", "--name-only", "--no-renames", "-z", base, tip])
    return sorted({p for p in done.stdout.decode("utf-8", "surrogateescape").split("\0") if p})


def diff_between(cwd: Path, base: str, tip: str) -> bytes:
    """The binary patch from `base` to `tip` (what `git apply` takes)."""
    return _run(cwd, ["diff", "--no-color", "--no-ext-diff", "--binary", base, tip]).stdout


def readable_diff(cwd: Path, base: str, tip: str) -> str:
    """The diff from `base` to `tip` for people: a stat, then the patch."""
    args = ["diff", "--no-color", "--no-ext-diff", "--stat", "--patch", "-M", base, tip]
    return _run(cwd, args).stdout.decode("utf-8", "replace")


@dataclass(frozen=True)
class CommitInfo:
    """Who made a commit and when, and its message."""

    sha: str
    author_name: str
    author_email: str
    author_date: str
    committer_date: str
    message: str


def commit_info(cwd: Path, commit: str) -> CommitInfo:
    done = _run(cwd, ["log", "-1", "--format=%H%x00%an%x00%ae%x00%aI%x00%cI%x00%B", commit])
    sha, name, email, adate, cdate, message = done.stdout.decode("utf-8", "replace").split("\0", 5)
    return CommitInfo(sha, name, email, adate, cdate, message.rstrip("\n"))


# --- building commits without a checkout (review branches) ---------------------------------


def tree_with_patch(cwd: Path, start: str, patch: bytes, *options: str) -> str | None:
    """The tree of `start` with `patch` applied (`options`: more `git apply` flags), built in
    a throw-away index.

    No working tree is touched. None when the patch does not apply to `start`.
    """
    with tempfile.TemporaryDirectory(prefix="autoresearch-index-") as tmp:
        env = {"GIT_INDEX_FILE": str(Path(tmp) / "index")}
        _run(cwd, ["read-tree", start], env=env)
        if patch:
            args = ["apply", "--cached", "--binary", *options, "-"]
            applied = _run(cwd, args, env=env, stdin=patch, check=False)
            if applied.returncode != 0:
                return None
        return _text(_run(cwd, ["write-tree"], env=env))


class Removal(StrEnum):
    """How a change was taken out of a later state (`tree_without`)."""

    REVERSE = "reverse"  # its own diff, reversed, applies as it is
    MERGE = "3-way"  # a three-way merge, as `git revert` does: later edits near it
    ZERO_CONTEXT = "zero-context"  # its diff without context lines: later edits next to it


def tree_without(cwd: Path, start: str, parent: str, change: str) -> tuple[str, Removal] | None:
    """The tree of `start` with the change parent..change taken out, and how; None when no
    way takes it out alone (a later change rewrote its lines).

    Tried in order: the reversed diff; a three-way merge; the reversed diff without context
    lines, only when each of its hunks removes lines (so each is found by its content, never
    placed by a line number that later changes may have shifted). Built in a throw-away index.
    """
    diff = ["diff", "--no-color", "--no-ext-diff", "--binary", "--full-index", change, parent]
    reverse = _run(cwd, diff).stdout
    for options, how in (((), Removal.REVERSE), (("--3way",), Removal.MERGE)):
        tree = tree_with_patch(cwd, start, reverse, *options)
        if tree is not None:
            return tree, how
    bare = _run(cwd, [*diff[:-2], "-U0", change, parent]).stdout
    if not every_hunk_removes(bare):
        return None
    tree = tree_with_patch(cwd, start, bare, "--unidiff-zero")
    return None if tree is None else (tree, Removal.ZERO_CONTEXT)


def superseded(cwd: Path, tip: str, parent: str, change: str) -> bool:
    """Whether nothing of the change parent..change is left in `tip`: it only added or
    rewrote lines (no pure deletion, whose effect no line shows) and `git blame` of `tip`
    gives none of its commits a line – later changes rewrote every line it wrote."""
    bare = _run(cwd, ["diff", "--no-color", "--no-ext-diff", "-U0", change, parent]).stdout
    if not every_hunk_removes(bare):  # the reversed diff: each hunk removes what it added
        return False
    commits = {c.encode() for c in commits_between(cwd, parent, change)}
    for path in changed_files(cwd, parent, change):
        done = _run(cwd, ["blame", "--porcelain", tip, "--", path], check=False)
        if done.returncode != 0:
            continue  # gone from `tip` altogether
        for line in done.stdout.splitlines():
            if not line.startswith(b"\t") and line.split(b" ", 1)[0] in commits:
                return False
    return True


def every_hunk_removes(patch: bytes) -> bool:
    """Whether every hunk of a text patch removes at least one line (`@@ -a,b …` with b > 0);
    False for a binary patch or one without hunks."""
    if b"GIT binary patch" in patch:
        return False
    hunks = re.findall(rb"^@@ -\d+(?:,(\d+))? ", patch, flags=re.M)
    return bool(hunks) and all(count != b"0" for count in hunks)


def commit_tree(cwd: Path, tree: str, parent: str, message: str, info: CommitInfo) -> str:
    """A commit of `tree` on `parent` with `info`'s author and dates (so that building the same
    commit twice gives the same SHA), committed by the tool's identity."""
    env = {
        "GIT_AUTHOR_NAME": info.author_name,
        "GIT_AUTHOR_EMAIL": info.author_email,
        "GIT_AUTHOR_DATE": info.author_date,
        "GIT_COMMITTER_NAME": TOOL_NAME,
        "GIT_COMMITTER_EMAIL": TOOL_EMAIL,
        "GIT_COMMITTER_DATE": info.committer_date,
    }
    done = _run(
        cwd, ["commit-tree", tree, "-p", parent, "-F", "-"], stdin=message.encode(), env=env
    )
    return _text(done)


def create_branches(cwd: Path, branches: Mapping[str, str]) -> None:
    """Create every branch at its commit in one ref transaction: all of them or none, and
    never one that exists already."""
    if branches:
        lines = "".join(f"create refs/heads/{name} {sha}\n" for name, sha in branches.items())
        _run(cwd, ["update-ref", "--stdin"], stdin=lines.encode())


# --- the delegation worker's read tools (issue 16) -----------------------------------------


def grep(cwd: Path, args: Sequence[str]) -> Captured:
    """`git grep` with `args` (exit 1 = no match, not an error: the caller reads the code)."""
    return _run(cwd, ["grep", *args], check=False)


def working_diff(cwd: Path, base: str, paths: Sequence[str] = ()) -> str:
    """The diff from `base` to the working tree (tracked files), for reading."""
    args = ["diff", "--no-color", "--no-ext-diff", "-M", base, "--", *paths]
    return _run(cwd, args).stdout.decode("utf-8", "replace")


def log_lines(cwd: Path, path: str | None, limit: int) -> str:
    """One line per commit (short hash, date, author, subject), newest first."""
    args = ["log", f"-n{limit}", "--format=%h %ad %an %s", "--date=short"]
    return _text(_run(cwd, [*args, "--", path] if path else args))


def blame_lines(cwd: Path, path: str, start: int, end: int) -> str:
    """`git blame` of lines start..end of `path` at HEAD and in the working tree."""
    return _text(_run(cwd, ["blame", "--date=short", "-L", f"{start},{end}", "--", path]))


# --- moving commits between machines as bundles (issue 14, the Ray executor) --------------

BUNDLE_REF_PREFIX = "refs/autoresearch-transport/"


def create_bundle(cwd: Path, path: Path, tip: str, exclude: Sequence[str] = ()) -> bool:
    """Write a bundle of the commits reachable from `tip` but from none of `exclude` to
    `path`; False (and no file) when there are none.

    git bundles only refs, so `tip` is named by a throw-away ref under BUNDLE_REF_PREFIX for
    the moment it takes; the receiver reads the tip back from the bundle's one head.
    """
    # a full SHA is taken as the commit it names (what every caller passes; `update-ref`
    # refuses one the repository lacks): one git call less on an evaluation's path
    full = len(tip) == 40 and all(c in "0123456789abcdef" for c in tip)
    tip_sha = tip if full else _text(_run(cwd, ["rev-parse", "--verify", f"{tip}^{{commit}}"]))
    if exclude and not _has_commits_beyond(cwd, tip_sha, exclude):
        return False
    ref = f"{BUNDLE_REF_PREFIX}{uuid.uuid4().hex}"  # lanes may bundle one tip at once
    _run(cwd, ["update-ref", ref, tip_sha])
    try:
        args = ["bundle", "create", "-q", str(path), ref, *(f"^{e}" for e in exclude)]
        _run(cwd, args)
    finally:
        _run(cwd, ["update-ref", "-d", ref], check=False)
    return True


def bundle_checkout_head(cwd: Path, path: Path, tip: str, exclude: Sequence[str]) -> bool:
    """`create_bundle` of the checkout's HEAD, which is at `tip`: the bundle names it HEAD.

    A checkout names its tip already, so no throw-away ref is written and deleted, and the
    "anything new?" question is asked only once git has refused an empty bundle: one git
    call instead of four (a Ray node bundles every session's commits so). A HEAD no longer
    at `tip` (a stray of the session moved it) gets `tip` bundled as `create_bundle` does.
    """
    args = ["bundle", "create", "-q", str(path), "HEAD", *(f"^{e}" for e in exclude)]
    done = _run(cwd, args, check=False)
    if done.returncode != 0:
        # nothing new past HEAD, or HEAD moved back (a stray reset it to the base): `tip` is
        # what was read, so `create_bundle` says whether it has anything and bundles it
        path.unlink(missing_ok=True)
        return create_bundle(cwd, path, tip, exclude)
    if bundle_head(path).sha != tip:
        path.unlink()
        return create_bundle(cwd, path, tip, exclude)
    return True


def _has_commits_beyond(cwd: Path, tip: str, exclude: Sequence[str]) -> bool:
    done = _run(cwd, ["rev-list", "--max-count=1", tip, *(f"^{e}" for e in exclude)])
    return bool(_text(done))


@dataclass(frozen=True)
class BundleHead:
    """The one commit a bundle made by `create_bundle` carries, and the name it has there."""

    sha: str
    ref: str


def bundle_head(path: Path) -> BundleHead:
    """The head a bundle names in its header (no git call; `fetch_bundle` checks the rest).
    GitError for a file whose header names no single head."""
    try:
        heads = bundle_refs(_bundle_header(path))
    except OSError as exc:
        raise GitError(f"bundle {path} cannot be read: {exc}") from exc
    if len(heads) != 1 or len(heads[0].split(" ")) != 2:
        raise GitError(f"bundle {path} has {len(heads)} heads; one was expected")
    sha, ref = heads[0].split(" ")
    return BundleHead(sha, ref)


def _bundle_header(path: Path) -> str:
    """The text of a bundle's header: every line before the first empty one (the pack)."""
    lines = []
    with path.open("rb") as f:
        for raw in f:
            if raw in (b"\n", b""):
                break
            lines.append(raw.decode("utf-8", "replace"))
    return "".join(lines)


def bundle_refs(header: str) -> list[str]:
    """The `<sha> <ref>` lines of a bundle header (pure; what `git bundle list-heads` prints):
    every line but the signature (`#`), the capabilities (`@`) and the prerequisites (`-`)."""
    return [line for line in header.splitlines() if line and line[0] not in "#@-"]


def fetch_bundle(
    cwd: Path,
    path: Path,
    ref: str,
    refuse_repair: Callable[[HalfBuiltWorktree], str | None] | None = None,
) -> str:
    """Fetch the commits of the bundle at `path` into the repository at `cwd` and point `ref`
    at its head; returns the head's SHA. Idempotent: fetching it again changes nothing.

    One git call: the fetch is the verification. It refuses a bundle whose prerequisites the
    repository lacks, index-pack checks every object and the pack's checksum, and the ref is
    written only once all of that passed (a separate `git bundle verify` read the pack twice).

    A fetch that fails on a half-built worktree ("bad object worktrees/<name>/HEAD", a kill
    inside `git worktree add`) repairs it when `refuse_repair` lets it go (the tool's own:
    `repair_half_built`) and is tried once more, instead of failing the run."""
    head = bundle_head(path)
    refspec = f"+{head.ref}:{ref}"  # the fetch points `ref` at the head (one git call less)
    # a repack that `gc --auto` starts runs inside this fetch, under its lock, not detached
    # beside the next fetch
    fetch = ["-c", "gc.autoDetach=false", "fetch", "-q", "--no-tags", "--no-write-fetch-head"]
    with _worktrees_still(cwd):
        done = _run(cwd, [*fetch, str(path), refspec], check=False)
        if done.returncode != 0 and refuse_repair is not None:
            broken = bad_worktree_heads(done.stderr)
            repaired = _repair_half_built(cwd, refuse_repair, check_objects=True) if broken else []
            if any(r.removed and r.tree.name in broken for r in repaired):
                done = _run(cwd, [*fetch, str(path), refspec], check=False)
        if done.returncode != 0:
            raise GitError(_failure([*fetch, str(path), refspec], done))
    return head.sha


_BAD_WORKTREE_HEAD = re.compile(rb"bad object worktrees/([^/\s]+)/HEAD")


def bad_worktree_heads(stderr: bytes) -> set[str]:
    """The worktree names git's "fatal: bad object worktrees/<name>/HEAD" names."""
    return {m.decode("utf-8", "replace") for m in _BAD_WORKTREE_HEAD.findall(stderr)}


def has_commit(cwd: Path, commit: str) -> bool:
    """True when the repository has `commit` (a full SHA) as a commit object."""
    return resolve_commits(cwd, [commit])[0] == commit


def init_bare(path: Path) -> None:
    """Create an empty bare repository at `path` (a node's cache of a run's commits)."""
    path.mkdir(parents=True, exist_ok=True)
    _run(path, ["init", "-q", "--bare"])


@dataclass(frozen=True)
class CheckoutState:
    """A checkout as one `git status --porcelain=v2 --branch` reads it: HEAD's commit (None:
    no commit yet), the branch checked out (None: detached) and whether anything is not
    committed (staged, changed, or untracked and not ignored)."""

    head: str | None
    branch: str | None
    dirty: bool


def checkout_state(cwd: Path) -> CheckoutState:
    """HEAD, its branch and whether the checkout is clean, in one git process where
    `head`, `head_branch` and `status` took three (a remote session's end, on its node)."""
    args = ["status", "--porcelain=v2", "--branch", "--untracked-files=all", "-z"]
    return parse_checkout_state(_run(cwd, args).stdout)


def parse_checkout_state(raw: bytes) -> CheckoutState:
    """Parse `git status --porcelain=v2 --branch -z`: its `# branch.*` headers, then one
    entry (or, for a rename, two fields) per path not committed."""
    head = branch = None
    dirty = False
    for field in raw.decode("utf-8", "surrogateescape").split("\0"):
        if field.startswith("# branch.oid "):
            oid = field.removeprefix("# branch.oid ")
            head = None if oid == "(initial)" else oid
        elif field.startswith("# branch.head "):
            name = field.removeprefix("# branch.head ")
            branch = None if name == "(detached)" else name
        elif field and not field.startswith("# "):
            dirty = True
    return CheckoutState(head, branch, dirty)
