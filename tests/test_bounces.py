"""Bounces: a reply that comes back for good stops its reader's clocks until he writes.

Replies leave with a return path of their own (VERP, ``pbm+bounce-ID.TOKEN@``);
a delivery status notification (RFC 3464) to it names the reply, and
``flufl.bounce`` tells a permanent failure from a delay.
"""

from __future__ import annotations

import re
import sqlite3

import pytest
from conftest import Clock
from mailserver import (
    PbmServer,
    Sink,
    board_number,
    body_of,
    challenge_accepted,
    reply_to,
    sign_up,
    until,
)
from sqlmodel import select

import pbm.games
from pbm.config import Config
from pbm.mail.addresses import bounce_address
from pbm.mail.dsn import Report, report_for
from pbm.runners.timer_runner import tick as run_tick
from pbm.store.engine import Database
from pbm.store.tables import OutboxMessage, Vacation
from pbm.usecases import queries, unit
from pbm.usecases.auth import Password, Who
from pbm.usecases.bounces import Bounced
from pbm.usecases.challenges import Challenge
from pbm.usecases.moves import Move
from pbm.usecases.site import Site
from pbm.usecases.vacations import Vacation as GoOnVacation

SERVER = "pbm@example.org"
SECRET = "s3cret"
ALICE, BOB = "alice@example.org", "bob@example.net"
BOB_SITE = "bob@example.org"  # bob of the ``site`` fixture


def dsn(
    return_path: str, recipient: str, *, action: str = "failed", status: str = "5.1.1"
) -> bytes:
    """A delivery status notification as a relay writes it (RFC 3464)."""
    return f"""\
From: MAILER-DAEMON@relay.example
To: {return_path}
Subject: Undelivered Mail Returned to Sender
Message-ID: <dsn-{action}@relay.example>
Auto-Submitted: auto-replied
MIME-Version: 1.0
Content-Type: multipart/report; report-type=delivery-status; boundary="B"

--B
Content-Type: text/plain

I'm sorry to have to inform you that your message could not be delivered.

--B
Content-Type: message/delivery-status

Reporting-MTA: dns; relay.example

Final-Recipient: rfc822; {recipient}
Original-Recipient: rfc822; {recipient}
Action: {action}
Status: {status}
Diagnostic-Code: smtp; 550 5.1.1 <{recipient}>: Recipient address rejected

--B--
""".encode()


def test_a_permanent_failure_names_its_outbox_row() -> None:
    path = bounce_address(SERVER, SECRET, 42)
    assert re.fullmatch(r"pbm\+bounce-42\.\w+@example\.org", path)
    found = report_for(dsn(path, BOB), (path,), SERVER, SECRET)
    assert found == Report(42, permanent=True, recipients=frozenset({BOB}))


def test_a_delay_is_no_failure() -> None:
    path = bounce_address(SERVER, SECRET, 7)
    delayed = dsn(path, BOB, action="delayed", status="4.4.1")
    assert report_for(delayed, (path,), SERVER, SECRET) == Report(7, permanent=False)


def test_a_forged_bounce_address_is_no_report() -> None:
    forged = bounce_address(SERVER, "not-our-secret", 42)
    assert report_for(dsn(forged, BOB), (forged,), SERVER, SECRET) is None
    assert report_for(dsn(SERVER, BOB), (SERVER,), SERVER, SECRET) is None


@pytest.mark.e2e
def test_a_bouncing_address_stops_its_clock_until_its_owner_writes(
    server: PbmServer, sink: Sink
) -> None:
    sign_up(server, sink, "alice", ALICE, "pw-a")
    sign_up(server, sink, "bob", BOB, "pw-b")
    board = board_number(
        challenge_accepted(server, sink, ALICE, "accasta challenge alice bob", BOB)
    )
    to_bob = sink.wait_for(BOB, "alice to move")
    # bob's mail server gives up on that board mail: it reports to the return path.
    return_path = str(to_bob["X-Envelope-From"])
    assert return_path.startswith("pbm+bounce-")
    server.send_message(dsn(return_path, BOB), "", return_path)
    db = server.root / "data" / "pbm.sqlite3"

    def bounces() -> list[tuple[str, str]]:
        with sqlite3.connect(db) as con:
            rows = con.execute("SELECT userid, ends_at FROM vacations WHERE kind = 'bounce'")
            return [(str(u), str(e)) for u, e in rows]

    until(lambda: bounces() != [])
    server.send(ALICE, f"accasta show {board}")
    shown = body_of(sink.wait_for(ALICE, f"Board {board}"))
    assert [u for u, _ in bounces()] == ["bob"]
    assert "Mail to bob bounces since" in " ".join(shown.split())
    # The same report again (a second copy) changes nothing more, and is not answered.
    server.send_message(dsn(return_path, BOB), "", return_path)
    # bob writes again (by reply): his address works, the bounce ends.
    server.send(
        BOB, f"Re: {to_bob['Subject']}", "chat Sorry, my mailbox was full.\n", to=reply_to(to_bob)
    )
    sink.wait_for(ALICE, f"Board {board} - chat from bob")
    ((userid, ends_at),) = bounces()
    assert userid == "bob" and not ends_at.startswith("9999")
    server.send(ALICE, f"accasta show {board}")
    assert "bounces" not in body_of(sink.wait_for(ALICE, f"Board {board}"))
    assert [m["Subject"] for m in sink.drain() if "MAILER-DAEMON" in str(m["To"])] == []


