"""The repository-wide worktree lock (git.WORKTREES_LOCK): in the git directory every add,
removal and fetch shares, taken by any user who may add a worktree there, and never a new error
of its own where git would have answered in its own words."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from autoresearch import git
from helpers import GIT_ENV, make_repo

NOBODY = 65534


@pytest.mark.parametrize("layout", ["bare", "tracks HEAD and objects/", "linked worktree"])
def test_the_lock_is_in_the_shared_git_directory(tmp_path: Path, layout: str) -> None:
    repo = make_repo(tmp_path / "repo")
    if layout == "bare":
        bare = tmp_path / "bare.git"
        subprocess.run(["git", "clone", "-q", "--bare", str(repo.root), str(bare)], check=True)
        cwd, expected = bare, bare
    elif layout == "tracks HEAD and objects/":
        # a repository whose top folder holds files named as a bare repository's (test data)
        repo.write("HEAD", "ref: refs/heads/main\n")
        repo.write("objects/keep", "")
        repo.commit("data shaped like a bare repository")
        cwd, expected = repo.root, repo.root / ".git"
    else:
        linked = tmp_path / "linked"
        git.worktree_add_detached(repo.root, linked, git.head(repo.root))
        cwd, expected = linked, repo.root / ".git"
    git.worktree_add_detached(cwd, tmp_path / "added", git.head(cwd))
    assert (expected / git.WORKTREES_LOCK).is_file()
    if layout != "bare":  # nothing of the tool's in the user's working tree
        assert git.status(repo.root) == []


def test_a_removal_waits_for_the_lock_as_an_add_does(tmp_path: Path) -> None:
    """A fetch lists every worktree's registration and then reads each: a removal beside it
    failed it ("fatal: Invalid path '…/worktrees/<name>'", seen in a suite run). While
    another holder (a fetch, another process) has the lock, the removal waits."""
    import fcntl
    import threading

    repo = make_repo(tmp_path / "repo")
    tree = tmp_path / "tree"
    git.worktree_add_detached(repo.root, tree, git.head(repo.root))
    admin = git.git_path(repo.root, "worktrees") / "tree"
    fd = os.open(repo.root / ".git" / git.WORKTREES_LOCK, os.O_RDONLY)
    removal = threading.Thread(target=git.worktree_remove, args=(repo.root, tree))
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        removal.start()
        removal.join(0.5)
        assert removal.is_alive() and admin.is_dir() and tree.is_dir()  # waiting, untouched
    finally:
        os.close(fd)  # the holder is done
    removal.join(30)
    assert not removal.is_alive() and not admin.exists() and not tree.exists()


# --- another user: root runs the suite in CI, and drops to `nobody` for these ---------------


@pytest.fixture
def shared_folder() -> Iterator[Path]:
    """A folder every user can reach (pytest's own tmp folders are root's alone)."""
    if os.geteuid() != 0 or shutil.which("setpriv") is None:
        pytest.skip("needs root and setpriv to act as another user")
    folder = Path(tempfile.mkdtemp(prefix="ar-lock-", dir="/tmp"))
    folder.chmod(0o1777)  # as /tmp: each user adds worktrees of their own here
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


ADD_AS_OTHER_USER = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    from autoresearch import git
    from autoresearch.errors import GitError
    repo = Path(sys.argv[1])
    try:
        git.worktree_add_detached(repo, Path(sys.argv[2]), git.head(repo))
    except GitError as exc:  # and not while handling the lock's own error
        print("git refused:", exc, "| context:", type(exc.__context__).__name__)
    else:
        print("added")
    """
)


def add_as_nobody(repo: Path, tree: Path) -> subprocess.CompletedProcess[str]:
    src = Path(git.__file__).resolve().parents[1]
    env = {
        **GIT_ENV,
        "PATH": os.environ["PATH"],
        "HOME": str(repo.parent),
        "PYTHONPATH": str(src),
    }
    # the repository is root's: git refuses another owner's unless the user's config says
    # it is safe (git 2.39 reads that from the global config only)
    (repo.parent / ".gitconfig").write_text("[safe]\n\tdirectory = *\n")
    argv = ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups"]
    probe = subprocess.run(
        [*argv, sys.executable, "-c", "import autoresearch.git"],
        env=env, capture_output=True, text=True, check=False, timeout=60,
    )  # fmt: skip
    if probe.returncode != 0:
        pytest.skip(f"nobody cannot import autoresearch here: {probe.stderr[-200:]}")
    return subprocess.run(
        [*argv, sys.executable, "-c", ADD_AS_OTHER_USER, str(repo), str(tree)],
        env=env, capture_output=True, text=True, check=False, timeout=60,
    )  # fmt: skip


def test_another_user_of_a_shared_repository_takes_the_first_user_s_lock(
    shared_folder: Path,
) -> None:
    repo = make_repo(shared_folder / "repo").root
    git.worktree_add_detached(repo, shared_folder / "mine", git.head(repo))  # the first user
    lock = repo / ".git" / git.WORKTREES_LOCK
    assert lock.stat().st_mode & 0o777 == 0o644  # as a umask of 022 makes it
    for path in [repo, *repo.rglob("*")]:  # what a group-shared repository lets members do
        path.chmod(path.stat().st_mode | 0o777 if path.is_dir() else path.stat().st_mode | 0o666)
    lock.chmod(0o644)
    done = add_as_nobody(repo, shared_folder / "theirs")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "added", done.stdout + done.stderr


def test_a_repository_the_user_cannot_write_fails_in_git_s_words(shared_folder: Path) -> None:
    repo = make_repo(shared_folder / "repo").root  # root's, 0755: nobody reads, cannot write
    done = add_as_nobody(repo, shared_folder / "theirs")
    assert done.returncode == 0, done.stderr  # not a PermissionError of the lock
    assert done.stdout.startswith("git refused:"), done.stdout + done.stderr
    assert done.stdout.strip().endswith("| context: NoneType"), done.stdout


def test_a_lock_file_made_under_a_private_umask_is_readable_by_all(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo").root
    before = os.umask(0o077)
    try:
        git.worktree_add_detached(repo, tmp_path / "added", git.head(repo))
    finally:
        os.umask(before)
    assert (repo / ".git" / git.WORKTREES_LOCK).stat().st_mode & 0o777 == 0o644


def test_a_lock_file_another_user_closed_is_refused_in_one_line(shared_folder: Path) -> None:
    """The git directory can be written, only the lock file cannot be read: adding without
    the lock would bring the fetch race back, so the add is refused, naming the fix."""
    repo = make_repo(shared_folder / "repo").root
    for path in [repo, *repo.rglob("*")]:
        path.chmod(path.stat().st_mode | 0o777 if path.is_dir() else path.stat().st_mode | 0o666)
    lock = repo / ".git" / git.WORKTREES_LOCK
    lock.touch()
    lock.chmod(0o600)  # root's, as a umask of 077 makes it (before it is made readable)
    done = add_as_nobody(repo, shared_folder / "theirs")
    assert done.returncode == 0, done.stderr
    assert "git refused: cannot open" in done.stdout, done.stdout
    assert f"chmod a+r {lock}" in done.stdout
    assert not (shared_folder / "theirs").exists()
