"""Deadlines in the calendar (issue 41): ``/players/UID/deadlines.ics`` on the web site,
read back by ``icalendar`` (with its RFC 5545 checks) and by another, independent
parser (vobject, validating), one event per board waiting for the player's move, at
its time-out, with an alarm a day before and the board's page; nothing private; it
changes as the clocks change: a move removes its event, a vacation moves it."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

import icalendar
import pytest
import vobject
from conftest import Clock, accepted
from starlette.testclient import TestClient

from pbm.config import WebConfig
from pbm.usecases import queries, unit
from pbm.usecases.auth import Password, Who
from pbm.usecases.challenges import Challenge
from pbm.usecases.deadlines import Deadline, calendar_of
from pbm.usecases.moves import Move
from pbm.usecases.site import Site
from pbm.usecases.talk import Chat
from pbm.usecases.vacations import Vacation
from pbm.web.app import create_app

PW = Password("pw")
ALICE, BOB = "alice@example.org", "bob@example.org"
BASE = "https://games.example.org"
SECRET_WORDS = "a chat nobody else may read"


@pytest.fixture
def here(site: Site) -> Site:
    return replace(site, config=replace(site.config, web=WebConfig(base_url=BASE)))


@pytest.fixture
def web(here: Site) -> TestClient:
    return TestClient(create_app(here), base_url="http://localhost")


def feed(web: TestClient, userid: str = "alice") -> icalendar.Calendar:
    answer = web.get(f"/players/{userid}/deadlines.ics")
    assert answer.status_code == 200
    assert answer.headers["content-type"] == "text/calendar; charset=utf-8"
    calendar = icalendar.Calendar.from_ical(answer.content)
    assert isinstance(calendar, icalendar.Calendar)
    if calendar.walk("VEVENT"):
        calendar.validate()  # PRODID, VERSION, a component: what icalendar checks
    # Another parser, with its own validation of each component.
    other = vobject.readOne(answer.text, validate=True)
    assert other.name == "VCALENDAR"
    assert len(getattr(other, "vevent_list", [])) == len(calendar.walk("VEVENT"))
    return calendar


def events(calendar: icalendar.Calendar) -> dict[str, icalendar.Event]:
    return {str(e["UID"]): e for e in calendar.walk("VEVENT")}


def first_move(site: Site, board: int, userid: str, comment: str = "") -> None:
    found = queries.board(site, board).state.example_move()
    assert found is not None
    unit.run(site, Move(board, found, comment=comment), Who(userid, PW))


def test_one_event_per_board_waiting_at_its_time_out(
    here: Site, web: TestClient, clock: Clock
) -> None:
    one = accepted(here, Challenge("accasta", "bob", "alice", sender=BOB))
    two = accepted(here, Challenge("chess", "bob", "alice", sender=BOB, time="days 3"))
    mine = accepted(here, Challenge("accasta", "alice", "bob", sender=ALICE))
    first_move(here, one, "bob", comment=SECRET_WORDS)
    first_move(here, two, "bob")
    first_move(here, mine, "alice")  # bob to move: not alice's deadline
    unit.run(here, Chat(one, SECRET_WORDS), Who("bob", PW))
    found = events(feed(web))
    assert sorted(found) == [
        f"pbm-board-{one}-ply-2@games.example.org",
        f"pbm-board-{two}-ply-2@games.example.org",
    ]
    event = found[f"pbm-board-{two}-ply-2@games.example.org"]
    due = clock.now + timedelta(days=3)
    assert event.decoded("DTSTART") == due and event.decoded("DTEND") == due
    assert str(event["URL"]) == f"{BASE}/boards/{two}"
    assert f"{BASE}/boards/{two}" in str(event["DESCRIPTION"])
    assert str(event["SUMMARY"]) == f"Time out: Chess Board {two}, alice to move"
    [alarm] = event.walk("VALARM")
    assert alarm.decoded("TRIGGER") == -timedelta(days=1) and str(alarm["ACTION"]) == "DISPLAY"
    classic = found[f"pbm-board-{one}-ply-2@games.example.org"]
    assert classic.decoded("DTSTART") == clock.now + timedelta(days=21)
    # bob's deadlines are his own: the board where alice moved.
    assert sorted(events(feed(web, "BOB"))) == [f"pbm-board-{mine}-ply-2@games.example.org"]


def test_nothing_private_is_in_it(here: Site, web: TestClient) -> None:
    board = accepted(here, Challenge("accasta", "bob", "alice", sender=BOB))
    first_move(here, board, "bob", comment=SECRET_WORDS)
    unit.run(here, Chat(board, SECRET_WORDS), Who("bob", PW))
    text = web.get("/players/alice/deadlines.ics").text
    for private in ("@example.org", SECRET_WORDS, "pw", here.config.mail.secret, "pbm+"):
        assert private not in text
    # A player the site does not show has no calendar.
    assert web.get("/players/nobody/deadlines.ics").status_code == 404
    assert web.get("/players/..%2f..%2fetc/deadlines.ics").status_code == 404


def test_it_changes_as_the_clocks_change(here: Site, web: TestClient, clock: Clock) -> None:
    board = accepted(here, Challenge("accasta", "bob", "alice", sender=BOB, time="days 5"))
    first_move(here, board, "bob")
    uid = f"pbm-board-{board}-ply-2@games.example.org"
    assert events(feed(web))[uid].decoded("DTSTART") == clock.now + timedelta(days=5)
    # A vacation puts it off by as long: the same event, moved (its UID is the same).
    clock.advance(hours=1)
    unit.run(here, Vacation(2), Who("alice", PW))
    moved = events(feed(web))[uid]
    assert moved.decoded("DTSTART") == clock.now - timedelta(hours=1) + timedelta(days=7)
    # A move removes it: the next deadline of the board is bob's.
    clock.advance(hours=1)
    first_move(here, board, "alice")
    assert events(feed(web)) == {}
    assert f"pbm-board-{board}-ply-3@games.example.org" in events(feed(web, "bob"))


def test_the_player_page_links_to_it(here: Site, web: TestClient) -> None:
    page = web.get("/players/alice").text
    assert 'href="/players/alice/deadlines.ics"' in page


def test_the_feed_is_built_by_icalendar_from_values() -> None:
    now = datetime(2026, 3, 1, tzinfo=UTC)
    due = now + timedelta(days=2)
    text = calendar_of(
        "alice", [Deadline(7, 12, 6, "Accasta Board 7", "alice", "bob", due)], BASE, "x", now
    )
    calendar = icalendar.Calendar.from_ical(text)
    calendar.validate()
    assert str(calendar["PRODID"]) == "-//pbm//correspondence deadlines//EN"
    assert str(calendar["X-WR-CALNAME"]) == "pbm: alice's deadlines"
    [event] = calendar.walk("VEVENT")
    assert str(event["UID"]) == "pbm-board-7-ply-12@x" and event.decoded("DTSTART") == due
    assert "alice's move 6 on Accasta Board 7 against bob" in str(event["DESCRIPTION"])
    # An empty one still reads (a calendar client shows no events).
    empty = icalendar.Calendar.from_ical(calendar_of("alice", [], BASE, "x", now))
    assert empty.walk("VEVENT") == []
