"""`autoresearch doctor`: check the repository's state, print what is wrong and the fix."""

from __future__ import annotations

from pathlib import Path
from typing import cast

import click

from autoresearch.cli.common import (
    EXIT_RECORDED_FAILURE,
    EXIT_REFUSED,
    emit_json,
    repo_root,
    say,
)


@click.command("doctor")
@click.option(
    "--restore",
    "restore_",
    is_flag=True,
    help="Put the newest whole backup of the journal in its place (the journal there is "
    "moved aside, never deleted; the logs and the newer backups of what it rolls back go to "
    "before-restore-<time> folders). Refused while a run is driven, and for a whole journal.",
)
@click.option(
    "--from",
    "source",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="With --restore: the backup to restore instead of the newest whole one.",
)
@click.option("--force", is_flag=True, help="With --restore: restore over a whole journal.")
@click.option(
    "--clear-locks", is_flag=True, help="Remove stale git locks (only while no git runs)."
)
@click.option(
    "--repair-worktrees",
    is_flag=True,
    help="Remove autoresearch's own half-built worktrees (a kill inside `git worktree add`; "
    "one breaks every `git fetch`). Never the user's worktrees, nor one of a run being "
    "driven, nor one holding files besides .git.",
)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object on stdout.")
@click.pass_context
def doctor(
    ctx: click.Context,
    restore_: bool,
    source: Path | None,
    force: bool,
    clear_locks: bool,
    repair_worktrees: bool,
    as_json: bool,
) -> None:
    """Check the journal, its backups, git locks, worktrees and runs against git.

    Exit 0 when nothing is wrong, 1 when a check found an error (each finding names its fix),
    2 when a fix was refused (--repair-worktrees: a tree it had to leave).
    """
    from autoresearch.api import doctor as core

    root = repo_root(ctx)
    actions: dict[str, object] = {}
    restored = core.restore(root, source, force).to_dict() if restore_ else None
    cleared = [str(p) for p in core.clear_locks(root)] if clear_locks else []
    repaired = core.repair_worktrees(root) if repair_worktrees else []
    if restored is not None:
        actions["restored"] = restored
    if clear_locks:
        actions["cleared_locks"] = cleared
    if repair_worktrees:
        actions["repaired_worktrees"] = [r.to_dict() for r in repaired]
    report = core.diagnose(root)
    if as_json:
        emit_json({**report.to_dict(), **actions})
    else:
        if restored is not None:
            aside = restored["moved_aside"]
            say(
                f"restored the journal from {restored['restored_from']} (taken "
                f"{restored['taken_at']})" + (f"; the old one is at {aside}" if aside else "")
            )
            for ref in cast("list[str]", restored["refs_set_aside"]):
                say(_set_aside_line(ref))
            for folder in cast("list[str]", restored["logs_set_aside"]):
                say(
                    f"moved the logs of the iterations (a lane's: sessions) after the backup "
                    f"to {folder}: the resumed run numbers them from the backup's again"
                )
            for folder in cast("list[str]", restored["backups_set_aside"]):
                say(
                    f"moved the backups taken after the restored one to {folder}: they hold "
                    "the decisions this restore rolls back"
                )
        for lock in cleared:
            say(f"removed stale git lock {lock}")
        for done in repaired:
            if done.removed:
                say(f"removed the half-built worktree {done.folder} ({done.problem})")
            else:
                say(f"left the half-built worktree {done.folder}: {done.refused}")
        for finding in report.findings:
            line = f"{finding.severity.upper():7} {finding.check}: {finding.message}"
            say(line + (f"\n        fix: {finding.fix}" if finding.fix else ""))
        say("healthy" if report.healthy else "problems found: see the fixes above")
    if any(not done.removed for done in repaired):
        ctx.exit(EXIT_REFUSED)
    if not report.healthy:
        ctx.exit(EXIT_RECORDED_FAILURE)


def _set_aside_line(ref: str) -> str:
    from autoresearch.api import KEPT_BEFORE_RESTORE

    if f"/{KEPT_BEFORE_RESTORE}-" in ref:
        return (
            f"kept the run branch's tip as {ref}: resuming resets the branch to the backup's "
            "last keep, and the commits kept after the backup stay there"
        )
    return f"kept the ref of an iteration after the backup as {ref}"
