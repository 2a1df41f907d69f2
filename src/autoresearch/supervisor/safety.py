"""Reset safety (supervisor.md §6): nothing is reset while the worktree holds unsaved work.

Only untracked runtime files may be present: results.tsv, run.log, the shared-path links,
anything under `.autoresearch/`, Python caches, and the sandbox's `worktree.runtime` globs (the
rule itself is reset.RuntimeRule, shared with the sessions; every check here takes the run's,
`RunHandle.dirt`, and builds none). Tracked modifications always block.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from shlex import quote as shell_quote

from autoresearch import git
from autoresearch.errors import RefusedError
from autoresearch.reset import RuntimeRule, blocking

MAX_LINES_SHOWN = 20


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


def dirty_entries(worktree: Path, rule: RuntimeRule) -> list[git.StatusEntry]:
    """The status entries of `worktree` that forbid a reset under `rule` (`RunHandle.dirt`)."""
    return blocking(git.status(worktree), rule)


def check_reset_safety(worktree: Path, rule: RuntimeRule, run_id: str | None = None) -> None:
    """Raise `autoresearch_reset_requires_clean_worktree:…` when a reset would lose work."""
    blocking = dirty_entries(worktree, rule)
    if blocking:
        raise reset_error(worktree, blocking, run_id)
