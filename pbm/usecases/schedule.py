"""When a player's digest comes: times of day in his time zone, across summer time.
Pure values and functions, no database.

``notify UID PW digest 08:00`` (``08:00,20:00``, with a zone: ``08:00 Europe/Berlin``)
is read by ``read_schedule``; ``Schedule.next_after`` is the first of its times after a
moment, in UTC. A time that a switch to summer time skips (02:30 on the night it
begins) comes at the moment the clocks jump past it; one that the switch back gives
twice comes the first time.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, time, timedelta
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

MAX_TIMES = 4  # digests a day
_TIME = re.compile(r"([0-9]{1,2}):([0-9]{2})")
_ZONE = re.compile(r"[A-Za-z][A-Za-z0-9_+\-]*(/[A-Za-z0-9_+\-]+){0,2}")


class BadSchedule(ValueError):
    """A digest's times or zone that cannot be used: ``str()`` says why, for a player."""


@dataclass(frozen=True, slots=True)
class Schedule:
    """A digest's times of day (sorted, each once) in the zone ``zone`` (an IANA name)."""

    times: tuple[time, ...]
    zone: str = "UTC"

    @property
    def times_text(self) -> str:
        """``08:00,20:00``."""
        return ",".join(f"{t:%H:%M}" for t in self.times)

    def words(self) -> str:
        """``08:00 and 20:00 Europe/Berlin time``."""
        times = [f"{t:%H:%M}" for t in self.times]
        listed = ", ".join(times[:-1]) + " and " + times[-1] if len(times) > 1 else times[0]
        return f"{listed} {self.zone} time"

    def next_after(self, moment: datetime) -> datetime:
        """The first of the times strictly after ``moment``, in UTC."""
        zone = ZoneInfo(self.zone)
        day = moment.astimezone(zone).date()
        found = [
            when
            for offset in (-1, 0, 1, 2)
            for t in self.times
            if (when := _utc(datetime.combine(day + timedelta(days=offset), t, zone))) > moment
        ]
        return min(found)


def _utc(local: datetime) -> datetime:
    """A local time as UTC; one the clocks skip (``fold`` 0: the offset before the jump)
    is the moment the jump passes it."""
    return local.astimezone(UTC)


def read_schedule(words: Sequence[str]) -> Schedule:
    """A digest's times and zone as written: ``08:00``, ``08:00,20:00``, ``8:00 20:00``,
    each followed by an optional zone (``Europe/Berlin``; UTC without one)."""
    times: list[time] = []
    zones: list[str] = []
    for part in (p for w in words for p in w.split(",") if p):
        found = _TIME.fullmatch(part)
        if found is None:
            zones.append(part)
            continue
        hours, minutes = int(found.group(1)), int(found.group(2))
        if hours > 23 or minutes > 59:
            raise BadSchedule(
                f"{part} is no time of day: a digest time is HH:MM, the hours from 00 to "
                "23 and the minutes from 00 to 59 (08:00, 20:30)."
            )
        times.append(time(hours, minutes))
    if not times:
        raise BadSchedule("A digest needs a time of day, such as: digest 08:00")
    if len(zones) > 1:
        raise BadSchedule(
            f"A digest has one time zone, not {len(zones)} ({', '.join(zones)}); write the "
            "times first, then the zone: digest 08:00,20:00 Europe/Berlin"
        )
    chosen = sorted(set(times))
    if len(chosen) > MAX_TIMES:
        raise BadSchedule(f"A digest comes at most {MAX_TIMES} times a day.")
    return Schedule(tuple(chosen), zone_name(zones[0]) if zones else "UTC")


def zone_name(text: str) -> str:
    """The IANA name of a time zone as written (``europe/berlin`` -> ``Europe/Berlin``);
    ``BadSchedule`` naming it when there is none such."""
    if text.upper() in ("UTC", "GMT", "Z"):
        return "UTC"
    if _ZONE.fullmatch(text) is None:
        raise BadSchedule(_unknown(text))
    try:
        return ZoneInfo(text).key
    except (ZoneInfoNotFoundError, ValueError, OSError):
        pass
    for candidate in (text.title(), text.capitalize()):
        try:
            return ZoneInfo(candidate).key
        except (ZoneInfoNotFoundError, ValueError, OSError):
            continue
    raise BadSchedule(_unknown(text))


def _unknown(text: str) -> str:
    return (
        f"There is no time zone {text!r}: write one as the IANA names them, such as "
        "Europe/Berlin or America/New_York, or UTC."
    )
