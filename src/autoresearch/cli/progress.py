"""Live progress of a loop on stderr: one line per iteration, a spinner while work runs."""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

from autoresearch.agents.base import AgentResult
from autoresearch.journal.lanes import LaneRecord
from autoresearch.journal.views import format_score
from autoresearch.redact import redact
from autoresearch.states import DecisionKind, Direction, EvalStatus
from autoresearch.supervisor.step import StepResult

_STYLES = {"keep": "bold green", "discard": "yellow", "ambiguous": "yellow", "error": "bold red"}
# "discard (timeout)" is the widest decision cell. On a terminal the description gets the rest
# of its width (at least _MIN_DESCRIPTION); into a pipe or a log file, where no width exists,
# at most _LOG_DESCRIPTION characters.
_DECISION_WIDTH = 17
_MIN_DESCRIPTION = 20
_LOG_DESCRIPTION = 120


def evaluation_label(evaluator: Mapping[str, Any] | None) -> str | None:
    """Why an evaluation did not pass, as the live line shows it: fail, timeout or error."""
    if not evaluator:
        return None
    if evaluator.get("timed_out"):
        return "timeout"
    status = evaluator.get("status")
    return str(status) if status in (EvalStatus.FAIL, EvalStatus.ERROR) else None


def decision_text(decision: str, evaluator: Mapping[str, Any] | None) -> str:
    """`discard (fail)`: a discard says whether the candidate failed, timed out or crashed."""
    label = evaluation_label(evaluator) if decision != DecisionKind.KEEP else None
    return f"{decision} ({label})" if label else decision


class ProgressPrinter:
    """A LoopObserver that renders with rich on stderr (plain lines when not a terminal)."""

    def __init__(
        self, direction: Direction, baseline: float | None, best: float | None = None
    ) -> None:
        from rich.console import Console

        self.console = Console(stderr=True, highlight=False, soft_wrap=True)
        self.direction = direction
        self.best = baseline if best is None else best
        self.baseline = baseline
        self.agent = "agent"
        self.t0 = time.monotonic()
        self._status: Any = None
        self._started = 0.0

    def header(self, run_id: str, agent: str, worktree: str, lanes: int = 0) -> None:
        self.agent = agent.split(":", 1)[0]  # the kind (claude, cmd…), not a long command line
        extra = f"  lanes {lanes}" if lanes else ""
        self._print(f"run {run_id}  agent {agent}{extra}", "bold")
        self._print(f"    worktree {worktree}")
        base = format_score(self.baseline) or "n/a"
        self._print(f"    baseline {base} ({self.direction} is better)")
        if self.best is not None and self.best != self.baseline:  # a resumed run
            self._print(f"    best so far {format_score(self.best)}")

    def session_started(self, iteration: int) -> None:
        self._started = time.monotonic()
        self._spin(f"iteration {iteration}: agent {self.agent} running…")

    def evaluation_started(self, iteration: int) -> None:
        self._spin(f"iteration {iteration}: evaluator running…")

    def step_recorded(self, result: StepResult, agent: AgentResult | None) -> None:
        from rich.text import Text

        self._stop_spinner()
        score = (result.evaluator or {}).get("score")
        if result.keep and score is not None:
            self.best = score
        elapsed = time.monotonic() - (self._started or self.t0)
        decision = decision_text(result.decision, result.evaluator)
        score_text = format_score(score) if score is not None else "-"
        best_text = format_score(self.best) or "n/a"
        line = Text(f"{result.iteration:>5}  ")
        line.append(f"{decision:<{_DECISION_WIDTH}}", style=_STYLES.get(result.decision, "dim"))
        line.append(f" {score_text:>10}  best {best_text:<10} {elapsed:6.1f}s  ")
        room = _LOG_DESCRIPTION
        if self.console.is_terminal:
            room = max(self.console.width - line.cell_len, _MIN_DESCRIPTION)
        description = Text(redact(result.description).replace("\n", " "))
        description.truncate(room, overflow="ellipsis")
        self.console.print(line + description, soft_wrap=True)
        if agent is not None and agent.failure_reason:  # why, at once, not only in the log
            self._print(f"       {redact(agent.failure_reason)}", "red")
        if result.stop_reason:
            self._print(f"       run {result.run_status}: {redact(result.stop_reason)}")

    def lanes_changed(self, lanes: list[LaneRecord]) -> None:
        """The spinner line says what every lane does and how its last candidate ended."""
        parts = []
        for lane in lanes:
            last = (
                f", last {lane.last_decision} #{lane.last_iteration}" if lane.last_decision else ""
            )
            parts.append(f"lane {lane.lane} {lane.state}{last}")
        text = " · ".join(parts)
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
        self._status = self.console.status(text)
        self._status.start()

    def _stop_spinner(self) -> None:
        if self._status is not None:
            self._status.stop()
            self._status = None
