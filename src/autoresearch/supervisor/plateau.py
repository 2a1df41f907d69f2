"""Plateaus (issue 33): when a run's search has stopped improving, and what the run does then.

A plateau is N iterations in a row (the run's iterations, over all lanes) without a
significant improvement. "Significant" is the keep policy's own verdict, never a second
opinion: a `keep` is an improvement and nothing else is (`improves`). For `score_improvement`
that is a better score than the incumbent (by `noise.min_effect` when set); noise-aware, a
difference beyond the noise (a difference within it is `ambiguous`, not an improvement); for
`pass_only`, acceptance is the only progress the policy knows, so a passing candidate counts.
`tests/test_plateau.py` pins this table.

The rule is pure (`PlateauRule`); `PlateauWatch` is the driver's hook, which any search
strategy gets: once per judged iteration it reads the latest N decisions (one bounded query)
and, on a plateau, ends the run (`stop`), tells the next sessions the obvious direction is
exhausted and counts afresh (`explore`), or pauses the run until `autoresearch continue`
(`ask`). The state of the last two lives in the run's recorded loop (`plateau_from`,
`paused`), so a kill and a resume keep it.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from autoresearch.contracts.loop import LoopSettings
from autoresearch.contracts.sandbox import Plateau, frozen_plateau
from autoresearch.decide import DEFAULT_PLATEAU
from autoresearch.decide import stop_plateau as msg_plateau
from autoresearch.errors import ContractError, RefusedError
from autoresearch.journal import runs
from autoresearch.journal.db import Journal
from autoresearch.journal.runs import RunRecord
from autoresearch.paths import RepoPaths
from autoresearch.states import DecisionKind, OnPlateau
from autoresearch.supervisor.handle import RunHandle
from autoresearch.supervisor.run_read import driver_alive, read_run

# The default N (decide.DEFAULT_PLATEAU) is 20 flat iterations: a fifth of an overnight run of
# ~100 experiments, so a plateau is acted on while most of the budget is left; more than the 3
# trailing noops that end a run of an agent without ideas (a plateau is about candidates that
# are measured and lose); and as many as the instructions list of what was tried
# (`instructions.TRIED_CAP`), so the sessions that reach it have seen every failure of it.
# Noise-aware runs, whose ambiguous results are no improvement, rarely go 20 iterations with
# an improvement hidden in the noise.
# explore costs nothing (a note in the instructions) and ends nothing the user asked for
DEFAULT_ON_PLATEAU = OnPlateau.EXPLORE
PAUSE_POLL_SECONDS = 0.5

MSG_PAUSE_LIFTED = "run {run_id} was paused on a plateau: it goes on, the plateau counts afresh"
MSG_LIVE_PAUSE_OPTIONS = (
    "run {run_id} is paused and its driver waits with its own limits: `autoresearch continue "
    "{run_id}` without options lifts the pause; to change them, stop that driver (Ctrl-C) and "
    "continue the run with them"
)
MSG_BAD_PLATEAU = "--plateau must be a positive whole number of iterations, not {value}"
MSG_BAD_ON_PLATEAU = "--on-plateau must be one of: explore, stop, ask (not {value})"

EXPLORE_LINES = (
    "Plateau:",
    "- The run's recent iterations brought no significant improvement: the obvious direction "
    "from the last kept commit is exhausted.",
    "- Do not try another variation of what was already tried; try a different kind of change "
    "(another part of the code, another idea, a bolder step).",
    "",
)


def msg_paused(iterations: int, run_id: str) -> str:
    return (
        f"paused: {msg_plateau(iterations)}; go on with `autoresearch continue {run_id}` "
        f"or end it with `autoresearch stop {run_id}`"
    )


def msg_exploring(iterations: int) -> str:
    return (
        f"{msg_plateau(iterations)}: the next sessions are told the obvious direction is exhausted"
    )


def improves(decision: DecisionKind) -> bool:
    """Whether a decision is a significant improvement under the run's keep policy: a keep."""
    return decision == DecisionKind.KEEP


@dataclass(frozen=True)
class PlateauRule:
    """N iterations without an improvement, and what the run does then."""

    iterations: int = DEFAULT_PLATEAU
    on: OnPlateau = DEFAULT_ON_PLATEAU

    def reached(self, newest_first: Sequence[DecisionKind]) -> bool:
        """Whether the latest decisions (newest first, counted from where the plateau counts)
        are N in a row without an improvement."""
        window = newest_first[: self.iterations]
        return len(window) >= self.iterations and not any(improves(d) for d in window)


def rule_of(iterations: int | None, on: str | None, frozen: Plateau) -> PlateauRule:
    """The run's rule: a given `--plateau`/`--on-plateau` over sandbox.md's `search:`, over the
    defaults; a bad value is refused in one line (the CLI's own types refuse it earlier)."""
    count = iterations if iterations is not None else frozen.iterations
    if count is not None and (isinstance(count, bool) or not isinstance(count, int) or count < 1):
        raise ContractError(MSG_BAD_PLATEAU.format(value=count))
    action = on if on is not None else frozen.on
    if action is not None and action not in tuple(OnPlateau):
        raise ContractError(MSG_BAD_ON_PLATEAU.format(value=action))
    return PlateauRule(
        count or DEFAULT_PLATEAU, OnPlateau(action) if action else DEFAULT_ON_PLATEAU
    )


