"""Live progress of a loop on stderr: one line per iteration, a spinner while work runs."""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TextIO

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


def _console(on_broken_pipe: Callable[[], None]) -> Console | PlainConsole:
    """rich's Console on a terminal, whose answer to a closed stderr (dup stdout to /dev/null,
    then SystemExit(1) from wherever the loop printed) is replaced by `on_broken_pipe`; the
    PlainConsole where no terminal reads stderr."""
    if not wants_terminal(os.environ, _isatty(sys.stderr)):
        return PlainConsole(on_broken_pipe)
    from rich.console import Console

    class LoopConsole(Console):
        def on_broken_pipe(self) -> None:
            on_broken_pipe()

    # emoji off: `:name:` in a description is the agent's text, shown as written
    return LoopConsole(stderr=True, highlight=False, soft_wrap=True, emoji=False)


def wants_terminal(environ: Mapping[str, str], isatty: bool) -> bool:
    """Whether rich would take stderr for a terminal (pure): its own rule (rich ≥ 15,
    `Console.is_terminal`), so that a PlainConsole stands in exactly where rich would draw
    nothing but plain lines."""
    compatible = environ.get("TTY_COMPATIBLE", "")
    if compatible in ("0", "1"):
        return compatible == "1"
    force = environ.get("FORCE_COLOR")
    return force != "" if force is not None else isatty


def _isatty(stream: Any) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):  # no stream, or a closed one
        return False


# what rich's Text drops (rich.control.STRIP_CONTROL_CODES): BEL, BS, VT, FF and CR
_STRIPPED = dict.fromkeys((7, 8, 11, 12, 13))
_TAB_SIZE = 8


def cell_len(text: str) -> int:
    """The terminal cells `text` takes (rich's measure; printable ASCII without its tables:
    rich gives a control code no cell)."""
    if text.isascii() and text.isprintable():
        return len(text)
    from rich.cells import cell_len as measured

    return measured(text)


def fit(text: str, width: int) -> str:
    """`text` cut to `width` cells with a closing `…` (rich's `Text.truncate(width,
    overflow="ellipsis")`)."""
    if cell_len(text) <= width:
        return text
    if text.isascii() and text.isprintable():
        return text[: max(width - 1, 0)] + "…"
    from rich.cells import set_cell_size

    return set_cell_size(text, width - 1) + "…"


def plain_text(text: str) -> str:
    """`text` as rich writes it where no terminal reads it: control codes dropped, each tab
    a space and as many more as reach the next 8-cell stop."""
    text = text.translate(_STRIPPED)
    if "\t" not in text:
        return text
    lines = []
    for line in text.split("\n"):
        out, position = [], 0
        *parts, last = line.split("\t")
        for part in parts:
            position += cell_len(part) + 1
            pad = -position % _TAB_SIZE
            out.append(f"{part} {' ' * pad}")
            position += pad
        lines.append("".join(out) + last)
    return "\n".join(lines)


class _NoStatus:
    """A spinner where none is drawn: rich draws none into a pipe either."""

    def start(self) -> None:
        pass

    def update(self, _text: object) -> None:
        pass

    def stop(self) -> None:
        pass


class PlainConsole:
    """The live line where no terminal reads stderr (a pipe, a log file): the lines rich
    writes there, byte for byte, without importing rich (~26 ms of a run's start) or waking
    a spinner's refresh thread 12.5 times a second to draw nothing."""

    is_terminal = False

    def __init__(self, on_broken_pipe: Callable[[], None], stream: TextIO | None = None) -> None:
        self.on_broken_pipe = on_broken_pipe
        self.stream = stream  # None: sys.stderr as it is at each line
        self.quiet = False

    def print(self, text: str, style: str | None = None, markup: bool | None = None) -> None:
        if self.quiet:
            return
        stream = self.stream or sys.stderr
        try:
            stream.write(plain_text(text) + "\n")
            stream.flush()
        except BrokenPipeError:
            self.on_broken_pipe()

    def status(self, _text: object) -> _NoStatus:
        return _NoStatus()


def decision_text(
    decision: DecisionKind, evaluator: EvaluationRecord | None, reason: str | None = None
) -> str:
    """`discard (fail)`: a discard says whether the candidate failed, timed out or crashed, or –
    never measured – its pinned reason (`discard (replay conflict)`): views.decision_label."""
    label = decision_label(evaluator, decision, reason)
    return f"{decision} ({label})" if label else str(decision)


class ProgressPrinter:
    """A LoopObserver that renders on stderr: with rich on a terminal, else as PlainConsole."""

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
        prefix = f"lane {lane}: " if lane else ""  # which lane's candidate this was
        parts = (
            f"{result.iteration:>5}  ",
            f"{decision:<{widths.decision}}",
            f" {score_text:>{widths.score}}  best {best_text:<{widths.best}} {elapsed:6.1f}s  ",
            prefix + redact(result.description).replace("\n", " "),
        )
        self._row(parts, _STYLES.get(result.decision, "dim"))
        if agent is not None and agent.failure_reason:  # why, at once, not only in the log
            self._print(f"       {redact(agent.failure_reason)}", "red")
        if result.stop_reason:
            self._print(f"       run {result.run_status}: {redact(result.stop_reason)}")

    def _row(self, parts: tuple[str, str, str, str], style: str) -> None:
        """A step's row: its decision styled, its description cut to the terminal's width (to
        _LOG_DESCRIPTION characters where there is none)."""
        head, decision, numbers, description = parts
        if isinstance(self.console, PlainConsole):
            # cut as rich cuts a Text: its control codes dropped first
            cut = fit(description.translate(_STRIPPED), _LOG_DESCRIPTION)
            self.console.print(head + decision + numbers + cut)
            return
        from rich.text import Text

        line = Text(head)
        line.append(decision, style=style)
        line.append(numbers)
        room = _LOG_DESCRIPTION
        if self.console.is_terminal:
            room = max(self.console.width - line.cell_len, _MIN_DESCRIPTION)
        text = Text(description)
        text.truncate(room, overflow="ellipsis")
        self.console.print(line + text, soft_wrap=True)

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
