"""Board clocks: the arithmetic of stopped time, and each board's clock state.

A board's clock runs for the player to move from ``Board.clock_since`` (the
moment he got the move). It stands still while he is on vacation and while
the whole site is paused (``pbm clock pause``); those spans are *stops*.
The running time of a clock is the calendar time since ``clock_since`` minus
the stops, so nothing has to be shifted when a stop ends: a vacation cut
short or a pause resumed simply ends its interval.

The reminders and forfeits that clocks cause are ``pbm.usecases.timers``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from pbm.usecases.world import Board

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


@dataclass(frozen=True, slots=True)
class ClockState:
    """The clock of the player to move on one board, at ``now``."""

    to_move: str  # userid
    since: datetime
    stops: Sequence[Stop]
    running: timedelta
    next_nag_at: datetime | None  # None: no reminder left before the forfeit
    forfeit_at: datetime
    nag_due: bool
    forfeit_due: bool
    paused_since: datetime | None


def clock_state(board: Board, now: datetime) -> ClockState:
    """The running clock of the player to move (vacations and pauses as loaded with it)."""
    since = board.clock_start
    to_move = board.player_at(board.state.to_move)
    stops = [s for s in board.stops(to_move, now) if s[1] > since]
    paused_since = next((p.started_at for p in board.pauses if p.ended_at is None), None)
    running = running_time(since, now, stops)
    nag, forfeit = timedelta(days=board.nag_days), timedelta(days=board.forfeit_days)
    nth = nags_sent(since, board.last_nag_at, nag, stops) + 1
    next_nag_at = due_at(since, nth * nag, stops) if nth * nag < forfeit else None
    return ClockState(
        to_move=to_move,
        since=since,
        stops=stops,
        running=running,
        next_nag_at=next_nag_at,
        forfeit_at=due_at(since, forfeit, stops),
        nag_due=next_nag_at is not None and running >= nth * nag,
        forfeit_due=running >= forfeit,
        paused_since=paused_since,
    )
