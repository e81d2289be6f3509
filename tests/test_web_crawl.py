"""A crawler walks every page of a generated site of 600 games (the benchmark's bulk
fill: players, games in play and finished, their moves) from the front page: every list
page, board, player, player's feed and calendar, the feed and records of every 10th
board and every position (both sides, with its picture) of every 300th. No page holds
an email address (but the server's own), a reply address or the site's secret, and
every link leads to a page that is there."""

from __future__ import annotations

import asyncio
import random
import re
import sys
from pathlib import Path
from urllib.parse import urljoin, urlsplit

import httpx2

from pbm.config import Config, DatabaseConfig, MailConfig
from pbm.store.engine import Database, init_db
from pbm.usecases.site import Site
from pbm.web.app import create_app

sys.path.insert(0, str(Path(__file__).parent.parent / "scripts"))
from bench_store import fill, playout

SECRET = "crawl-secret-0123456789"
SERVER = "pbm@games.test"  # the server's address
ADDRESS = re.compile(r"[\w.+-]+@[\w-]+(\.[\w-]+)+")  # an email address (CSS's @media is none)


GAMES = 600
POSITIONS_OF_EVERY = 300  # every position of each 300th board, from both sides
RECORDS_OF_EVERY = 10  # the records and feed of each 10th board


def test_no_page_of_a_600_game_site_shows_an_address_or_a_token(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'pbm.sqlite3'}"
    db = init_db(url)
    rng = random.Random(7)
    pool = [playout(rng, "standard" if i % 4 else "pari", 60) for i in range(12)]
    counts = fill(db, GAMES, players=60, pool=pool, seed=7)
    assert counts["games"] == GAMES
    db.close()
    boards, seen = asyncio.run(crawl(url))
    assert boards == GAMES  # every board is reached from the lists
    assert len(seen) > 900, len(seen)  # lists, boards, players, positions, records


async def crawl(url: str) -> tuple[int, set[str]]:
    """Walk the site from its front page: the number of boards reached, the pages seen."""
    db = Database.open(url, create=False)
    config = Config(
        database=DatabaseConfig(url=url), mail=MailConfig(address=SERVER, secret=SECRET)
    )
    # In the crawler's own event loop (no thread a request, as the test client has: a
    # crawl of some thousands of pages takes seconds, not minutes).
    transport = httpx2.ASGITransport(app=create_app(Site(db, config)))
    web = httpx2.AsyncClient(transport=transport, base_url="http://localhost")
    seen: set[str] = set()
    todo = ["/"]
    boards = 0
    while todo:
        path = todo.pop()
        if path in seen:
            continue
        seen.add(path)
        got = await web.get(path)
        assert got.status_code == 200, path
        text = got.text
        if got.headers["content-type"].startswith("text/calendar"):
            # An event's UID is unique@host, at the site's domain (RFC 5545 3.8.4.7).
            text = re.sub(r"(?m)^UID:.*$", "", text)
        # No address but the server's own (where to play: the footer's mailto link).
        assert ADDRESS.search(text.replace(SERVER, "")) is None, path
        assert "pbm+" not in text and SECRET not in text, path
        if not got.headers["content-type"].startswith("text/html"):
            continue
        for link in re.findall(r'(?:href|src)="([^"#]+)"', text):
            target = urljoin(path, link.replace("&amp;", "&"))
            if urlsplit(target).scheme or urlsplit(target).netloc or target in seen:
                continue
            number = re.match(r"/boards/(\d+)(/|$)", target)
            if number and re.search(r"/(picture/|ply/)|\?seat", target):
                if int(number.group(1)) % POSITIONS_OF_EVERY:
                    continue
            elif (
                number
                and re.search(r"/(record\.|feed)", target)
                and int(number.group(1)) % RECORDS_OF_EVERY
            ):
                continue
            todo.append(target)
        boards += bool(re.fullmatch(r"/boards/\d+", path))
    await web.aclose()
    db.close()
    return boards, seen
