"""Time controls: how a board's clock runs, named by a short spec, and its arithmetic.

A board's clock is one of four kinds, as correspondence players know them:

- ``classic 7/21``: the classic PBeM clock: a reminder every 7 days without
  a move, the loss after 21; each move starts the count again.
- ``days 3``: days per move (Lichess): each move gives the mover 3 days
  again for his next move.
- ``fischer 10d+36h max 10d``: a time bank (Little Golem, OGS): 10 days to
  start, 36 hours more after each move, never more than the cap (the start,
  when no ``max`` is given).
- ``ICCF 10/50d``: moves per period (ICCF): 50 days for the first 10 moves,
  50 days more after every 10th; time not used carries over.

Any of them may add ``weekends off``, with a timezone name (``weekends off
Europe/Berlin``; UTC when none): the clock stands still from Saturday 00:00
to Monday 00:00 there, daylight saving included.

Pure: values and arithmetic on datetimes, no I/O. A clock runs from the
moment the player got the move; its *stops* (vacations, site pauses, given
by the caller) and, under ``weekends off``, the weekends are not counted.
Datetimes are either all naive (read as UTC, as the database keeps them) or
all aware; what comes back is of the same kind.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from enum import StrEnum
from typing import TypeVar
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

__all__ = [
    "FORMS",
    "REMINDERS",
    "BadTimeControl",
    "Clock",
    "Kind",
    "TimeControl",
    "counted",
    "due_at",
    "duration_words",
    "ends_at",
    "parse",
    "running_time",
    "weekends",
]

Stop = tuple[datetime, datetime]
T = TypeVar("T")
DAY = timedelta(days=1)
HOUR = timedelta(hours=1)

# Reminders of a time bank: when the time left falls under a day, and under an hour.
REMINDERS = (24 * HOUR, HOUR)

# What a player may write, as the refusal of a bad spec shows it.
FORMS = (
    "classic 7/21  (a reminder after 7 days without a move, the loss after 21)",
    "days 3  (3 days for each move; 1 to 30)",
    "fischer 10d+36h max 10d  (a bank of 10 days, 36 hours more after each move, at most 10 days)",
    "ICCF 10/50d  (50 days for every 10 moves; time not used carries over)",
    "any of them followed by: weekends off [TIMEZONE]  (e.g. weekends off Europe/Berlin)",
)


class BadTimeControl(ValueError):
    """A time control spec that is not one of ``FORMS``; the message lists them."""

    def __init__(self, why: str) -> None:
        super().__init__(f"{why}. A time control is one of:\n" + "\n".join(f"  {f}" for f in FORMS))
        self.why = why


class Kind(StrEnum):
    CLASSIC = "classic"
    DAYS = "days"
    FISCHER = "fischer"
    ICCF = "ICCF"


@dataclass(frozen=True, slots=True)
class TimeControl:
    """One board's time control. ``start``: each player's time at the start (classic:
    the days to the loss); ``increment``: what a move adds (Fischer) or the period
    (ICCF); ``cap``: the most a bank holds (Fischer); ``moves``: ICCF's moves per
    period; ``nag``: the classic reminder's period."""

    kind: Kind
    start: timedelta
    increment: timedelta = timedelta(0)
    cap: timedelta | None = None
    moves: int = 0
    nag: timedelta = timedelta(0)
    weekends_off: bool = False
    timezone: str = "UTC"

    @classmethod
    def classic(cls, nag_days: int = 7, forfeit_days: int = 21) -> TimeControl:
        return cls(Kind.CLASSIC, forfeit_days * DAY, nag=nag_days * DAY)

    @property
    def spec(self) -> str:
        """The canonical spec, as board mails print it and ``parse`` reads it back."""
        if self.kind is Kind.CLASSIC:
            text = f"classic {self.nag // DAY}/{self.start // DAY}"
        elif self.kind is Kind.DAYS:
            text = f"days {self.start // DAY}"
        elif self.kind is Kind.FISCHER:
            text = f"fischer {_short(self.start)}+{_short(self.increment)}"
            if self.cap is not None:
                text += f" max {_short(self.cap)}"
        else:
            text = f"ICCF {self.moves}/{_short(self.increment)}"
        if self.weekends_off:
            text += " weekends off" + ("" if self.timezone == "UTC" else f" {self.timezone}")
        return text

    def __str__(self) -> str:
        return self.spec

    @property
    def pgn(self) -> str:
        """The control as PGN's TimeControl tag writes it (PGN standard 9.6.1): a move
        within S seconds ``1/S``, a bank ``S+I``, M moves in S seconds ``M/S``."""
        start, increment = int(self.start.total_seconds()), int(self.increment.total_seconds())
        if self.kind is Kind.FISCHER:
            return f"{start}+{increment}"
        if self.kind is Kind.ICCF:
            return f"{self.moves}/{increment}"
        return f"1/{start}"

    def after_move(self, left: timedelta, moves_made: int) -> timedelta:
        """The mover's time once his ``moves_made``-th move is played, with ``left``
        (already less what the move used) before it is counted."""
        if self.kind in (Kind.CLASSIC, Kind.DAYS):
            return self.start  # each move starts his count again
        if self.kind is Kind.FISCHER:
            grown = left + self.increment
            return grown if self.cap is None else min(grown, self.cap)
        # ICCF: a new period after every ``moves``-th move, on top of what is left.
        return left + self.increment if moves_made % self.moves == 0 else left

    def growth_words(self) -> str:
        """What the mover's next move does to his time, for a board mail ("" classic)."""
        if self.kind is Kind.DAYS:
            return f"your move gives you {duration_words(self.start)} again"
        if self.kind is Kind.FISCHER:
            cap = f", to at most {duration_words(self.cap)}" if self.cap is not None else ""
            return f"the bank grows by {duration_words(self.increment)} with your move{cap}"
        if self.kind is Kind.ICCF:
            return f"{duration_words(self.increment)} more after every {self.moves} moves"
        return ""


