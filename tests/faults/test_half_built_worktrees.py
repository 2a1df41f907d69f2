"""A `git worktree add` killed half-way (SIGKILL, a power cut) leaves a registration whose HEAD
is the null object id, and from then on every `git fetch` of the repository fails with
"fatal: bad object worktrees/<name>/HEAD" – the user's own fetches too. The tool's own such
trees are repaired (doctor --repair-worktrees, any writing command, a bundle fetch); the
user's are only named. Real repositories, a real `git worktree add` killed by a real signal
at the instant git has written the null HEAD (a reference-transaction hook kills the add's
process group as it moves that HEAD: deterministic)."""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path

import pytest

from autoresearch import git as gitlib
from autoresearch import worktree_repair
from autoresearch.errors import GitError
from autoresearch.locks import FileLock
from autoresearch.paths import RepoPaths
from helpers import (
    GIT_ENV,
    NULL_OID,
    Repo,
    artifact,
    cli,
    edit_and_commit,
    git,
    killed_add,
    make_repo,
    write_artifact,
)


def fetch_fails(repo: Path, source: Repo) -> str | None:
    """What `git fetch` of `source`'s newest commit prints when it fails, None when it works."""
    edit_and_commit(source.root, {"value.txt": f"{os.urandom(4).hex()}\n"})
    done = subprocess.run(
        ["git", "fetch", "-q", str(source.root), "HEAD:refs/test/fetched"],
        cwd=repo,
        env={**os.environ, **GIT_ENV},
        capture_output=True,
        text=True,
        check=False,
    )
    return None if done.returncode == 0 else done.stderr


@pytest.fixture
def upstream(tmp_path: Path) -> Repo:
    return make_repo(tmp_path / "upstream", value="7")


def doctor(repo: Path, *extra: str) -> tuple[int, dict]:
    done = cli("--repo", str(repo), "doctor", "--json", *extra, cwd=repo)
    assert "Traceback" not in done.stderr, done.stderr
    return done.returncode, json.loads(done.stdout)


def half_built_findings(report: dict) -> list[dict]:
    return [f for f in report["findings"] if "half-built" in f["message"]]


# --- the pure decision -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("head", "locked", "has_index", "known", "expected"),
    [
        ("ref: refs/heads/main", False, True, None, None),
        ("a" * 40, False, True, None, None),  # not asked: taken as whole
        ("a" * 40, False, True, True, None),
        (NULL_OID, True, False, None, ("null object id", True)),
        ("0" * 64, True, False, None, ("null object id", True)),  # a SHA-256 repository
        ("a" * 40, False, True, False, ("does not have", True)),
        (None, True, False, None, ("HEAD file is missing", False)),
        ("a" * 40, True, False, True, ("checking the files out", False)),
        ("ref: refs/heads/main", True, False, None, ("checking the files out", False)),
        ("a" * 40, True, True, True, None),  # `git worktree lock`: the user's own choice
        ("a" * 40, False, False, True, None),  # `git worktree add --no-checkout`
        ("garbage", False, True, None, None),  # git skips it: fetch works
    ],
)
def test_what_a_killed_add_leaves_is_named(
    head: str | None,
    locked: bool,
    has_index: bool,
    known: bool | None,
    expected: tuple[str, bool] | None,
) -> None:
    found = gitlib.half_built_problem(head, locked, has_index, known)
    if expected is None:
        assert found is None
    else:
        assert found is not None and expected[0] in found[0] and found[1] == expected[1]


def test_bad_object_lines_name_their_worktrees() -> None:
    stderr = b"fatal: bad object worktrees/k/HEAD\nerror: x did not send all necessary objects\n"
    assert gitlib.bad_worktree_heads(stderr) == {"k"}
    assert gitlib.bad_worktree_heads(b"fatal: couldn't find remote ref") == set()


# --- git.py: found from the files, repaired under the worktree lock ----------------------------


def test_a_killed_add_breaks_fetch_until_the_repair(repo: Repo, upstream: Repo) -> None:
    folder = repo.root / ".autoresearch/worktrees/lanes/missions-demo-k1/0"
    admin = killed_add(repo.root, folder)
    assert "bad object worktrees/" in (fetch_fails(repo.root, upstream) or "")
    (tree,) = gitlib.half_built_worktrees(repo.root)
    assert (tree.admin, tree.folder, tree.breaks_fetch) == (admin, folder, True)
    assert tree.nothing_inside  # the add died before the checkout: only `.git` is there
    (done,) = gitlib.repair_half_built(repo.root, lambda _: None)
    assert done.removed and not admin.exists() and not folder.exists()
    assert fetch_fails(repo.root, upstream) is None
    assert gitlib.half_built_worktrees(repo.root) == []


