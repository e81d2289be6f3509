"""Board clocks: each board's time control and clock, and where its clock stands now.

A board's clock runs for the player to move from ``Board.clock_since`` (the
moment he got the move). It stands still while he is on vacation and while
the whole site is paused (``pbm clock pause``); those spans are *stops*, and
under ``weekends off`` the weekends are too. Running time is calendar time
minus the stops, so nothing has to be shifted when a stop ends.

The kind of clock is the board's time control (``pbm.timecontrol``): the
classic one reminds every ``nag_days`` and forfeits after ``forfeit_days``
without a move; the others keep each player's time left (``Board.clock``,
JSON) and remind when it falls under a day and under an hour
(``clock.reminder_hours``, loaded with the board), once each.

The reminders and losses on time that clocks cause are ``pbm.usecases.timers``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from pbm.model import Board, BoardStatus
from pbm.timecontrol import (
    BadTimeControl,
    Clock,
    Kind,
    TimeControl,
    due_at,
    duration_words,
    ends_at,
    merge,
    parse,
    running_time,
)

__all__ = [
    "ClockState",
    "clock_json",
    "clock_of",
    "clock_state",
    "control_of",
    "control_words",
    "due_at",
    "merge",
    "next_timer",
    "running_time",
]

Stop = tuple[datetime, datetime]
DAY = timedelta(days=1)


def control_of(board: Board) -> TimeControl:
    """The board's time control (a spec that no longer reads: the classic one of its days)."""
    try:
        return parse(board.time_control)
    except BadTimeControl:
        return TimeControl.classic(board.nag_days, board.forfeit_days)


def clock_of(board: Board) -> Clock:
    """Both players' time on ``board``, its player to move's running since he got the move."""
    control = control_of(board)
    if not board.clock:
        return Clock.start(control, board.clock_start)
    stored = json.loads(board.clock)
    moves = stored["moves"]
    return Clock(
        control,
        _times(stored["left"]),
        board.clock_start,
        (int(moves[0]), int(moves[1])),
        _times(stored["used"]),
        _times(stored["added"]),
    )


def _times(seconds: Sequence[int]) -> tuple[timedelta, timedelta]:
    return timedelta(seconds=int(seconds[0])), timedelta(seconds=int(seconds[1]))


def clock_json(clock: Clock) -> str:
    """The stored form of a clock (its turn's start is ``clock_since``)."""

    def seconds(pair: tuple[timedelta, timedelta]) -> list[int]:
        return [int(v.total_seconds()) for v in pair]

    return json.dumps(
        {
            "left": seconds(clock.left),
            "moves": list(clock.moves),
            "used": seconds(clock.used),
            "added": seconds(clock.added),
        },
        separators=(",", ":"),
    )


def control_words(control: TimeControl) -> str:
    """A time control as a challenge describes it: its spec and what it means."""
    return f"time control {control.spec}: {control_meaning(control)}"


def control_meaning(control: TimeControl) -> str:
    """What a time control means, in words."""
    if control.kind is Kind.CLASSIC:
        return f"{control.nag // DAY} days to a reminder, {control.start // DAY} to a forfeit"
    start = duration_words(control.start)
    if control.kind is Kind.DAYS:
        text = f"{start} for each move"
    elif control.kind is Kind.FISCHER:
        text = f"{start} to start, {duration_words(control.increment)} more with each move"
        if control.cap is not None:
            text += f", at most {duration_words(control.cap)}"
    else:
        text = f"{start} for every {control.moves} moves, time not used carried over"
    if control.weekends_off:
        text += f"; no clock runs on Saturday and Sunday ({control.timezone} time)"
    return text


def nags_sent(
    since: datetime, last_nag_at: datetime | None, nag: timedelta, stops: Sequence[Stop]
) -> int:
    """How many classic reminder periods were already covered by a reminder.

    A reminder is sent once per period: the one sent at running time 15 days
    with a 7-day period covers periods 1 and 2, so the next is due at 21.
    """
    if last_nag_at is None or last_nag_at < since:
        return 0
    return running_time(since, last_nag_at, stops) // nag


@dataclass(frozen=True, slots=True)
class ClockState:
    """The clock of the player to move on one board, at ``now``.

    ``running``: how long his clock has run this turn; ``left``: his time left
    (classic: to the forfeit); ``forfeit_at``: when it runs out unless he moves;
    ``next_nag_at``: the next reminder (None: none before it runs out).
    """

    to_move: str  # userid
    seat: int
    control: TimeControl
    since: datetime
    stops: Sequence[Stop]
    running: timedelta
    left: timedelta
    next_nag_at: datetime | None
    forfeit_at: datetime
    nag_due: bool
    forfeit_due: bool
    paused_since: datetime | None


def clock_state(board: Board, now: datetime) -> ClockState:
    """The running clock of the player to move (vacations and pauses as loaded with it)."""
    since = board.clock_start
    seat = board.state.to_move
    to_move = board.player_at(seat)
    stops = [s for s in board.stops(to_move, now) if s[1] > since]
    paused_since = next((p.started_at for p in board.pauses if p.ended_at is None), None)
    control = control_of(board)
    running = running_time(since, now, stops)
    if control.kind is Kind.CLASSIC:
        nag, forfeit = control.nag, control.start
        nth = nags_sent(since, board.last_nag_at, nag, stops) + 1
        next_nag_at = due_at(since, nth * nag, stops) if nth * nag < forfeit else None
        left = max(forfeit - running, timedelta(0))
        out_at = due_at(since, forfeit, stops)
        nag_due, out = next_nag_at is not None and running >= nth * nag, running >= forfeit
    else:
        clock = clock_of(board)
        bank = clock.left[seat]
        out_at = clock.runs_out_at(seat, stops)
        # Each reminder once: the first whose moment is after the last one sent this turn.
        last = board.last_nag_at
        sent = last if last is not None and last >= since else None
        moments = sorted(
            ends_at(control, since, bank - r, stops) for r in board.reminders if r < bank
        )
        next_nag_at = next((m for m in moments if sent is None or m > sent), None)
        left = clock.time_left(seat, seat, now, stops)
        nag_due, out = next_nag_at is not None and next_nag_at <= now, out_at <= now
    return ClockState(
        to_move=to_move,
        seat=seat,
        control=control,
        since=since,
        stops=stops,
        running=running,
        left=left,
        next_nag_at=next_nag_at,
        forfeit_at=out_at,
        nag_due=nag_due,
        forfeit_due=out,
        paused_since=paused_since,
    )


def next_timer(board: Board, now: datetime | None = None) -> datetime | None:
    """The earliest moment the board's reminder or the end of its player's time may be
    due; None for a board that is not in play.

    Never later than the truth, whatever comes: a stop still open (a vacation
    with no end, a site pause) is taken as ending ``now`` (None: where it
    began), and new stops only put the moment off. So the timers need look at
    no board before its moment; a stop cut shorter sets it back (``changes``).
    """
    if board.status != BoardStatus.ACTIVE:
        return None
    state = clock_state(board, now or board.clock_start)
    return min(m for m in (state.next_nag_at, state.forfeit_at) if m is not None)
