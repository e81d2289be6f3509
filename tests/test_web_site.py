"""The read-only web site through Starlette's test client, on SQLite and PostgreSQL:
the pages a visitor walks (front, board stepped through its moves and flipped, player,
ratings, archive, records), what hostile visitors get (405, clean 404s, strict headers),
caching (ETag, 304), and that nothing private is ever on a page."""

from __future__ import annotations

import io
import logging
import re
from dataclasses import replace
from urllib.parse import urljoin

import chess.pgn
import pytest
from conftest import Clock, accepted
from starlette.testclient import TestClient
from test_inbox_runner import mails_to

from pbm.usecases import queries, unit
from pbm.usecases.accounts import Signup
from pbm.usecases.auth import Password, Who
from pbm.usecases.challenges import Challenge
from pbm.usecases.moves import Move, Resign
from pbm.usecases.proposals import Accept, Undo
from pbm.usecases.queries import pages
from pbm.usecases.queue import Queue
from pbm.usecases.site import Site
from pbm.usecases.talk import Subscribe
from pbm.usecases.timers import PauseClocks, ResumeClocks
from pbm.usecases.vacations import Vacation
from pbm.web.app import KEEP_SECONDS, create_app

ALICE = "alice@example.org"
HOSTILE = '<script>alert(1)</script>"><svg onload=a()> javascript:x() \u202egnp.exe'


def play(site: Site, board: int, turns: int, comment: str = "") -> None:
    for _ in range(turns):
        found = queries.board(site, board)
        mover = found.player_at(found.state.to_move)
        move = str(found.state.legal_moves()[0])
        unit.run(site, Move(board, move, comment=comment), Who(mover, Password("pw")))


@pytest.fixture
def web(site: Site) -> TestClient:
    # The site answers to its own names only (localhost among them): not "testserver".
    return TestClient(create_app(site), base_url="http://localhost")


def test_a_visitor_finds_a_board_steps_back_and_flips_it(site: Site, web: TestClient) -> None:
    board = accepted(site, Challenge("accasta", "alice", "bob", sender=ALICE))
    play(site, board, 3)
    front = web.get("/")
    assert front.status_code == 200 and f'href="/boards/{board}"' in front.text
    page = web.get(f"/boards/{board}")
    assert page.status_code == 200 and "After turn 3 of 3" in page.text
    assert re.search(rf'src="/boards/{board}/picture/3-0\.[0-9a-f]{{12}}\.svg"', page.text)
    back = re.search(r'id="back" rel="prev" href="([^"]+)"', page.text)
    assert back is not None
    two = web.get(back.group(1))
    assert "After turn 2 of 3" in two.text
    flip = re.search(r'id="flip" href="([^"]+)"', two.text)
    assert flip is not None and flip.group(1).endswith("?seat=1")
    flipped = web.get(flip.group(1))
    picture = re.search(rf'src="(/boards/{board}/picture/2-1\.[0-9a-f]{{12}}\.svg)"', flipped.text)
    assert picture is not None
    # Under the picture, what it shows (the game's legend), from the side it is seen from.
    assert "Horse" in page.text and "Seen from White&#39;s side" in page.text
    assert "Seen from Black&#39;s side" in flipped.text
    svg = web.get(picture.group(1))
    assert svg.headers["content-type"].startswith("image/svg+xml")
    assert 'data-seat="1"' in svg.text and "<script" not in svg.text


def picture_of(web: TestClient, board: int, ply: int) -> str:
    """The address of the picture the board's page at ``ply`` shows."""
    page = web.get(f"/boards/{board}/ply/{ply}")
    found = re.search(r'<img src="([^"]+)"', page.text)
    assert found is not None
    return found.group(1)


