"""The one loop every runner runs (``pbm.runners.base.Runner``): items in hand, a stop."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from pbm.runners.base import Runner


class Numbers(Runner[int]):
    """Hands out 1, 2, 3, ... and holds each until told to let it go."""

    name = "numbers"
    poll_seconds = 60.0  # no waiting on the clock: wakes and stops end every wait

    def __init__(self) -> None:
        super().__init__()
        self.claimed: list[int] = []
        self.holding: list[int] = []
        self.handled: list[int] = []
        self.let_go = asyncio.Event()

    def claim(self) -> int | None:
        self.claimed.append(len(self.claimed) + 1)
        return self.claimed[-1]

    async def handle(self, item: int) -> None:
        self.holding.append(item)
        await self.let_go.wait()
        self.handled.append(item)


async def _until(condition: Callable[[], bool]) -> None:
    """Let the loop run until ``condition`` holds (no time passes: each step is a yield)."""
    while not condition():
        await asyncio.sleep(0)


def test_at_most_at_once_items_are_in_hand() -> None:
    async def scenario() -> Numbers:
        runner, stop = Numbers(), asyncio.Event()
        task = asyncio.create_task(runner.run(stop, at_once=3))
        await _until(lambda: len(runner.holding) == 3)
        for _ in range(20):  # it would claim a fourth now, if it could
            await asyncio.sleep(0)
        assert runner.claimed == [1, 2, 3] and runner.handled == []
        stop.set()
        runner.let_go.set()
        await task
        return runner

    runner = asyncio.run(scenario())
    assert sorted(runner.handled) == [1, 2, 3]


def test_a_stop_while_every_slot_is_taken_claims_nothing_more() -> None:
    async def scenario() -> Numbers:
        runner, stop = Numbers(), asyncio.Event()
        task = asyncio.create_task(runner.run(stop, at_once=1))
        await _until(lambda: runner.holding == [1])  # the loop waits for a free slot
        stop.set()
        runner.let_go.set()  # the slot frees after the stop
        await task
        return runner

    runner = asyncio.run(scenario())
    assert runner.claimed == [1] and runner.handled == [1]


def test_cancelled_it_lets_go_of_what_it_holds() -> None:
    async def scenario() -> None:
        runner, stop = Numbers(), asyncio.Event()
        task = asyncio.create_task(runner.run(stop, at_once=2))
        await _until(lambda: len(runner.holding) == 2)
        held = [t for t in asyncio.all_tasks() if "_handle" in repr(t.get_coro())]
        assert len(held) == 2
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        for _ in range(5):  # a cancellation is delivered at the task's next step
            await asyncio.sleep(0)
        assert all(t.cancelled() for t in held) and runner.handled == []

    asyncio.run(scenario())
