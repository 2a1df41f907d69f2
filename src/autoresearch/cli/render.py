"""Human-readable output of the supervisor commands."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from autoresearch.api import estimates, format_score, report
from autoresearch.cli.common import say

if TYPE_CHECKING:
    from autoresearch.api import (
        Certification,
        Interval,
        LoopSummary,
        Mission,
        RunDetails,
        RunListing,
        RunManifest,
        StepResult,
        StoredEvaluation,
        TrialResult,
    )


def _short(sha: str | None) -> str:
    return (sha or "")[:7]


def mission(m: Mission) -> None:
    ev, sb = m.sandbox.evaluator, m.sandbox
    lines = [
        f"mission:      {m.mission_dir}",
        f"repository:   {m.repo_root}",
        f"slug:         {m.slug}",
        f"evaluator:    {ev.command}",
        f"format:       {ev.format}" + (f" (metric {ev.metric})" if ev.metric else ""),
        f"keep policy:  {ev.keep_policy} ({ev.direction} is better)",
        f"timeout:      {format_score(ev.timeout_seconds)} s",
    ]
    if sb.links or sb.runtime:
        shown = {"link": list(sb.links), "runtime": list(sb.runtime)}  # as `check` always showed
        lines.append(f"worktree:     {shown}")
    if sb.tune:
        lines.append(f"tune:         {', '.join(p.name for p in sb.tune.parameters)}")
    click.echo("\n".join(lines))
    click.echo("ok: the mission is valid")


def trial(result: TrialResult) -> None:
    """`check --try`: what the evaluator's one reading came to, then one line per problem."""
    ev = result.evaluation
    read = f"status {ev.status}"
    if ev.reported_pass is not None:
        read += f", pass {str(ev.reported_pass).lower()}"
    if ev.reported_score is not None:
        read += f", score {format_score(ev.reported_score)}"
    if ev.metrics:
        read += ", metrics " + ", ".join(f"{k}={format_score(v)}" for k, v in ev.metrics.items())
    lines = [
        f"tried:        {_short(result.commit)} in a scratch checkout "
        f"({ev.duration_ms / 1000:.1f} s)",
        f"read:         {read}",
    ]
    lines += [f"problem:      {line}" for line in result.problems]
    lines += [f"{line}" for line in result.notes]
    click.echo("\n".join(lines))
    if result.ok:
        click.echo("ok: the evaluator ran and a run can start from this")


def prepared(manifest: RunManifest, baseline: StoredEvaluation | None) -> None:
    run, paths = manifest.run, manifest.paths
    score = format_score(baseline.score if baseline else None) or "n/a"
    status = (baseline.status_text if baseline else "") or "n/a"
    say(
        "\n".join(
            [
                f"run:           {run.run_id}",
                f"branch:        {run.branch_name}",
                f"worktree:      {run.worktree_path}",
                f"baseline:      {_short(run.baseline_commit)} status {status}, score {score}",
                f"instructions:  {paths.instructions}",
                f"candidate:     {paths.candidate}",
                f"manifest:      {paths.manifest}",
            ]
        )
    )


def step_result(result: StepResult) -> None:
    ev = result.evaluator
    score = estimates.row_text(ev.reported_score, result.estimate) if ev else ""
    kept = estimates.text(result.last_kept_score, result.last_kept_interval) or "n/a"
    line = f"iteration {result.iteration}: {result.decision} ({result.decision_reason})"
    if ev:
        line += f"; evaluator {ev.status}" + (f", score {score}" if score else "")
    line += f"; last kept score {kept}; run {result.run_status}"
    if result.stop_reason:
        line += f" ({result.stop_reason})"
    click.echo(line)
    for note in result.repaired:
        click.echo(f"  repaired: {note}")


def resumed(manifest: RunManifest, pending: bool) -> None:
    run = manifest.run
    say(f"run {run.run_id} re-armed at iteration {run.iteration + 1}")
    kept = estimates.text(run.last_kept_score, manifest.kept_interval)
    say(f"  last kept: {_short(run.last_kept_commit)} score {kept or 'n/a'}")
    say(f"  instructions: {manifest.paths.instructions}")
    if pending:
        say(f"  candidate.json is waiting: autoresearch step {run.run_id}")


def run_list(items: list[RunListing]) -> None:
    say(report.run_list(items))


def run_details(d: RunDetails) -> None:
    say(report.run_details(d))


