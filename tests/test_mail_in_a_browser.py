"""A real browser shows a board mail's HTML part: Debian's chromium, headless, opens it
(saved as a file with its picture) at 390 px (a phone) and 1200 px wide; the picture loads
(drawn twice as wide as shown, for a phone's screen) and no text runs past the page's
width. Driven by Selenium at a phone's widths, it finds every move of the move list whole
on one line, and the legend under the picture. Screenshots are kept in the test's folder;
with PBM_SCREENSHOTS_UPDATE=1 they are written to docs/images/ for the player's guide."""

from __future__ import annotations

import email
import json
import os
import re
import shutil
import subprocess
from email.message import EmailMessage
from email.policy import default
from pathlib import Path

import pytest
from conftest import accepted
from PIL import Image, ImageOps
from selenium.webdriver.common.by import By
from test_inbox_runner import mails_to
from test_web_in_a_browser import browser

from pbm.config import Config
from pbm.mail.message import build_message
from pbm.store.engine import Database
from pbm.usecases import queries, unit
from pbm.usecases.auth import Password, Who
from pbm.usecases.challenges import Challenge
from pbm.usecases.moves import Move
from pbm.usecases.site import Site

DOCS_IMAGES = Path(__file__).parent.parent / "docs" / "images"
DATA = Path(__file__).parent / "data"
# The Opera game's first 21 plies (Morphy, Paris 1858): the last one gives check.
OPERA = (  # noqa: SIM905 (a game as written)
    "e4 e5 Nf3 d6 d4 Bg4 dxe5 Bxf3 Qxf3 dxe5 Bc4 Nf6 Qb3 Qe7 Nc3 c6 Bg5 b5 Nxb5 cxb5 Bxb5+"
).split()
# What the page reports about itself once loaded (a script added to the test's copy only).
CHECK = """<script>
window.addEventListener("load", () => {
  const img = document.querySelector("img");
  const wide = [...document.querySelectorAll("p, pre, div")].filter(
    (e) => e.getBoundingClientRect().right > document.documentElement.clientWidth + 1);
  parent.document.body.setAttribute("data-report", JSON.stringify({
    natural: img ? img.naturalWidth : 0, shown: img ? img.getBoundingClientRect().width : 0,
    page: document.documentElement.scrollWidth, view: document.documentElement.clientWidth,
    overflowing: wide.length}));
});
</script>"""


@pytest.fixture
def db_url(tmp_path: Path, sqlite_template: Path) -> str:
    """The browser looks at a mail, not at the database: a SQLite site is enough."""
    path = tmp_path / "pbm.sqlite3"
    shutil.copyfile(sqlite_template, path)
    return f"sqlite:///{path}"


def chromium(*args: str) -> str:
    browser = shutil.which("chromium")
    if browser is None:
        pytest.fail("chromium is not installed (make test installs it)")
    flags = [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
        "--hide-scrollbars",
    ]
    done = subprocess.run(
        [browser, *flags, *args], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


def saved_mail(db: Database, config: Config, to: str, folder: Path) -> Path:
    """The newest board mail to ``to``: its HTML part as a file, the picture beside it."""
    row = [m for m in mails_to(db, to) if m.board is not None][-1]
    msg = email.message_from_bytes(build_message(row, config), policy=default)
    assert isinstance(msg, EmailMessage)
    html_part, image = msg.get_payload()[1].get_payload()  # type: ignore[index]
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "board.png").write_bytes(image.get_payload(decode=True))
    cid = str(image["Content-ID"]).strip("<>")
    page = folder / "mail.html"
    page.write_text(html_part.get_content().replace(f"cid:{cid}", "board.png"), "utf-8")
    return page


def look(page: Path, width: int, shot: Path) -> dict[str, float]:
    """Open ``page`` in a frame ``width`` px wide (headless chromium's window is never
    narrower than 500 px): what it reports, and a screenshot of the frame."""
    checked = page.with_name(f"checked-{width}.html")
    checked.write_text(page.read_text("utf-8").replace("</body>", CHECK + "</body>"), "utf-8")
    frames = {}
    for name, inner in (("check", checked), ("show", page)):
        frame = page.with_name(f"frame-{name}-{width}.html")
        frame.write_text(
            '<!DOCTYPE html><html><body style="margin:0">'
            f'<iframe src="{inner.name}" style="width:{width}px;height:1600px;border:0">'
            "</iframe></body></html>",
            "utf-8",
        )
        frames[name] = frame
    window = f"--window-size={max(width, 500)},1600"
    dom = chromium(
        window,
        "--allow-file-access-from-files",
        "--virtual-time-budget=3000",
        "--dump-dom",
        frames["check"].as_uri(),
    )
    report = dom.split('data-report="', 1)[1].split('"', 1)[0].replace("&quot;", '"')
    show = frames["show"].as_uri()
    chromium(window, "--allow-file-access-from-files", f"--screenshot={shot}", show)
    with Image.open(shot) as full:
        framed = full.convert("RGB").crop((0, 0, width, 1600))
        used = ImageOps.invert(framed.convert("L")).getbbox()  # the white below the mail goes
        framed.crop((0, 0, width, min(1600, (used[3] if used else 1600) + 16))).save(shot)
    found: dict[str, float] = json.loads(report)
    return found