def test_board_pictures_cached_as_never_changing_change_no_more(
    site: Site, web: TestClient
) -> None:
    """Issue 35, case 12: /boards/1/picture/2-0.svg was sent as ``immutable``, and after an
    accepted undo and another move 2 the same address showed another picture. Now the
    address names the position it shows: another position, another address; the old one
    is a clean 404, and one without a name is sent on (not kept) to the picture of now."""
    board = accepted(site, Challenge("accasta", "alice", "bob", sender=ALICE))
    play(site, board, 2)
    before = picture_of(web, board, 2)
    old = web.get(before)
    assert old.status_code == 200 and "immutable" in old.headers["cache-control"]
    assert picture_of(web, board, 1) != before
    unit.run(site, Undo(board), Who("bob", Password("pw")))
    unit.run(site, Accept(board), Who("alice", Password("pw")))
    found = queries.board(site, board)
    other = [m for m in found.state.legal_moves() if str(m) != found.moves[-1].notation]
    unit.run(site, Move(board, str(other[-1])), Who("bob", Password("pw")))
    after = picture_of(web, board, 2)
    assert after != before
    new = web.get(after)
    assert new.status_code == 200 and new.text != old.text
    gone = web.get(before)
    assert gone.status_code == 404 and "immutable" not in gone.headers.get("cache-control", "")
    # The address without a tag (pages made before): to the picture of now, not kept.
    moved = web.get(f"/boards/{board}/picture/2-0.svg", follow_redirects=False)
    assert moved.status_code == 307 and moved.headers["location"] == after
    assert moved.headers["cache-control"] == "no-cache"
    # The first turn's picture did not change: its address neither.
    assert web.get(f"/boards/{board}/picture/1-0.svg", follow_redirects=False).headers[
        "location"
    ] == picture_of(web, board, 1)
    for bad in ("2-0.zz.svg", "2-0..svg", "9-0.000000000000.svg", "2-5.000000000000.svg"):
        assert web.get(f"/boards/{board}/picture/{bad}").status_code == 404, bad


def test_a_finished_chess_game_gives_its_pgn(site: Site, web: TestClient) -> None:
    board = accepted(site, Challenge("chess", "alice", "bob", sender=ALICE))
    for move, who in (("f3", "alice"), ("e5", "bob"), ("g4", "alice"), ("Qh4", "bob")):
        unit.run(site, Move(board, move), Who(who, Password("pw")))
    page = web.get(f"/boards/{board}")
    assert "Result 0-1" in page.text and f"/boards/{board}/record.pgn" in page.text
    pgn = web.get(f"/boards/{board}/record.pgn")
    assert pgn.status_code == 200 and "attachment" in pgn.headers["content-disposition"]
    game = chess.pgn.read_game(io.StringIO(pgn.text))
    assert game is not None and game.headers["Result"] == "0-1"
    assert game.end().board().is_checkmate()
    assert "@" not in pgn.text  # the site is named by its domain, not an address
    assert web.get(f"/boards/{board}/record.json").json()["tags"]["Result"] == "0-1"


def test_players_ratings_and_the_archive(site: Site, web: TestClient) -> None:
    board = accepted(site, Challenge("accasta", "alice", "bob", sender=ALICE))
    play(site, board, 2)
    unit.run(site, Resign(board), Who("bob", Password("pw")))
    player = web.get("/players/alice")
    assert player.status_code == 200 and f'href="/boards/{board}"' in player.text
    assert "accasta standard" in player.text  # her rating
    assert "alice" in web.get("/ratings").text
    assert f'href="/boards/{board}"' in web.get("/archive?game=accasta&player=bob").text
    assert f'href="/boards/{board}"' not in web.get("/archive?game=chess").text


def test_a_challenge_not_accepted_and_an_unconfirmed_account_are_not_shown(
    site: Site, web: TestClient
) -> None:
    board = unit.run(site, Challenge("accasta", "alice", "bob", sender=ALICE))[0].board
    unit.run(site, Signup("zed", "pw", "zed@example.org"))
    assert web.get(f"/boards/{board}").status_code == 404
    assert web.get("/players/zed").status_code == 404