def test_a_tree_with_files_besides_git_is_left(repo: Repo) -> None:
    folder = repo.root / ".autoresearch/worktrees/job-1"
    admin = killed_add(repo.root, folder)
    (admin / "locked").unlink()  # not git's unfinished add: someone's files may be there
    (folder / "notes.txt").write_text("mine\n")
    (done,) = gitlib.repair_half_built(repo.root, lambda _: None)
    assert not done.removed and "holds files besides .git" in (done.refused or "")
    assert (folder / "notes.txt").exists() and admin.exists()


def _bundle_for_a_clone(repo: Repo, tmp_path: Path) -> tuple[Path, Path, str]:
    """A clone of `repo` and a bundle of a commit the clone lacks: (clone, bundle, tip)."""
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(repo.root), str(clone))
    base = repo.git("rev-parse", "HEAD")
    tip = edit_and_commit(repo.root, {"value.txt": "5\n"})
    bundle = tmp_path / "c.bundle"
    assert gitlib.create_bundle(repo.root, bundle, tip, exclude=[base])
    return clone, bundle, tip


def test_a_bundle_fetch_repairs_the_tools_own_tree_and_tries_again(
    repo: Repo, tmp_path: Path
) -> None:
    clone, bundle, tip = _bundle_for_a_clone(repo, tmp_path)
    killed_add(clone, clone / ".autoresearch/runs/missions-demo-b1/scratch/incumbent")
    with pytest.raises(GitError, match="bad object worktrees/"):
        gitlib.fetch_bundle(clone, bundle, "refs/test/c")  # no repair asked: as before
    refuse = worktree_repair.refusal(RepoPaths(clone))
    assert gitlib.fetch_bundle(clone, bundle, "refs/test/c", refuse) == tip
    assert gitlib.half_built_worktrees(clone) == []


def test_a_bundle_fetch_leaves_the_users_tree_and_fails(repo: Repo, tmp_path: Path) -> None:
    clone, bundle, _ = _bundle_for_a_clone(repo, tmp_path)
    admin = killed_add(clone, tmp_path / "users-tree")
    refuse = worktree_repair.refusal(RepoPaths(clone))
    with pytest.raises(GitError, match="bad object worktrees/"):
        gitlib.fetch_bundle(clone, bundle, "refs/test/c", refuse)
    assert (admin / "HEAD").read_text().strip() == NULL_OID


# --- doctor ------------------------------------------------------------------------------------


def test_doctor_names_both_and_repairs_only_its_own(
    repo: Repo, upstream: Repo, tmp_path: Path
) -> None:
    ours = repo.root / ".autoresearch/worktrees/lanes/missions-demo-k1/0"
    theirs = tmp_path / "users-tree"
    ours_admin, theirs_admin = killed_add(repo.root, ours), killed_add(repo.root, theirs)
    code, report = doctor(repo.root)
    assert code == 1 and not report["healthy"]
    found = {Path(f["message"].split()[1]): f for f in half_built_findings(report)}
    assert set(found) == {ours, theirs}
    for finding in found.values():
        assert finding["severity"] == "error" and finding["check"] == "worktrees"
        assert "HEAD is the null object id" in finding["message"]
        assert "every `git fetch` in the repository fails" in finding["message"]
    assert f"bad object worktrees/{ours_admin.name}/HEAD" in found[ours]["message"]
    assert found[ours]["fix"].startswith("autoresearch doctor --repair-worktrees")
    assert found[theirs]["fix"].startswith("not autoresearch's tree")

    code, report = doctor(repo.root, "--repair-worktrees")
    assert code == 1  # the user's tree is still there: an error, left to them
    (done,) = report["repaired_worktrees"]
    assert done["folder"] == str(ours) and done["removed"] and done["refused"] is None
    assert not ours_admin.exists() and not ours.exists()
    assert (theirs_admin / "HEAD").read_text().strip() == NULL_OID  # never touched
    assert [Path(f["message"].split()[1]) for f in half_built_findings(report)] == [theirs]

    # the fix doctor names for the user's tree, followed: fetch works, doctor is content
    assert "autoresearch doctor --clear-locks, then git -C" in found[theirs]["fix"]
    assert doctor(repo.root, "--clear-locks")[1]["cleared_locks"] == [
        str(theirs_admin / "HEAD.lock")
    ]
    main = repo.git("rev-parse", "HEAD")
    git(theirs, "update-ref", "--no-deref", "HEAD", main)
    git(theirs, "reset", "-q")
    assert fetch_fails(repo.root, upstream) is None
    code, report = doctor(repo.root)
    assert half_built_findings(report) == []