def sample_moves() -> list[str]:
    """The first 20 turns of the published standard game, as written."""
    text = re.sub(r"\([^)]*\)|\[[^\]]*\]", " ", (DATA / "sample_standard.txt").read_text("utf-8"))
    words = (re.sub(r"^\d+\.", "", w).strip(";?!").replace("\u2013", "-") for w in text.split())
    return [w for w in words if re.match(r"[a-g][1-7]:", w)][:20]


# Twenty stones each for Hex (13x13) and Go (19x19): a board well into its opening.
HEX = "g7 g8 f8 h7 e9 i6 d10 j5 c11 k4 b12 l3 f9 h6 e10 i5 d11 j4 c12 k3".split()  # noqa: SIM905 (moves as written)
GO = "D4 Q16 Q4 D16 C14 R6 F3 O17 K10 K4 C6 R14 E17 P3 H17 M3 Q10 D10 K16 F16".split()  # noqa: SIM905


def played(site: Site, game: str) -> int:
    """A board of ``game`` 20 turns in (Accasta's sample game, chess's Opera game)."""
    board = accepted(site, Challenge(game, "alice", "bob", sender="alice@example.org"))
    moves = {"accasta": sample_moves(), "chess": OPERA, "hex": HEX, "go": GO}[game]
    for ply, move in enumerate(moves, 1):
        comment = "Your move!" if ply == len(moves) else ""
        mover = ("alice", "bob")[(ply - 1) % 2]
        unit.run(site, Move(board, move, comment=comment), Who(mover, Password("pw")))
    return board


@pytest.mark.parametrize("game", ["accasta", "chess", "hex", "go"])
def test_a_board_mail_reads_on_a_phone_and_a_desktop(
    db: Database, config: Config, site: Site, tmp_path: Path, game: str
) -> None:
    played(site, game)
    page = saved_mail(db, config, "bob@example.org", tmp_path / game)
    for width in (390, 1200):
        shot = tmp_path / f"{game}-{width}.png"
        report = look(page, width, shot)
        assert report["natural"] == 960, report  # the picture loaded, drawn at 2x
        assert 0 < report["shown"] <= min(480, width), report
        assert report["view"] == width, report  # the mail had the phone's width
        assert report["page"] <= report["view"] and report["overflowing"] == 0, report
        if os.environ.get("PBM_SCREENSHOTS_UPDATE"):
            DOCS_IMAGES.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(shot, DOCS_IMAGES / f"board-mail-{game}-{width}.png")


# Each move of the move list: its text, how many boxes it is laid in, its height, the line
# height of the list, and its left and top edges.
MOVES = """return [...document.querySelectorAll('.moves .move')].map((m) => {
  const box = m.getBoundingClientRect();
  return [m.textContent, m.getClientRects().length, box.height,
          parseFloat(getComputedStyle(m.parentElement.parentElement).lineHeight),
          box.left, box.top];
});"""


@pytest.mark.parametrize("game", ["accasta", "chess"])
def test_no_move_of_the_list_is_split_across_lines_on_a_phone(
    db: Database, config: Config, site: Site, tmp_path: Path, game: str
) -> None:
    """Issue 36: at 390 px the move list's ``<pre>`` wrapped inside moves (``8. f4:C-`` /
    ``e5,H+g4,Sxe4``). Now each move is an element of its own: one box, one line high,
    at any width, two to a row where they fit and else one under the other."""
    board = played(site, game)
    page = saved_mail(db, config, "bob@example.org", tmp_path / game)
    moves = [m.notation for m in queries.board(site, board).moves]
    driver = browser(tmp_path / "downloads")
    try:
        for width in (320, 360, 390, 1200):
            driver.execute_cdp_cmd(
                "Emulation.setDeviceMetricsOverride",
                {"width": width, "height": 900, "deviceScaleFactor": 3, "mobile": width < 500},
            )
            driver.get(page.as_uri())
            laid = driver.execute_script(MOVES)
            # Every move, whole, in its own element (chess numbers White's with the pair).
            assert [text.split(". ")[-1] for text, *_ in laid] == moves, width
            for text, boxes, height, line, _, _ in laid:
                assert boxes == 1 and height <= line * 1.2, (width, text, boxes, height)
            lefts = {round(left) for *_, left, _ in laid}
            tops = [round(top) for *_, top in laid]
            if width >= 390:  # two to a row, White's and Black's side by side
                assert len(lefts) == 2 and len(set(tops)) == (len(laid) + 1) // 2, width
            if width == 320 and game == "accasta":  # too narrow for two: one under the other
                assert len(lefts) == 1 and len(set(tops)) == len(laid), width
            # The legend follows the picture: its words, from the reader's side.
            legend = driver.find_element(By.CSS_SELECTOR, "p.legend")
            before = driver.execute_script(
                "return arguments[0].previousElementSibling.querySelector('img') !== null",
                legend,
            )
            assert before and "Black's side" in legend.text
            assert driver.execute_script("return document.querySelector('img').naturalWidth") == 960
    finally:
        driver.quit()
