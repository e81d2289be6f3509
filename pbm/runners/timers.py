"""The timers: reminders and forfeits every ``server.tick_seconds`` (or ``pbm tick`` once),
and pruning what is no longer needed once a day (or ``pbm prune`` once)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from datetime import datetime

from sqlalchemy.exc import SQLAlchemyError

from pbm.config import Config
from pbm.store import prune as store_prune
from pbm.store.engine import Database
from pbm.usecases import unit
from pbm.usecases.accounts import expire_signups
from pbm.usecases.challenges import ExpireChallenge, lapsed_challenges
from pbm.usecases.site import Site, utc_now
from pbm.usecases.timers import RunClock, boards_due
from pbm.usecases.world import World

log = logging.getLogger("pbm.timers")

PRUNE_EVERY_SECONDS = 24 * 60 * 60
PRUNE_RETRY_SECONDS = 60 * 60  # after database trouble
# Boards a timer carries out in one transaction: few commits, and short locks (SQLite's
# write lock is held for the whole batch: 50 boards take some 100 ms).
TICK_BATCH = 50


def tick(db: Database, config: Config, now: datetime) -> int:
    """Send due reminders, end boards out of time and let unanswered challenges lapse;
    the number of boards acted on.

    Blocking (run it in a thread from an event loop). Each board is decided
    afresh when its turn comes, so a move that arrives meanwhile wins and a
    tick running twice does nothing twice. The boards are carried out
    ``TICK_BATCH`` to a transaction, read at once, each in a savepoint of its
    own (``unit.write``): a thousand games out of time at once cost twenty
    commits, not a thousand. While the site clocks are paused it does
    nothing. Mail goes out at once even when ``now`` is simulated ahead of
    real time.
    """
    site = Site(db, config, lambda: now, lambda: min(now, utc_now()))
    with db.read() as session:
        due: list[unit.Action] = [RunClock(b) for b in boards_due(World(session, config, now))]
        due += [ExpireChallenge(b) for b in lapsed_challenges(session, now)]
    acted = 0
    for start in range(0, len(due), TICK_BATCH):
        batch = due[start : start + TICK_BATCH]
        try:
            outcomes = _carry_out(site, batch)
        except SQLAlchemyError:
            raise  # the database: the next tick tries again
        except Exception:
            # A board that cannot be decided (a bug) must not hold up the others: one by one.
            outcomes = []
            for action in batch:
                try:
                    outcomes += _carry_out(site, [action])
                except SQLAlchemyError:
                    raise
                except Exception:
                    log.exception("timers: board %s could not be decided", action.board)
        for outcome in outcomes:
            if outcome.refused is not None:  # the board changed under us: the next tick sees it
                board = outcome.request.action.board
                log.info("clock of board %s not run: %s", board, outcome.refused.message)
            elif outcome.replies:
                acted += 1
    return acted


def _carry_out(site: Site, actions: list[unit.Action]) -> list[unit.Outcome]:
    """``actions`` decided and written in one transaction, what they act on read at once."""
    requests = [unit.Request(action) for action in actions]
    with site.db.transaction() as session:
        world = World(session, site.config, site.clock(), lock=True)
        unit.preload(world, requests)
        decided = [unit.decide(site, world, r) for r in requests]
        return unit.write(site, session, decided, world)


async def run_timers(
    db: Database, config: Config, stop: asyncio.Event, woke: asyncio.Event
) -> None:
    """``tick`` every ``server.tick_seconds`` until ``stop``; ``woke`` is set when it sent mail."""
    while not stop.is_set():
        try:
            if await asyncio.to_thread(tick, db, config, utc_now()):
                woke.set()
        except Exception:
            log.exception("timers: database trouble; trying again next time")
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), config.server.tick_seconds)


def prune(db: Database, config: Config, now: datetime) -> store_prune.Pruned:
    """Erase what is no longer needed (``pbm.store.prune``), then ``compact``; what went.

    Blocking (run it in a thread from an event loop).
    """
    with db.transaction() as session:
        pruned = store_prune.prune(session, now, config.server.keep_raw_days)
        expired = expire_signups(session, now)
    if expired:
        log.info("forgot %d unconfirmed signup(s)", expired)
    store_prune.compact(db)
    return pruned


async def run_prune(db: Database, config: Config, stop: asyncio.Event) -> None:
    """``prune`` at start-up and then every 24 hours until ``stop``."""
    while not stop.is_set():
        wait = PRUNE_EVERY_SECONDS
        try:
            pruned = await asyncio.to_thread(prune, db, config, utc_now())
            log.info("pruned: %s", ", ".join(f"{k} {v}" for k, v in pruned._asdict().items()))
        except Exception:
            log.exception("prune: database trouble; trying again in an hour")
            wait = PRUNE_RETRY_SECONDS
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), wait)