_DURATION = re.compile(r"(?:(\d{1,4})d)?(?:(\d{1,5})h)?(?:(\d{1,6})m)?")


def _duration(text: str, what: str) -> timedelta:
    """``10d``, ``36h``, ``90m``, ``1d12h`` (a bare number: days)."""
    if text.isdigit() and len(text) <= 4:
        return int(text) * DAY
    found = _DURATION.fullmatch(text)
    if not text or found is None or not any(found.groups()):
        raise BadTimeControl(f"{what} {text!r} is not a time such as 10d, 36h or 1d12h")
    d, h, m = (int(g or 0) for g in found.groups())
    return timedelta(days=d, hours=h, minutes=m)


def _short(amount: timedelta) -> str:
    """A time as a spec writes it: ``10d``, ``36h``, ``90m``."""
    if amount % DAY == timedelta(0):
        return f"{amount // DAY}d"
    if amount % HOUR == timedelta(0):
        return f"{amount // HOUR}h"
    return f"{amount // timedelta(minutes=1)}m"


_WEEKENDS = re.compile(r"\s+weekends?\s+off(?:\s+(?:in\s+)?(\S+))?\s*$", re.IGNORECASE)
MAX_BANK = 365 * DAY  # no control holds more: a bank that never runs out is no clock


def parse(spec: str) -> TimeControl:
    """The time control ``spec`` names (see ``FORMS``); BadTimeControl if none."""
    text = " ".join(spec.split())
    if not text:
        raise BadTimeControl("No time control given")
    weekends_off, timezone = False, "UTC"
    found = _WEEKENDS.search(" " + text)
    if found is not None:
        weekends_off = True
        timezone = _zone(found.group(1) or "UTC")
        text = (" " + text)[: found.start()].strip()
    kind, _, rest = text.partition(" ")
    kind, rest = kind.lower(), rest.replace(" ", "")
    control: TimeControl
    if kind == "classic":
        numbers = re.fullmatch(r"(\d{1,3})/(\d{1,3})", rest) if rest else None
        if rest and numbers is None:
            raise BadTimeControl(f"'classic {rest}' is not classic NAG/FORFEIT in days")
        nag, forfeit = (int(numbers[1]), int(numbers[2])) if numbers else (7, 21)
        if not 1 <= nag < forfeit <= 365:
            raise BadTimeControl("A classic clock reminds after 1 day or more, before the loss")
        control = TimeControl.classic(nag, forfeit)
    elif kind == "days":
        if not (rest.isdigit() and 1 <= int(rest) <= 30):
            raise BadTimeControl(f"'days {rest}' is not a number of days from 1 to 30")
        control = TimeControl(Kind.DAYS, int(rest) * DAY)
    elif kind == "fischer":
        found_f = re.fullmatch(r"([^+]+)\+(.+?)(?:max(.+))?", rest, re.IGNORECASE)
        if found_f is None:
            raise BadTimeControl(f"'fischer {rest}' is not fischer START+INCREMENT [max CAP]")
        start = _duration(found_f[1].lower(), "The start")
        increment = _duration(found_f[2].lower(), "The increment")
        cap = _duration(found_f[3].lower(), "The cap") if found_f[3] else start
        if not timedelta(0) < start <= MAX_BANK or increment > MAX_BANK or cap < start:
            raise BadTimeControl("A Fischer bank starts with some time, at most its cap")
        control = TimeControl(Kind.FISCHER, start, increment, min(cap, MAX_BANK))
    elif kind == "iccf":
        found_i = re.fullmatch(r"(\d{1,3})/(\S+)", rest)
        if found_i is None:
            raise BadTimeControl(f"'ICCF {rest}' is not ICCF MOVES/DAYS, e.g. ICCF 10/50d")
        moves, period = int(found_i[1]), _duration(found_i[2].lower(), "The period")
        if not (1 <= moves <= 100 and timedelta(0) < period <= MAX_BANK):
            raise BadTimeControl("ICCF gives a period of some days for 1 to 100 moves")
        control = TimeControl(Kind.ICCF, period, period, moves=moves)
    else:
        raise BadTimeControl(f"{kind!r} is not a kind of time control")
    return replace(control, weekends_off=weekends_off, timezone=timezone)


