"""`git.bundle_checkout_head`: a Ray node bundles a session's commits by the checkout's HEAD,
in one git process (real repositories; git's processes counted by a wrapper on PATH)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from autoresearch import git
from autoresearch.errors import GitError
from autoresearch.supervisor import remote
from helpers import Repo, edit_and_commit, make_repo


@pytest.fixture
def source(tmp_path: Path) -> Repo:
    return make_repo(tmp_path / "source")


@pytest.fixture
def git_calls(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A `git` first on PATH that notes each call in the returned file, then runs git."""
    real = shutil.which("git")
    assert real is not None
    wrapper = tmp_path / "bin" / "git"
    wrapper.parent.mkdir()
    log = tmp_path / "git-calls.txt"
    wrapper.write_text(f'#!/bin/sh\necho "$1" >> {log}\nexec {real} "$@"\n')
    wrapper.chmod(0o755)
    monkeypatch.setenv("PATH", f"{wrapper.parent}{os.pathsep}{os.environ['PATH']}")
    return log


def _calls(log: Path) -> list[str]:
    return log.read_text().split() if log.exists() else []


def _receiver(tmp_path: Path, source: Repo) -> Path:
    """A bare clone of the source as it is now (the driver, which has the session's base)."""
    target = tmp_path / "target.git"
    source.git("clone", "-q", "--bare", str(source.root), str(target))
    return target


def test_a_checkout_head_is_bundled_in_one_git_call_and_lands(
    tmp_path: Path, source: Repo, git_calls: Path
) -> None:
    base = source.git("rev-parse", "HEAD")
    target = _receiver(tmp_path, source)
    first = edit_and_commit(source.root, {"value.txt": "2\n"}, "one")
    tip = edit_and_commit(source.root, {"value.txt": "3\n"}, "two")
    bundle = tmp_path / "session.bundle"
    git_calls.unlink(missing_ok=True)
    assert git.bundle_checkout_head(source.root, bundle, tip, exclude=[base])
    assert _calls(git_calls) == ["bundle"]  # create_bundle: rev-list, update-ref twice, bundle
    assert git.bundle_head(bundle) == git.BundleHead(tip, "HEAD")
    assert git.fetch_bundle(target, bundle, "refs/test/session") == tip
    assert git.commits_between(target, base, "refs/test/session") == [first, tip]


def test_a_head_moved_off_the_tip_still_bundles_the_tip(tmp_path: Path, source: Repo) -> None:
    base = source.git("rev-parse", "HEAD")
    tip = edit_and_commit(source.root, {"value.txt": "2\n"})
    edit_and_commit(source.root, {"value.txt": "3\n"})  # a stray committed after the reading
    bundle = tmp_path / "session.bundle"
    assert git.bundle_checkout_head(source.root, bundle, tip, exclude=[base])
    assert git.bundle_head(bundle).sha == tip
    assert git.refs_under(source.root, git.BUNDLE_REF_PREFIX) == []


def test_a_head_moved_back_to_the_base_still_bundles_the_tip(tmp_path: Path, source: Repo) -> None:
    # a stray reset the checkout to the base after the reading: `HEAD ^base` is empty, yet the
    # tip read before has commits of its own and must leave the node as create_bundle sends it
    base = source.git("rev-parse", "HEAD")
    tip = edit_and_commit(source.root, {"value.txt": "2\n"})
    source.git("reset", "-q", "--hard", base)
    bundle = tmp_path / "session.bundle"
    assert git.bundle_checkout_head(source.root, bundle, tip, exclude=[base])
    assert git.bundle_head(bundle).sha == tip


def test_a_head_bundle_needs_its_base_on_the_receiver(tmp_path: Path, source: Repo) -> None:
    base = source.git("rev-parse", "HEAD")
    tip = edit_and_commit(source.root, {"value.txt": "2\n"})
    bundle = tmp_path / "session.bundle"
    assert git.bundle_checkout_head(source.root, bundle, tip, exclude=[base])
    empty = tmp_path / "empty.git"
    git.init_bare(empty)
    with pytest.raises(GitError):
        git.fetch_bundle(empty, bundle, "refs/test/session")


def test_the_driver_ships_a_link_past_a_root_by_its_worktree_head(
    tmp_path: Path, source: Repo, git_calls: Path
) -> None:
    """remote.bundle_of: a commit past a root leaves a lane's worktree (at the commit) in one
    git process; a whole history is bundled by a ref as before."""
    base = source.git("rev-parse", "HEAD")
    tip = edit_and_commit(source.root, {"value.txt": "2\n"})
    git_calls.unlink(missing_ok=True)
    link = remote.bundle_of(source.root, tip, [base])
    assert _calls(git_calls) == ["bundle"]
    whole = remote.bundle_of(source.root, tip)
    assert link is not None and whole is not None
    assert _head_ref(tmp_path / "link.bundle", link) == "HEAD"
    assert _head_ref(tmp_path / "whole.bundle", whole).startswith(git.BUNDLE_REF_PREFIX)


def _head_ref(path: Path, data: bytes) -> str:
    path.write_bytes(data)
    return git.bundle_head(path).ref
