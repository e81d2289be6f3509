"""The computer player at work: it accepts the challenges and undo requests made to it and
plays its moves, thinking in a process of its own.

What it has to do is read from the database (``pbm.usecases.computer.work``);
each accept and move is carried out as the computer's own action
(``unit.run`` as ``COMPUTER``), exactly as a player's mailed command is.
Thinking runs in a separate process at the lowest CPU priority, so a long
think never holds up mail: a measured need, as a think takes up to
``computer.seconds_per_move`` of CPU. It asks the game for the move
(``GameState.computer_move``), bounded per move and, for the whole site,
per hour (``computer.seconds_per_hour``).

Its time is shared fairly among the people waiting for it: round robin by
person, not by board (the one served longest ago goes first), and while
others wait, nobody gets more than his share of the hour. A player with
three boards against it waits his turn like everyone else.
"""

from __future__ import annotations

import asyncio
import multiprocessing
import os
import time
from collections import deque
from collections.abc import Callable
from multiprocessing.pool import Pool

from pbm import games
from pbm.refusals import Refused
from pbm.runners.base import Runner
from pbm.usecases import computer, unit
from pbm.usecases.auth import COMPUTER, Who
from pbm.usecases.moves import Move
from pbm.usecases.proposals import Accept
from pbm.usecases.site import Site

HOUR = 3600.0
THINK_GRACE_SECONDS = 30.0  # past its budget and this, a think is taken as lost
SET_ASIDE_SECONDS = 300.0  # a board whose move could not be made waits this long


def think(game: str, position: str, level: int, seed: int, seconds: float) -> str:
    """The computer's move in ``position`` (a ``GameState.dump``) at ``level``, as the game
    chooses it (``GameState.computer_move``): run in the thinking process."""
    state = games.get(game).load(position)
    choose: Callable[[int, int, float], str] | None = getattr(state, "computer_move", None)
    if choose is None:
        raise RuntimeError(f"{game} has no computer player")
    return choose(level, seed, seconds)


def _humble() -> None:
    """The thinking process gives way to mail: the lowest CPU priority there is."""
    os.nice(19)