@pytest.mark.parametrize(
    "path",
    [
        "/nothing",
        "/boards/0",
        "/boards/-1",
        "/boards/abc",
        "/boards/99999999999999999999999",
        "/boards/1/ply/99",
        "/boards/1/picture/0-7.svg",
        "/boards/1/record.exe",
        "/%00",
        "/boards/%00",
        "/static/../../etc/passwd",
        "/players/%00",
    ],
)
def test_what_is_not_there_is_a_clean_404(site: Site, web: TestClient, path: str) -> None:
    accepted(site, Challenge("accasta", "alice", "bob", sender=ALICE))
    got = web.get(path)
    assert got.status_code == 404
    assert "Not found" in got.text and "Traceback" not in got.text


@pytest.mark.parametrize("method", ["POST", "PUT", "DELETE", "PATCH", "OPTIONS", "TRACE"])
def test_only_get_and_head(web: TestClient, method: str) -> None:
    got = web.request(method, "/")
    assert got.status_code == 405 and got.headers["allow"] == "GET, HEAD"


def test_every_answer_has_the_security_headers(site: Site, web: TestClient) -> None:
    for path in ("/", "/nothing", "/static/site.css"):
        headers = web.get(path).headers
        assert "frame-ancestors 'none'" in headers["content-security-policy"]
        assert "unsafe-inline" not in headers["content-security-policy"]
        assert headers["x-content-type-options"] == "nosniff"
        assert headers["referrer-policy"]


def test_a_board_page_is_cached_by_its_version(site: Site, web: TestClient) -> None:
    board = accepted(site, Challenge("accasta", "alice", "bob", sender=ALICE))
    first = web.get(f"/boards/{board}")
    tag = first.headers["etag"]
    assert web.get(f"/boards/{board}", headers={"if-none-match": tag}).status_code == 304
    play(site, board, 1)
    again = web.get(f"/boards/{board}", headers={"if-none-match": tag})
    assert again.status_code == 200 and again.headers["etag"] != tag


def test_a_cached_board_page_is_made_anew_when_its_clocks_stop(
    site: Site, web: TestClient, clock: Clock
) -> None:
    """A vacation or a site pause moves the dates a board page shows (a reminder, the
    loss on time) without a move: a visitor who has the page gets it anew, not a 304."""
    board = accepted(site, Challenge("accasta", "alice", "bob", sender=ALICE))
    play(site, board, 1)  # bob to move
    tag = web.get(f"/boards/{board}").headers["etag"]
    clock.advance(hours=1)
    unit.run(site, Vacation(3), Who("bob", Password("pw")))
    away = web.get(f"/boards/{board}", headers={"if-none-match": tag})
    assert away.status_code == 200 and "on vacation until" in away.text
    clock.advance(hours=1)
    unit.run(site, Vacation(None), Who("bob", Password("pw")))  # back early
    back = web.get(f"/boards/{board}", headers={"if-none-match": away.headers["etag"]})
    assert back.status_code == 200 and "on vacation" not in back.text
    unit.run(site, PauseClocks())
    paused = web.get(f"/boards/{board}", headers={"if-none-match": back.headers["etag"]})
    assert paused.status_code == 200 and paused.text != back.text
    unit.run(site, ResumeClocks())
    again = web.get(f"/boards/{board}", headers={"if-none-match": paused.headers["etag"]})
    assert again.status_code == 200
    assert (
        web.get(f"/boards/{board}", headers={"if-none-match": again.headers["etag"]}).status_code
        == 304
    )  # and nothing else changed since


def test_a_page_the_site_keeps_is_never_older_than_its_max_age(
    site: Site, web: TestClient, clock: Clock
) -> None:
    """The site keeps the pages it made for the next visitor, as a proxy may: what a
    page shows beside its board (a player's rating, won on another board) is at most
    ``max-age`` old, and a move on the board itself shows at once."""
    board = accepted(site, Challenge("accasta", "alice", "bob", sender=ALICE))
    other = accepted(site, Challenge("accasta", "alice", "bob", sender=ALICE))
    page = web.get(f"/boards/{board}")
    assert page.headers["cache-control"] == f"public, max-age={KEEP_SECONDS}"
    rated = re.compile(r">alice</a> \(White, \d+\)")
    assert not rated.search(page.text)
    unit.run(site, Resign(other), Who("bob", Password("pw")))  # alice is rated now
    clock.advance(seconds=KEEP_SECONDS)
    assert rated.search(web.get(f"/boards/{board}").text)
    play(site, board, 1)
    assert "After turn 1 of 1" in web.get(f"/boards/{board}").text


