"""Human-readable text of every session tool result, pure (both front doors show the same, each
naming its own verbs: `verbs.Door`).

Numbers print as in the supervisor's views: integral values without `.0`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from autoresearch.experiments.confidence import PAIRED, POOLED_NOTE, BestRef, Confidence, Ref
from autoresearch.experiments.ledger import progress_text
from autoresearch.experiments.rules import max_reached_message
from autoresearch.experiments.verbs import Door, Verbs, verbs
from autoresearch.journal.views import format_score
from autoresearch.noise import Interval
from autoresearch.states import ProcessState, RunState, SessionState

if TYPE_CHECKING:
    from autoresearch.experiments.logger import LogReport, NotesReport
    from autoresearch.experiments.notes import NotesResult
    from autoresearch.experiments.runner import RunReport
    from autoresearch.experiments.session import CloseResult, InitResult, ReopenResult
    from autoresearch.experiments.status import (
        HistoryLine,
        HookStatus,
        PendingRun,
        SessionList,
        StatusReport,
        UnjustifiedKeep,
    )


def num(value: float | None, unit: str = "") -> str:
    if value is None:
        return "n/a"
    text = format_score(value) if float(value).is_integer() else f"{value:.6g}"
    return f"{text} {unit}".rstrip()


def pct(value: float | None) -> str:
    return "" if value is None else f" ({value:+.2f}%)"


def ref(data: Ref | None, unit: str = "") -> str:
    if data is None:
        return "none yet"
    return f"#{data.run} {num(data.metric, unit)}"


def best_kept(best: BestRef | None, unit: str = "") -> str:
    """The best kept run with its change against the baseline (`best_change`)."""
    if best is None:
        return ref(best, unit)
    return f"{ref(best, unit)}{best_change(best.delta_pct, best.paired)}"


def best_change(delta_pct: float | None, paired: Interval | None) -> str:
    """The best's change against the baseline as every view says it: from pairs once known,
    else the Δ % of readings taken at other moments, said to be unpaired (drift is in it)."""
    if paired is not None:
        return f" (paired against the baseline: {paired.signed_text()}; better is +)"
    if not delta_pct:  # the best is the baseline
        return pct(delta_pct)
    return f" ({delta_pct:+.2f}%, unpaired)"


def confidence(data: Confidence) -> str:
    if data.value is None:
        return f"n/a ({data.reason})"
    # the contract's ratio is of pooled values: when the machine drifted, it measures the
    # drift too, and says so
    drifted = any(d.significant for d in data.drift)
    hint = "; pooled readings: the drift below is in it" if drifted else ""
    return f"{data.value:.2f} × MAD ({data.label}){hint}"


def significance(data: Confidence) -> str:
    """The `significance` of a confidence: best − baseline against repeated runs' noise,
    rounded to it (two significant digits of the interval's half-width)."""
    sig = data.significance
    if sig is None or sig.significant is None:
        return f"n/a ({(sig.reason if sig else None) or 'not computed'})"
    assert sig.difference is not None and sig.low is not None and sig.high is not None
    verdict = "significant" if sig.significant else "not significant"
    shown = Interval(sig.difference, sig.low, sig.high, sig.pairs).signed_text()
    if sig.basis == PAIRED:
        return f"{verdict}: best − baseline {shown} (better is +; paired, {sig.pairs} pairs)"
    return (
        f"{verdict}: best − baseline {shown} (better is +; spread {sig.spread:.3g}, "
        f"df {sig.df}; {POOLED_NOTE})"
    )


def drift(data: Confidence) -> str:
    """`drift:` lines, one for each commit read at two moments of the segment."""
    return "\n".join(f"drift:       {d.text}" for d in data.drift)


def paired(report: RunReport) -> str:
    """A paired run's change against the kept commit read next to it."""
    change = report.paired
    if change is None or report.reference_commit is None:
        return ""
    commit = report.reference_commit[:7]
    if change.n < 2:
        return f"paired:    {change.signed_text()} against {commit} read alongside (1 pair)"
    verdict = "significant" if change.low > 0 or change.high < 0 else "within the noise"
    return (
        f"paired:    {change.signed_text()} against {commit} read alongside "
        f"(better is +; {change.n} pairs, {verdict})"
    )


def metrics(values: Mapping[str, float]) -> str:
    return ", ".join(f"{k}={num(v)}" for k, v in sorted(values.items())) or "none"


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def _lines(*parts: str) -> str:
    return "\n".join(p for p in parts if p)


def render_init(result: InitResult) -> str:
    s = result.session
    kind = "started" if result.created else "updated"
    head = f"session #{result.session_id} {kind}: '{s.name}' on {result.branch}"
    limit = f", max {s.max_iterations} runs" if s.max_iterations else ""
    return _lines(
        head,
        f"metric:    {s.metric} ({s.direction} is better{limit}), segment {s.segment}",
        f"command:   {s.command}",
        f"directory: {result.directory}",
        *result.messages,
    )


def render_run(report: RunReport) -> str:
    unit = report.unit
    state = {
        "pass": "passed",
        "fail": f"FAILED (exit {report.exit_code})",
        "timeout": "TIMED OUT",
        "error": "could not start",
        "cancelled": "CANCELLED (its processes were stopped)",
    }[report.status]
    checks = report.checks
    return _lines(
        f"run #{report.run} {state} in {report.duration_seconds:.1f}s",
        # paired, the Δ % against a baseline read at another moment is left to --json
        f"{report.metric_name}: {num(report.metric, unit)}"
        + ("" if report.paired else pct(report.delta_pct))
        + ("  ← use these values in log" if report.metric is not None else ""),
        _readings(report.readings, unit),
        _readings(report.reference_readings, unit, "reference"),
        paired(report),
        f"secondary: {metrics(report.metrics)}" if report.metrics else "",
        f"asi:       {_json(report.asi)}" if report.asi else "",
        f"checks:    {checks.state} ({checks.log_file})" if checks else "",
        f"baseline:  {ref(report.baseline, unit)}",
        f"best kept: {ref(report.best, unit)}",
        f"progress:  {progress_text(report.progress)} logged",
        *report.messages,
        f"suggested: log as {report.suggested_status}"
        if report.status != ProcessState.CANCELLED
        else "",
        f"log:       {report.log_path}",
        "--- tail ---",
        report.tail or "(no output)",
        f"--- checks tail ---\n{checks.tail}" if checks and not checks.passed else "",
    )


def _readings(values: list[float], unit: str, side: str = "") -> str:
    if len(values) < 2 and not (side and values):
        return ""
    shown = ", ".join(num(v, unit) for v in values)
    if side:
        return f"reference: {len(values)} ({shown}): the kept commit, read in the same rounds"
    return f"readings:  {len(values)} ({shown}): the value is their mean"


def render_log(report: LogReport) -> str:
    g = report.git
    return _lines(
        f"run #{report.run} logged as {report.status}: {report.description}",
        f"{report.metric_name}: {num(report.metric, report.unit)}"
        + ("" if report.paired else pct(report.delta_pct)),
        _logged_pairs(report.paired),
        f"baseline:   {ref(report.baseline, report.unit)}",
        f"best kept:  {best_kept(report.best, report.unit)}",
        f"secondary:  {metrics(report.metrics)}" if report.metrics else "",
        f"asi:        {_json(report.asi)}" if report.asi else "",
        f"confidence: {confidence(report.confidence)}",
        f"significance: {significance(report.confidence)}",
        drift(report.confidence),
        f"git:        {g.action}" + (f" ({g.commit[:7]})" if g.commit else ""),
        f"flagged:    {', '.join(f'#{n}' for n in report.flagged)}" if report.flagged else "",
        f"justified:  {', '.join(f'#{n}' for n in report.justified)}" if report.justified else "",
        f"progress:   {progress_text(report.progress)}",
        *report.messages,
    )


def _logged_pairs(change: Interval | None) -> str:
    if change is None:
        return ""
    against = f"against the kept commit read alongside ({change.n} pairs)"
    return f"paired:     {change.signed_text()} {against}"


def render_run_notes(report: NotesReport) -> str:
    if not report.flagged:
        return _lines(*report.messages)
    return _lines(
        *report.messages, f"confidence: {confidence(report.confidence)}", drift(report.confidence)
    )


def render_notes(result: NotesResult) -> str:
    return _lines(f"notes of session #{result.session_id} saved", result.notes.rstrip())


def render_close(result: CloseResult) -> str:
    return _lines(*result.messages)


def render_reopen(result: ReopenResult) -> str:
    return _lines(*result.messages)


def render_sessions(found: SessionList) -> str:
    """`exp list`: one line per session, newest first, and how to reopen a closed one."""
    if not found.sessions:
        return "no experiment sessions in this repository"
    rows = []
    for s in found.sessions:
        when = f" {s.closed_at}" if s.closed_at else ""
        numbers = f"{s.logged} logged in segment {s.segment}"
        if s.baseline is not None:
            numbers += f", baseline {num(s.baseline)}, best {num(s.best)}"
            numbers += best_change(s.delta_pct, s.paired)
        rows.append(
            f"#{s.session_id:<3} {s.state}{when}  '{s.name}' on {s.branch}  "
            f"{s.metric} ({s.direction} is better): {numbers}"
        )
    closed = [s.session_id for s in found.sessions if s.state == SessionState.CLOSED]
    if closed:
        rows.append(f"reopen a closed session: autoresearch exp reopen {closed[0]}")
    return "\n".join(rows)


def render_status(report: StatusReport, door: Door = Door.CLI, live: bool = True) -> str:
    """`live`: whether a pending run's lock was looked at (False: from the journal alone, an
    unfinished run reads as not completed)."""
    s = report.session
    unit = s.unit
    counts = ", ".join(f"{k} {v}" for k, v in report.counts.items())
    prog = report.progress
    return _lines(
        f"session #{s.session_id} '{s.name}' on {s.branch} (segment {report.segment})",
        f"goal:        {s.goal}" if s.goal else "",
        f"metric:      {s.metric}" + (f" ({unit})" if unit else "") + f", {s.direction} is better",
        f"secondary:   {', '.join(s.secondary)}" if s.secondary else "",
        f"command:     {s.command}",
        f"directory:   {s.directory}",
        f"scope:       {', '.join(s.scope)}" if s.scope else "",
        f"off limits:  {', '.join(s.off_limits)}" if s.off_limits else "",
        f"constraints: {'; '.join(s.constraints)}" if s.constraints else "",
        f"runs:        {progress_text(prog)} logged ({counts})",
        f"baseline:    {ref(report.baseline, unit)}",
        f"best kept:   {best_kept(report.best, unit)}",
        f"confidence:  {confidence(report.confidence)}",
        f"significance: {significance(report.confidence)}",
        drift(report.confidence),
        f"{max_reached_message(prog.max)} The session accepts no more runs."
        if prog.reached and prog.max is not None
        else "",
        _hooks(report.hooks),
        report.plateau or "",
        _history(report.history, unit),
        _unjustified(report.unjustified, verbs(door)),
        _pending(report.pending, unit, live),
        f"notes:\n{_indent(report.notes)}" if report.notes.strip() else "notes:       (none)",
    )


def _hooks(hooks: HookStatus) -> str:
    """The auto-resume line, once a host hook has resumed the agent or stopped the loop."""
    if not hooks.resumed_turns and not hooks.notice:
        return ""
    line = (
        f"auto-resume: {hooks.resumed_turns}/{hooks.max_resumed_turns} resumed turns, "
        f"failure streak {hooks.failure_streak} (stops above {hooks.failure_streak_limit})"
    )
    return line + (f"\n  stopped: {hooks.notice}" if hooks.notice else "")


def _history(history: tuple[HistoryLine, ...], unit: str) -> str:
    if not history:
        return "last runs:   none logged yet"
    rows = ["last runs:"]
    for h in history:
        flag = f"  FLAGGED: {h.flag_reason}" if h.flagged else ""
        # paired, the Δ % against a baseline read at another moment is left to --json
        shown = "" if h.paired else pct(h.delta_pct)
        rows.append(
            f"  #{h.run:<3} {h.status:<13} {num(h.metric, unit)}{shown}  {h.description}{flag}"
        )
        if h.measured is not None:
            rows.append(f"       measured: {num(h.measured, unit)} (the logged value differs)")
        if h.paired is not None and h.reference_commit is not None:
            against = f"against {h.reference_commit[:7]} read alongside"
            rows.append(f"       paired: {h.paired.signed_text()} {against} ({h.paired.n} pairs)")
        for value, label in (
            (h.hypothesis, "hypothesis"),
            (h.next_action_hint, "next"),
            (h.rollback_reason, "rollback"),
        ):
            if value:
                rows.append(f"       {label}: {value}")
        if h.deviations:
            justified = f" (justified: {h.justification})" if h.justification else ""
            rows.append(f"       deviations: {', '.join(h.deviations)}{justified}")
    return "\n".join(rows)


def _unjustified(items: tuple[UnjustifiedKeep, ...], say: Verbs) -> str:
    if not items:
        return ""
    n = items[0].run
    rows = [f"unjustified deviations (justify: {say.justify_run(n)}; or flag: {say.flag_run(n)}):"]
    rows += [f"  #{i.run} {i.description}: {', '.join(i.deviations)}" for i in items]
    return "\n".join(rows)


# How a pending run reads when only the journal is known: whether its process is alive is not
# in the journal (the compaction summary is rebuilt from it alone).
UNKNOWN_LIVENESS = "not completed (running or interrupted)"


def _pending(pending: PendingRun | None, unit: str, live: bool = True) -> str:
    if pending is None:
        return "pending run: none"
    state = pending.state if live or pending.state == RunState.COMPLETED else UNKNOWN_LIVENESS
    head = f"pending run: #{pending.run} {state}"
    if pending.state != RunState.COMPLETED:
        return head
    checks = f", checks {pending.checks}" if pending.checks else ""
    return (
        f"{head} (benchmark {pending.benchmark}{checks}), "
        f"metric {num(pending.metric, unit)}: log it before the next run"
    )


def _indent(text: str) -> str:
    return "\n".join(f"  {line}" for line in text.rstrip().split("\n"))


def render_resume(report: StatusReport, door: Door = Door.CLI, live: bool = True) -> str:
    """The status plus the instructions of the resume message (`live`: as render_status)."""
    say = verbs(door)
    steps = ["Continue the autoresearch loop now."]
    pending = report.pending
    if pending is not None and pending.state == RunState.COMPLETED:
        steps.append(
            f"- Run #{pending.run} completed but was never logged. Log it first "
            f"({say.log}) before starting a new run."
        )
    steps += [
        "- Re-read the context above (goal, notes, ideas, recent runs) before choosing the next "
        "direction.",
        "- Inspect recent git history for context (git log --oneline -20).",
        "- Continue from the most promising unfinished direction; one coherent experiment per "
        f"iteration: edit, run ({say.run}), log ({say.log}).",
    ]
    if report.unjustified:
        steps.append("- Justify or flag the kept runs with unjustified scope deviations.")
    prog = report.progress
    cap = f" or until {prog.max} runs are logged" if prog.max else ""
    steps += [
        f"- Keep iterating until interrupted{cap}.",
        "- Preserve correctness and never game the benchmark: leave the harness, the checks and "
        "the workload alone.",
    ]
    return render_status(report, door, live) + "\n\n" + "\n".join(steps)


def resume_message(start: Path, door: Door = Door.CLI) -> str:
    """The status text followed by what to do next (log a pending run first)."""
    from autoresearch.experiments.status import session_status

    return render_resume(session_status(start, door=door), door)