class ComputerRunner(Runner[computer.Work]):
    """The computer's runner: ``run`` until stopped."""

    name = "computer"
    poll_seconds = 2.0  # a challenge made through another server instance is seen this soon

    def __init__(
        self,
        site: Site,
        *,
        wake: asyncio.Event | None = None,
        sent: asyncio.Event | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        super().__init__(wake)
        self.site = site
        self.sent = sent  # set when its actions wrote mail for the outbox
        self.userid = site.config.computer.account
        self.clock = clock
        self._pool: Pool | None = None
        self._spent: deque[tuple[float, str, float]] = deque()  # (when, person, seconds)
        self._served: dict[str, float] = {}  # person -> when his last move was made
        self._set_aside: dict[int, float] = {}  # board -> when its move may be tried again

    def _thinker(self) -> Pool:
        if self._pool is None:
            # "spawn": a fresh interpreter; forking a process that runs threads is unsafe.
            self._pool = multiprocessing.get_context("spawn").Pool(1, initializer=_humble)
        return self._pool

    def close(self) -> None:
        """End the thinking process at once, a think under way too (its board's move is
        made when the computer plays again): ``pbm serve`` stops without waiting for it."""
        if self._pool is not None:
            self._pool.terminate()
            self._pool = None

    def claim(self) -> computer.Work | None:
        """A request to answer first, then the move of the person whose turn it is."""
        if self.userid is None:
            return None
        with self.site.db.read() as session:
            jobs = computer.work(session, self.site.config)
        now = self.clock()
        self._set_aside = {b: t for b, t in self._set_aside.items() if t > now}
        accept = next((j for j in jobs if j.kind == "accept"), None)
        if accept is not None:
            return accept
        moves = [j for j in jobs if j.kind == "move" and j.board not in self._set_aside]
        return self._next_move(moves, now)

    def _next_move(self, moves: list[computer.Work], now: float) -> computer.Work | None:
        """The longest-waiting board of the person served longest ago, among those within
        their share of the hour while others wait (``moves``: longest-waiting first)."""
        if not moves or self._hour_left(now) <= 0:
            return None
        people = list(dict.fromkeys(m.person for m in moves))
        share = self.site.config.computer.seconds_per_hour / len(people)
        within = [p for p in people if self._spent_by(p) < share] or people
        person = min(within, key=lambda p: self._served.get(p, float("-inf")))
        return next(m for m in moves if m.person == person)

    def _spent_by(self, person: str) -> float:
        return sum(s for _, who, s in self._spent if who == person)

    def _hour_left(self, now: float) -> float:
        while self._spent and self._spent[0][0] < now - HOUR:
            self._spent.popleft()
        return self.site.config.computer.seconds_per_hour - sum(s for *_, s in self._spent)

    async def handle(self, item: computer.Work) -> None:
        if item.kind == "accept":
            wrote = await asyncio.to_thread(self._act, Accept(item.board))
        else:
            wrote = await self._moved(item)
        if wrote and self.sent is not None:
            self.sent.set()

    async def _moved(self, item: computer.Work) -> bool:
        """Its move on a board, made; whether it wrote mail."""
        try:
            return await self._move(item)
        except Exception:
            # A move that cannot be made (a bug, an engine gone) must not hold up the
            # computer's other boards: this one waits, the others go on.
            self.log.exception("computer on board %s: no move; tried again later", item.board)
            self._set_aside[item.board] = self.clock() + SET_ASIDE_SECONDS
            return False

    async def _move(self, job: computer.Work) -> bool:
        start = self.clock()
        budget = min(self.site.config.computer.seconds_per_move, self._hour_left(start))
        seed = job.board * 100_003 + job.ply  # the same position, the same move: replayable
        try:
            text = await self._think(job, seed, budget)
        finally:
            self._spent.append((start, job.person, self.clock() - start))
            self._served[job.person] = self.clock()
        number = games.move_number(games.get(job.game), job.ply + 1)
        return await asyncio.to_thread(self._act, Move(job.board, text, expect=number))

    async def _think(self, job: computer.Work, seed: int, budget: float) -> str:
        """The move ``think`` chooses, in the thinking process; TimeoutError when it has not
        answered well after its budget (the process died): it is then made anew."""
        loop = asyncio.get_running_loop()
        answer: asyncio.Future[str] = loop.create_future()

        def settle(value: str | None, error: BaseException | None) -> None:
            if answer.done():
                return
            if error is not None:
                answer.set_exception(error)
            else:
                answer.set_result(str(value))

        self._thinker().apply_async(
            think,
            (job.game, job.position, job.level, seed, budget),
            callback=lambda value: loop.call_soon_threadsafe(settle, value, None),
            error_callback=lambda error: loop.call_soon_threadsafe(settle, None, error),
        )
        try:
            return await asyncio.wait_for(answer, budget + THINK_GRACE_SECONDS)
        except TimeoutError:
            self.close()
            raise

    def _act(self, action: unit.Action) -> bool:
        """Carry out one of the computer's actions (blocking); whether it wrote mail."""
        assert self.userid is not None
        try:
            return bool(unit.run(self.site, action, Who(self.userid, COMPUTER)))
        except Refused as exc:  # the board changed meanwhile: the next look sees it
            self.log.info("computer on board %s: %s", action.board, exc.message)
            return False

    async def run(self, stop: asyncio.Event, at_once: int = 1) -> None:
        """As every runner's, and its thinking process ended when it stops. A stop does
        not wait for a think: the move not yet made is made after a restart."""
        try:
            loop = asyncio.ensure_future(super().run(stop, at_once))
            stopping = asyncio.ensure_future(stop.wait())
            await asyncio.wait((loop, stopping), return_when=asyncio.FIRST_COMPLETED)
            stopping.cancel()
            loop.cancel()
        finally:
            self.close()
