"""Board mails show a picture of the board: multipart/alternative, the text part as ever,
then an HTML part with the board as an inline PNG (cid:), one picture a mail, escaped
text; a player who chose plain text gets the text alone. Through the unit of work and the
message builder, SQLite and PostgreSQL."""

from __future__ import annotations

import email
import io
import re
from dataclasses import replace
from email.message import EmailMessage
from email.policy import default
from html import unescape

from conftest import accepted
from PIL import Image
from test_inbox_runner import mails_to

from pbm.config import Config
from pbm.mail.message import build_message
from pbm.replies import Picture
from pbm.store.engine import Database
from pbm.usecases import queries, unit
from pbm.usecases.accounts import SetFormat
from pbm.usecases.auth import Password, Who
from pbm.usecases.challenges import Challenge
from pbm.usecases.moves import Move
from pbm.usecases.site import Site

ALICE, BOB = "alice@example.org", "bob@example.org"


def last_message(db: Database, config: Config, to: str) -> EmailMessage:
    row = [m for m in mails_to(db, to) if m.board is not None][-1]
    msg = email.message_from_bytes(build_message(row, config), policy=default)
    assert isinstance(msg, EmailMessage)
    return msg


def move_once(site: Site, board: int, uid: str, comment: str = "") -> str:
    move = str(queries.board(site, board).state.legal_moves()[0])
    unit.run(site, Move(board, move, comment=comment), Who(uid, Password("pw")))
    return move


def test_a_board_mail_is_text_then_html_with_one_inline_picture(
    db: Database, config: Config, site: Site
) -> None:
    board = accepted(site, Challenge("accasta", "alice", "bob", sender=ALICE))
    move_once(site, board, "alice", comment='<script>alert(1)</script>"><img src=x onerror=a()>')
    msg = last_message(db, config, BOB)
    assert msg.get_content_type() == "multipart/alternative"
    plain, related = msg.get_payload()  # type: ignore[misc]
    assert plain.get_content_type() == "text/plain"
    assert related.get_content_type() == "multipart/related"
    html_part, image = related.get_payload()
    assert html_part.get_content_type() == "text/html" and image.get_content_type() == "image/png"
    html = html_part.get_content()
    cid = str(image["Content-ID"]).strip("<>")
    assert f'src="cid:{cid}"' in html and html.count("<img") == 1
    assert "<script" not in html and "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    # Nothing remote is fetched: the one link is the board's page on the web site.
    assert not re.search(r'(src|href)="https?://(?!127\.0\.0\.1:8080/boards/\d+")', html)
    assert "url(" not in html and "<link" not in html
    # The same words as the text part: the move list, whose turn, how to reply.
    text = plain.get_content()
    assert "Moves:" in html and "bob (Black) to move" in html and "How to reply:" in text
    assert "How to reply:" in html
    # The ASCII diagram gave way to the picture.
    assert "White: S Shield" in text and "White: S Shield" not in html
    png = image.get_payload(decode=True)
    assert len(png) <= 30_000
    assert Image.open(io.BytesIO(png)).size[0] == 960  # twice the 480 px it is shown at
    assert len(build_message(mails_to(db, BOB)[-1], config)) < 80_000


def test_words_past_ascii_reach_the_html_part_as_the_same_characters(
    db: Database, config: Config, site: Site
) -> None:
    """The HTML part is written in ASCII (character references), so it goes as it is
    (7bit); a line too long for mail (RFC 5322 2.1.1: 998) makes it quoted-printable."""
    board = accepted(site, Challenge("accasta", "alice", "bob", sender=ALICE))
    move_once(site, board, "alice", comment="Zoë \u202egnp.exe ♞")
    row = [m for m in mails_to(db, BOB) if m.board is not None][-1]
    assert row.picture is not None
    long_alt = replace(Picture.from_json(row.picture), alt="Zoë & " * 300).to_json()
    for mail, encoding in (
        (row, "7bit"),
        (row.model_copy(update={"picture": long_alt}), "quoted-printable"),
    ):
        msg = email.message_from_bytes(build_message(mail, config), policy=default)
        html_part = msg.get_payload()[1].get_payload()[0]  # type: ignore[index]
        assert html_part["Content-Transfer-Encoding"] == encoding
        raw = html_part.as_bytes()
        assert raw.isascii() and max(len(line) for line in raw.split(b"\n")) <= 998
        shown = unescape(html_part.get_content())
        assert "Zoë \u202egnp.exe ♞" in shown
        assert mail is row or "Zoë & " * 300 in shown


