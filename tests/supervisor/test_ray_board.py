"""The stop board answers a task's question at once when it is stopped, else after its
patience: one question per task for as long as nothing is stopped (a long poll), not one a
second. Pure asyncio: the board is a plain class that Ray runs as an actor."""

from __future__ import annotations

import asyncio
import time

from autoresearch.supervisor.ray_executor import StopBoard


async def _stop_after(board: StopBoard, task_id: str, seconds: float) -> None:
    await asyncio.sleep(seconds)
    await board.stop(task_id)


async def _ask_while_stopped(board: StopBoard, patience: float) -> tuple[bool, float]:
    started = time.monotonic()
    stopper = asyncio.create_task(_stop_after(board, "t", 0.2))
    answer = await board.stopped("t", patience)
    await stopper
    return answer, time.monotonic() - started


def test_a_question_waits_for_the_stop_and_is_answered_as_it_comes() -> None:
    answer, took = asyncio.run(_ask_while_stopped(StopBoard(), 30.0))
    assert answer is True
    assert took < 5.0  # the stop's moment, not the patience's end


def test_a_question_without_a_stop_is_answered_no_after_its_patience() -> None:
    board = StopBoard()
    started = time.monotonic()
    assert asyncio.run(board.stopped("t", 0.3)) is False
    assert time.monotonic() - started >= 0.3
    assert not board._waiting  # a finished question leaves nothing behind


def test_a_task_stopped_before_it_asks_is_told_at_once() -> None:
    board = StopBoard()

    async def stop_then_ask() -> bool:
        await board.stop("t")
        return await board.stopped("t", 30.0)

    started = time.monotonic()
    assert asyncio.run(stop_then_ask()) is True
    assert time.monotonic() - started < 5.0
    assert asyncio.run(board.stopped("other")) is False  # no patience: the old quick answer