def test_hostile_names_and_comments_are_inert_and_nothing_private_is_shown(
    site: Site, web: TestClient
) -> None:
    unit.run(site, Signup("mallory", "pw", "mallory@evil.example", confirmed=True))
    board = accepted(site, Challenge("accasta", "mallory", "alice", sender="mallory@evil.example"))
    play(site, board, 2, comment=HOSTILE)
    seen: set[str] = set()
    todo = ["/"]
    while todo:  # every page a crawler finds from the front page
        path = todo.pop()
        if path in seen:
            continue
        seen.add(path)
        got = web.get(path)
        assert got.status_code == 200, path
        text, kind = got.text, got.headers["content-type"]
        # No address but the server's own (where to play: the footer's mailto link).
        text = text.replace(site.config.mail.address, "")
        assert "@example.org" not in text and "@evil.example" not in text
        assert "pbm+" not in text  # no reply address or token
        markup = kind.startswith(("text/html", "application/atom+xml"))
        if not markup:  # records and pictures: data, never a page
            assert kind.split(";")[0] in (
                "image/svg+xml",
                "application/json",
                "text/plain",
                "application/x-chess-pgn",
                "text/css",
                "text/javascript",
                "text/calendar",  # a player's deadlines
            )
            assert "<script" not in text or "attachment" in got.headers["content-disposition"]
        else:
            assert "<script>alert" not in text and "<svg onload" not in text
            links = re.findall(r'(?:href|src)="([^"#]+)"', text)
            todo += [urljoin(path, u) for u in links if u.startswith("/")]
    assert f"/boards/{board}" in seen and "/players/mallory" in seen and "/feed" in seen
    page = web.get(f"/boards/{board}").text
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page


def test_a_public_board_is_read_without_its_followers_and_queued_moves(site: Site) -> None:
    """What the site never shows, it never reads: a board's followers and the moves a
    player queued are left out of the board the pages are made from (mail has them)."""
    board = accepted(site, Challenge("accasta", "alice", "bob", sender=ALICE))
    play(site, board, 1)  # bob to move: alice may queue her answer
    unit.run(site, Subscribe(board), Who("carol", Password("pw")))
    mine = queries.board(site, board)
    answer = str(mine.state.play(str(mine.state.legal_moves()[0]))[0].legal_moves()[0])
    unit.run(site, Queue(board, (answer,)), Who("alice", Password("pw")))
    private = queries.board(site, board)
    assert [f.userid for f in private.followers] == ["carol"] and len(private.queue) == 1
    public = pages.board(site, board)
    assert public.followers == () and public.queue == ()
    assert public.version == private.version and public.moves == private.moves


def test_atom_feeds_of_a_board_and_a_player(site: Site, web: TestClient) -> None:
    import xml.etree.ElementTree as ET

    board = accepted(site, Challenge("accasta", "alice", "bob", sender=ALICE))
    play(site, board, 2)
    atom = "{http://www.w3.org/2005/Atom}"
    for path in (f"/boards/{board}/feed", "/players/bob/feed"):
        got = web.get(path)
        assert got.headers["content-type"].startswith("application/atom+xml")
        entries = ET.fromstring(got.text).findall(f"{atom}entry")
        assert len(entries) == 2
        newest = entries[0].find(f"{atom}link")
        assert newest is not None and newest.get("href", "").endswith(f"/boards/{board}/ply/2")
    assert web.get("/players/zed/feed").status_code == 404
    assert web.get("/boards/999/feed").status_code == 404


