"""Live progress of a loop on stderr: one line per iteration, a spinner while work runs."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from autoresearch.api import (
    AgentResult,
    DecisionKind,
    Direction,
    EvaluationRecord,
    Interval,
    LaneRecord,
    LaneState,
    StepResult,
    better,
    decision_label,
    estimates,
    quiet_closed_output,
    redact,
)

if TYPE_CHECKING:
    from rich.console import Console

_STYLES = {
    DecisionKind.KEEP: "bold green",
    DecisionKind.DISCARD: "yellow",
    DecisionKind.AMBIGUOUS: "yellow",
    DecisionKind.ERROR: "bold red",
}
# "discard (timeout)" is the widest decision cell of a measured candidate (a discard without a
# reading says its pinned reason, wider: its row shifts rather than every row). On a terminal
# the description gets the rest of its width (at least _MIN_DESCRIPTION); into a pipe or a log
# file, where no width exists, at most _LOG_DESCRIPTION characters.
_DECISION_WIDTH = 17
_MIN_DESCRIPTION = 20
_LOG_DESCRIPTION = 120


@dataclass
class Columns:
    """The widths of the live line's columns: each grows to the widest cell seen and never
    shrinks, so that one `discard (replay conflict)` or `103 ± 4.1 (n=5)` moves the columns once,
    not every row after it back and forth."""

    decision: int = _DECISION_WIDTH
    score: int = 10
    best: int = 10

    def fit(self, decision: str, score: str, best: str) -> Columns:
        self.decision = max(self.decision, len(decision))
        self.score = max(self.score, len(score))
        self.best = max(self.best, len(best))
        return self


class Ticking:
    """The spinner's text with the seconds since it started, re-rendered at every refresh
    (rich asks a renderable's __rich__ anew each time), so a long session shows it is alive."""

    def __init__(self, text: str, now: Callable[[], float] = time.monotonic) -> None:
        self.text, self.now, self.started = text, now, now()

    def __rich__(self) -> str:
        return f"{self.text} {self.now() - self.started:.0f}s"


def _console(on_broken_pipe: Callable[[], None]) -> Console:
    """rich's Console, whose answer to a closed stderr (dup stdout to /dev/null, then
    SystemExit(1) from wherever the loop printed) is replaced by `on_broken_pipe`."""
    from rich.console import Console

    class LoopConsole(Console):
        def on_broken_pipe(self) -> None:
            on_broken_pipe()

    return LoopConsole(stderr=True, highlight=False, soft_wrap=True)


def decision_text(
    decision: DecisionKind, evaluator: EvaluationRecord | None, reason: str | None = None
) -> str:
    """`discard (fail)`: a discard says whether the candidate failed, timed out or crashed, or –
    never measured – its pinned reason (`discard (replay conflict)`): views.decision_label."""
    label = decision_label(evaluator, decision, reason)
    return f"{decision} ({label})" if label else str(decision)


class ProgressPrinter:
    """A LoopObserver that renders with rich on stderr (plain lines when not a terminal)."""

    def __init__(
        self,
        direction: Direction,
        baseline: float | None,
        best: float | None = None,
        baseline_interval: Interval | None = None,
        best_interval: Interval | None = None,
        on_reader_left: Callable[[], None] | None = None,
    ) -> None:
        self.console = _console(self._reader_left)
        self.on_reader_left = on_reader_left
        self.direction = direction
        self.best = baseline if best is None else best
        self.best_interval = baseline_interval if best is None else best_interval
        self.baseline_interval = baseline_interval
        self.baseline = baseline
        self.agent = "agent"
        self.t0 = time.monotonic()
        self._status: Any = None
        self._started = 0.0
        # run --lanes K: the lanes as last published, and what each is doing since when
        self._lanes: list[LaneRecord] = []
        self._doing: dict[int, tuple[LaneState, str]] = {}
        self._lane_started: dict[int, float] = {}
        self._columns = Columns()

    def header(self, run_id: str, agent: str, worktree: str, lanes: int = 0) -> None:
        self.agent = agent.split(":", 1)[0]  # the kind (claude, cmd…), not a long command line
        extra = f"  lanes {lanes}" if lanes else ""
        self._print(f"run {run_id}  agent {agent}{extra}", "bold")
        self._print(f"    worktree {worktree}")
        base = estimates.text(self.baseline, self.baseline_interval) or "n/a"
        self._print(f"    baseline {base} ({self.direction} is better)")
        if self.best is not None and self.best != self.baseline:  # a resumed run
            self._print(f"    best so far {estimates.text(self.best, self.best_interval)}")

    def session_started(self, iteration: int, lane: int = 0) -> None:
        if lane:
            self._lane_started[lane] = time.monotonic()
            self._doing[lane] = (LaneState.AGENT, f"session {iteration}: agent {self.agent}")
            self._show_lanes()
            return
        self._started = time.monotonic()
        self._spin(f"iteration {iteration}: agent {self.agent} running…")

    def evaluation_started(self, iteration: int, lane: int = 0) -> None:
        if lane:
            self._doing[lane] = (LaneState.EVALUATING, f"session {iteration}: evaluator")
            self._show_lanes()
            return
        self._spin(f"iteration {iteration}: evaluator running…")

    def step_recorded(self, result: StepResult, agent: AgentResult | None, lane: int = 0) -> None:
        from rich.text import Text

        self._stop_spinner()
        evaluation = result.evaluator
        score = evaluation.reported_score if evaluation else None
        # a frontier keeps a child that beats its parent and not the best: best stays
        if result.keep and better(result.last_kept_score, self.best, self.direction):
            self.best = result.last_kept_score  # the kept commit's mean, not its first reading
            self.best_interval = result.last_kept_interval
        started = self._lane_started.pop(lane, None) if lane else None
        self._doing.pop(lane, None)
        elapsed = time.monotonic() - (started or self._started or self.t0)
        decision = decision_text(result.decision, evaluation, result.decision_reason)
        score_text = estimates.row_text(score, result.estimate) or "-"
        best_text = estimates.text(self.best, self.best_interval) or "n/a"
        widths = self._columns.fit(decision=decision, score=score_text, best=best_text)
        line = Text(f"{result.iteration:>5}  ")
        line.append(f"{decision:<{widths.decision}}", style=_STYLES.get(result.decision, "dim"))
        line.append(
            f" {score_text:>{widths.score}}  best {best_text:<{widths.best}} {elapsed:6.1f}s  "
        )
        room = _LOG_DESCRIPTION
        if self.console.is_terminal:
            room = max(self.console.width - line.cell_len, _MIN_DESCRIPTION)
        prefix = f"lane {lane}: " if lane else ""  # which lane's candidate this was
        description = Text(prefix + redact(result.description).replace("\n", " "))
        description.truncate(room, overflow="ellipsis")
        self.console.print(line + description, soft_wrap=True)
        if agent is not None and agent.failure_reason:  # why, at once, not only in the log
            self._print(f"       {redact(agent.failure_reason)}", "red")
        if result.stop_reason:
            self._print(f"       run {result.run_status}: {redact(result.stop_reason)}")

    def _reader_left(self) -> None:
        """stderr's reader left: go quiet for good (stderr now writes to /dev/null, so that no
        later line or flush fails) and say so once."""
        quiet_closed_output()
        self.console.quiet = True
        if self.on_reader_left is not None:
            callback, self.on_reader_left = self.on_reader_left, None
            callback()

    def lanes_changed(self, lanes: list[LaneRecord]) -> None:
        """The spinner line says what every lane does and how its last candidate ended."""
        self._lanes = list(lanes)
        self._show_lanes()

    def lanes_line(self) -> str:
        """`lane 1 session 3: agent claude running · lane 2 waiting, last keep #4 · …`"""
        parts = []
        for lane in self._lanes:
            state, doing = self._doing.get(lane.lane, (None, ""))
            # what the lane was last told to do, while its published state still says so
            text = f"lane {lane.lane} " + (
                f"{doing} running" if state == lane.state else lane.state
            )
            if lane.last_decision:
                text += f", last {lane.last_decision} #{lane.last_iteration}"
            parts.append(text)
        return " · ".join(parts)

    def _show_lanes(self) -> None:
        text = self.lanes_line()
        if not text:
            return
        if self._status is None:
            self._status = self.console.status(text)
            self._status.start()
        else:
            self._status.update(text)

    def note(self, message: str) -> None:
        self._stop_spinner()
        self._print(f"       {redact(message)}", "dim")

    def close(self) -> None:
        self._stop_spinner()

    def _print(self, text: str, style: str = "") -> None:
        # never markup: descriptions, reasons and paths are the agent's or the user's text
        self.console.print(text, style=style or None, markup=False)

    def _spin(self, text: str) -> None:
        self._stop_spinner()
        self._status = self.console.status(Ticking(text))
        self._status.start()

    def _stop_spinner(self) -> None:
        if self._status is not None:
            self._status.stop()
            self._status = None
