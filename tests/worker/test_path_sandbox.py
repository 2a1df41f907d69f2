"""The path sandbox: lexical and physical containment, refused encodings (a case table)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from autoresearch.errors import ContractError
from autoresearch.worker.sandbox import Root, resolve


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    root = tmp_path / "root"
    (root / "src").mkdir(parents=True)
    (tmp_path / "outside").mkdir()
    (tmp_path / "root-evil").mkdir()
    (root / "src" / "ok.py").write_text("x")
    (root / "link-out").symlink_to(tmp_path / "outside")
    (root / "link-in").symlink_to(root / "src")
    (root / "dangling-out").symlink_to(tmp_path / "outside" / "missing")
    (root / "file-link-out").symlink_to(tmp_path / "outside" / "f.txt")
    return root


INSIDE = [
    ".",
    "src",
    "src/ok.py",
    "src/new/dir/file.py",  # not there yet: judged by its nearest existing parent
    "src/../src/ok.py",
    "link-in/ok.py",  # a symlink that stays inside
    "100%.txt",  # a lone percent sign is an ordinary character
]
OUTSIDE = [
    "..",
    "../outside",
    "src/../../outside",
    "../root-evil",  # a sibling whose name starts with the root's
    "/etc/passwd",
    "link-out",
    "link-out/new-file",
    "dangling-out",
    "file-link-out",
    "%2e%2e/outside",
    "src%2fok.py",
    "src/ok.py\0.txt",
    "src/a\nb",
    "",
]


@pytest.mark.parametrize("path", INSIDE)
def test_inside(tree: Path, path: str) -> None:
    found = resolve(path, [Root.of(tree)], base=str(tree))
    assert found == os.path.normpath(os.path.join(tree, path))


@pytest.mark.parametrize("path", OUTSIDE)
def test_outside(tree: Path, path: str) -> None:
    with pytest.raises(ContractError, match="^autoresearch_path_outside_sandbox: "):
        resolve(path, [Root.of(tree)], base=str(tree))


def test_absolute_inside_and_root_given_through_a_symlink(tree: Path, tmp_path: Path) -> None:
    alias = tmp_path / "alias"
    alias.symlink_to(tree)
    roots = [Root.of(alias)]
    assert resolve(str(tree / "src"), roots, base=str(alias)) == str(tree / "src")
    assert resolve("src", roots, base=str(alias)) == str(alias / "src")
    with pytest.raises(ContractError):
        resolve("link-out", roots, base=str(alias))