def test_the_archive_pages_and_filters_by_date(site: Site, web: TestClient) -> None:
    board = accepted(site, Challenge("accasta", "alice", "bob", sender=ALICE))
    unit.run(site, Resign(board), Who("alice", Password("pw")))
    ended = queries.board(site, board).ended_at
    assert ended is not None
    day = ended.date().isoformat()
    assert f'href="/boards/{board}"' in web.get(f"/archive?since={day}&until={day}").text
    assert f'href="/boards/{board}"' not in web.get("/archive?since=2199-01-01").text
    garbage = web.get("/archive?since=garbage&page=-3")
    assert garbage.status_code == 400 and "since=garbage is no date" in garbage.text


@pytest.mark.parametrize("query", ["until=9999-12-31", "since=0001-01-01", "until=2201-01-01"])
def test_a_far_date_in_the_archive_logs_a_traceback_no_more(
    web: TestClient, query: str, caplog: pytest.LogCaptureFixture
) -> None:
    """Issue 35, case 14: ``/archive?until=9999-12-31`` answered 404 and logged a 45-line
    OverflowError each time. Now: 400, a sentence on the page saying which dates the site
    takes, and nothing in the log."""
    got = web.get(f"/archive?{query}")
    assert got.status_code == 400
    assert "takes dates from 2000-01-01 to 2200-12-31, not " in got.text
    assert "Traceback" not in got.text and "Overflow" not in got.text
    assert "content-security-policy" in got.headers
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING or r.exc_info]
    assert web.get("/archive?since=2000-01-01&until=2200-12-31").status_code == 200


def with_web(site: Site, **web: str) -> TestClient:
    """The site's application with ``web`` settings, its client asking as localhost."""
    cfg = replace(site.config, web=replace(site.config.web, **web))
    return TestClient(create_app(Site(site.db, cfg, site.clock)), base_url="http://localhost")


def test_the_host_header_is_trusted_no_more(site: Site, web: TestClient) -> None:
    """Issue 35, case 11: with base_url empty, ``Host: evil.example`` made the board feed
    link to http://evil.example/boards/1/feed and /static redirect to evil.example. Now a
    Host outside the site's names is a 400, and absolute links and redirects are made
    from base_url, else from the listen address."""
    board = accepted(site, Challenge("accasta", "alice", "bob", sender=ALICE))
    play(site, board, 1)
    evil = {"host": "evil.example"}
    for path in (f"/boards/{board}/feed", "/static", "/", "/nothing"):
        got = web.get(path, headers=evil, follow_redirects=False)
        assert got.status_code == 400 and "evil" not in got.text, path
        assert "frame-ancestors 'none'" in got.headers["content-security-policy"]
    for bad in ("", "evil.example:80@localhost", "localhost.evil.example", "[::1"):
        assert web.get("/", headers={"host": bad}).status_code == 400, bad
    # The site's own names: the listen address (127.0.0.1:8080 by default) and localhost.
    for host in ("localhost", "127.0.0.1:8080", "LOCALHOST:1234", "[::1]:8080"):
        feed = web.get(f"/boards/{board}/feed", headers={"host": host})
        assert feed.status_code == 200, host
        assert f'href="http://127.0.0.1:8080/boards/{board}/feed"' in feed.text
        assert "localhost" not in feed.text.lower()
        moved = web.get("/static", headers={"host": host}, follow_redirects=False)
        assert moved.headers["location"] == "http://127.0.0.1:8080/static/"
    # With base_url, that is the site's address, whatever name it was reached by.
    public = with_web(site, base_url="https://games.example.org/", hosts="pbm.example.net")
    for host in ("games.example.org", "pbm.example.net", "127.0.0.1:8080", "localhost"):
        feed = public.get(f"/boards/{board}/feed", headers={"host": host})
        assert feed.status_code == 200, host
        assert f'href="https://games.example.org/boards/{board}/feed"' in feed.text
        moved = public.get("/static", headers={"host": host}, follow_redirects=False)
        assert moved.headers["location"] == "https://games.example.org/static/"
    assert public.get("/", headers=evil).status_code == 400
    # Listening on every address: links name localhost; the machine's public names are
    # for base_url or web.hosts to give.
    everywhere = with_web(site, listen="0.0.0.0:8080", hosts="*.example.net")
    assert everywhere.get("/", headers={"host": "203.0.113.5:8080"}).status_code == 400
    assert everywhere.get("/", headers={"host": "games.example.net"}).status_code == 200
    feed = everywhere.get(f"/boards/{board}/feed")
    assert f'href="http://localhost:8080/boards/{board}/feed"' in feed.text


