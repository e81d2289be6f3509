"""A real browser walks the web site of a running ``pbm serve``: Debian's chromium,
headless, driven by Selenium through chromium-driver. It opens the front page, follows a
link to an active Accasta board, steps back two moves, flips the board, goes to a
finished chess game and downloads its PGN, which python-chess reads, and looks at a Hex
and a 19x19 Go board; the pictures load and the browser reports no error. The front page
with five games in play fits a phone: no cell runs past the screen. Screenshots of every
kind of page at 390 px (a phone, at three pixels a CSS pixel) and 1200 px, light and
dark, are kept in the test's folder; with PBM_SCREENSHOTS_UPDATE=1 the light ones are
written to docs/images/ too. A thousand idle connections and a slow client do not keep
the mail from being answered."""

from __future__ import annotations

import http.client
import io
import os
import re
import shutil
import socket
import time
from pathlib import Path

import chess.pgn
import pytest
from mailserver import PbmServer, Sink, StartServer, until
from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.remote.webdriver import WebDriver

from pbm import config as config_mod
from pbm.store.engine import Database
from pbm.usecases import queries, unit
from pbm.usecases.accounts import Signup
from pbm.usecases.auth import ADMIN, Who
from pbm.usecases.challenges import Challenge
from pbm.usecases.moves import Move
from pbm.usecases.site import Site

DOCS_IMAGES = Path(__file__).parent.parent / "docs" / "images"
FOOLS_MATE = (("f3", "alice"), ("e5", "bob"), ("g4", "alice"), ("Qh4", "bob"))


@pytest.fixture
def web_server(start_server: StartServer) -> tuple[PbmServer, str]:
    """``pbm serve`` with its web site on a port of its own, and the site's address."""
    srv = start_server(web=True)
    return srv, srv.web_base


def games_played(srv: PbmServer) -> tuple[int, int, int, int]:
    """On the server's own database: an Accasta board six turns in, a chess game won by
    Black in four, a Hex and a 19x19 Go board six stones in (as the admin plays them:
    the moves are the mail's moves)."""
    cfg = config_mod.load(srv.config_path, env=srv.env())
    db = Database.open(cfg)
    site = Site(db, cfg)
    try:
        for uid in ("alice", "bob"):
            unit.run(site, Signup(uid, "pw", f"{uid}@example.org", confirmed=True))
        accasta = unit.run(site, Challenge("accasta", "alice", "bob", admin=True))[0].board
        chess_board = unit.run(site, Challenge("chess", "alice", "bob", admin=True))[0].board
        assert accasta is not None and chess_board is not None
        for _ in range(6):
            board = queries.board(site, accasta)
            mover = board.player_at(board.state.to_move)
            unit.run(site, Move(accasta, str(board.state.legal_moves()[0])), Who(mover, ADMIN))
        for move, who in FOOLS_MATE:
            unit.run(site, Move(chess_board, move), Who(who, ADMIN))
        others = []
        for game, stones in (("hex", "g7 g8 f8 h7 e9 i6"), ("go", "D4 Q16 Q4 D16 C14 R6")):
            number = unit.run(site, Challenge(game, "alice", "bob", admin=True))[0].board
            assert number is not None
            for ply, stone in enumerate(stones.split()):
                unit.run(site, Move(number, stone), Who(("alice", "bob")[ply % 2], ADMIN))
            others.append(number)
    finally:
        db.close()
    return accasta, chess_board, others[0], others[1]


def browser(downloads: Path) -> WebDriver:
    driver_path = shutil.which("chromedriver")
    binary = shutil.which("chromium")
    if driver_path is None or binary is None:
        pytest.fail("chromium and chromium-driver are not installed (make test installs them)")
    options = webdriver.ChromeOptions()
    options.binary_location = binary
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--hide-scrollbars"):
        options.add_argument(flag)
    options.add_argument("--window-size=1200,1000")
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    options.add_experimental_option(
        "prefs",
        {"download.default_directory": str(downloads), "download.prompt_for_download": False},
    )
    return webdriver.Chrome(service=Service(driver_path), options=options)


# At 390 px, a phone's screen: three device pixels a CSS pixel, as most phones have.
SCALES = {390: 3, 1200: 1}
# Each table cell a visitor sees that runs past the screen's right edge, or is cut off
# inside its table (a table scrolls sideways rather than widen the page).
OVERFLOWING_CELLS = """
var width = document.documentElement.clientWidth, found = [];
document.querySelectorAll("th, td").forEach(function (cell) {
  var box = cell.getBoundingClientRect(), table = cell.closest("table");
  if (getComputedStyle(cell).display === "none" || box.width === 0) { return; }
  var past = box.right > width + 0.5 || box.left < -0.5;
  var cut = cell.scrollWidth > cell.clientWidth + 1 || table.scrollWidth > table.clientWidth + 1;
  if (past || cut) { found.push(cell.textContent.trim() + " (right edge " + box.right + ")"); }
});
return found;
"""