def test_a_chess_board_mail_shows_python_chess_s_board(
    db: Database, config: Config, site: Site
) -> None:
    board = accepted(site, Challenge("chess", "alice", "bob", sender=ALICE))
    unit.run(site, Move(board, "e4"), Who("alice", Password("pw")))
    msg = last_message(db, config, BOB)
    related = msg.get_payload()[1]  # type: ignore[index]
    png = related.get_payload()[1].get_payload(decode=True)
    assert 0 < len(png) <= 30_000


def test_a_player_who_chose_text_gets_the_text_alone(
    db: Database, config: Config, site: Site
) -> None:
    board = accepted(site, Challenge("accasta", "alice", "bob", sender=ALICE))
    unit.run(site, SetFormat("text"), Who("bob", Password("pw")))
    move_once(site, board, "alice")
    to_bob = last_message(db, config, BOB)
    assert to_bob.get_content_type() == "text/plain"
    assert last_message(db, config, ALICE).get_content_type() == "multipart/alternative"


def test_one_picture_a_seat_is_drawn_and_reused(db: Database, config: Config, site: Site) -> None:
    from pbm.usecases.pictures import raster

    board = accepted(site, Challenge("accasta", "alice", "bob", sender=ALICE))
    move_once(site, board, "alice")
    raster.png.cache_clear()
    for row in mails_to(db, ALICE)[-1:] + mails_to(db, BOB)[-1:] + mails_to(db, ALICE)[-1:]:
        build_message(row, config)
    info = raster.png.cache_info()
    assert (info.misses, info.hits) == (2, 1)  # White's side and Black's, each drawn once


def test_the_picture_has_its_legend_and_both_boards_are_from_the_reader_s_side(
    db: Database, config: Config, site: Site
) -> None:
    """Issue 36: the HTML part said nothing of what the picture shows (the diagram's legend
    speaks of letters), and bob's picture was Black's side while his diagram was White's."""
    board = accepted(site, Challenge("accasta", "alice", "bob", sender=ALICE))
    move_once(site, board, "alice")
    for to, seat, side in ((BOB, 1, "Black's side"), (ALICE, 0, "White's side")):
        row = [m for m in mails_to(db, to) if m.board is not None][-1]
        assert row.picture is not None
        picture = Picture.from_json(row.picture)
        assert picture.seat == seat and picture.diagram in row.body
        rows = [line for line in picture.diagram.splitlines() if " -- " in line]
        names = [line.split("--")[-1].strip() if seat else line.strip()[0] for line in rows]
        assert names == (list("abcdefg") if seat else list("gfedcba"))  # the reader's below
        msg = last_message(db, config, to)
        html = unescape(msg.get_payload()[1].get_payload()[0].get_content())  # type: ignore[index]
        legend = html.split('class="legend"', 1)[1].split("</p>", 1)[0]
        assert "\u25a0 Shield, \u25b2 Horse, \u25cf Chariot" in legend
        assert "bottom to top" in legend and "castle" in legend and side in legend
        assert html.index("<img") < html.index('class="legend"')


def test_a_picture_stored_before_legends_is_read_without_one() -> None:
    old = '["accasta", "{}", 1, "a1:C+b2,HS-c1", "board", "DIAGRAM"]'
    assert Picture.from_json(old) == Picture(
        "accasta", "{}", 1, "a1:C+b2,HS-c1", "board", "DIAGRAM"
    )
    new = Picture("chess", "{}", 0, "e4", "board", "", "Seen from White's side.")
    assert Picture.from_json(new.to_json()) == new