def test_a_half_built_tree_is_named_once_with_a_fix_git_takes(
    repo: Repo, mission_dir: Path
) -> None:
    # once named a second time as a worktree of no run, with `git worktree remove --force`,
    # which git refuses for the tree a killed add left locked
    assert cli("prepare", "missions/demo", "--run-tag", "d1", cwd=repo.root).returncode == 0
    tree = repo.root / ".autoresearch/worktrees/lanes/missions-gone-1/0"
    killed_add(repo.root, tree)
    code, report = doctor(repo.root)
    named = [f for f in report["findings"] if str(tree) in f["message"]]
    assert code == 1 and len(named) == 1 and "half-built" in named[0]["message"], named


def test_doctor_says_it_in_words(repo: Repo) -> None:
    killed_add(repo.root, repo.root / ".autoresearch/worktrees/job-7")
    done = cli("--repo", str(repo.root), "doctor", cwd=repo.root)
    assert done.returncode == 1
    assert "is half-built: HEAD is the null object id" in done.stdout
    assert "fix: autoresearch doctor --repair-worktrees" in done.stdout
    done = cli("--repo", str(repo.root), "doctor", "--repair-worktrees", cwd=repo.root)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "removed the half-built worktree" in done.stdout and "healthy" in done.stdout


def test_doctor_refuses_a_tree_whose_run_is_driven(repo: Repo, mission_dir: Path) -> None:
    assert cli("prepare", "missions/demo", "--run-tag", "d1", cwd=repo.root).returncode == 0
    tree = repo.root / ".autoresearch/runs/missions-demo-d1/scratch/incumbent"
    admin = killed_add(repo.root, tree)
    lock = FileLock(RepoPaths(repo.root).run("missions-demo-d1").driver_lock)
    lock.acquire()  # a live driver of that run
    try:
        code, report = doctor(repo.root, "--repair-worktrees")
    finally:
        lock.release()
    assert code == 2
    (done,) = report["repaired_worktrees"]
    assert not done["removed"] and "being driven right now" in done["refused"]
    assert admin.exists()
    code, report = doctor(repo.root, "--repair-worktrees")  # no driver any more
    assert code == 0 and report["repaired_worktrees"][0]["removed"]


def test_doctor_checks_a_run_worktree_out_again(repo: Repo, mission_dir: Path) -> None:
    assert cli("prepare", "missions/demo", "--run-tag", "d1", cwd=repo.root).returncode == 0
    tree = repo.root / ".autoresearch/worktrees/missions-demo-d1"
    git(repo.root, "worktree", "remove", "--force", str(tree))
    killed_add(repo.root, tree)  # a kill inside the add of `doctor --restore`'s rebuild
    code, report = doctor(repo.root, "--repair-worktrees")
    assert code == 0, report
    assert gitlib.worktree_problem(tree, "autoresearch/missions-demo/d1") is None


# --- healed by the writing commands themselves ----------------------------------------------


def test_the_next_prepare_heals_a_tree_a_killed_run_left(
    repo: Repo, mission_dir: Path, upstream: Repo
) -> None:
    assert cli("prepare", "missions/demo", "--run-tag", "d1", cwd=repo.root).returncode == 0
    assert cli("stop", "missions-demo-d1", cwd=repo.root).returncode == 0
    tree = repo.root / ".autoresearch/runs/missions-demo-d1/scratch/incumbent"
    admin = killed_add(repo.root, tree)
    user_admin = killed_add(repo.root, repo.root.parent / "users-tree")
    assert fetch_fails(repo.root, upstream) is not None
    done = cli("prepare", "missions/demo", "--run-tag", "d2", cwd=repo.root)
    assert done.returncode == 0, done.stderr
    assert not admin.exists() and not tree.exists()
    assert (user_admin / "HEAD").read_text().strip() == NULL_OID  # the user's: never touched
    git(repo.root, "worktree", "remove", "--force", "--force", str(repo.root.parent / "users-tree"))
    assert fetch_fails(repo.root, upstream) is None


def test_clean_heals_a_finished_runs_tree(repo: Repo, mission_dir: Path) -> None:
    assert cli("prepare", "missions/demo", "--run-tag", "d1", cwd=repo.root).returncode == 0
    assert cli("stop", "missions-demo-d1", cwd=repo.root).returncode == 0
    tree = repo.root / ".autoresearch/worktrees/lanes/missions-demo-d1/0"
    admin = killed_add(repo.root, tree)
    done = cli("clean", "missions-demo-d1", cwd=repo.root)
    assert done.returncode == 0, done.stdout + done.stderr
    assert not admin.exists() and gitlib.half_built_worktrees(repo.root) == []