def run_rule(run: RunRecord, iterations: int | None = None, on: str | None = None) -> PlateauRule:
    """The rule of a run: what its loop was given (or recorded), over its frozen sandbox.md."""
    loop = run.loop_settings
    given_count = iterations if iterations is not None else loop.plateau
    given_on = on if on is not None else loop.on_plateau
    return rule_of(given_count, given_on, frozen_plateau(run.sandbox.sandbox_text))


def counts_from(loop: LoopSettings) -> int:
    """The iteration the plateau counts from: where the run was continued, or explored."""
    return max(loop.counts_from or 0, loop.plateau_from or 0)


def exploring(journal: Journal, run: RunRecord) -> bool:
    """Whether the next session is told the obvious direction is exhausted: the run explored
    on a plateau and nothing was kept since."""
    since = run.loop_settings.plateau_from
    return since is not None and not runs.kept_since(journal, run.run_id, since)


def lift_pause(journal: Journal, run_id: str) -> bool:
    """`continue` on a run paused on a plateau: no longer paused, the plateau counts afresh.
    False: it was not paused."""
    with journal.tx() as conn:
        run = runs.get_run_in(conn, run_id)
        if run is None or run.loop_settings.paused is None:
            return False
        loop = replace(run.loop_settings, paused=None, counts_from=run.iteration)
        runs.update_run(conn, run_id, loop=loop)
    return True


def lift_for_live_driver(repo_root: Path, run_id: str, with_options: bool = False) -> bool:
    """`continue` while the driver of a run paused on a plateau still waits: lift the pause
    (that driver goes on by itself, with its own limits: new options are refused). False: not
    paused, or nobody drives it (then `continue` resumes the run and lifts the pause once it
    holds the run)."""
    if not driver_alive(RepoPaths(repo_root), run_id):
        return False
    journal, run = read_run(repo_root, run_id)
    with journal:
        if run.loop_settings.paused is None:
            return False
        if with_options:
            raise RefusedError(MSG_LIVE_PAUSE_OPTIONS.format(run_id=run_id))
        return lift_pause(journal, run_id)


class PlateauWatch:
    """The driver's hook, once per turn: `stop` (the run's stop reason under `stop`, else
    None), then, when the run goes on, `act` (`explore` or `ask`), and `holds` before it
    launches (True: paused, no session may start)."""

    def __init__(
        self,
        h: RunHandle,
        rule: PlateauRule,
        say: Callable[[str], None],
        rewrite: Callable[[], None],
    ) -> None:
        self.h, self.rule, self.say, self.rewrite = h, rule, say, rewrite
        self._judged = -1  # the iteration last looked at: decisions change only when it does
        self._reached = False
        self._told_paused = False
        self._explore_key: tuple[int, int | None] = (-1, None)
        self._exploring = False

    def stop(self) -> str | None:
        if self.rule.on == OnPlateau.STOP and self._plateau():
            return msg_plateau(self.rule.iterations)
        return None

    def act(self) -> None:
        """Explore or pause on a plateau reached (at most once per judged iteration)."""
        if self.rule.on == OnPlateau.STOP or not self._plateau():
            return
        self._reached = False  # acted on: counted afresh from here
        n, loop = self.rule.iterations, self.h.run.loop_settings
        if self.rule.on == OnPlateau.EXPLORE:
            self._record(replace(loop, plateau_from=self.h.run.iteration))
            self.rewrite()  # the next session reads the note
            self.say(msg_exploring(n))
        else:
            self._record(replace(loop, paused=msg_paused(n, self.h.run_id)))

    def exploring(self) -> bool:
        """Whether the run explores after a plateau (`SearchView.exploring`); read from the
        journal once per judged iteration."""
        run = self.h.run
        key = (run.iteration, run.loop_settings.plateau_from)
        if key != self._explore_key:
            self._explore_key = key
            self._exploring = exploring(self.h.journal, run)
        return self._exploring

    def _plateau(self) -> bool:
        run = self.h.run
        if run.loop_settings.paused is not None:
            return False
        if run.iteration != self._judged:
            self._judged = run.iteration
            latest = runs.trailing_decisions(
                self.h.journal, run.run_id, self.rule.iterations, counts_from(run.loop_settings)
            )
            self._reached = self.rule.reached(latest)
        return self._reached

    def _record(self, loop: LoopSettings) -> None:
        with self.h.journal.tx() as conn:
            runs.update_run(conn, self.h.run_id, loop=loop)
        self.h.refresh()

    def holds(self, in_flight: int) -> bool:
        """True while the run is paused on a plateau: no session starts (those in flight end
        and are judged); with nothing in flight the driver idles here a poll interval, until
        `continue` lifts the pause, `stop` ends the run or a signal interrupts it."""
        notice = self.h.run.loop_settings.paused
        if notice is None:
            self._told_paused = False
            return False
        if not self._told_paused:
            self._told_paused = True
            self.say(notice)
        if not in_flight:
            time.sleep(PAUSE_POLL_SECONDS)
        return True
