"""git_files: git's files read without a process, and "unsure" (ask git) whenever they are not
plain; git.candidate_facts and descends_from, the one lookup process of a step."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from autoresearch import git, git_files
from autoresearch.git_files import HeadRead
from helpers import Repo, make_repo
from helpers import git as run_git


@pytest.fixture
def plain(tmp_path: Path) -> Repo:
    return make_repo(tmp_path / "repo")


def test_head_ref_reads_a_branch_a_detached_head_and_a_linked_worktree(plain: Repo) -> None:
    assert git_files.head_ref(plain.root) == HeadRead(known=True, ref="refs/heads/main")
    plain.git("worktree", "add", "-q", "-b", "side", str(plain.root.parent / "side"))
    side = plain.root.parent / "side"
    assert git_files.head_ref(side) == HeadRead(known=True, ref="refs/heads/side")
    run_git(side, "checkout", "-q", "--detach")
    assert git_files.head_ref(side) == HeadRead(known=True, ref=None)
    assert git.head_branch(side) is None and git.head_branch(plain.root) == "refs/heads/main"


def test_head_ref_is_unsure_where_git_must_be_asked(plain: Repo, tmp_path: Path) -> None:
    (plain.root / "sub").mkdir()
    assert git_files.head_ref(plain.root / "sub") == git_files.UNSURE  # not the top folder
    assert git.head_branch(plain.root / "sub") == "refs/heads/main"
    head = plain.root / ".git" / "HEAD"
    head.write_text("ref: refs/heads/.invalid\n")  # what a reftable repository leaves
    assert git_files.head_ref(plain.root) == git_files.UNSURE
    head.unlink()
    os.symlink("/dev/zero", head)  # never followed, never read forever
    assert git_files.head_ref(plain.root) == git_files.UNSURE
    (tmp_path / "loose").mkdir()
    (tmp_path / "loose" / ".git").write_text("not a gitdir line\n")
    assert git_files.head_ref(tmp_path / "loose") == git_files.UNSURE


def test_create_ref_writes_a_loose_ref_git_reads(plain: Repo) -> None:
    head = plain.git("rev-parse", "HEAD")
    assert git_files.create_ref(plain.root, "refs/autoresearch/r/discarded/3", head)
    assert plain.git("rev-parse", "refs/autoresearch/r/discarded/3") == head
    assert not list((plain.root / ".git" / "refs").rglob("*.lock"))
    plain.write("value.txt", "2\n")
    newer = plain.commit("newer")
    assert git_files.create_ref(plain.root, "refs/autoresearch/r/discarded/3", newer)
    assert plain.git("rev-parse", "refs/autoresearch/r/discarded/3") == newer


def test_create_ref_leaves_anything_unplain_to_git(plain: Repo) -> None:
    head = plain.git("rev-parse", "HEAD")
    lock = plain.root / ".git" / "refs" / "autoresearch" / "r" / "kept.lock"
    lock.parent.mkdir(parents=True)
    lock.write_text("")
    assert not git_files.create_ref(plain.root, "refs/autoresearch/r/kept", head)
    assert lock.read_text() == ""  # someone else's lock is never touched
    assert not git_files.create_ref(plain.root, "refs/autoresearch/r/x", "HEAD")  # no SHA
    plain.git("config", "core.fsync", "reference")  # refs to be synced: git does it
    assert not git_files.create_ref(plain.root, "refs/autoresearch/r/y", head)
    plain.git("config", "--unset", "core.fsync")
    assert git_files.create_ref(plain.root, "refs/autoresearch/r/w", head)
    plain.git("config", "core.hooksPath", "/nowhere")
    assert not git_files.create_ref(plain.root, "refs/autoresearch/r/y", head)
    git.keep_reachable(plain.root, "refs/autoresearch/r/y", head)  # written by git instead
    assert plain.git("rev-parse", "refs/autoresearch/r/y") == head
    side = plain.root.parent / "side"
    plain.git("worktree", "add", "-q", "--detach", str(side))
    assert not git_files.create_ref(side, "refs/autoresearch/r/z", head)  # not the main tree


def commit_value(repo: Repo, value: str) -> str:
    repo.write("value.txt", value + "\n")
    return repo.commit(f"value {value}")


def test_candidate_facts_resolve_names_trees_and_first_parents(plain: Repo) -> None:
    kept = plain.git("rev-parse", "HEAD")
    first, second = commit_value(plain, "2"), commit_value(plain, "3")
    facts = git.candidate_facts(plain.root, kept[:10], second, kept)
    assert (facts.base, facts.commit, facts.head) == (kept, second, second)
    assert facts.tree == plain.git("rev-parse", f"{second}^{{tree}}")
    assert facts.kept_tree == plain.git("rev-parse", f"{kept}^{{tree}}")
    assert facts.lineage == (first, kept)  # to the root commit, which has no parent
    assert git.descends_from(plain.root, kept, facts)
    missing = git.candidate_facts(plain.root, "nope", "", kept)
    assert (missing.base, missing.commit, missing.lineage) == (None, None, ())
    assert not git.descends_from(plain.root, kept, missing)


def test_descends_from_asks_git_past_the_walk_and_through_merges(plain: Repo) -> None:
    kept = plain.git("rev-parse", "HEAD")
    for n in range(git.LINEAGE + 2):  # deeper than the walk: merge-base answers
        tip = commit_value(plain, str(n + 10))
    deep = git.candidate_facts(plain.root, kept, tip, kept)
    assert kept not in deep.lineage and git.descends_from(plain.root, kept, deep)
    plain.git("checkout", "-q", "-b", "other", kept)
    other = commit_value(plain, "99")
    plain.git("checkout", "-q", "main")
    plain.git("merge", "-q", "-s", "ours", "--no-edit", "other")
    merged = plain.git("rev-parse", "HEAD")  # `other` is its second parent only
    facts = git.candidate_facts(plain.root, kept, merged, other)
    assert other not in facts.lineage and git.descends_from(plain.root, other, facts)
    unrelated = git.candidate_facts(plain.root, kept, other, tip)
    assert not git.descends_from(plain.root, tip, unrelated)


def git_says(cwd: Path) -> tuple[Path, Path]:
    out = run_git(cwd, "rev-parse", "--path-format=absolute", "--git-dir", "--git-common-dir")
    own, common = out.splitlines()
    return Path(os.path.realpath(own)), Path(os.path.realpath(common))


def test_dirs_agree_with_git_for_a_main_a_linked_and_a_linked_through_a_link(
    plain: Repo, tmp_path: Path
) -> None:
    side = tmp_path / "side"
    plain.git("worktree", "add", "-q", "--detach", str(side))
    os.symlink(side, tmp_path / "alias")
    for tree in (plain.root, side, tmp_path / "alias"):
        assert git_files.dirs(tree) == git_says(tree)
    assert git.main_root(side) == Path(os.path.realpath(plain.root))
    assert git.is_worktree_of(side, plain.root) and git.is_worktree_of(plain.root, plain.root)
    other = make_repo(tmp_path / "other")
    assert not git.is_worktree_of(side, other.root)
    assert git_files.dirs(plain.root / "sub") is None  # not a top folder: git is asked
    (side / ".git").write_text("gitdir: /nowhere\n")
    assert git_files.dirs(side) is None and not git.is_worktree_of(side, plain.root)
