"""Plain-text renderings of supervised runs, shared by the CLI and the MCP server (pure)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from autoresearch.journal.views import NOT_RUN, format_score
from autoresearch.redact import current
from autoresearch.states import DecisionKind, RunStatus
from autoresearch.supervisor import estimates

if TYPE_CHECKING:  # finalize's result; the module itself (git, the journal) is not needed here
    from autoresearch.journal.totals import RunTotals  # a finished run's: `status` builds none
    from autoresearch.supervisor.review import FinalizeResult

    # types only: `status` listing the runs builds none of one run's records
    from autoresearch.supervisor.run_summary import RunListing, RunSummary
    from autoresearch.supervisor.summary import AgentShare, ArchiveEntry, LaneRow, RunDetails


def columns(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """Aligned columns: ids are never truncated and stay copyable."""
    table = [list(header), *(list(r) for r in rows)]
    # column by column in C (`status RUN` aligns a thousand rows): a ragged row still raises
    widths = [max(map(len, column)) for column in zip(*table, strict=True)]
    return "\n".join("  ".join(map(str.ljust, r, widths)).rstrip() for r in table)


def _score(value: float | None) -> str:
    return format_score(value) or "-"


def best_text(s: RunSummary) -> str:
    """The best score with its 95 % interval when it rests on readings that vary."""
    return estimates.text(s.best_score, s.best_interval) or "-"


def baseline_text(s: RunSummary) -> str:
    """The baseline's mean with its 95 % interval when its readings vary."""
    return estimates.text(s.baseline_score, s.baseline_interval) or "-"


def honest_rows(s: RunSummary, certified: str | None = None) -> list[tuple[str, str]]:
    """What pooled numbers cannot say (supervisor/honest.py), as (label, text) rows: the
    certified improvement (`certified`: certify's own line, when the door has it), else an
    improvement whose readings vary, said to be unpaired; the drift the run saw, why the best
    reads worse."""
    rows = []
    found = s.improvement  # supervisor/improvement.py: paired when certified, else unpaired
    if certified is None and found is not None and found.paired:
        certified = f"improvement {found.text()}"
    if certified:
        rows.append(("certified", certified))
    elif found is not None and found.varies:
        rows.append(("improvement", found.text()))
    rows += [("drift", d.text()) for d in s.drift]
    if s.best_note:
        rows.append(("note", s.best_note))
    return rows


def run_list(items: Sequence[RunListing]) -> str:
    if not items:
        return "no runs yet (autoresearch prepare MISSION_DIR or autoresearch run …)"
    rows = []
    orphans = []
    for item in items:
        r = item.summary
        c = r.counts
        state = str(r.status)
        if r.status == RunStatus.RUNNING and not item.driver_alive:
            state = "running, no driver"
            orphans.append((r.run_id, r.resume_command or f"autoresearch resume {r.run_id}"))
        elif r.cleaned_at:
            state += ", cleaned"
        if r.paused:
            state += ", paused"  # on a plateau, until `autoresearch continue`
        rows.append(
            [
                r.run_id,
                state,
                str(r.iteration),
                baseline_text(r),
                best_text(r),
                str(c.get("keep", 0)),
                str(c.get("discard", 0) + c.get("ambiguous", 0)),
                str(c.get("noop", 0)),
                r.stop_reason or "",
            ]
        )
    header = ["run", "status", "iter", "baseline", "best", "kept", "disc", "noop", "reason"]
    table = columns(header, rows)
    for run_id, command in orphans:  # a paused one goes on with `continue`
        table += f"\nnobody drives {run_id}: continue it with {command}"
    return table