def fit(driver: WebDriver, width: int) -> None:
    """The page at ``width`` CSS pixels, as tall as it is (at most 2400)."""
    metrics = {"width": width, "height": 1000, "deviceScaleFactor": SCALES[width]}
    driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {**metrics, "mobile": width < 500})
    height = driver.execute_script("return document.documentElement.scrollHeight")
    metrics["height"] = min(int(height), 2400)
    driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {**metrics, "mobile": width < 500})


def scheme(driver: WebDriver, dark: bool) -> None:
    """The visitor's colour scheme (``prefers-color-scheme``)."""
    value = "dark" if dark else "light"
    features = [{"name": "prefers-color-scheme", "value": value}]
    driver.execute_cdp_cmd("Emulation.setEmulatedMedia", {"features": features})


def shoot(driver: WebDriver, name: str, folder: Path, to_docs: bool = True) -> None:
    """Screenshots of the page at 390 px (a phone) and at 1200 px, light and dark; the
    light ones to docs/images/ too when PBM_SCREENSHOTS_UPDATE is set (and ``to_docs``).
    No part of the page, and no table cell, runs past the screen."""
    for dark in (False, True):
        scheme(driver, dark)
        for width in SCALES:
            fit(driver, width)
            overflow = driver.execute_script(
                "return document.documentElement.scrollWidth - document.documentElement.clientWidth"
            )
            assert overflow <= 1, f"{name} at {width} px is {overflow} px too wide"
            cells = driver.execute_script(OVERFLOWING_CELLS)
            assert cells == [], f"{name} at {width} px: cells past the screen: {cells}"
            shot = folder / f"web-{name}-{width}{'-dark' if dark else ''}.png"
            driver.save_screenshot(str(shot))
            if to_docs and not dark and os.environ.get("PBM_SCREENSHOTS_UPDATE"):
                shutil.copyfile(shot, DOCS_IMAGES / shot.name)
    scheme(driver, False)
    driver.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})


def pictures_loaded(driver: WebDriver) -> None:
    for img in driver.find_elements(By.TAG_NAME, "img"):
        assert driver.execute_script(
            "return arguments[0].complete && arguments[0].naturalWidth", img
        )


def test_a_visitor_walks_the_site_in_a_real_browser(
    web_server: tuple[PbmServer, str], tmp_path: Path
) -> None:
    srv, base = web_server
    accasta, chess_board, hex_board, go_board = games_played(srv)
    downloads = tmp_path / "downloads"
    downloads.mkdir()
    driver = browser(downloads)
    try:
        driver.get(base + "/")
        shoot(driver, "front", tmp_path, to_docs=False)  # five games: the test below
        driver.find_element(By.CSS_SELECTOR, f'a[href="/boards/{accasta}"]').click()
        assert "After turn 6 of 6" in driver.page_source
        pictures_loaded(driver)
        shoot(driver, "board", tmp_path, to_docs=False)
        for turn in (5, 4):
            driver.find_element(By.ID, "back").click()
            assert f"After turn {turn} of 6" in driver.page_source
        driver.find_element(By.ID, "flip").click()
        assert driver.current_url.endswith(f"/boards/{accasta}/ply/4?seat=1")
        picture = driver.find_element(By.CSS_SELECTOR, "figure img")
        assert re.search(
            rf"/boards/{accasta}/picture/4-1\.[0-9a-f]{{12}}\.svg$", picture.get_attribute("src")
        )
        pictures_loaded(driver)
        driver.get(base + "/")
        driver.find_element(By.CSS_SELECTOR, f'a[href="/boards/{chess_board}"]').click()
        assert "Result 0-1" in driver.page_source
        driver.find_element(By.CSS_SELECTOR, 'a[href$="record.pgn"]').click()
        deadline = time.monotonic() + 20
        while not list(downloads.glob("*.pgn")) and time.monotonic() < deadline:
            time.sleep(0.1)
        (pgn,) = downloads.glob("*.pgn")
        game = chess.pgn.read_game(io.StringIO(pgn.read_text()))
        assert game is not None and game.end().board().is_checkmate()
        driver.find_element(By.CSS_SELECTOR, 'a[href="/players/alice"]').click()
        shoot(driver, "player", tmp_path)
        for name, number in (("board-hex", hex_board), ("board-go", go_board)):
            driver.get(f"{base}/boards/{number}")
            pictures_loaded(driver)
            shoot(driver, name, tmp_path)
        driver.get(base + "/ratings")
        shoot(driver, "ratings", tmp_path)
        driver.get(base + "/archive")
        shoot(driver, "archive", tmp_path)
        errors = [e for e in driver.get_log("browser") if e["level"] == "SEVERE"]
        assert errors == []
    finally:
        driver.quit()


