"""`autoresearch demo`: a small repository with a measurable job, an evaluator and a mission.

The files come from the package (`demo_template/`), so the demo works from any install.
"""

from __future__ import annotations

import tempfile
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path

from autoresearch import git
from autoresearch.errors import ContractError

DEMO_MISSION = "missions/tune-sgd"
# the same job with a bigger compute budget: readings long enough for parallel lanes to matter
LANES_MISSION = "missions/tune-sgd-lanes"
_RENAMES = {"gitignore.txt": ".gitignore"}


def create_demo_repo(directory: Path | None, mission: str = DEMO_MISSION) -> Path:
    """Create the demo repository; returns the directory of its `mission`."""
    root = _target(directory)
    _copy_tree(resources.files("autoresearch") / "demo_template", root)
    git.init_repo(root)
    git.commit_all(root, "demo: a tiny training job whose hyperparameters can be tuned")
    return root / mission


def _target(directory: Path | None) -> Path:
    if directory is None:
        return Path(tempfile.mkdtemp(prefix="autoresearch-demo-")).resolve()
    root = directory.expanduser().resolve()
    try:
        if root.exists() and any(root.iterdir()):
            raise ContractError(f"demo directory is not empty: {root}")
        root.mkdir(parents=True, exist_ok=True)
    except OSError as exc:  # a file in the way, a place we may not write: input, not a bug
        raise ContractError(f"cannot make the demo directory {root}: {exc.strerror}") from exc
    return root


def _copy_tree(source: Traversable, target: Path) -> None:
    for entry in source.iterdir():
        if entry.name == "__pycache__":
            continue
        name = _RENAMES.get(entry.name, entry.name)
        if entry.is_dir():
            (target / name).mkdir(parents=True, exist_ok=True)
            _copy_tree(entry, target / name)
        else:
            (target / name).write_bytes(entry.read_bytes())