def test_the_front_page_pages_newest_move_first_then_boards_without_a_move(
    site: Site, web: TestClient, clock: Clock, monkeypatch: pytest.MonkeyPatch
) -> None:
    from pbm.usecases.queries import pages

    monkeypatch.setattr(pages, "PAGE_SIZE", 2)
    boards = [accepted(site, Challenge("accasta", "alice", "bob", sender=ALICE)) for _ in range(5)]
    for board in (boards[3], boards[0], boards[2]):  # moved in this order: 2 newest
        clock.advance(minutes=1)
        play(site, board, 1)
    shown = []
    for number in (1, 2, 3):
        found = pages.front(site, number)
        shown += [b.board for b in found.active]
        assert found.more == (number < 3)
    # Moved, newest first, then the two without a move, newest board first.
    assert shown == [boards[2], boards[0], boards[3], boards[4], boards[1]]
    assert 'rel="next"' in web.get("/?page=2").text


def test_a_board_page_shows_a_time_bank(site: Site, web: TestClient) -> None:
    board = accepted(
        site, Challenge("accasta", "alice", "bob", sender=ALICE, time="fischer 2d+12h max 3d")
    )
    page = web.get(f"/boards/{board}").text
    assert "fischer 2d+12h max 3d (2 days to start, 12 hours more with each move" in page
    assert "White alice: 2 days left; Black bob: 2 days left." in page


def state_of(page: str) -> str:
    """The words of a board page's state paragraph (whose turn, the clock)."""
    found = re.search(r'<p class="state">(.*?)</p>', page, flags=re.S)
    assert found is not None
    return " ".join(re.sub(r"<[^>]+>", " ", found.group(1)).split())


def test_the_public_board_page_speaks_of_the_players_not_to_you(
    site: Site, web: TestClient, clock: Clock
) -> None:
    """Issue 36, point 9: board 7 (Fischer) read "Black bob: 4 days 23 hours left (to
    move); the bank grows by 1 day 12 hours with your move", and gave the reminder and
    the time-out twice: the board mail's clock lines, which speak to their reader. A page
    for everyone speaks of the players, and says each fact once."""
    board = accepted(
        site,
        Challenge(
            "accasta", "alice", "bob", sender=ALICE, time="fischer 10d+36h max 10d weekends off"
        ),
    )
    play(site, board, 1)
    clock.advance(hours=1)
    state = state_of(web.get(f"/boards/{board}").text)
    assert not re.search(r"\byour?\b", state, flags=re.I), state
    assert state.count("A reminder on") == 1 and state.count("time runs out on") == 1
    for said_once in ("10 days to start", "1 day 12 hours", "Black bob:", "White alice:"):
        assert state.count(said_once) == 1, (said_once, state)
    assert "Reminder:" not in state and "Time out:" not in state  # the mail's labels
    assert re.search(r"Black bob: \d+ days? .*left\.", state), state
    assert "Time control: fischer 10d+36h max 10d weekends off (10 days to start, 1 day " in state
    # The board mail, to its reader, still says what his move gives.
    mail = " ".join(mails_to(site.db, "bob@example.org")[-1].body.split())
    assert "(to move); the bank grows by 1 day 12 hours with your move" in mail


ATOM = "{http://www.w3.org/2005/Atom}"


