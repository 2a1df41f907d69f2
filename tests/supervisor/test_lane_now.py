"""summary.lane_now: what a lane row says it is doing never contradicts the journal – a
judgement past the driver's last publication makes the lane idle, and with no live driver
no lane is in a session or a reading (a run still running waits for resume, an ended one is
over)."""

from __future__ import annotations

import pytest

from autoresearch.states import LaneState
from autoresearch.supervisor.summary import lane_now

AGENT, EVALUATING, IDLE = LaneState.AGENT, LaneState.EVALUATING, LaneState.IDLE
STOPPED, WAITING = LaneState.STOPPED, LaneState.WAITING
CUT = "no driver: resume takes it up (it was {})"
ENDED = "no driver: the run ended while it was {}"
MEASURING = "measuring f577b14463b5 (session 1)"

CASES = [
    # published, detail, published last, journal's last, driver alive, run ended → now
    (EVALUATING, MEASURING, None, None, True, False, (EVALUATING, MEASURING)),
    (EVALUATING, MEASURING, 3, 3, True, False, (EVALUATING, MEASURING)),
    # judged, not yet published (a live driver between its two transactions)
    (EVALUATING, MEASURING, None, 1, True, False, (IDLE, None)),
    (WAITING, "waits for an evaluation slot", 2, 5, True, False, (IDLE, None)),
    (STOPPED, "not in the layout", 2, 5, True, False, (STOPPED, "not in the layout")),
    # judged, never published: the driver was killed in between
    (EVALUATING, MEASURING, None, 1, False, False, (IDLE, None)),
    # cut off with the driver
    (EVALUATING, MEASURING, None, None, False, False, (WAITING, CUT.format(f"evaluating: {MEASURING}"))),
    (AGENT, "session 2 from abc", 1, 1, False, False, (WAITING, CUT.format("agent: session 2 from abc"))),
    (AGENT, None, 1, 1, False, False, (WAITING, CUT.format("agent"))),
    (AGENT, "session 2 from abc", 1, 1, False, True, (STOPPED, ENDED.format("agent: session 2 from abc"))),
    # nothing in flight: as published
    (WAITING, "interrupted; judged on resume", 1, 1, False, False, (WAITING, "interrupted; judged on resume")),
    (IDLE, None, 1, 1, False, False, (IDLE, None)),
    (STOPPED, None, 1, 1, False, True, (STOPPED, None)),
]  # fmt: skip


@pytest.mark.parametrize(("state", "detail", "published", "judged", "alive", "ended", "now"), CASES)
def test_lane_now(
    state: LaneState,
    detail: str | None,
    published: int | None,
    judged: int | None,
    alive: bool,
    ended: bool,
    now: tuple[LaneState, str | None],
) -> None:
    assert lane_now(state, detail, published, judged, alive, ended) == now
