"""When a digest comes (issue 41): times of day in a time zone, across the switches to
and from summer time, and the sentences bad times and zones get."""

from __future__ import annotations

from datetime import UTC, datetime, time, timedelta
from zoneinfo import ZoneInfo

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pbm.usecases.schedule import BadSchedule, Schedule, read_schedule

BERLIN = read_schedule(["08:00", "Europe/Berlin"])


def utc(text: str) -> datetime:
    return datetime.fromisoformat(text).replace(tzinfo=UTC)


def test_eight_in_berlin_is_seven_utc_in_winter_and_six_in_summer() -> None:
    assert Schedule((time(8, 0),), "Europe/Berlin") == BERLIN
    assert BERLIN.next_after(utc("2026-03-27 12:00")) == utc("2026-03-28 07:00")
    # Summer time begins on 29 March 2026 at 02:00: 08:00 is 06:00 UTC from that day.
    assert BERLIN.next_after(utc("2026-03-28 07:00")) == utc("2026-03-29 06:00")
    assert BERLIN.next_after(utc("2026-03-29 06:00")) == utc("2026-03-30 06:00")
    # ... and ends on 25 October: 07:00 UTC again.
    assert BERLIN.next_after(utc("2026-10-24 06:00")) == utc("2026-10-25 07:00")


def test_times_the_switch_skips_or_gives_twice_come_once() -> None:
    night = read_schedule(["02:30", "Europe/Berlin"])
    # 02:30 does not exist on 29 March: it comes when the clocks jump past it.
    assert night.next_after(utc("2026-03-28 23:00")) == utc("2026-03-29 01:30")
    # On 25 October it is there twice: the first time only.
    assert night.next_after(utc("2026-10-24 23:00")) == utc("2026-10-25 00:30")
    assert night.next_after(utc("2026-10-25 00:30")) == utc("2026-10-26 01:30")


def test_two_times_a_day_and_the_ways_of_writing_them() -> None:
    both = read_schedule(["8:00,", "20:00", "america/new_york"])
    assert both.times_text == "08:00,20:00" and both.zone == "America/New_York"
    assert both.words() == "08:00 and 20:00 America/New_York time"
    assert read_schedule(["20:00,08:00"]).times_text == "08:00,20:00"
    assert read_schedule(["08:00"]).zone == "UTC"
    assert read_schedule(["08:00", "utc"]).zone == "UTC"


@pytest.mark.parametrize(
    ("words", "says"),
    [
        (["25:00"], "25:00 is no time of day: a digest time is HH:MM, the hours from 00 to 23"),
        (["08:61"], "08:61 is no time of day"),
        (["08:00", "Mars/Olympus_Mons"], "There is no time zone 'Mars/Olympus_Mons'"),
        (["08:00", "../../etc/passwd"], "There is no time zone '../../etc/passwd'"),
        (["08:00", "Europe/Berlin", "Asia/Tokyo"], "A digest has one time zone, not 2"),
        ([], "A digest needs a time of day"),
        (["1:00", "2:00", "3:00", "4:00", "5:00"], "A digest comes at most 4 times a day."),
    ],
)
def test_bad_times_and_zones_get_a_sentence(words: list[str], says: str) -> None:
    with pytest.raises(BadSchedule) as info:
        read_schedule(words)
    assert str(info.value).startswith(says)


ZONES = ["UTC", "Europe/Berlin", "America/New_York", "Australia/Sydney", "Asia/Kolkata"]


@given(
    moment=st.datetimes(
        min_value=datetime(2000, 1, 1), max_value=datetime(2100, 1, 1), timezones=st.just(UTC)
    ),
    times=st.lists(st.times(), min_size=1, max_size=4, unique=True),
    zone=st.sampled_from(ZONES),
)
def test_the_next_digest_is_soon_after_and_at_one_of_the_times(
    moment: datetime, times: list[time], zone: str
) -> None:
    chosen = tuple(sorted(t.replace(second=0, microsecond=0) for t in times))
    schedule = Schedule(tuple(dict.fromkeys(chosen)), zone)
    found = schedule.next_after(moment)
    assert moment < found <= moment + timedelta(days=1, hours=2)
    local = found.astimezone(ZoneInfo(zone)).time()
    # At one of the times, or where a switch to summer time pushed one past its gap.
    assert (
        local.replace(tzinfo=None) in schedule.times
        or found.astimezone(ZoneInfo(zone)).utcoffset()
        != (found - timedelta(hours=2)).astimezone(ZoneInfo(zone)).utcoffset()
    )
