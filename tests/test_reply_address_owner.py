"""A reply address acts only for mail from its account's own address.

A board mail that is forwarded (or leaks) carries alice's reply address:
a reply to it from anyone else, or from another address of alice's, does
nothing, is not answered, and alice is told at her registered address.
Through the real inbox runner, on SQLite and PostgreSQL.
"""

from __future__ import annotations

from email.message import EmailMessage
from email.policy import SMTP

import pytest
from conftest import Clock, accepted
from test_inbox_runner import first_moves, mails_to, make_runner, moves_on, run

from pbm.config import Config
from pbm.mail.addresses import RESET, context_address, token_address
from pbm.store import inbox as store
from pbm.store.engine import Database
from pbm.usecases import queries, unit
from pbm.usecases.accounts import AskReset
from pbm.usecases.challenges import Challenge
from pbm.usecases.site import Site

ALICE = "alice@example.org"


def reply(db: Database, clock: Clock, sender: str, to: str, text: str, envelope: str = "") -> None:
    msg = EmailMessage()
    msg["From"] = sender
    msg["To"] = to
    msg["Subject"] = "Re: Accasta Board 1"
    msg["Message-ID"] = f"<{abs(hash((sender, text)))}@x>"
    msg.set_content(text + "\n")
    with db.transaction() as s:
        store.add(s, [store.Received(msg.as_bytes(policy=SMTP), envelope or sender, [to])], clock())


@pytest.fixture
def board(site: Site) -> int:
    return accepted(site, Challenge("accasta", "alice", "bob", sender=ALICE))


def status_of(site: Site, board: int) -> str:
    return queries.board(site, board).status


def test_a_stranger_replying_to_alices_board_mail_changes_nothing(
    db: Database, config: Config, clock: Clock, board: int, site: Site
) -> None:
    address = token_address(config.mail.address, config.mail.secret, board, "alice")
    before_alice = len(mails_to(db, ALICE))
    reply(db, clock, "eve@evil.example", address, "resign")
    run(make_runner(db, config, clock))
    assert status_of(site, board) == "active"
    assert mails_to(db, "eve@evil.example") == []  # no answer to the other address
    told = mails_to(db, ALICE)[before_alice:]
    assert len(told) == 1
    said = " ".join(told[0].body.split())
    assert "A mail from eve@evil.example used your reply address for board 1" in said
    assert "nothing was done" in said
    assert all("resigned" not in m.body for m in mails_to(db, "bob@example.org"))


def test_alices_other_address_is_explained_not_answered(
    db: Database, config: Config, clock: Clock, board: int
) -> None:
    address = token_address(config.mail.address, config.mail.secret, board, "alice")
    [move] = first_moves(1)
    reply(db, clock, "alice@work.example", address, move)
    run(make_runner(db, config, clock))
    assert moves_on(db, board) == 0
    assert mails_to(db, "alice@work.example") == []
    assert "alice@work.example" in mails_to(db, ALICE)[-1].body


def test_a_forged_from_with_a_foreign_envelope_is_refused_too(
    db: Database, config: Config, clock: Clock, board: int, site: Site
) -> None:
    address = token_address(config.mail.address, config.mail.secret, board, "alice")
    reply(db, clock, ALICE, address, "resign", envelope="eve@evil.example")
    run(make_runner(db, config, clock))
    assert status_of(site, board) == "active"


@pytest.mark.parametrize("sender", ["alice@example.org", "Alice@EXAMPLE.org"])
def test_the_owner_still_moves_by_reply(
    db: Database, config: Config, clock: Clock, board: int, sender: str
) -> None:
    address = token_address(config.mail.address, config.mail.secret, board, "alice")
    [move] = first_moves(1)
    # A provider's own return path (BATV) in the envelope, of the same domain, is fine.
    reply(db, clock, sender, address, move, envelope="prvs=1234abcd=alice@example.org")
    run(make_runner(db, config, clock))
    assert moves_on(db, board) == 1


def test_a_leaked_password_reset_mail_sets_no_password(
    db: Database, config: Config, clock: Clock, site: Site
) -> None:
    unit.run(site, AskReset("alice", ALICE), sender=ALICE)
    nonce = queries.player(site, "alice").reset_nonce
    assert nonce
    address = context_address(config.mail.address, config.mail.secret, RESET, "alice", nonce=nonce)
    reply(db, clock, "eve@evil.example", address, "evilpass")
    run(make_runner(db, config, clock))
    assert mails_to(db, "eve@evil.example") == []
    assert "eve@evil.example" in mails_to(db, ALICE)[-1].body
    assert queries.player(site, "alice").reset_nonce == nonce  # still unused
