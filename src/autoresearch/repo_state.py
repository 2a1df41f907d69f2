"""Repository state shared by both front doors: the `.autoresearch/` folder, the managed
block of `info/exclude` (shared by every worktree), and the environment links of worktrees."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from autoresearch import git_files
from autoresearch.fsutil import atomic_write_text, make_private, private_dir
from autoresearch.paths import STATE_DIR, RepoPaths

EXCLUDE_BEGIN = "# >>> autoresearch (managed) >>>"
EXCLUDE_END = "# <<< autoresearch (managed) <<<"


def main_root(start: Path) -> Path | None:
    """The main working tree of the repository around `start`, None outside any: from git's
    files at a worktree's top folder (no git process or git.py: a status line's or a hook's
    start-up, issue 36), else git says."""
    found = git_files.main_root(start)
    if found is not None:
        return found
    from autoresearch import git

    return git.main_root(start)


def ensure_state_dir(repo: RepoPaths) -> None:
    """Create `.autoresearch/` (user-only) and keep it out of the main repository's status."""
    private_dir(repo.state_dir)
    make_private(repo.state_dir)  # one made by an older version may be world-readable
    write_excludes(repo.repo_root, [f"/{STATE_DIR}/"])


def write_excludes(repo_root: Path, patterns: list[str]) -> None:
    """Add patterns to the managed block of info/exclude (shared by all worktrees)."""
    path = _exclude_file(repo_root)
    text = path.read_text(encoding="utf-8") if path.exists() else ""
    start, end = text.find(EXCLUDE_BEGIN), text.find(EXCLUDE_END)
    current: list[str] = []
    if start >= 0 and end > start:
        current = text[start + len(EXCLUDE_BEGIN) : end].split()
        text = text[:start] + text[end + len(EXCLUDE_END) :].lstrip("\n")
    merged = list(dict.fromkeys([*current, *patterns]))
    if merged == current and start >= 0:
        return
    block = "\n".join([EXCLUDE_BEGIN, *merged, EXCLUDE_END])
    # atomic: concurrent drivers may rewrite the file at the same moment
    atomic_write_text(
        path, text.rstrip("\n") + ("\n" if text.strip() else "") + block + "\n", keep_mode=True
    )


def _exclude_file(repo_root: Path) -> Path:
    """info/exclude of the shared git directory: from git's files when plain (every write of a
    session's hook ensures the block: issue 36), else git says where."""
    found = git_files.dirs(repo_root)
    if found is not None:
        return found[1] / "info" / "exclude"
    from autoresearch import git

    return git.git_path(repo_root, "info/exclude")


def link_shared_paths(repo_root: Path, worktree: Path, names: Iterable[str]) -> list[str]:
    """Symlink the repository's untracked environment folders into a worktree and keep the
    links out of git; returns the names that are linked."""
    linked = []
    for name in names:
        source, target = repo_root / name, worktree / name
        if target.is_symlink():
            linked.append(name)
        elif source.exists() and not target.exists():
            target.parent.mkdir(parents=True, exist_ok=True)
            target.symlink_to(source)
            linked.append(name)
    if linked:
        write_excludes(repo_root, [f"/{name}" for name in linked])
    return linked