def feed_entries(web: TestClient, path: str) -> list[tuple[str, str]]:
    """The (title, link) of each entry of the Atom feed at ``path``, newest first."""
    import xml.etree.ElementTree as ET

    got = web.get(path)
    assert got.status_code == 200 and got.headers["content-type"].startswith("application/atom")
    out = []
    for entry in ET.fromstring(got.text).findall(f"{ATOM}entry"):
        link = entry.find(f"{ATOM}link")
        assert link is not None
        out.append((entry.findtext(f"{ATOM}title") or "", link.get("href", "")))
    return out


def test_the_first_hour_on_the_web_site(site: Site, web: TestClient) -> None:
    """Issue 36, point 11, as a newcomer met it: the mail address to play was nowhere on
    the site; stepping through the positions had no first and last; the "?" of "1516?"
    said nothing; ``/archive?from=2026-13-45`` showed every game; the 404 page's title was
    " - pbm"; there was no feed of finished games, and a board's feed never said that the
    game ended."""
    board = accepted(site, Challenge("accasta", "alice", "bob", sender=ALICE))
    play(site, board, 3)
    # Where to play: the server's address, a mailto link, on every page.
    front = web.get("/").text
    assert (
        'send <code>help</code> to <a href="mailto:pbm@example.org?subject=help">'
        "pbm@example.org</a>" in front
    )
    # First and last, beside back and forward (and Home, End, arrows: static/step.js).
    middle = web.get(f"/boards/{board}/ply/1?seat=1").text
    assert f'id="first" href="/boards/{board}/ply/0?seat=1"' in middle
    assert f'id="last" href="/boards/{board}/ply/3?seat=1"' in middle
    assert 'id="first"' not in web.get(f"/boards/{board}/ply/0").text
    assert 'id="last"' not in web.get(f"/boards/{board}").text
    script = web.get("/static/step.js").text
    assert 'Home: "first"' in script and 'End: "last"' in script
    # The provisional rating's "?", explained where it is shown.
    unit.run(site, Resign(board), Who("bob", Password("pw")))
    ratings = web.get("/ratings").text
    assert '1516<abbr title="provisional: fewer than 20 rated games">?</abbr>' in ratings
    assert "marks a provisional rating: its player has fewer than 20 rated games" in ratings
    # A date that is none, or a filter the archive does not know: a sentence, not every game.
    for query, said in (
        (
            "from=2026-13-45",
            "The archive does not know from; it takes game, variant, player, "
            "since, until and page (dates as YYYY-MM-DD).",
        ),
        ("since=2026-13-45", "since=2026-13-45 is no date: write it as YYYY-MM-DD."),
        ("until=2026-02-30", "until=2026-02-30 is no date: write it as YYYY-MM-DD."),
    ):
        got = web.get(f"/archive?{query}")
        assert got.status_code == 400 and said in got.text, query
        assert f'href="/boards/{board}"' not in got.text
        assert "<title>Not understood - pbm</title>" in got.text
    # Every error page has a title.
    missing = web.get("/boards/999")
    assert missing.status_code == 404 and "<title>Not found - pbm</title>" in missing.text
    assert "<title>Not allowed - pbm</title>" in web.post("/").text
    # The finished games as a feed, found from the front page and the archive.
    head = '<link rel="alternate" type="application/atom+xml" title="Finished games" href="/feed">'
    assert head in web.get("/").text and head in web.get("/archive").text
    assert 'href="/feed"' in web.get("/archive").text.split("</head>")[1]
    (end,) = feed_entries(web, "/feed")
    assert end == (
        f"Accasta Board {board} ended: alice (White) wins (resign): 1-0",
        f"http://127.0.0.1:8080/boards/{board}",
    )
    # A board's feed: its end first, then its turns.
    entries = feed_entries(web, f"/boards/{board}/feed")
    assert entries[0] == end and len(entries) == 4
    assert entries[1][1].endswith(f"/boards/{board}/ply/3")
    # A game in play is in no feed of finished games; a cancelled one is not finished.
    other = accepted(site, Challenge("chess", "carol", "bob", sender="carol@example.org"))
    unit.run(site, Move(other, "e4"), Who("carol", Password("pw")))
    assert [t for t, _ in feed_entries(web, "/feed")] == [end[0]]
