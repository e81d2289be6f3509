"""The events' pages of the web site, on SQLite and PostgreSQL: the list with the leagues,
an event's standings and crosstable (each result a link to its game), its boards, a
league's divisions, the Atom feeds, and clean 404s."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest
from conftest import Clock
from starlette.testclient import TestClient

from pbm.usecases import unit
from pbm.usecases.accounts import Signup
from pbm.usecases.auth import Password, Who
from pbm.usecases.events.event_pages import event as event_page
from pbm.usecases.events.leagues import JoinLeague, SeasonChange
from pbm.usecases.events.tournaments import CreateEvent, JoinEvent, newest
from pbm.usecases.moves import Resign
from pbm.usecases.site import Site
from pbm.web.app import create_app

PLAYERS = [f"p{i}" for i in range(1, 8)]


@pytest.fixture
def site(db: object, config: object, clock: Clock) -> Site:
    s = Site(db, config, clock)  # type: ignore[arg-type]
    for uid in PLAYERS:
        unit.run(s, Signup(uid, "pw", f"{uid}@example.org", confirmed=True))
    return s


@pytest.fixture
def web(site: Site) -> TestClient:
    return TestClient(create_app(site), base_url="http://localhost")


def who(uid: str) -> Who:
    return Who(uid, Password("pw"))


def test_an_event_page_shows_standings_crosstable_and_boards(site: Site, web: TestClient) -> None:
    unit.run(site, CreateEvent("accasta", 4, time="classic 2/3", name="Autumn <cup>"))
    number = newest(site)
    empty = web.get("/tournaments")
    assert "Autumn &lt;cup&gt;" in empty.text and "open: 0 of 4" in empty.text
    for uid in PLAYERS[:4]:
        unit.run(site, JoinEvent(number, f"{uid}@example.org"), who(uid))
    page = event_page(site, number)
    first = page.boards[0]
    loser = first.black
    unit.run(site, Resign(first.board), who(loser))
    shown = web.get(f"/tournaments/{number}")
    assert shown.status_code == 200
    # The winner's cell against the loser is a 1 that links to the game.
    assert f'<a href="/boards/{first.board}">1</a>' in shown.text
    assert f'<a href="/boards/{first.board}">0</a>' in shown.text
    assert shown.text.count('href="/boards/') >= 2 * 6 + 6  # each result twice, each board
    for heading in ("Points", "Wins", "SB", "DE"):
        assert f"<th>{heading}</th>" in shown.text
    feed = web.get(f"/tournaments/{number}/feed")
    assert feed.headers["content-type"].startswith("application/atom+xml")
    titles = [t.text for t in ET.fromstring(feed.text).iter("{http://www.w3.org/2005/Atom}title")]
    assert any("1-0" in (t or "") or "0-1" in (t or "") for t in titles)
    assert any("started" in (t or "") for t in titles)
    listing = ET.fromstring(web.get("/tournaments/feed").text)
    assert len(list(listing.iter("{http://www.w3.org/2005/Atom}entry"))) == 2  # opened, started
    assert web.get("/tournaments/999").status_code == 404
    assert web.get("/tournaments/0").status_code == 404


def test_a_league_page_shows_its_divisions(site: Site, web: TestClient) -> None:
    for uid in PLAYERS:
        unit.run(site, JoinLeague("accasta", f"{uid}@example.org"), who(uid))
    unit.run(site, SeasonChange("accasta"))
    listing = web.get("/tournaments")
    assert 'href="/leagues/accasta?variant=standard">Accasta league (standard)</a>: 7 players' in (
        listing.text
    )
    page = web.get("/leagues/accasta")
    assert page.status_code == 200 and page.text.count('class="crosstable"') == 1  # 7: one division
    assert "season 1, division 1" in page.text
    assert web.get("/leagues/accasta/feed").status_code == 200
    assert web.get("/leagues/nosuchgame").status_code == 404
