"""Reset safety (supervisor.md §6): nothing is reset while the worktree holds unsaved work.

Only untracked runtime files may be present: results.tsv, run.log, the shared-path links,
anything under `.autoresearch/`, Python caches, and the sandbox's `worktree.runtime` globs (the
rule itself is reset.RuntimeRule, shared with the sessions). Tracked modifications always block.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from shlex import quote as shell_quote

from autoresearch import git
from autoresearch.errors import RefusedError
from autoresearch.paths import RUNTIME_FILES
from autoresearch.reset import blocking, run_dirt

MAX_LINES_SHOWN = 20


def runtime_exclude_patterns() -> list[str]:
    """info/exclude entries that keep a worktree's runtime files out of git."""
    return [*(f"/{name}" for name in RUNTIME_FILES), *(f"/.{name}.*.tmp" for name in RUNTIME_FILES)]


def runtime_clean_patterns(links: Iterable[str], runtime: Iterable[str]) -> list[str]:
    """`git clean -e` patterns that spare exactly what `is_runtime_path` allows."""
    return run_dirt(links, runtime).clean_patterns()


def is_runtime_path(path: str, links: Iterable[str], runtime: Iterable[str]) -> bool:
    """True for an untracked path that may be present without blocking a reset."""
    return run_dirt(links, runtime).spares(path)


def blocking_entries(
    entries: Sequence[git.StatusEntry], links: Iterable[str] = (), runtime: Iterable[str] = ()
) -> list[git.StatusEntry]:
    """The status entries that forbid a reset."""
    return blocking(entries, run_dirt(links, runtime))


def reset_error(
    worktree: Path, blocking: Sequence[git.StatusEntry], run_id: str | None = None
) -> RefusedError:
    """The refusal, code and lines first (scripts match them), then the ways out."""
    lines = [e.line() for e in blocking[:MAX_LINES_SHOWN]]
    if len(blocking) > MAX_LINES_SHOWN:
        lines.append(f"… (+{len(blocking) - MAX_LINES_SHOWN} more)")
    return RefusedError(
        f"autoresearch_reset_requires_clean_worktree:{worktree}:{' | '.join(lines)} – "
        + reset_hint(blocking, run_id)
    )


def reset_hint(blocking: Sequence[git.StatusEntry], run_id: str | None) -> str:
    run = run_id or "RUN_ID"
    untracked = [e.path for e in blocking if e.untracked]
    hints = ["nothing was reset"]
    if len(untracked) < len(blocking):
        hints.append("commit or revert the tracked changes")
    if untracked:
        names = ", ".join(untracked[:3])
        flags = " ".join(f"--runtime {shell_quote(p)}" for p in untracked[:3])
        hints.append(
            f"if the evaluator or your tools write {names}, declare it under "
            "`worktree: {runtime: [...]}` in sandbox.md or in .gitignore for new runs, "
            f"and let this run allow it (its evaluator contract stays frozen): "
            f"autoresearch resume {run} {flags}"
        )
    hints.append(
        f"or save the changes as a patch and go on: autoresearch resume {run} --save-dirty"
    )
    return "; ".join(hints)


def dirty_entries(
    worktree: Path, links: Iterable[str] = (), runtime: Iterable[str] = ()
) -> list[git.StatusEntry]:
    return blocking_entries(git.status(worktree), links, runtime)


def check_reset_safety(
    worktree: Path,
    links: Iterable[str] = (),
    runtime: Iterable[str] = (),
    run_id: str | None = None,
) -> None:
    """Raise `autoresearch_reset_requires_clean_worktree:…` when a reset would lose work."""
    blocking = dirty_entries(worktree, links, runtime)
    if blocking:
        raise reset_error(worktree, blocking, run_id)
