"""The one loop every runner runs: claim an item, handle it, else wait; until stopped.

As in GNU Mailman 3, the loop is written once, here; a runner says only how
it claims its next item (``claim``, in a thread: it reads the database) and
what it does with one (``handle``). An item is claimed under a lease in the
database, so several server instances share the work and a runner that dies
leaves its item to be claimed again when the lease ends. A fault the runner
cannot place (the database down or full) is logged once a minute
(``Throttled``) and the loop goes on after its pause.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Generic, TypeVar

from pbm.logs import Throttled

T = TypeVar("T")


class Runner(Generic[T]):
    """Claims items and handles them one at a time; ``run`` until stopped.

    ``poll_seconds``: how long the loop waits for ``wake`` when nothing is
    left to claim (other server instances add work without waking it).
    """

    name = "runner"
    poll_seconds = 1.0

    def __init__(self, wake: asyncio.Event | None = None) -> None:
        self.wake = wake or asyncio.Event()
        self.log = logging.getLogger(f"pbm.{self.name}")
        self.trouble = Throttled(self.log, f"{self.name}: trouble; trying again")

    def claim(self) -> T | None:
        """The next item to handle, claimed for this runner; None when there is none.
        Blocking: called in a thread."""
        raise NotImplementedError

    async def handle(self, item: T) -> None:
        """Do what this runner does with one claimed item (by default ``dispose``, in a
        thread)."""
        await asyncio.to_thread(self.dispose, item)

    def dispose(self, item: T) -> None:
        """``handle``'s blocking work, for a runner whose work is all blocking."""
        raise NotImplementedError

    def pause(self) -> float:
        """How long the loop waits for ``wake`` when there is nothing to claim."""
        return self.poll_seconds

    async def run_once(self) -> int:
        """Handle every item there is to claim now; how many (``pbm tick``, tests)."""
        done = 0
        while (item := await asyncio.to_thread(self.claim)) is not None:
            await self.handle(item)
            done += 1
        return done

    async def run(self, stop: asyncio.Event, at_once: int = 1) -> None:
        """Claim and handle until ``stop``, with up to ``at_once`` items in hand (a runner
        whose items wait on the network, the outbox's, handles several together).

        One loop claims, so a wake costs one look that finds nothing, not one a copy.
        """
        slots = asyncio.Semaphore(at_once)
        in_hand: set[asyncio.Task[None]] = set()
        try:
            while not stop.is_set():
                self.wake.clear()
                await slots.acquire()
                if stop.is_set():  # stopped while every slot was taken: claim no more
                    slots.release()
                    break
                try:
                    item = await asyncio.to_thread(self.claim)
                except Exception as exc:
                    item = None
                    self.trouble.fault(exc)
                if item is None:
                    slots.release()
                    await wait_any(stop, self.wake, self.pause())
                    continue
                task = asyncio.create_task(self._handle(item, slots, stop))
                in_hand.add(task)
                task.add_done_callback(in_hand.discard)
            await asyncio.gather(*in_hand)
        finally:  # cancelled (a stop that does not wait): so are the items in hand
            for task in in_hand:
                task.cancel()

    async def _handle(self, item: T, slots: asyncio.Semaphore, stop: asyncio.Event) -> None:
        """``handle`` one item; a fault is logged and holds its slot through a pause."""
        try:
            await self.handle(item)
            self.trouble.cleared()
        except Exception as exc:
            self.trouble.fault(exc)
            await wait_any(stop, self.wake, self.pause())
        finally:
            slots.release()


async def wait_any(stop: asyncio.Event, wake: asyncio.Event, timeout: float) -> None:
    """Return when either event is set or ``timeout`` seconds have passed."""
    waiters = [asyncio.ensure_future(stop.wait()), asyncio.ensure_future(wake.wait())]
    try:
        await asyncio.wait(waiters, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for waiter in waiters:
            waiter.cancel()
