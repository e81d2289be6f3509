"""Time controls (issue 24): the specs players write, and the clock arithmetic of each
kind, weekends off across a daylight-saving change included; a property test holds the
clock to an hour-by-hour count of the time that ran."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pbm.timecontrol import (
    BadTimeControl,
    Clock,
    Kind,
    TimeControl,
    counted,
    due_at,
    duration_words,
    ends_at,
    parse,
    weekends,
)

DAY, HOUR = timedelta(days=1), timedelta(hours=1)
BERLIN = ZoneInfo("Europe/Berlin")


@pytest.mark.parametrize(
    ("spec", "canonical"),
    [
        ("classic 7/21", "classic 7/21"),
        ("Classic", "classic 7/21"),
        ("days 3", "days 3"),
        ("fischer 10d+36h max 10d", "fischer 10d+36h max 10d"),
        ("FISCHER 10d + 36h", "fischer 10d+36h max 10d"),  # the cap is the start
        ("fischer 2d+12h max 5d", "fischer 2d+12h max 5d"),
        ("iccf 10/50d", "ICCF 10/50d"),
        ("ICCF 10/50", "ICCF 10/50d"),
        ("days 3 weekends off", "days 3 weekends off"),
        ("days 3 weekends off UTC", "days 3 weekends off"),
        (
            "fischer 10d+36h weekends off in Europe/Berlin",
            "fischer 10d+36h max 10d weekends off Europe/Berlin",
        ),
    ],
)
def test_a_spec_is_read_and_written_back(spec: str, canonical: str) -> None:
    control = parse(spec)
    assert control.spec == canonical
    assert parse(canonical) == control


@pytest.mark.parametrize(
    "spec",
    [
        "",
        "blitz 5+3",
        "days 0",
        "days 31",
        "days three",
        "classic 21/7",
        "fischer 10d",
        "fischer 10x+1d",
        "fischer 5d+1d max 2d",
        "ICCF 0/50d",
        "ICCF ten/50d",
        "days 3 weekends off Mars/Olympus",
    ],
)
def test_a_bad_spec_is_refused_with_the_valid_forms(spec: str) -> None:
    with pytest.raises(BadTimeControl) as refused:
        parse(spec)
    message = str(refused.value)
    for form in (
        "classic 7/21",
        "days 3",
        "fischer 10d+36h max 10d",
        "ICCF 10/50d",
        "weekends off",
    ):
        assert form in message


def controls() -> st.SearchStrategy[TimeControl]:
    days = st.integers(1, 30).map(lambda n: n * DAY)
    hours = st.integers(1, 72).map(lambda n: n * HOUR)
    kinds = st.one_of(
        st.tuples(st.integers(1, 10), st.integers(11, 60)).map(lambda t: TimeControl.classic(*t)),
        days.map(lambda d: TimeControl(Kind.DAYS, d)),
        st.tuples(days, hours, st.integers(0, 10)).map(
            lambda t: TimeControl(Kind.FISCHER, t[0], t[1], t[0] + t[2] * DAY)
        ),
        st.tuples(st.integers(1, 40), days).map(
            lambda t: TimeControl(Kind.ICCF, t[1], t[1], moves=t[0])
        ),
    )
    return st.tuples(
        kinds, st.sampled_from([None, "UTC", "Europe/Berlin", "America/New_York"])
    ).map(
        lambda t: (
            t[0]
            if t[1] is None
            else TimeControl(**{**_fields(t[0]), "weekends_off": True, "timezone": t[1]})
        )
    )


def _fields(control: TimeControl) -> dict[str, object]:
    return {name: getattr(control, name) for name in TimeControl.__slots__}


@given(controls())
def test_every_control_s_spec_reads_back_as_itself(control: TimeControl) -> None:
    assert parse(control.spec) == control


def test_days_per_move_gives_the_days_again_with_every_move() -> None:
    control = parse("days 3")
    start = datetime(2026, 5, 4, 9, 0, tzinfo=UTC)
    clock = Clock.start(control, start)
    assert clock.runs_out_at(0) == start + 3 * DAY
    clock = clock.moved(0, start + 2 * DAY + 20 * HOUR)
    assert clock.left == (3 * DAY, 3 * DAY)
    assert clock.runs_out_at(1) == start + 5 * DAY + 20 * HOUR


def test_a_fischer_bank_grows_with_each_move_and_is_capped() -> None:
    control = parse("fischer 10d+36h max 10d")
    start = datetime(2026, 5, 4, 9, 0, tzinfo=UTC)
    clock = Clock.start(control, start)
    clock = clock.moved(0, start + 12 * HOUR)  # 10d - 12h + 36h: capped at 10d
    assert clock.left[0] == 10 * DAY
    clock = clock.moved(1, start + 12 * HOUR + 4 * DAY)  # 10d - 4d + 36h
    assert clock.left[1] == 7 * DAY + 12 * HOUR
    assert clock.time_left(0, 0, clock.turn_began + DAY) == 9 * DAY
    assert "grows by 1 day 12 hours" in control.growth_words()


def test_iccf_gives_a_new_period_after_every_tenth_move_and_time_carries_over() -> None:
    control = parse("ICCF 10/50d")
    now = datetime(2026, 1, 1, tzinfo=UTC)
    clock = Clock.start(control, now)
    for move in range(1, 11):  # White takes 4 days a move, Black 1
        now += 4 * DAY
        clock = clock.moved(0, now)
        if move < 10:
            assert clock.left[0] == 50 * DAY - move * 4 * DAY
        now += DAY
        clock = clock.moved(1, now)
    assert clock.left[0] == 50 * DAY - 40 * DAY + 50 * DAY
    assert clock.left[1] == 50 * DAY - 10 * DAY + 50 * DAY


def test_weekends_off_stand_still_across_the_change_to_summer_time() -> None:
    """Berlin went to summer time on Sunday 29 March 2026: that weekend is 47 hours long,
    and a clock with 2 days left on Friday noon runs out on Tuesday noon, local time."""
    control = parse("days 2 weekends off Europe/Berlin")
    friday_noon = datetime(2026, 3, 27, 12, 0, tzinfo=BERLIN)
    [weekend] = weekends("Europe/Berlin", friday_noon, friday_noon + 2 * DAY)
    assert weekend == (
        datetime(2026, 3, 27, 23, 0, tzinfo=UTC),
        datetime(2026, 3, 29, 22, 0, tzinfo=UTC),
    )
    assert weekend[1] - weekend[0] == 47 * HOUR
    out = Clock.start(control, friday_noon).runs_out_at(0)
    assert out == datetime(2026, 3, 31, 12, 0, tzinfo=BERLIN)
    assert counted(control, friday_noon, out) == 2 * DAY
    # The same in naive UTC, as the database keeps times.
    naive = friday_noon.astimezone(UTC).replace(tzinfo=None)
    assert ends_at(control, naive, 2 * DAY) == datetime(2026, 3, 31, 10, 0)
    # And in autumn (25 October 2026), the weekend is 49 hours.
    [autumn] = weekends("Europe/Berlin", datetime(2026, 10, 23), datetime(2026, 10, 24))
    assert autumn[1] - autumn[0] == 49 * HOUR


def test_stops_and_weekends_together() -> None:
    control = parse("days 3 weekends off")
    monday = datetime(2026, 6, 1, 0, 0)
    vacation = [(monday + DAY, monday + 3 * DAY)]  # Tuesday and Wednesday away
    # Monday, Thursday, Friday: the 3 days are up as the weekend begins, which puts the
    # end off to its end (as a vacation day spent when a bank runs out does).
    assert ends_at(control, monday, 3 * DAY, vacation) == monday + 7 * DAY
    assert due_at(monday, 3 * DAY, vacation) == monday + 5 * DAY
    assert ends_at(control, monday, 3 * DAY + HOUR, vacation) == monday + 7 * DAY + HOUR


@pytest.mark.parametrize(
    ("amount", "words"),
    [
        (4 * DAY + 6 * HOUR, "4 days 6 hours"),
        (DAY, "1 day"),
        (3 * HOUR + timedelta(minutes=20), "3 hours 20 minutes"),
        (timedelta(minutes=45), "45 minutes"),
        (timedelta(seconds=20), "less than a minute"),
    ],
)
def test_time_in_words(amount: timedelta, words: str) -> None:
    assert duration_words(amount) == words


# -- the property: the clock's count is the hour-by-hour count of the time that ran --

T0 = datetime(2026, 3, 20, 0, 0)  # a Friday before a change to summer time


def running_hours(
    control: TimeControl, since: datetime, until: datetime, stops: list[tuple[datetime, datetime]]
) -> int:
    """The hours from ``since`` to ``until`` in no stop and (weekends off) on no weekend
    day where the control's clock stands, counted one by one."""
    zone = ZoneInfo(control.timezone) if control.timezone != "UTC" else UTC
    hours, t = 0, since
    while t < until:
        local = t.replace(tzinfo=UTC).astimezone(zone)
        weekend = control.weekends_off and local.weekday() >= 5
        if not weekend and not any(a <= t < b for a, b in stops):
            hours += 1
        t += HOUR
    return hours


