"""Mail about a board links to its page when there is a web site (web.base_url, else the
address it listens on): the board mails of a game in play and its end, in the text and
as a link in the HTML; not a challenge, not an error, and nothing without a site."""

from __future__ import annotations

import email
from dataclasses import replace
from email.message import EmailMessage
from email.policy import default

from conftest import accepted
from test_inbox_runner import mails_to

from pbm.config import Config, WebConfig
from pbm.mail.message import build_message
from pbm.store.engine import Database
from pbm.usecases import queries, unit
from pbm.usecases.auth import Password, Who
from pbm.usecases.challenges import Challenge
from pbm.usecases.moves import Move, Resign
from pbm.usecases.site import Site

ALICE, BOB = "alice@example.org", "bob@example.org"
BASE = "https://games.example.org"


def test_board_mails_link_to_the_board_page(db: Database, config: Config, site: Site) -> None:
    config = replace(config, web=WebConfig(base_url=BASE + "/"))
    site = replace(site, config=config)
    # A challenge has no page yet (to carol: one open challenge between two players).
    board = unit.run(site, Challenge("accasta", "alice", "carol", sender=ALICE))[0].board
    assert board is not None
    assert all(BASE not in m.body for m in mails_to(db, "carol@example.org"))
    board = accepted(site, Challenge("accasta", "alice", "bob", sender=ALICE))
    move = str(queries.board(site, board).state.legal_moves()[0])
    unit.run(site, Move(board, move), Who("alice", Password("pw")))
    unit.run(site, Resign(board), Who("bob", Password("pw")))
    line = f"On the web: {BASE}/boards/{board}"
    challenge, *mails = [m for m in mails_to(db, BOB) if m.board == board]
    assert line not in challenge.body
    assert len(mails) == 3 and all(m.body.rstrip().endswith(line) for m in mails)
    msg = email.message_from_bytes(build_message(mails[-1], config), policy=default)
    assert isinstance(msg, EmailMessage)
    html = msg.get_body(("html",))
    assert html is not None
    assert f'<a href="{BASE}/boards/{board}">' in html.get_content()


def test_with_base_url_empty_mails_link_to_the_listen_address(
    db: Database, config: Config, site: Site
) -> None:
    """Issue 36, point 2: with ``base_url`` empty (as ``make serve`` writes it), mails
    carried no web link; now they link to where the site listens, as its own absolute
    links (feeds) already did."""
    config = replace(config, web=WebConfig(listen="127.0.0.1:8181", base_url=""))
    site = replace(site, config=config)
    board = accepted(site, Challenge("accasta", "alice", "bob", sender=ALICE))
    move = str(queries.board(site, board).state.legal_moves()[0])
    unit.run(site, Move(board, move), Who("alice", Password("pw")))
    line = f"On the web: http://127.0.0.1:8181/boards/{board}"
    mail = [m for m in mails_to(db, BOB) if m.board == board][-1]
    assert mail.body.rstrip().endswith(line)
    html = email.message_from_bytes(build_message(mail, config), policy=default)
    assert isinstance(html, EmailMessage)
    part = html.get_body(("html",))
    assert part is not None
    assert f'<a href="http://127.0.0.1:8181/boards/{board}">' in part.get_content()


def test_without_a_web_site_no_mail_has_a_link(db: Database, config: Config, site: Site) -> None:
    config = replace(config, web=WebConfig(listen="", base_url=""))
    site = replace(site, config=config)
    board = accepted(site, Challenge("accasta", "alice", "bob", sender=ALICE))
    move = str(queries.board(site, board).state.legal_moves()[0])
    unit.run(site, Move(board, move), Who("alice", Password("pw")))
    assert all("On the web" not in m.body for m in mails_to(db, BOB))