def test_stopping_the_run_heals_its_tree(repo: Repo, mission_dir: Path, upstream: Repo) -> None:
    assert cli("prepare", "missions/demo", "--run-tag", "d1", cwd=repo.root).returncode == 0
    admin = killed_add(repo.root, repo.root / ".autoresearch/runs/missions-demo-d1/scratch/ahead/1")
    assert fetch_fails(repo.root, upstream) is not None
    done = cli("stop", "missions-demo-d1", cwd=repo.root)
    assert done.returncode == 0, done.stderr
    assert not admin.exists() and fetch_fails(repo.root, upstream) is None


def test_resume_heals_its_own_worktree_and_checks_it_out_again(
    repo: Repo, mission_dir: Path
) -> None:
    assert cli("prepare", "missions/demo", "--run-tag", "d1", cwd=repo.root).returncode == 0
    tree = repo.root / ".autoresearch/worktrees/missions-demo-d1"
    kept = git(tree, "rev-parse", "HEAD")
    git(repo.root, "worktree", "remove", "--force", str(tree))
    killed_add(repo.root, tree)  # a kill inside `doctor --restore`'s rebuild of it
    done = cli("resume", "missions-demo-d1", cwd=repo.root)
    assert done.returncode == 0, done.stdout + done.stderr
    assert gitlib.half_built_worktrees(repo.root) == []
    assert git(tree, "rev-parse", "HEAD") == kept
    assert gitlib.worktree_problem(tree, "autoresearch/missions-demo/d1") is None


def test_a_step_heals_the_trees_a_killed_driver_left(repo: Repo, mission_dir: Path) -> None:
    assert cli("prepare", "missions/demo", "--run-tag", "d1", cwd=repo.root).returncode == 0
    admin = killed_add(repo.root, repo.root / ".autoresearch/runs/missions-demo-d1/scratch/ahead/2")
    kept = repo.git("rev-parse", "autoresearch/missions-demo/d1")
    candidate = repo.root / ".autoresearch/runs/missions-demo-d1/candidate.json"
    write_artifact(candidate, artifact(status="noop", base_commit=kept))
    done = cli("step", "missions-demo-d1", cwd=repo.root)
    assert done.returncode == 0, done.stderr
    assert not admin.exists() and gitlib.half_built_worktrees(repo.root) == []


def test_clean_checks_an_unfinished_runs_worktree_out_again(repo: Repo, mission_dir: Path) -> None:
    # heal may remove another run's own worktree; `resume` refuses a run whose worktree is
    # gone, so it is checked out again on the run's branch at once
    assert cli("prepare", "missions/demo", "--run-tag", "d1", cwd=repo.root).returncode == 0
    assert cli("stop", "missions-demo-d1", cwd=repo.root).returncode == 0
    assert cli("prepare", "missions/demo", "--run-tag", "d2", cwd=repo.root).returncode == 0
    tree = repo.root / ".autoresearch/worktrees/missions-demo-d2"
    kept = git(tree, "rev-parse", "HEAD")
    git(repo.root, "worktree", "remove", "--force", str(tree))
    killed_add(repo.root, tree)
    done = cli("clean", "missions-demo-d1", cwd=repo.root)
    assert done.returncode == 0, done.stdout + done.stderr
    assert gitlib.half_built_worktrees(repo.root) == []
    assert git(tree, "rev-parse", "HEAD") == kept
    done = cli("resume", "missions-demo-d2", cwd=repo.root)
    assert done.returncode == 0, done.stdout + done.stderr


def test_a_young_tree_not_of_the_driving_run_is_left_until_it_settles(
    repo: Repo, mission_dir: Path
) -> None:
    """A tree just registered may be an add in progress by an autoresearch older than the
    worktree lock: left until SETTLE_SECONDS, then repaired. The driving run's own young trees
    are repaired at once (its driver lock is this process's)."""
    assert cli("prepare", "missions/demo", "--run-tag", "d1", cwd=repo.root).returncode == 0
    repo_paths = RepoPaths(repo.root)
    session = killed_add(repo.root, repo.root / ".autoresearch/worktrees/exp-live", fresh=True)
    ahead = repo.root / ".autoresearch/runs/missions-demo-d1/scratch/ahead/3"
    own = killed_add(repo.root, ahead, fresh=True)

    code, report = doctor(repo.root, "--repair-worktrees")  # no run of its own
    left = sorted(r["registration"] for r in report["repaired_worktrees"] if not r["removed"])
    assert code == 2 and left == sorted([str(session), str(own)]), report
    assert all("may still be being added" in r["refused"] for r in report["repaired_worktrees"])

    removed = worktree_repair.heal(repo_paths, "missions-demo-d1")  # the run's own driver
    assert [r.tree.admin for r in removed] == [own] and session.exists()

    long_ago = time.time() - worktree_repair.SETTLE_SECONDS - 60
    for path in session.iterdir():
        os.utime(path, (long_ago, long_ago))
    assert [r.tree.admin for r in worktree_repair.heal(repo_paths)] == [session]