def loop_summary(loop: LoopSummary, demo: bool = False, certified: str | None = None) -> None:
    """The end-of-loop summary: plain aligned lines, so that paths are never truncated
    (`certified`: the certification at the loop's end, under the best)."""
    s = loop.summary
    reason = f" ({s.stop_reason})" if s.stop_reason else ""
    if s.stop_note and s.stop_reason:
        reason = f" ({s.stop_reason}: {s.stop_note})"
    rows = [
        ("run", s.run_id),
        ("status", f"{s.status}{reason}"),
        ("iterations", f"{s.iteration} ({loop.sessions} in this invocation)"),
        ("baseline", estimates.text(s.baseline_score, s.baseline_interval) or "n/a"),
        ("best", f"{report.best_text(s)} ({s.direction} is better)"),
        *report.honest_rows(s, certified),
        ("decisions", report.decision_counts(s.counts, loop.totals)),
        *report.totals_rows(loop.totals),
        ("best commit", f"{_short(s.last_kept_commit)} on branch {s.branch_name}"),
        ("worktree", s.worktree_path),
        ("results", loop.results_file),
        ("ledger", loop.ledger_file),
        ("logs", loop.logs_dir),
        ("report", loop.report_file),
    ]
    if s.resume_command:
        rows.append(("resume", s.resume_command))
    width = max(len(key) for key, _ in rows)
    say("\n".join(f"{key:<{width}}  {value}" for key, value in rows))
    lanes = report.lane_table(loop.lanes)
    if lanes:
        say(lanes)
    archive = report.archive_table(loop.archive)
    if archive:
        say(archive)
    agents = report.agent_table(loop.agents)
    if agents:
        say(agents)
    if demo:  # commands to copy: quoted, so that a path with spaces or quotes still works
        import shlex  # here, as in this_program

        repo, run, worktree = (shlex.quote(p) for p in (loop.repo_root, s.run_id, s.worktree_path))
        me = this_program()
        click.echo(
            "\nNext steps:\n"
            f"  git -C {worktree} log --oneline   # the kept commits\n"
            f"  {me} --repo {repo} status {run}   # every iteration\n"
            f"  {me} --repo {repo} finalize {run}   # kept commits → branches\n"
            "  docs/writing-a-mission.md: write a mission for your own repository\n"
            f"\nThe report (plot, every iteration, the kept diffs) – open it in a browser:\n"
            f"  {loop.report_file}"
        )


def this_program() -> str:
    """How a new shell calls this installation: the bare name when PATH finds it, else its
    full path (`python3 dev.py demo` runs .venv/bin/autoresearch, which no shell has on PATH)."""
    import shlex  # here, as shutil: only a demo's next steps quote a command
    import shutil  # here: status and a hook start without it (tests/test_import_graph.py)

    script = Path(sys.executable).parent / "autoresearch"
    found = shutil.which("autoresearch")
    if found is not None and script.exists() and Path(found).samefile(script):
        return "autoresearch"
    if script.exists():
        return shlex.quote(str(script))
    return f"{shlex.quote(sys.executable)} -m autoresearch"


def cleaned(results: list[Any]) -> None:
    if not results:
        click.echo("no finished runs to clean")
        return
    for r in results:
        if r.skipped and not (r.worktree or r.branch):
            click.echo(f"{r.run_id}: skipped ({r.skipped})")
            continue
        verb = "would remove" if r.dry_run else "removed"
        gone = [
            *([f"worktree {r.worktree}"] if r.worktree else []),
            *([f"branch {r.branch}"] if r.branch else []),
            *([f"{r.discarded_refs} discarded-candidate refs"] if r.discarded_refs else []),
        ]
        click.echo(f"{r.run_id}: {verb} {', '.join(gone) or 'nothing'}")
        if r.saved_patch:
            click.echo(f"  uncommitted {r.saved_patch}")
        if r.kept_ref:
            click.echo(f"  the last kept commit stays reachable: git log {r.kept_ref}")
        if r.skipped:
            click.echo(f"  note: {r.skipped}")


def certification(d: Certification) -> None:
    """`certify`: each commit's mean with its interval, then the improvement."""
    from autoresearch.api import ablation_summary, level_moved

    def interval(i: Interval | None) -> str:
        if not i:
            return "n/a (no passing reading)"
        return i.text() if i.half_width else f"{format_score(i.mean)} (n={i.n})"

    lines = [f"run {d.run_id}: {d.repeats} interleaved readings of each commit"]
    for label, part in (("baseline", d.baseline), ("final", d.final)):
        lines.append(f"  {label:<8} {part.commit[:12]}  {interval(part.interval)}")
    imp = d.improvement
    if imp:
        verdict = "significant" if d.significant else "not significant"
        lines.append(
            f"  improvement {imp.signed_text()} ({verdict}; better is +, {d.direction} is better)"
        )
    if moved := level_moved(d):
        lines.append(f"  {moved}")
    if d.resolution:
        lines.append(f"  {d.resolution}")
    for a in d.ablations or ():
        head = f"  without iteration {a.iteration} ({a.commit[:12]}"
        head += f" {a.description})" if a.description else ")"
        worth = a.worth
        if a.conflict:
            lines.append(f"{head}: {a.note}")
        elif worth:
            verdict = "real" if a.significant else "not significant"
            lines.append(f"{head}: worth {worth.signed_text()} ({verdict})")
        else:
            lines.append(f"{head}: no passing reading")
    summary = ablation_summary(d)
    if summary:
        lines.append(f"  {summary}")
    if d.failed_readings:
        lines.append(f"  {d.failed_readings} readings failed and were not counted")
    click.echo("\n".join(lines))