def run_details(details: RunDetails) -> str:
    d = details.summary
    reason = f": {d.stop_reason}" if d.stop_reason else ""
    note = f" – {d.stop_note}" if d.stop_note else ""
    driver = "alive" if details.driver_alive else "none"
    if not details.driver_alive and d.status == RunStatus.RUNNING:
        driver = f"none – nobody drives this run; continue it: {d.resume_command}"
    if d.stop_requested:
        driver += f" (stop requested: {d.stop_requested})"
    if d.paused:
        driver += f" – {d.paused}"
    shown = len(details.iterations)
    report = details.report_file or f"not written yet: autoresearch report {d.run_id}"
    lines = [
        f"run:        {d.run_id} ({d.status}{reason}){note}",
        f"worktree:   {d.worktree_path}  branch {d.branch_name}"
        + (" (removed by clean)" if d.cleaned_at else ""),
        f"policy:     {d.keep_policy} ({d.direction} is better)",
        f"baseline:   {baseline_text(d)}   best: {best_text(d)}   "
        f"last kept: {(d.last_kept_commit or '')[:7]}",
        *(f"{label + ':':<11} {text}" for label, text in honest_rows(d)),
        f"driver:     {driver}",
        f"iterations: {_rows_shown(shown, details.iterations_total)}",
        f"report:     {report}",
    ]
    rows = []
    frontier = bool(details.archive)
    masks = current()  # one look at the environment for the table (status RUN: ~1 ms a row)
    for row in details.iterations:
        it = row.record
        commit = it.candidate_commit or it.kept_commit or ""
        rows.append(
            [
                str(it.iteration),
                it.decision or "",
                _cell(row.evaluation),  # what run_details said the evaluation came to
                estimates.row_text(it.evaluator.score if it.evaluator else None, row.estimate),
                masks.text(commit)[:7],  # every cell as the ledger entry shows it: secrets masked
                *([(row.parent or "")[:7]] if frontier else []),
                " ".join(masks.text(it.description).split())[:70],
            ]
        )
    head = ["#", "decision", "eval", "score", "commit", *(["from"] if frontier else [])]
    table = columns([*head, "description"], rows)
    tables = (
        lane_table(details.lanes),
        archive_table(details.archive),
        agent_table(details.agents),
    )
    extra = [t for t in tables if t]
    return "\n".join([*lines, *extra, table])


def archive_table(archive: Sequence[ArchiveEntry]) -> str:
    """A frontier run's elites, best first: the run branch is at the first."""
    if not archive:
        return ""
    rows = [
        [
            str(rank),
            e.commit[:7],
            estimates.text(e.score, e.interval) or "n/a",
            (e.parent or "root")[:7],
            e.lineage[:7],
            str(e.entered),
            str(e.tries),
        ]
        for rank, e in enumerate(archive, 1)
    ]
    return columns(["elite", "commit", "score", "parent", "lineage", "kept at", "tries"], rows)


def agent_table(agents: Sequence[AgentShare]) -> str:
    """A portfolio run's agents as given: the sessions each got, its keeps and its spend."""
    if not agents:
        return ""
    rows = [
        [
            _cell(a.agent),
            str(a.sessions),
            str(a.keeps),
            "" if a.cost_usd is None else f"${a.cost_usd:.2f}",
            "" if a.tokens is None else str(a.tokens),
            f"{a.seconds:.1f}",
        ]
        for a in agents
    ]
    return columns(["agent", "sessions", "keeps", "cost", "tokens", "seconds"], rows)


def _cell(text: str, width: int = 40) -> str:
    """One line of at most `width` characters (a reason may name a long path)."""
    line = " ".join(text.split())
    return line if len(line) <= width else line[: width - 1] + "…"


def lane_table(lanes: Sequence[LaneRow]) -> str:
    """One row per lane of a `run --lanes K`: what it does, its last decision, its spend."""
    if not lanes:
        return ""
    rows = []
    for lane in lanes:
        last = lane.last_decision
        last_text = f"{last} #{lane.last_iteration}" if last else "-"
        evaluation = lane.last_evaluation or ""
        if evaluation.startswith(f"{NOT_RUN}: "):  # a discard without a reading says why
            last_text += f" ({_cell(evaluation.removeprefix(f'{NOT_RUN}: '))})"
        cost = lane.cost_usd
        rows.append(
            [
                str(lane.lane),
                str(lane.state),
                last_text,
                f"{lane.iterations} ({lane.keeps} kept)",
                f"${cost:.4f}" if isinstance(cost, int | float) else "-",
                str(lane.tokens or 0),
                " ".join(str(lane.detail or "").split())[:60],
            ]
        )
    head = ["lane", "doing", "last decision", "judged", "cost", "tokens", "detail"]
    return columns(head, rows)


