"""End to end over LMTP (RFC 2033): ``pbm serve`` behind a mail server, on a unix socket.

A real ``pbm serve`` with ``smtp.protocol = "lmtp"`` and ``smtp.listen =
"unix:/PATH"``; the test is the mail server handing mail over with
``smtplib.LMTP`` on the socket, and reads pbm's replies from the SMTP sink.
"""

from __future__ import annotations

import smtplib
import sqlite3
import stat
from contextlib import closing
from email.message import EmailMessage
from email.policy import SMTP
from pathlib import Path

import pytest
from mailserver import (
    SERVER_ADDRESS,
    PbmServer,
    Sink,
    board_number,
    body_of,
    challenge_accepted,
    reply_to,
    sign_up,
)

from pbm.games import get as get_game
from pbm.smtp import codes as status

pytestmark = pytest.mark.e2e

ALICE = "alice@example.org"
BOB = "bob@example.net"
STRANGER = "someone@elsewhere.example"


def query(srv: PbmServer, statement: str) -> list[tuple[object, ...]]:
    with closing(sqlite3.connect(srv.root / "data" / "pbm.sqlite3")) as conn:
        return conn.execute(statement).fetchall()


def reply_mail(sender: str, prev: EmailMessage, text: str) -> EmailMessage:
    """``sender``'s answer by Reply to the board mail ``prev``: the move, the mail quoted."""
    msg = EmailMessage()
    msg["From"] = sender
    msg["To"] = reply_to(prev)
    msg["Subject"] = f"Re: {prev['Subject']}"
    msg["Message-ID"] = f"<{text.replace(':', '.')}@client.test>"
    msg["In-Reply-To"] = str(prev["Message-ID"])
    quoted = "\n".join("> " + line for line in body_of(prev).splitlines())
    msg.set_content(f"{text}\n\nOn Sunday, pbm wrote:\n{quoted}\n")
    return msg


def hand_over(srv: PbmServer, msg: EmailMessage, rcpts: list[str]) -> list[str]:
    """What a mail server does: LHLO, MAIL, a RCPT each, DATA; the replies after DATA.

    RFC 2033 4.2: one reply per accepted recipient, in RCPT order (smtplib's
    LMTP reads only one, so they are read here one by one).
    """
    with srv.lmtp() as s:
        assert s.ehlo("mx.example.org")[0] == 250  # LHLO
        assert s.docmd(f"MAIL FROM:<{msg['From']}>")[0] == 250
        accepted = [r for r in rcpts if s.docmd(f"RCPT TO:<{r}>")[0] == 250]
        assert s.docmd("DATA")[0] == 354
        s.send(msg.as_bytes(policy=SMTP) + b".\r\n")
        answers = []
        for _ in accepted:
            code, text = s.getreply()
            answers.append(f"{code} {text.decode()}")
        assert s.noop()[0] == 250  # and nothing more: client and server agree
    return answers


def test_a_move_by_reply_handed_over_by_lmtp_on_a_unix_socket(tmp_path: Path, sink: Sink) -> None:
    sock = tmp_path / "pbm.sock"
    srv = PbmServer(tmp_path, sink_port=sink.port, protocol="lmtp", listen=f"unix:{sock}")
    srv.start()
    try:
        assert srv.socket_path == sock and srv.port is None
        assert stat.S_IMODE(sock.stat().st_mode) == 0o660
        # Mail for one recipient, the usual case: smtplib.LMTP's sendmail.
        sign_up(srv, sink, "alice", ALICE, "pw-a")
        sign_up(srv, sink, "bob", BOB, "pw-b")
        to_alice = challenge_accepted(srv, sink, ALICE, "accasta challenge alice bob", BOB)
        sink.wait_for(BOB, "alice to move")
        board = board_number(to_alice)

        # alice answers by Reply; the mail server hands it over for her token
        # address, for someone it should not have (refused at RCPT), and for
        # the server's own address (a Cc): one mail, one 250 per recipient.
        state = get_game("accasta").new()
        first = state.legal_moves()[0]
        token = reply_to(to_alice)
        answers = hand_over(
            srv, reply_mail(ALICE, to_alice, first), [token, STRANGER, SERVER_ADDRESS]
        )
        (row,) = query(srv, "SELECT id, rcpt_to FROM inbox ORDER BY id DESC LIMIT 1")
        assert answers == [
            status.LMTP_QUEUED.format(address=token, id=row[0]),
            status.LMTP_QUEUED.format(address=SERVER_ADDRESS, id=row[0]),
        ]
        assert row[1] == f"{token}\n{SERVER_ADDRESS}"
        to_bob = sink.wait_for(BOB, f"Board {board} - bob to move")
        sink.wait_for(ALICE, f"Board {board} - bob to move")
        assert "Move 1, alice " in body_of(to_bob)

        # Killed, the server leaves its socket behind; the restart replaces it.
        srv.kill()
        assert sock.exists()
        srv.start()
        state, _ = state.play(first)
        second = state.legal_moves()[0]
        answers = hand_over(srv, reply_mail(BOB, to_bob, second), [reply_to(to_bob)])
        assert [a[:4] for a in answers] == ["250 "]
        sink.wait_for(ALICE, f"Board {board} - alice to move")
        assert "Move 2, bob " in body_of(sink.wait_for(BOB, f"Board {board} - alice to move"))
        assert query(srv, f"SELECT count(*) FROM moves WHERE board={board}") == [(2,)]
        assert srv.stop() == 0
        assert not sock.exists()  # removed at stop
    finally:
        if srv.proc is not None:
            srv.stop()


def test_pbm_serve_keeps_client_rates_over_smtp_only(tmp_path: Path) -> None:
    """The configured rates reach the listener of ``pbm serve``; over LMTP there are none.

    Everything here happens well within a minute of the server's own clock.
    """
    limits = {"PBM_SMTP_CONNECTIONS_PER_MINUTE": "3", "PBM_SMTP_MESSAGES_PER_MINUTE": "2"}
    smtp_srv = PbmServer(tmp_path / "smtp", transport="maildir", extra_env=dict(limits))
    lmtp_srv = PbmServer(
        tmp_path / "lmtp",
        transport="maildir",
        extra_env=dict(limits),
        protocol="lmtp",
        listen=f"unix:{tmp_path / 'pbm.sock'}",
    )
    for srv in (smtp_srv, lmtp_srv):
        srv.root.mkdir()
        srv.start()
    try:
        with smtp_srv.smtp() as s:  # connection 1
            s.ehlo("client.test")
            for _ in range(2):
                assert s.docmd("MAIL FROM:<alice@example.org>")[0] == 250
                s.rset()
            code, text = s.docmd("MAIL FROM:<alice@example.org>")
            assert f"{code} {text.decode()}" == status.TOO_MANY_MAILS
        for _ in range(2):  # connections 2 and 3
            with smtp_srv.smtp() as s:
                assert s.noop()[0] == 250
        with pytest.raises(smtplib.SMTPConnectError) as exc:
            smtp_srv.smtp()
        assert exc.value.smtp_code == 421
        for _ in range(4):
            with lmtp_srv.lmtp() as s:
                s.ehlo("mx.example.org")
                for _ in range(3):
                    assert s.docmd("MAIL FROM:<alice@example.org>")[0] == 250
                    s.rset()
    finally:
        smtp_srv.stop()
        lmtp_srv.stop()
