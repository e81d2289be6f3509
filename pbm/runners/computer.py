"""The computer player at work under ``pbm serve``: it accepts the challenges and undo
requests made to it and plays its moves, thinking in a process of its own.

What it has to do is read from the database (``pbm.usecases.computer.work``)
when new mail was acted on and every ``POLL_SECONDS``; each accept and move
is carried out as the computer's own action (``unit.run`` as ``COMPUTER``,
which acts for the computer's account alone), exactly as a player's mailed
command is. Thinking runs in a separate process, so a long think never holds
up mail; it is bounded per move (``computer.seconds_per_move``, and the
level's own budget) and, for the whole site, per hour
(``computer.seconds_per_hour``): past it, moves wait for the hour to roll on.
That process runs at the lowest CPU priority, so mail is answered first; the
boards wait their turn, one move at a time, and a challenge is accepted
between two moves.
"""

from __future__ import annotations

import asyncio
import logging
import multiprocessing
import os
import time
from collections import deque
from multiprocessing.pool import Pool
from typing import Protocol

from pbm import games
from pbm.config import Config
from pbm.runners.sender import wait_any
from pbm.runners.stockfish import stockfish_move
from pbm.store.engine import Database
from pbm.usecases import computer, unit
from pbm.usecases.auth import COMPUTER, Who
from pbm.usecases.moves import Move
from pbm.usecases.proposals import Accept
from pbm.usecases.refusals import Refused
from pbm.usecases.site import Site

log = logging.getLogger("pbm.computer")

POLL_SECONDS = 2.0  # a challenge made through another server instance is seen this soon
HOUR = 3600.0
THINK_GRACE_SECONDS = 30.0  # past its budget and this, a think is taken as lost
SET_ASIDE_SECONDS = 300.0  # a board whose move could not be made waits this long to be tried again


class _Chooser(Protocol):
    def __call__(self, level: int, seed: int, seconds: float) -> str: ...


def think(game: str, position: str, level: int, seed: int, seconds: float) -> str:
    """The computer's move in ``position`` (a ``GameState.dump``) at ``level``: run in
    the thinking process. A game's own engine (``GameState.computer_move``: Accasta's)
    or the program it names (``Game.computer_program``: Stockfish for chess)."""
    rules = games.get(game)
    state = rules.load(position)
    own: _Chooser | None = getattr(state, "computer_move", None)
    if own is not None:
        return own(level, seed, seconds)
    program = computer.program(rules)
    path = computer.find_program(program) if program else None
    if path is None:
        raise RuntimeError(f"no engine for {rules.title} is installed ({program})")
    return stockfish_move(state.board, level, seconds, path)  # type: ignore[attr-defined]


def _humble() -> None:
    """The thinking process gives way to mail: the lowest CPU priority there is."""
    os.nice(19)


class ComputerPlayer:
    """The computer's runner: ``run_forever`` until stopped."""

    def __init__(self, db: Database, config: Config, sent: asyncio.Event | None = None) -> None:
        self.site = Site(db, config)
        self.config = config
        self.sent = sent  # set when its actions wrote mail for the sender
        self.userid = config.computer.account
        self._pool: Pool | None = None
        self._spent: deque[tuple[float, float]] = deque()  # (when, seconds) of each think
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
            log.info("computer on board %s: %s", action.board, exc.message)
            return False

    def _work(self) -> list[computer.Work]:
        with self.site.db.read() as session:
            return computer.work(session, self.config)

    def _hour_left(self, now: float) -> float:
        while self._spent and self._spent[0][0] < now - HOUR:
            self._spent.popleft()
        return self.config.computer.seconds_per_hour - sum(s for _, s in self._spent)

    async def run_once(self) -> int:
        """Accept what is asked of it, then play one move (the board waiting longest): a
        challenge made while it thinks is accepted before its next move. The number of
        actions that wrote mail."""
        wrote = 0
        jobs = await asyncio.to_thread(self._work)
        accepts = [j for j in jobs if j.kind == "accept"]
        now = time.monotonic()
        self._set_aside = {b: t for b, t in self._set_aside.items() if t > now}
        moves = [j for j in jobs if j.kind == "move" and self._set_aside.get(j.board, 0) <= now]
        for job in accepts:
            wrote += await asyncio.to_thread(self._act, Accept(job.board))
        for job in moves[:1]:
            try:
                wrote += await self._move(job)
            except Exception:
                # A move that cannot be made (a bug, an engine gone) must not hold up the
                # computer's other boards: this one waits, the others go on.
                log.exception("computer on board %s: no move; tried again later", job.board)
                self._set_aside[job.board] = time.monotonic() + SET_ASIDE_SECONDS
        if wrote and self.sent is not None:
            self.sent.set()
        return wrote

    async def _move(self, job: computer.Work) -> bool:
        now = time.monotonic()
        budget = min(self.config.computer.seconds_per_move, self._hour_left(now))
        if budget <= 0:
            return False  # the site's hour of thinking is spent: later
        seed = job.board * 100_003 + job.ply  # the same position, the same move: replayable
        text = await self._think(job, seed, budget)
        self._spent.append((now, time.monotonic() - now))
        number = games.move_number(games.get(job.game), job.ply + 1)
        return await asyncio.to_thread(self._act, Move(job.board, text, expect=number))

    async def run_forever(self, stop: asyncio.Event, wake: asyncio.Event) -> None:
        """Play until ``stop``; ``wake`` says mail was acted on (a challenge, a move)."""
        if self.userid is None:
            return
        try:
            while not stop.is_set():
                wake.clear()
                # A stop does not wait for a think: the round is given up (what it wrote
                # stays written; a move not yet made is made after a restart).
                round_ = asyncio.ensure_future(self.run_once())
                stopping = asyncio.ensure_future(stop.wait())
                await asyncio.wait((round_, stopping), return_when=asyncio.FIRST_COMPLETED)
                stopping.cancel()
                if not round_.done():
                    round_.cancel()
                    break
                try:
                    if round_.result():
                        continue  # a queued answer to its move may be its turn again: look
                except Exception:
                    log.exception("computer: trouble; trying again shortly")
                await wait_any(stop, wake, POLL_SECONDS)
        finally:
            self.close()
