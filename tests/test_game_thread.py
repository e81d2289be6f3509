"""A game's mails form one thread in a mail client: every mail about a board has the board's
one subject and names the board's thread root first in References; what each mail is says
its first line. Through the unit of work and the message builder, SQLite and PostgreSQL."""

from __future__ import annotations

import email
from email.policy import default

from conftest import Clock, accepted
from test_inbox_runner import mails_to

from pbm.config import Config
from pbm.mail.message import build_message
from pbm.store.engine import Database
from pbm.usecases import queries, unit
from pbm.usecases.auth import Password, Who
from pbm.usecases.challenges import Challenge
from pbm.usecases.moves import Move
from pbm.usecases.site import Site
from pbm.usecases.talk import Chat

ALICE = "alice@example.org"


def sent(db: Database, config: Config, to: str) -> list[email.message.EmailMessage]:
    return [
        email.message_from_bytes(build_message(row, config), policy=default)  # type: ignore[misc]
        for row in mails_to(db, to)
    ]


def test_every_mail_about_a_board_is_one_thread(
    db: Database, config: Config, clock: Clock, site: Site
) -> None:
    board = accepted(site, Challenge("accasta", "alice", "bob", sender=ALICE))
    first = str(queries.board(site, board).state.legal_moves()[0])
    unit.run(site, Move(board, first), Who("alice", Password("pw")))
    unit.run(site, Chat(board, "Good luck!"), Who("bob", Password("pw")))
    other = accepted(site, Challenge("accasta", "alice", "carol", sender=ALICE))
    mails = [m for m in sent(db, config, ALICE) if "Board" in str(m["Subject"])]
    ours = [m for m in mails if f"Board {board}:" in str(m["Subject"])]
    assert len(ours) >= 4  # the challenge sent, the start, the move, the chat
    assert {str(m["Subject"]) for m in ours} == {f"Accasta Board {board}: alice vs bob"}
    firsts = [m.get_body(("plain",)).get_content().splitlines()[0] for m in ours]
    assert f"Accasta Board {board} - chat from bob" in firsts
    assert f"Accasta Board {board} - bob to move" in firsts
    roots = {str(m["References"]).split()[0] for m in ours}
    assert len(roots) == 1
    (root,) = roots
    assert all(str(m["In-Reply-To"]) in (root, *str(m["References"]).split()) for m in ours)
    theirs = [m for m in mails if f"Board {other}:" in str(m["Subject"])]
    assert theirs and all(str(m["References"]).split()[0] != root for m in theirs)


def test_a_mail_that_answers_a_players_mail_names_it_after_the_root(config: Config) -> None:
    from conftest import Row

    row = Row(board=3, in_reply_to="<players.mail@client.test>", thread="Accasta Board 3: a vs b")
    msg = email.message_from_bytes(build_message(row, config), policy=default)
    refs = str(msg["References"]).split()
    assert refs[0].startswith("<pbm.board-3.") and refs[1] == "<players.mail@client.test>"
    assert str(msg["In-Reply-To"]) == "<players.mail@client.test>"
    assert str(msg["Subject"]) == "Accasta Board 3: a vs b"
    assert msg.get_body(("plain",)).get_content().startswith(f"{row.subject}\n\n{row.body}")