def test_a_bounce_stands_the_clock_still_and_a_move_ends_it(
    db: Database, config: Config, clock: Clock, site: Site
) -> None:
    board = unit.run(site, Challenge("accasta", "bob", "alice", admin=True))[0].board or 0
    with db.read() as s:
        to_bob = max(o.id or 0 for o in s.exec(select(OutboxMessage)) if o.to_addr == BOB_SITE)
    unit.run(site, Bounced(to_bob, frozenset({BOB_SITE})))
    assert queries.player(site, "bob").bouncing
    unit.run(site, Bounced(to_bob, frozenset({BOB_SITE})))  # a second report: still one stop
    with db.read() as s:
        assert len([v for v in s.exec(select(Vacation)) if v.kind == "bounce"]) == 1
    # Past the forfeit: bob (to move) loses nothing while his mail bounces.
    clock.advance(days=30)
    assert run_tick(db, config, clock()) == 0
    assert queries.board(site, board).status == "active"
    # bob moves: his address works again, and his clock runs from now.
    opening = pbm.games.get("accasta").new().legal_moves()[0]
    unit.run(site, Move(board, opening), Who("bob", Password("pw")))
    assert not queries.player(site, "bob").bouncing
    clock.advance(days=20)  # alice to move: 20 days are hers, no forfeit yet
    run_tick(db, config, clock())
    assert queries.board(site, board).status == "active"
    clock.advance(days=2)
    run_tick(db, config, clock())
    assert queries.board(site, board).termination == "forfeit"


def test_a_bounce_for_a_forgotten_row_does_nothing(site: Site) -> None:
    assert unit.run(site, Bounced(999)) == ()


# --- forged reports ------------------------------------------------------------------------


def test_a_report_with_a_return_path_is_not_genuine() -> None:
    """Only the mail system writes reports, with the null return path (RFC 5321 4.5.5)."""
    path = bounce_address(SERVER, SECRET, 42)
    found = report_for(dsn(path, BOB), (path,), SERVER, SECRET, return_path="bob@example.net")
    assert found is not None and not found.genuine
    assert report_for(dsn(path, BOB), (path,), SERVER, SECRET, return_path="").genuine


def test_a_plain_mail_to_a_bounce_address_is_not_genuine() -> None:
    path = bounce_address(SERVER, SECRET, 42)
    plain = b"From: bob@example.net\nSubject: Undelivered\n\nYour mail failed: 550 5.1.1\n"
    found = report_for(plain, (path,), SERVER, SECRET, return_path="")
    assert found is not None and not found.genuine


def test_a_report_about_another_address_stops_nothing(
    db: Database, config: Config, clock: Clock, site: Site
) -> None:
    unit.run(site, Challenge("accasta", "bob", "alice", admin=True))
    with db.read() as s:
        to_bob = max(o.id or 0 for o in s.exec(select(OutboxMessage)) if o.to_addr == BOB_SITE)
    unit.run(site, Bounced(to_bob, frozenset({"someone@else.example"})))
    assert not queries.player(site, "bob").bouncing


def test_a_bounce_stops_the_clock_no_longer_than_the_vacation_days_left(
    db: Database, config: Config, clock: Clock, site: Site
) -> None:
    """A forged (or real) bounce buys at most the vacation days the player has left."""
    board = unit.run(site, Challenge("accasta", "bob", "alice", admin=True))[0].board or 0
    unit.run(site, GoOnVacation(26), Who("bob", Password("pw")))  # 4 of 30 days left
    unit.run(site, GoOnVacation(None), Who("bob", Password("pw")))  # back at once: 0 days used
    unit.run(site, GoOnVacation(26), Who("bob", Password("pw")))
    clock.advance(days=26)
    with db.read() as s:
        to_bob = max(o.id or 0 for o in s.exec(select(OutboxMessage)) if o.to_addr == BOB_SITE)
    unit.run(site, Bounced(to_bob, frozenset({BOB_SITE})))
    assert queries.player(site, "bob").bouncing
    clock.advance(days=4)
    assert not queries.player(site, "bob").bouncing  # the 4 days left are spent
    clock.advance(days=21, minutes=1)  # then his forfeit time runs as ever
    run_tick(db, config, clock())
    assert queries.board(site, board).termination == "forfeit"
    assert not queries.player(site, "bob").bouncing
