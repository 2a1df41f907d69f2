"""Save-then-reset and the one runtime-dirt rule (reset.py), on real repositories."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from autoresearch.paths import HARNESS_FILES, RUNTIME_FILES
from autoresearch.reset import CACHE_DIRT, RuntimeRule, save_then_reset, work_patch
from helpers import git, make_repo

SUPERVISOR = RuntimeRule(RUNTIME_FILES, (".venv",), ("data/*.bin",))
SESSION = RuntimeRule(HARNESS_FILES)


@pytest.mark.parametrize(
    ("path", "supervisor", "session"),
    [
        ("results.tsv", True, False),
        ("run.log", True, False),
        (".results.tsv.x1.tmp", True, False),
        ("autoresearch.sh", False, True),
        (".autoresearch/journal.sqlite3", True, True),
        ("pkg/__pycache__/m.cpython-311.pyc", True, True),
        ("old.pyc", True, True),  # a cache outside __pycache__ is a cache for both doors
        ("pkg/mod.pyo", True, True),
        (".venv/bin/python", True, False),
        ("data/x.bin", True, False),
        ("data/x.txt", False, False),
        ("src/results.tsv", False, False),
        ("notes.md", False, False),
    ],
)
def test_the_runtime_rule(path: str, supervisor: bool, session: bool) -> None:
    assert SUPERVISOR.spares(path) is supervisor
    assert SESSION.spares(path) is session


@pytest.mark.parametrize(
    ("path", "spared"),
    [
        ("pkg/__pycache__/m.cpython-311.pyc", True),
        ("old.pyc", True),
        ("pkg/mod.pyo", True),
        (".autoresearch/journal.sqlite3", True),
        ("autoresearch.sh", False),  # a session's setup commit takes its harness
        ("results.tsv", False),
        (".results.tsv.x1.tmp", False),
        (".venv/bin/python", False),
        ("notes.md", False),
    ],
)
def test_the_cache_rule(path: str, spared: bool) -> None:
    assert CACHE_DIRT.spares(path) is spared


def test_a_work_patch_leaves_out_what_the_rule_spares(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "r")
    repo.write(".gitignore", "")  # caches not ignored: only the rule keeps them out
    repo.write("pkg/__pycache__/m.cpython-311.pyc", "bytecode\n")
    repo.write("results.tsv", "runtime\n")
    repo.write("notes.md", "work\n")
    patch = work_patch(repo.root, "HEAD", CACHE_DIRT).decode()
    assert "notes.md" in patch and "results.tsv" in patch and ".gitignore" in patch
    assert "m.cpython-311.pyc" not in patch
    assert "results.tsv" not in work_patch(repo.root, "HEAD", SUPERVISOR).decode()


def test_clean_patterns_spare_what_the_rule_spares(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "r")
    spared = ["results.tsv", "old.pyc", "pkg/__pycache__/m.pyc", ".venv/x", "data/x.bin"]
    gone = ["notes.md", "data/x.txt", "src/results.tsv"]
    for rel in (*spared, *gone):
        repo.write(rel, "x\n")
    save_then_reset(repo.root, "HEAD", "HEAD", SUPERVISOR, tmp_path / "p.patch")
    assert all((repo.root / rel).exists() for rel in spared)
    assert not any((repo.root / rel).exists() for rel in gone)


def test_tracked_untracked_and_staged_work_is_saved_before_the_reset(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "r")
    base = git(repo.root, "rev-parse", "HEAD")
    repo.write("value.txt", "committed\n")
    repo.commit("past the base")
    repo.write("scripts/eval.py", "edited\n")  # tracked edit
    repo.write("staged.py", "staged, never committed\n")
    git(repo.root, "add", "staged.py")
    repo.write("new/idea.md", "untracked\n")
    repo.write("results.tsv", "runtime\n")
    before = {p: (repo.root / p).read_text() for p in ("value.txt", "scripts/eval.py",
                                                       "staged.py", "new/idea.md")}  # fmt: skip
    patch = tmp_path / "saved.patch"
    assert save_then_reset(repo.root, base, base, SUPERVISOR, patch)
    assert git(repo.root, "rev-parse", "HEAD") == base
    assert git(repo.root, "status", "--porcelain", "--untracked-files=all") == "?? results.tsv"
    assert "results.tsv" not in patch.read_text()
    subprocess.run(["git", "apply", "--binary", str(patch)], cwd=repo.root, check=True)
    assert {p: (repo.root / p).read_text() for p in before} == before


def test_an_empty_save_never_overwrites_an_earlier_patch(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "r")
    patch = tmp_path / "saved.patch"
    repo.write("value.txt", "tried\n")
    assert save_then_reset(repo.root, "HEAD", "HEAD", SESSION, patch, keep_empty=True)
    first = patch.read_bytes()
    assert not save_then_reset(repo.root, "HEAD", "HEAD", SESSION, patch, keep_empty=True)
    assert patch.read_bytes() == first