def _zone(name: str) -> str:
    """A timezone's IANA name as given (``Europe/Berlin``); BadTimeControl if unknown."""
    if name.upper() == "UTC":
        return "UTC"
    try:
        ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        raise BadTimeControl(f"{name!r} is not a timezone name such as Europe/Berlin") from None
    return name


# -- the arithmetic of stopped time --


def merge(stops: Iterable[Stop]) -> list[Stop]:
    """The stops sorted and overlapping ones joined; empty intervals dropped."""
    out: list[Stop] = []
    for start, end in sorted(s for s in stops if s[1] > s[0]):
        if out and start <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], end))
        else:
            out.append((start, end))
    return out


def weekends(timezone: str, since: datetime, until: datetime) -> list[Stop]:
    """The weekends (Saturday 00:00 to Monday 00:00 in ``timezone``) that overlap
    ``since`` to ``until``, as the same kind of datetimes as those (naive: UTC)."""
    naive = since.tzinfo is None
    zone = ZoneInfo(timezone) if timezone != "UTC" else UTC
    lo = (since.replace(tzinfo=UTC) if naive else since).astimezone(zone)
    hi = (until.replace(tzinfo=UTC) if naive else until).astimezone(zone)
    # The Saturday on or before ``lo``'s date, at local midnight (wall time: DST included).
    day = lo.date() - timedelta(days=(lo.weekday() - 5) % 7)
    out: list[Stop] = []
    while True:
        start = datetime(day.year, day.month, day.day, tzinfo=zone)
        if start > hi:
            break
        monday = day + timedelta(days=2)
        end = datetime(monday.year, monday.month, monday.day, tzinfo=zone)
        if end > lo:
            out.append((_same_kind(start, naive), _same_kind(end, naive)))
        day += timedelta(days=7)
    return out


def _same_kind(moment: datetime, naive: bool) -> datetime:
    utc = moment.astimezone(UTC)
    return utc.replace(tzinfo=None) if naive else utc


def running_time(since: datetime, until: datetime, stops: Iterable[Stop] = ()) -> timedelta:
    """Calendar time from ``since`` to ``until`` minus the stops (never negative)."""
    if until <= since:
        return timedelta(0)
    total = until - since
    for start, end in merge(stops):
        lo, hi = max(start, since), min(end, until)
        if hi > lo:
            total -= hi - lo
    return total


