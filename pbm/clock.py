"""Board clocks: the arithmetic of stopped time, and the timer tick.

A board's clock runs for the player to move from ``games.clock_since`` (the
moment he got the move). It stands still while he is on vacation and while
the whole site is paused (``pbm clock pause``); those spans are *stops*.
The running time of a clock is the calendar time since ``clock_since`` minus
the stops, so nothing has to be shifted when a stop ends: a vacation cut
short or a pause resumed simply ends its interval.

``tick(db, config, now)`` is the timer: it sends the reminders that are due
and forfeits the boards whose time ran out, each board in its own
transaction. ``pbm serve`` calls it every ``server.tick_seconds`` and
``pbm tick [--now ISO-TIME]`` once.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence
from datetime import datetime, timedelta

from pbm.config import Config
from pbm.store import Database

log = logging.getLogger("pbm.clock")

Stop = tuple[datetime, datetime]
DAY = timedelta(days=1)


def merge(stops: Iterable[Stop]) -> list[Stop]:
    """The stops sorted and overlapping ones joined; empty intervals dropped."""
    out: list[Stop] = []
    for start, end in sorted(s for s in stops if s[1] > s[0]):
        if out and start <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], end))
        else:
            out.append((start, end))
    return out


def running_time(since: datetime, until: datetime, stops: Iterable[Stop]) -> timedelta:
    """Calendar time from ``since`` to ``until`` minus the stops (never negative)."""
    if until <= since:
        return timedelta(0)
    total = until - since
    for start, end in merge(stops):
        lo, hi = max(start, since), min(end, until)
        if hi > lo:
            total -= hi - lo
    return total


def due_at(since: datetime, amount: timedelta, stops: Iterable[Stop]) -> datetime:
    """The first moment at which ``running_time(since, t, stops) >= amount``."""
    t, left = since, amount
    for start, end in merge(stops):
        if end <= t:
            continue
        if start > t:
            if start - t >= left:
                return t + left
            left -= start - t
        t = end
    return t + left


def nags_sent(
    since: datetime, last_nag_at: datetime | None, nag: timedelta, stops: Sequence[Stop]
) -> int:
    """How many reminder periods were already covered by a reminder.

    A reminder is sent once per period: the one sent at running time 15 days
    with a 7-day period covers periods 1 and 2, so the next is due at 21.
    """
    if last_nag_at is None or last_nag_at < since:
        return 0
    return running_time(since, last_nag_at, stops) // nag


def tick(db: Database, config: Config, now: datetime) -> int:
    """Send due reminders and forfeit boards out of time; the number of boards acted on.

    Blocking (run it in a thread from an event loop). Each board is one
    transaction of its own, locked and checked again there, so a move that
    arrives meanwhile wins and a tick running twice does nothing twice.
    While the site clocks are paused it does nothing.
    """
    from pbm.service import Service, ServiceError, utc_now

    # Mail goes out at once even when ``now`` is simulated ahead of real time.
    service = Service(db, config, lambda: now, lambda: min(now, utc_now()))
    if service.clocks_paused_since() is not None:
        return 0
    acted = 0
    for board in service.boards_due():
        try:
            if service.run_clock(board) is not None:
                acted += 1
        except ServiceError as exc:  # the board changed under us: the next tick sees it
            log.info("clock of board %d not run: %s", board, exc.message)
    return acted
