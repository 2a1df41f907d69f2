"""Live progress of a loop on stderr: one line per iteration, a spinner while work runs."""

from __future__ import annotations

import time
from typing import Any

from autoresearch.agents.base import AgentResult
from autoresearch.journal.views import format_score
from autoresearch.redact import redact
from autoresearch.states import Direction
from autoresearch.supervisor.step import StepResult

_STYLES = {"keep": "bold green", "discard": "yellow", "ambiguous": "yellow", "error": "bold red"}


class ProgressPrinter:
    """A LoopObserver that renders with rich on stderr (plain lines when not a terminal)."""

    def __init__(self, direction: Direction, baseline: float | None) -> None:
        from rich.console import Console

        self.console = Console(stderr=True, highlight=False, soft_wrap=True)
        self.direction = direction
        self.best = baseline
        self.baseline = baseline
        self.t0 = time.monotonic()
        self._status: Any = None
        self._started = 0.0

    def header(self, run_id: str, agent: str, worktree: str) -> None:
        self.console.print(f"[bold]run[/] {run_id}  agent {agent}")
        self.console.print(f"    worktree {worktree}")
        base = format_score(self.baseline) or "n/a"
        self.console.print(f"    baseline {base} ({self.direction} is better)")

    def session_started(self, iteration: int) -> None:
        self._started = time.monotonic()
        self._stop_spinner()
        self._status = self.console.status(f"iteration {iteration}: agent session running…")
        self._status.start()

    def step_recorded(self, result: StepResult, agent: AgentResult | None) -> None:
        self._stop_spinner()
        score = (result.evaluator or {}).get("score")
        if result.keep and score is not None:
            self.best = score
        elapsed = time.monotonic() - (self._started or self.t0)
        style = _STYLES.get(result.decision, "dim")
        score_text = format_score(score) if score is not None else "-"
        best_text = format_score(self.best) or "n/a"
        self.console.print(
            f"{result.iteration:>5}  [{style}]{result.decision:<11}[/] {score_text:>12}  "
            f"best {best_text:<12} {elapsed:6.1f}s  {redact(result.description)[:60]}"
        )
        if agent is not None and agent.failure_reason:  # why, at once, not only in the log
            self.console.print(f"       [red]{redact(agent.failure_reason)}[/]")
        if result.stop_reason:
            self.console.print(f"       run {result.run_status}: {redact(result.stop_reason)}")

    def note(self, message: str) -> None:
        self._stop_spinner()
        self.console.print(f"       [dim]{redact(message)}[/]")

    def close(self) -> None:
        self._stop_spinner()

    def _stop_spinner(self) -> None:
        if self._status is not None:
            self._status.stop()
            self._status = None
