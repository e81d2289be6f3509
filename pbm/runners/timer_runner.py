"""The timers: the clocks' reminders and losses on time, lapsed challenges, the players'
digests at their times, the day's Glicko-2 ratings once it is over, the events and
leagues whose boards ended (``usecases.events.event_timers``), and once a day the
pruning of what is no longer needed. ``pbm tick`` and ``pbm prune`` run them once."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from datetime import datetime

from sqlalchemy.exc import SQLAlchemyError

from pbm.config import Config
from pbm.refusals import Refused
from pbm.runners.base import Runner
from pbm.store import prune as store_prune
from pbm.store.engine import Database
from pbm.usecases import unit
from pbm.usecases.accounts import expire_signups
from pbm.usecases.challenges import ExpireChallenge, lapsed_challenges
from pbm.usecases.digests import SendDigest, digests_due
from pbm.usecases.events import event_timers
from pbm.usecases.glickos import RateDays, days_due
from pbm.usecases.site import Site, utc_now
from pbm.usecases.timers import RunClock, boards_due
from pbm.usecases.world import World

log = logging.getLogger("pbm.timers")

PRUNE_EVERY_SECONDS = 24 * 60 * 60
PRUNE_RETRY_SECONDS = 60 * 60  # after database trouble


def tick(db: Database, config: Config, now: datetime) -> int:
    """Send due reminders, end boards out of time, let unanswered challenges lapse, send
    the digests due, rate the days that ended, then move the events and leagues on; the
    number of actions that wrote anything.

    Blocking. Each board is decided afresh in a transaction of its own, so a
    move that arrives meanwhile wins and a tick running twice does nothing
    twice; a board that cannot be decided (a bug) is logged and the others
    go on. While the site clocks are paused it does nothing. Mail goes out at
    once even when ``now`` is simulated ahead of real time.
    """
    site = Site(db, config, lambda: now, lambda: min(now, utc_now()))
    with db.read() as session:
        world = World(session, config, now)
        due: list[unit.Action] = [RunClock(b) for b in boards_due(world)]
        due += [
            ExpireChallenge(b) for b in lapsed_challenges(session, now, config.clock.challenge_days)
        ]
        due += [SendDigest(u) for u in digests_due(world)]
        if days_due(world):
            due.append(RateDays())
    acted = _run(site, due)
    # Then the events whose boards just ended, then the leagues whose season did.
    for phase in event_timers.PHASES:
        with db.read() as session:
            later = phase(World(session, config, now))
        acted += _run(site, later)
    return acted


def _run(site: Site, due: list[unit.Action]) -> int:
    """Carry out each action in a transaction of its own; how many changed anything."""
    acted = 0
    for action in due:
        try:
            acted += bool(unit.run(site, action))
        except Refused as exc:  # the board changed under us: the next tick sees it
            log.info("clock of board %s not run: %s", action.board, exc.message)
        except SQLAlchemyError:
            raise  # the database: the next tick tries again
        except Exception:
            log.exception("timers: board %s could not be decided", action.board)
    return acted


def prune(db: Database, config: Config, now: datetime) -> store_prune.Pruned:
    """Erase what is no longer needed (``pbm.store.prune``), then ``compact``; what went.

    Blocking.
    """
    with db.transaction() as session:
        pruned = store_prune.prune(session, now, config.server.keep_raw_days)
        expired = expire_signups(session, now)
    if expired:
        log.info("forgot %d unconfirmed signup(s)", expired)
    store_prune.compact(db)
    return pruned


class Every(Runner[datetime]):
    """A runner whose item is the time: its work is due every ``poll_seconds`` (by
    ``clock``, a monotonic one; tests set it)."""

    def __init__(
        self,
        db: Database,
        config: Config,
        *,
        clock: Callable[[], float] = time.monotonic,
        now: Callable[[], datetime] = utc_now,
    ) -> None:
        super().__init__()
        self.db = db
        self.config = config
        self.clock = clock
        self.now = now
        self._next = clock()  # when the work is due again

    def claim(self) -> datetime | None:
        if self.clock() < self._next:
            return None
        self._next = self.clock() + self.poll_seconds
        return self.now()

    def pause(self) -> float:
        return max(0.0, self._next - self.clock())


class TimerRunner(Every):
    """``tick`` every ``server.tick_seconds``; ``sent`` is set when it wrote mail."""

    name = "timers"

    def __init__(self, db: Database, config: Config, sent: asyncio.Event | None = None) -> None:
        super().__init__(db, config)
        self.poll_seconds = float(config.server.tick_seconds)
        self.sent = sent

    async def handle(self, item: datetime) -> None:
        if await asyncio.to_thread(tick, self.db, self.config, item) and self.sent is not None:
            self.sent.set()


class PruneRunner(Every):
    """``prune`` at start-up and then once a day."""

    name = "prune"
    poll_seconds = float(PRUNE_EVERY_SECONDS)

    def dispose(self, item: datetime) -> None:
        try:
            pruned = prune(self.db, self.config, item)
        except Exception:
            self._next = self.clock() + PRUNE_RETRY_SECONDS
            raise
        log.info("pruned: %s", ", ".join(f"{k} {v}" for k, v in pruned._asdict().items()))
