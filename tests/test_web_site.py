"""The read-only web site through Starlette's test client, on SQLite and PostgreSQL:
the pages a visitor walks (front, board stepped through its moves and flipped, player,
ratings, archive, records), what hostile visitors get (405, clean 404s, strict headers),
caching (ETag, 304), and that nothing private is ever on a page."""

from __future__ import annotations

import io
import re
from urllib.parse import urljoin

import chess.pgn
import pytest
from conftest import Clock, accepted
from starlette.testclient import TestClient

from pbm.usecases import pages, queries, unit
from pbm.usecases.accounts import Signup
from pbm.usecases.auth import Password, Who
from pbm.usecases.challenges import Challenge
from pbm.usecases.moves import Move, Resign
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
    return TestClient(create_app(site))


def test_a_visitor_finds_a_board_steps_back_and_flips_it(site: Site, web: TestClient) -> None:
    board = accepted(site, Challenge("accasta", "alice", "bob", sender=ALICE))
    play(site, board, 3)
    front = web.get("/")
    assert front.status_code == 200 and f'href="/boards/{board}"' in front.text
    page = web.get(f"/boards/{board}")
    assert page.status_code == 200 and "After turn 3 of 3" in page.text
    assert f'src="/boards/{board}/picture/3-0.svg"' in page.text
    back = re.search(r'id="back" rel="prev" href="([^"]+)"', page.text)
    assert back is not None
    two = web.get(back.group(1))
    assert "After turn 2 of 3" in two.text
    flip = re.search(r'id="flip" href="([^"]+)"', two.text)
    assert flip is not None and flip.group(1).endswith("?seat=1")
    flipped = web.get(flip.group(1))
    assert f"/boards/{board}/picture/2-1.svg" in flipped.text
    svg = web.get(f"/boards/{board}/picture/2-1.svg")
    assert svg.headers["content-type"].startswith("image/svg+xml")
    assert 'data-seat="1"' in svg.text and "<script" not in svg.text


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
            )
            assert "<script" not in text or "attachment" in got.headers["content-disposition"]
        else:
            assert "<script>alert" not in text and "<svg onload" not in text
            links = re.findall(r'(?:href|src)="([^"#]+)"', text)
            todo += [urljoin(path, u) for u in links if u.startswith("/")]
    assert f"/boards/{board}" in seen and "/players/mallory" in seen
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
    unit.run(site, Queue(board, answer), Who("alice", Password("pw")))
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
    assert f'href="/boards/{board}"' not in web.get("/archive?since=2999-01-01").text
    assert web.get("/archive?since=garbage&page=-3").status_code == 200


def test_the_front_page_pages_newest_move_first_then_boards_without_a_move(
    site: Site, web: TestClient, clock: Clock, monkeypatch: pytest.MonkeyPatch
) -> None:
    from pbm.usecases import pages

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
    assert "White alice: 2 days left (to move)" in page