def due_at(
    since: datetime, amount: timedelta, stops: Iterable[Stop] = (), *, at_a_stop: bool = False
) -> datetime:
    """The first moment at which ``running_time(since, t, stops) >= amount``; with
    ``at_a_stop``, a stop that begins just then puts it off to the stop's end (a time
    bank that runs out as a vacation day begins has not run out)."""
    t, left = since, amount
    for start, end in merge(stops):
        if end <= t:
            continue
        if start > t:
            if start - t > left or (start - t == left and not at_a_stop):
                return t + left
            left -= start - t
        t = end
    return t + left


def counted(
    control: TimeControl, since: datetime, until: datetime, stops: Iterable[Stop] = ()
) -> timedelta:
    """The time a clock of ``control`` ran from ``since`` to ``until``: not the stops,
    nor the weekends under ``weekends off`` (never negative)."""
    every = list(stops)
    if control.weekends_off and until > since:
        every += weekends(control.timezone, since, until)
    return running_time(since, until, every)


def ends_at(
    control: TimeControl, since: datetime, amount: timedelta, stops: Iterable[Stop] = ()
) -> datetime:
    """The first moment at which a clock of ``control`` started at ``since`` has run
    ``amount``."""
    given = list(stops)
    if control.weekends_off:
        # Weekends take at most 2 days of 7: within amount * 7/5 + a week, the clock has
        # run ``amount`` apart from the given stops, so look that far past their end.
        reach = since + amount * 2 + 8 * DAY + sum((e - s for s, e in merge(given)), timedelta(0))
        given += weekends(control.timezone, since, reach)
    return due_at(since, amount, given, at_a_stop=True)


# -- a board's clock --


@dataclass(frozen=True, slots=True)
class Clock:
    """Both players' time on one board: ``left[seat]`` as it stood when that player last
    got the move, ``turn_began`` when the player to move got it, ``moves[seat]`` the
    moves each has made (ICCF's periods count them)."""

    control: TimeControl
    left: tuple[timedelta, timedelta]
    turn_began: datetime
    moves: tuple[int, int] = (0, 0)
    used: tuple[timedelta, timedelta] = (timedelta(0), timedelta(0))  # by all his moves
    added: tuple[timedelta, timedelta] = (timedelta(0), timedelta(0))  # his moves gave

    @classmethod
    def start(cls, control: TimeControl, now: datetime) -> Clock:
        return cls(control, (control.start, control.start), now)

    def time_left(
        self, seat: int, to_move: int, now: datetime, stops: Sequence[Stop] = ()
    ) -> timedelta:
        """What ``seat`` has left at ``now`` (``to_move``'s clock is running)."""
        if seat != to_move:
            return self.left[seat]
        return max(
            self.left[seat] - counted(self.control, self.turn_began, now, stops), timedelta(0)
        )

    def runs_out_at(self, to_move: int, stops: Sequence[Stop] = ()) -> datetime:
        """When the player to move runs out of time, unless he moves (or more stops come)."""
        return ends_at(self.control, self.turn_began, self.left[to_move], stops)

    def moved(self, seat: int, now: datetime, stops: Sequence[Stop] = ()) -> Clock:
        """The clock after ``seat`` moved at ``now``: his time less what the move took,
        then what his control gives him; the other player's clock starts."""
        took = min(counted(self.control, self.turn_began, now, stops), self.left[seat])
        made = self.moves[seat] + 1
        after = self.control.after_move(self.left[seat] - took, made)
        left = _set(self.left, seat, after)
        return replace(
            self,
            left=left,
            turn_began=now,
            moves=_set(self.moves, seat, made),
            used=_set(self.used, seat, self.used[seat] + took),
            added=_set(self.added, seat, self.added[seat] + after - (self.left[seat] - took)),
        )


def _set(pair: tuple[T, T], seat: int, value: T) -> tuple[T, T]:
    return (value, pair[1]) if seat == 0 else (pair[0], value)


def duration_words(amount: timedelta | None) -> str:
    """A time as a player reads it: ``4 days 6 hours``, ``3 hours 20 minutes``, ``45 minutes``."""
    if amount is None:
        return "no limit"
    minutes = max(int(amount.total_seconds()) // 60, 0)
    days, rest = divmod(minutes, 24 * 60)
    hours, mins = divmod(rest, 60)
    parts = [(days, "day"), (hours, "hour")] if days else [(hours, "hour"), (mins, "minute")]
    words = [f"{n} {unit}{'s' if n != 1 else ''}" for n, unit in parts if n]
    return " ".join(words) or "less than a minute"
