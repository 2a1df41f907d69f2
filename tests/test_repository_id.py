"""paths.repository_id names a repository's folder in the user's state directory (its seal
key, its journal's markers and backups): a repository that has one must keep its name, however
the digest is computed."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from autoresearch import paths


def test_the_repository_id_is_the_sha256_of_its_path_and_folder(tmp_path: Path) -> None:
    root = tmp_path / "my repo"
    root.mkdir()
    info = os.stat(root)
    text = f"{root.absolute()}\0{info.st_dev}:{info.st_ino}"
    digest = hashlib.sha256(text.encode()).hexdigest()[:16]
    assert paths.repository_id(root) == f"{paths.slug(root.name, 'repo')}-{digest}"
