"""git_objects: a candidate's facts read from loose objects without a git process, equal to
git's own answer whenever given, and "unsure" (None: git is asked) whenever not certain."""

from __future__ import annotations

import zlib
from pathlib import Path

import pytest

from autoresearch import git, git_objects
from helpers import Repo, make_repo
from helpers import git as run_git


@pytest.fixture
def plain(tmp_path: Path) -> Repo:
    return make_repo(tmp_path / "repo")


def commit_value(repo: Repo, value: str) -> str:
    repo.write("value.txt", value + "\n")
    return repo.commit(f"value {value}")


def git_answer(cwd: Path, name: str, kind: str) -> str:
    return run_git(cwd, "rev-parse", "--verify", f"{name}^{{{kind}}}")


def assert_as_git_says(cwd: Path, base: str, commit: str, kept: str) -> None:
    read = git_objects.candidate_facts(cwd, base, commit, kept, git.LINEAGE)
    assert read is not None
    assert read.base == git_answer(cwd, base, "commit")
    assert read.commit == git_answer(cwd, commit, "commit")
    assert read.head == git_answer(cwd, "HEAD", "commit")
    assert read.tree == git_answer(cwd, commit, "tree")
    assert read.kept_tree == git_answer(cwd, kept, "tree")
    parents = run_git(cwd, "rev-list", "--first-parent", f"--max-count={git.LINEAGE}", commit)
    walked = parents.split()[1:]
    assert read.lineage == tuple(walked[: walked.index(kept) + 1] if kept in walked else walked)


def test_a_session_commit_is_read_as_git_reads_it(plain: Repo) -> None:
    kept = plain.git("rev-parse", "HEAD")
    commit_value(plain, "2")
    tip = commit_value(plain, "3")
    assert_as_git_says(plain.root, kept, tip, kept)
    assert_as_git_says(plain.root, kept, kept, kept)  # the candidate is the kept commit
    plain.git("checkout", "-q", "--detach")
    assert_as_git_says(plain.root, kept, tip, kept)


def test_a_linked_worktree_reads_the_shared_objects(plain: Repo, tmp_path: Path) -> None:
    kept = plain.git("rev-parse", "HEAD")
    side = tmp_path / "side"
    plain.git("worktree", "add", "-q", "-b", "side", str(side))
    (side / "value.txt").write_text("side\n")
    run_git(side, "commit", "-qam", "side")
    assert_as_git_says(side, kept, run_git(side, "rev-parse", "HEAD"), kept)


def test_a_walk_stops_at_the_kept_commit_and_at_its_length(plain: Repo) -> None:
    root = plain.git("rev-parse", "HEAD")
    kept = commit_value(plain, "2")
    for n in range(git.LINEAGE + 2):
        tip = commit_value(plain, str(n + 10))
    read = git_objects.candidate_facts(plain.root, kept, tip, kept, git.LINEAGE)
    assert read is not None and len(read.lineage) == git.LINEAGE and kept not in read.lineage
    near = git_objects.candidate_facts(plain.root, root, kept, root, git.LINEAGE)
    assert near is not None and near.lineage == (root,)


def test_no_candidate_commit_has_no_commit_tree_or_lineage(plain: Repo) -> None:
    kept = plain.git("rev-parse", "HEAD")
    read = git_objects.candidate_facts(plain.root, kept, "", kept, git.LINEAGE)
    assert read is not None
    assert (read.commit, read.tree, read.lineage) == (None, None, ())
    assert read.kept_tree == git_answer(plain.root, kept, "tree")


def unsure_after(repo: Repo, change: str) -> tuple[str, str]:
    """Names of a kept commit and a candidate, after `change` made the repository unplain."""
    kept = repo.git("rev-parse", "HEAD")
    tip = commit_value(repo, "2")
    common = repo.root / ".git"
    if change == "packed objects":
        repo.git("gc", "-q")
    elif change == "packed branch ref":
        repo.git("pack-refs", "--all")
    elif change == "replace ref":
        repo.git("replace", kept, tip)
    elif change == "shallow":
        (common / "shallow").write_text(kept + "\n")
    elif change == "grafts":
        (common / "info").mkdir(exist_ok=True)
        (common / "info" / "grafts").write_text(tip + "\n")
    elif change == "short name":
        kept = kept[:12]
    elif change == "no base":
        kept = ""
    elif change == "a tag for the candidate":
        repo.git("tag", "-a", "-m", "t", "t1", tip)
        tip = repo.git("rev-parse", "t1")
    elif change == "symbolic branch ref":
        (common / "refs" / "heads" / "main").write_text("ref: refs/heads/other\n")
    return kept, tip


