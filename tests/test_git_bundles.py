"""git bundles carry a run's commits between machines (the Ray executor): real repositories."""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from autoresearch import git
from autoresearch.errors import GitError
from helpers import Repo, edit_and_commit, make_repo


@pytest.fixture
def source(tmp_path: Path) -> Repo:
    return make_repo(tmp_path / "source")


def _clone_at(tmp_path: Path, source: Repo, commit: str) -> Path:
    """A bare repository that has `commit` and its history, nothing newer."""
    target = tmp_path / "target.git"
    git.init_bare(target)
    bundle = tmp_path / "base.bundle"
    assert git.create_bundle(source.root, bundle, commit)
    git.fetch_bundle(target, bundle, "refs/test/base")
    return target


def test_a_candidate_bundle_moves_only_new_commits_and_lands_at_its_head(
    tmp_path: Path, source: Repo
) -> None:
    base = source.git("rev-parse", "HEAD")
    target = _clone_at(tmp_path, source, base)
    first = edit_and_commit(source.root, {"value.txt": "2\n"}, "one")
    tip = edit_and_commit(source.root, {"value.txt": "3\n"}, "two")
    bundle = tmp_path / "candidate.bundle"
    assert git.create_bundle(source.root, bundle, tip, exclude=[base])
    assert git.fetch_bundle(target, bundle, "refs/test/candidate") == tip
    assert git.commits_between(target, base, "refs/test/candidate") == [first, tip]
    # the throw-away name the bundle needed is gone from the source
    assert git.refs_under(source.root, git.BUNDLE_REF_PREFIX) == []


def test_fetching_the_same_bundle_twice_changes_nothing(tmp_path: Path, source: Repo) -> None:
    base = source.git("rev-parse", "HEAD")
    target = _clone_at(tmp_path, source, base)
    tip = edit_and_commit(source.root, {"value.txt": "2\n"})
    bundle = tmp_path / "c.bundle"
    git.create_bundle(source.root, bundle, tip, exclude=[base])
    assert git.fetch_bundle(target, bundle, "refs/test/c") == tip
    assert git.fetch_bundle(target, bundle, "refs/test/c") == tip
    assert git.has_commit(target, tip)


@pytest.mark.parametrize("make", [git.create_bundle, git.bundle_checkout_head])
@pytest.mark.parametrize("exclude_tip", [True, False])
def test_no_new_commits_means_no_bundle(
    tmp_path: Path, source: Repo, exclude_tip: bool, make: Callable[..., bool]
) -> None:
    # either way of bundling: by a throw-away ref, or by the checkout's HEAD (at the tip)
    base = source.git("rev-parse", "HEAD")
    older = source.git("rev-parse", "HEAD")
    if not exclude_tip:  # the tip is an ancestor of what is excluded
        older = base
        base = edit_and_commit(source.root, {"value.txt": "5\n"})
    source.git("checkout", "-q", "--detach", older)
    bundle = tmp_path / "none.bundle"
    assert make(source.root, bundle, older, exclude=[base]) is False
    assert not bundle.exists()


def test_a_bundle_whose_base_the_receiver_lacks_is_refused(tmp_path: Path, source: Repo) -> None:
    base = source.git("rev-parse", "HEAD")
    tip = edit_and_commit(source.root, {"value.txt": "2\n"})
    empty = tmp_path / "empty.git"
    git.init_bare(empty)
    bundle = tmp_path / "c.bundle"
    git.create_bundle(source.root, bundle, tip, exclude=[base])
    with pytest.raises(GitError, match="prerequisite"):
        git.fetch_bundle(empty, bundle, "refs/test/c")
    assert not git.has_commit(empty, tip)


@pytest.mark.parametrize("damage", ["truncated", "garbage", "empty"])
def test_a_damaged_bundle_is_refused_and_writes_no_ref(
    tmp_path: Path, source: Repo, damage: str
) -> None:
    base = source.git("rev-parse", "HEAD")
    target = _clone_at(tmp_path, source, base)
    tip = edit_and_commit(source.root, {"big.bin": "x" * 50_000 + "\n"})
    bundle = tmp_path / "c.bundle"
    git.create_bundle(source.root, bundle, tip, exclude=[base])
    data = bundle.read_bytes()
    bundle.write_bytes(
        {"truncated": data[: len(data) // 2], "garbage": b"not a bundle\n", "empty": b""}[damage]
    )
    with pytest.raises(GitError):
        git.fetch_bundle(target, bundle, "refs/test/c")
    assert git.refs_under(target, "refs/test/c") == []


@pytest.mark.parametrize(
    ("header", "refs"),
    [
        ("# v2 git bundle\n" + "a" * 40 + " refs/x\n", ["a" * 40 + " refs/x"]),
        (
            "# v3 git bundle\n@object-format=sha1\n-" + "b" * 40 + " base\n" + "c" * 40 + " r\n",
            ["c" * 40 + " r"],
        ),
        ("# v2 git bundle\n-" + "b" * 40 + "\n", []),
        ("", []),
    ],
)
def test_a_bundle_header_names_its_refs_and_nothing_else(header: str, refs: list[str]) -> None:
    assert git.bundle_refs(header) == refs


def test_the_head_read_from_the_header_is_the_one_git_lists(tmp_path: Path, source: Repo) -> None:
    base = source.git("rev-parse", "HEAD")
    tip = edit_and_commit(source.root, {"value.txt": "2\n"})
    bundle = tmp_path / "c.bundle"
    git.create_bundle(source.root, bundle, tip, exclude=[base])
    listed = source.git("bundle", "list-heads", str(bundle)).splitlines()
    head = git.bundle_head(bundle)
    assert listed == [f"{head.sha} {head.ref}"] and head.sha == tip


def test_a_fetch_beside_a_worktree_being_added_never_sees_its_placeholder_head(
    tmp_path: Path, source: Repo
) -> None:
    """`git worktree add` writes the new worktree's HEAD as the null object id before it
    checks anything out, and a fetch beside it checks connectivity against every worktree's
    HEAD: "fatal: bad object worktrees/0/HEAD" (a Ray driver landing one lane's session while
    it started a reading ahead for another). Without the lock, 13 of 59 fetches failed so."""
    base = source.git("rev-parse", "HEAD")
    target = make_repo(tmp_path / "target")
    bundles = []
    previous = base
    for i in range(40):
        tip = edit_and_commit(source.root, {"value.txt": f"{i}\n"})
        bundles.append((tmp_path / f"{i}.bundle", tip))
        assert git.create_bundle(source.root, bundles[-1][0], tip, exclude=[previous])
        previous = tip
    git.fetch_bundle(target.root, _bundle_of(tmp_path, source, base), "refs/test/base")
    done = threading.Event()
    tree = tmp_path / "ahead" / "0"

    def churn() -> None:
        while not done.is_set():
            git.worktree_add_detached(target.root, tree, base)
            git.worktree_remove(target.root, tree)

    worker = threading.Thread(target=churn)
    worker.start()
    try:
        for i, (bundle, tip) in enumerate(bundles):
            assert git.fetch_bundle(target.root, bundle, f"refs/test/{i}") == tip
    finally:
        done.set()
        worker.join()


def _bundle_of(tmp_path: Path, source: Repo, commit: str) -> Path:
    bundle = tmp_path / "whole.bundle"
    assert git.create_bundle(source.root, bundle, commit)
    return bundle