def five_games_in_play(srv: PbmServer) -> list[int]:
    """Five boards in play on the server's own database, each a few turns in: Accasta
    (one on a Fischer clock, one Pari) and chess, between six players."""
    cfg = config_mod.load(srv.config_path, env=srv.env())
    db = Database.open(cfg)
    site = Site(db, cfg)
    games = (
        ("alice", "bob", "accasta", {"time": "fischer 10d+36h max 10d"}),
        ("carol", "dave", "chess", {}),
        ("erin", "frank", "accasta", {"variant": "pari"}),
        ("bob", "carol", "chess", {}),
        ("dave", "alice", "accasta", {}),
    )
    boards = []
    try:
        for uid in ("alice", "bob", "carol", "dave", "erin", "frank"):
            unit.run(site, Signup(uid, "pw", f"{uid}@example.org", confirmed=True))
        for turns, (white, black, game, options) in enumerate(games, start=3):
            number = unit.run(site, Challenge(game, white, black, admin=True, **options))[0].board
            assert number is not None
            boards.append(number)
            for _ in range(turns):
                board = queries.board(site, number)
                mover = board.player_at(board.state.to_move)
                unit.run(site, Move(number, str(board.state.legal_moves()[0])), Who(mover, ADMIN))
    finally:
        db.close()
    return boards


def test_the_front_table_fits_a_phone(web_server: tuple[PbmServer, str], tmp_path: Path) -> None:
    """Issue 36: at 390 px the front page's table was cut off ("bob to m", its "Last move"
    column out of sight). With five games in play no cell of it runs past a phone's
    screen, light or dark; the pictures of the front page and a board page (a Fischer
    clock, said in the third person) are what docs/images/ shows."""
    srv, base = web_server
    boards = five_games_in_play(srv)
    driver = browser(tmp_path)
    try:
        driver.get(base + "/")
        for number in boards:
            assert driver.find_elements(By.CSS_SELECTOR, f'table a[href="/boards/{number}"]')
        shoot(driver, "front", tmp_path)
        scheme(driver, dark=False)
        fit(driver, 390)
        states = [td.text for td in driver.find_elements(By.CSS_SELECTOR, "table td")]
        assert "bob to move" in [" ".join(t.split()) for t in states]  # whole, if wrapped
        driver.get(base + f"/boards/{boards[0]}")
        pictures_loaded(driver)
        assert "Black bob:" in driver.page_source and "your move" not in driver.page_source
        shoot(driver, "board", tmp_path)
        # The keys step through the positions as the links do: Home, End and the arrows.
        at = f"/boards/{boards[0]}/ply/"
        for key, ply in ((Keys.HOME, 0), (Keys.ARROW_RIGHT, 1), (Keys.END, 3), (Keys.LEFT, 2)):
            ActionChains(driver).send_keys(key).perform()
            until(lambda ply=ply: driver.current_url.endswith(f"{at}{ply}"))
        assert [e for e in driver.get_log("browser") if e["level"] == "SEVERE"] == []
    finally:
        driver.quit()


def test_idle_and_slow_web_clients_do_not_hold_up_the_mail(
    web_server: tuple[PbmServer, str], sink: Sink
) -> None:
    srv, base = web_server
    port = int(base.rsplit(":", 1)[1])
    idle = []
    try:
        for _ in range(1000):
            idle.append(socket.create_connection(("127.0.0.1", port), timeout=5))
        slow = socket.create_connection(("127.0.0.1", port), timeout=5)
        idle.append(slow)
        slow.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n")  # and never the rest (slowloris)
        start = time.monotonic()
        srv.send("carol@example.org", "signup carol secret-c", "Hello")
        sink.wait_for("carol@example.org", "confirm", timeout=30)
        assert time.monotonic() - start < 10
        # ... and the site still answers another address (this one holds as many
        # connections as web.connections_per_address lets it); the idle ones are cut off
        # after 5 s.
        visitor = http.client.HTTPConnection(
            "127.0.0.1", port, timeout=10, source_address=("127.0.0.2", 0)
        )
        visitor.request("GET", "/")
        assert b"Games in play" in visitor.getresponse().read()
        visitor.close()
        idle[0].settimeout(15)
        assert idle[0].recv(1) == b""
    finally:
        for s in idle:
            s.close()


def _niceness(pid: int) -> int:
    """A process's nice value (Linux /proc: the 19th field of its stat)."""
    return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[16])


def test_the_web_site_takes_only_the_cpu_the_mail_leaves(
    web_server: tuple[PbmServer, str],
) -> None:
    """Visitors wait for the CPU a move by mail needs, never the other way round: the web
    site runs below the mail (its listener and inbox workers), above the computer."""
    srv, _ = web_server
    assert srv.proc is not None
    mail = [srv.proc.pid, *(p for p in srv.worker_pids() if "web" not in _command(p))]
    web = [p for p in srv.worker_pids() if "web" in _command(p)]
    assert web, "the web site is not a process of pbm serve"
    assert all(_niceness(p) == 0 for p in mail)
    assert all(_niceness(p) == 10 for p in web)


def _command(pid: int) -> list[str]:
    return Path(f"/proc/{pid}/cmdline").read_bytes().decode().split("\0")