UNPLAIN = [
    "packed objects",
    "packed branch ref",
    "replace ref",
    "shallow",
    "grafts",
    "short name",
    "no base",
    "a tag for the candidate",
    "symbolic branch ref",
]


@pytest.mark.parametrize("change", UNPLAIN)
def test_anything_unplain_is_left_to_git(plain: Repo, change: str) -> None:
    kept, tip = unsure_after(plain, change)
    assert git_objects.candidate_facts(plain.root, kept, tip, kept, git.LINEAGE) is None
    if change == "no base":  # git answers: it names nothing
        assert git.candidate_facts(plain.root, kept, tip, kept).base is None


def test_a_step_asks_no_git_process_of_a_plain_candidate(
    plain: Repo, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    kept = plain.git("rev-parse", "HEAD")
    tip = commit_value(plain, "2")
    monkeypatch.setenv("PATH", str(tmp_path / "no-git-here"))  # any git process would fail
    facts = git.candidate_facts(plain.root, kept, tip, kept)
    assert (facts.commit, facts.head, facts.lineage) == (tip, tip, (kept,))
    assert git.descends_from(plain.root, kept, facts)


def test_commits_and_trees_are_looked_up_without_git_where_certain(
    plain: Repo, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    kept = plain.git("rev-parse", "HEAD")
    tip = commit_value(plain, "2")
    names = [tip, kept, "HEAD"]
    trees = [git_answer(plain.root, name, "tree") for name in names]
    assert git.resolve_commits(plain.root, ["refs/heads/main", "nope"]) == [tip, None]  # git
    monkeypatch.setenv("PATH", str(tmp_path / "no-git-here"))  # any git process would fail
    assert git.resolve_commits(plain.root, names) == [tip, kept, tip]
    assert git.trees(plain.root, names) == trees
    assert git.trees(plain.root, []) == []


def loose_path(repo: Repo, object_id: str) -> Path:
    return repo.root / ".git" / "objects" / object_id[:2] / object_id[2:]


def test_a_forged_loose_commit_is_not_believed(plain: Repo) -> None:
    """An agent can write a file under objects/ that names the kept commit as its parent;
    git reads it as a hash mismatch, so it must not make a candidate descend (review)."""
    kept = plain.git("rev-parse", "HEAD")
    tree = plain.git("rev-parse", "HEAD^{tree}")
    body = f"tree {tree}\nparent {kept}\nauthor a <a@b> 1 +0000\ncommitter a <a@b> 1 +0000\n\nx\n"
    forged = "d" * 40
    loose_path(plain, forged).parent.mkdir(exist_ok=True)
    loose_path(plain, forged).write_bytes(zlib.compress(b"commit %d\0" % len(body) + body.encode()))
    assert git_objects.loose_commit(plain.root / ".git", forged) is None
    assert git_objects.candidate_facts(plain.root, kept, forged, kept, git.LINEAGE) is None
    asked = git.candidate_facts(plain.root, kept, forged, kept)  # git: a hash mismatch
    assert asked.commit is None or not git.descends_from(plain.root, kept, asked)


@pytest.mark.parametrize("damage", ["trailer cut", "bytes after the stream"])
def test_a_damaged_loose_object_is_left_to_git(plain: Repo, damage: str) -> None:
    tip = commit_value(plain, "2")
    path = loose_path(plain, tip)
    raw = path.read_bytes()
    path.chmod(0o644)
    path.write_bytes(raw[:-4] if damage == "trailer cut" else raw + b"abc")
    assert git_objects.loose_commit(plain.root / ".git", tip) is None


def test_an_unreadable_replace_folder_is_unsure_not_an_error(plain: Repo) -> None:
    kept = plain.git("rev-parse", "HEAD")
    (plain.root / ".git" / "refs" / "replace").write_text("not a folder\n")
    assert git_objects.candidate_facts(plain.root, kept, kept, kept, git.LINEAGE) is None
    assert git.resolve_commits(plain.root, [kept]) == [kept]


def test_a_commit_whose_tree_is_not_loose_is_left_to_git(plain: Repo) -> None:
    kept = plain.git("rev-parse", "HEAD")
    tree = plain.git("rev-parse", "HEAD^{tree}")
    loose_path(plain, tree).unlink()
    assert git_objects.candidate_facts(plain.root, kept, kept, kept, git.LINEAGE) is None
    assert git_objects.peeled(plain.root, [(kept, "tree")]) is None