@settings(max_examples=60, deadline=None)
@given(
    controls().filter(lambda c: c.timezone in ("UTC", "Europe/Berlin")),
    st.lists(st.integers(1, 60), min_size=1, max_size=12),  # hours each move takes
    st.lists(st.tuples(st.integers(0, 300), st.integers(1, 48)), max_size=4),  # stops
)
def test_time_used_and_left_add_up_and_never_go_negative(
    control: TimeControl, waits: list[int], stops_at: list[tuple[int, int]]
) -> None:
    stops = [(T0 + a * HOUR, T0 + (a + n) * HOUR) for a, n in stops_at]
    clock = Clock.start(control, T0)
    now, seat = T0, 0
    used = [0, 0]
    for wait in waits:
        if clock.time_left(seat, seat, now + wait * HOUR, stops) == timedelta(0):
            break  # he ran out: the game ends on time
        ran = running_hours(control, now, now + wait * HOUR, stops)
        now += wait * HOUR
        before = clock.left[seat]
        clock = clock.moved(seat, now, stops)
        used[seat] += ran
        assert clock.used[seat] == used[seat] * HOUR
        assert before - ran * HOUR > timedelta(0)
        seat = 1 - seat
    for s in (0, 1):
        assert clock.left[s] >= timedelta(0)
        assert clock.used[s] + clock.left[s] == control.start + clock.added[s]
    # When the player to move runs out, his clock has run exactly his time.
    out = clock.runs_out_at(seat, stops)
    assert counted(control, clock.turn_began, out, stops) == clock.left[seat]
    assert clock.time_left(seat, seat, out, stops) == timedelta(0)