def stop(run_id: str, stop_reason: str, note: str | None, requested: bool) -> str:
    if requested:
        return (
            f"stop requested for {run_id}: its driver ends the agent session (saving its "
            "work), lets an evaluation in progress finish, then records the run as stopped "
            f"({stop_reason})"
        )
    return f"{run_id}: stopped ({stop_reason})" + (f" – {note}" if note else "")


def finalize(result: FinalizeResult) -> str:
    """The review branches `finalize` made (or, with --dry-run, would make)."""
    verb = {"planned": "would create" if result.dry_run else "planned", "created": "created"}
    start = result.start_commit[:7]
    lines = [
        f"review branches of {result.run_id}, cut from {start} "
        f"(the run branch {result.run_branch} is unchanged):"
    ]
    for b in result.branches:
        numbers = [k.iteration for k in b.keeps]
        its = ", ".join(str(i) for i in numbers)
        files = ", ".join(b.files[:4]) + (" …" if len(b.files) > 4 else "")
        kind = "squashed" if b.squash else f"iteration{'s' if len(numbers) > 1 else ''}"
        lines.append(f"  {verb.get(b.state, b.state):<12} {b.name}")
        lines.append(f"               {kind} {its}; files {files}")
    if not result.dry_run and result.branches:
        lines.append(f"review one: git log -p {start}..{result.branches[0].name}")
    return "\n".join(lines)


def decision_counts(counts: dict[str, int], totals: RunTotals) -> str:
    """Every decision of a run in one line; evaluator errors (crash, timeout) are named."""
    discarded = counts.get(DecisionKind.DISCARD, 0) + counts.get(DecisionKind.AMBIGUOUS, 0)
    errors = totals.evaluator_errors
    detail = f" ({errors} evaluator error{'s' if errors != 1 else ''})" if errors else ""
    return (
        f"{counts.get(DecisionKind.KEEP, 0)} kept, {discarded} discarded{detail}, "
        f"{counts.get(DecisionKind.NOOP, 0)} noop, "
        f"{counts.get(DecisionKind.INTERRUPTED, 0)} interrupted, "
        f"{counts.get(DecisionKind.ABORT, 0)} abort, {counts.get(DecisionKind.ERROR, 0)} error"
    )


def duration(seconds: float) -> str:
    whole = round(seconds)
    hours, rest = divmod(whole, 3600)
    minutes, secs = divmod(rest, 60)
    if hours:
        return f"{hours}h {minutes:02d}m {secs:02d}s"
    return f"{minutes}m {secs:02d}s" if minutes else f"{seconds:.1f}s"


def totals_rows(totals: RunTotals) -> list[tuple[str, str]]:
    """Time, tokens and cost of a run, as `(label, value)` rows."""
    rows = [
        (
            "time",
            f"{duration(totals.wall_seconds)} since the run was created (agent "
            f"{duration(totals.agent_seconds)}, evaluator "
            f"{duration(totals.evaluator_seconds)})",
        )
    ]
    tokens = [totals.input_tokens, totals.output_tokens]
    if any(t is not None for t in tokens):
        rows.append(("tokens", f"{tokens[0] or 0} in, {tokens[1] or 0} out"))
    if totals.cost_usd is not None:
        rows.append(("cost", f"${totals.cost_usd:.4f}"))
    return rows


def _rows_shown(shown: int, total: int) -> str:
    """How many of the rows are listed; the baseline is row 0, so 15 iterations are 16 rows."""
    if total == 0:
        return "none yet (no baseline)"
    iterations = "1 iteration" if total == 2 else f"{total - 1} iterations"
    return f"{shown} of {total} rows shown (the baseline and {iterations})"
