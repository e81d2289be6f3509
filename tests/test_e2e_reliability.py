"""End to end: nothing accepted is lost or applied twice; no relay; limits; restarts.

Each test drives real ``pbm serve`` processes over loopback SMTP, and reads
what they send from a real SMTP sink and from the database.
"""

from __future__ import annotations

import smtplib
import ssl
from email.message import EmailMessage
from pathlib import Path

import pytest
import sqlalchemy as sa
from conftest import _truncate
from mailserver import (
    SERVER_ADDRESS,
    PbmServer,
    Sink,
    StartServer,
    about,
    board_number,
    challenge_accepted,
    sign_up,
    until,
)
from smtp_relay import self_signed_cert

from pbm.games import get as get_game

pytestmark = pytest.mark.e2e

ALICE = "alice@example.org"
BOB = "bob@example.net"


def sqlite_url(srv: PbmServer) -> str:
    return f"sqlite:///{srv.root / 'data' / 'pbm.sqlite3'}"


def query(url: str, sql: str) -> list[tuple[object, ...]]:
    engine = sa.create_engine(url)
    try:
        with engine.connect() as conn:
            return [tuple(r) for r in conn.exec_driver_sql(sql).all()]
    finally:
        engine.dispose()


def new_board(srv: PbmServer, sink: Sink, white: str = "alice", black: str = "bob") -> int:
    sign_up(srv, sink, white, f"{white}@example.org", f"pw-{white}")
    sign_up(srv, sink, black, f"{black}@example.org", f"pw-{black}")
    mail = challenge_accepted(
        srv,
        sink,
        f"{white}@example.org",
        f"accasta challenge {white} {black}",
        f"{black}@example.org",
    )
    sink.wait_for(f"{black}@example.org", f"{white} to move")
    return board_number(mail)


def test_same_mail_twice_moves_once(server: PbmServer, sink: Sink) -> None:
    board = new_board(server, sink)
    mid = server.send("alice@example.org", f"accasta move {board} alice pw-alice a1:C+b2,HS-c1")
    sink.wait_for("bob@example.org", "bob to move")
    # The same mail again (a retrying relay, a second copy): no effect, no answer.
    server.send(
        "alice@example.org",
        f"accasta move {board} alice pw-alice a1:C+b2,HS-c1",
        message_id=mid,
    )
    server.send("bob@example.org", f"accasta history {board}")
    history = sink.wait_for("bob@example.org", "history")
    assert "a1:C+b2,HS-c1" in str(history.get_body(("plain",)).get_content())  # type: ignore[union-attr]
    assert query(sqlite_url(server), f"select count(*) from moves where board={board}") == [(1,)]
    leftovers = [m for m in sink.drain() if "error" in about(m)]
    assert leftovers == []


def test_size_limit_552_and_stranger_550(start_server: StartServer) -> None:
    srv = start_server(PBM_SMTP_MAX_MESSAGE_BYTES="5000")
    with srv.smtp() as s:
        code, _ = s.ehlo()
        assert code == 250
        assert s.has_extn("8bitmime") and s.has_extn("smtputf8") and s.has_extn("size")
        # RFC 5321 §3.6.2: we relay nothing; only our own addresses are accepted.
        code, msg = s.docmd("MAIL FROM:<x@example.org>")
        assert code == 250
        code, msg = s.docmd("RCPT TO:<someone@elsewhere.example>")
        assert code == 550, msg
        code, msg = s.docmd("RCPT TO:<pbm+1.alice.0000000000@elsewhere.example>")
        assert code == 550
        s.rset()
    big = b"Subject: big\r\n\r\n" + (b"x" * 70 + b"\r\n") * 150
    # Declared with SIZE (RFC 1870): refused at MAIL FROM.
    with pytest.raises(smtplib.SMTPSenderRefused) as exc, srv.smtp() as s:
        s.sendmail("x@example.org", [SERVER_ADDRESS], big)
    assert exc.value.smtp_code == 552
    # Not declared: refused after DATA.
    with srv.smtp() as s:
        assert s.docmd("HELO client.test")[0] == 250
        assert s.docmd("MAIL FROM:<x@example.org>")[0] == 250
        assert s.docmd(f"RCPT TO:<{SERVER_ADDRESS}>")[0] == 250
        assert s.docmd("DATA")[0] == 354
        s.send(big + b".\r\n")
        code, _ = s.getreply()
        assert code == 552
    with pytest.raises(smtplib.SMTPRecipientsRefused) as refused:
        srv.send("x@example.org", "help", to="postmaster@pbm.test")
    assert refused.value.recipients["postmaster@pbm.test"][0] == 550
    assert query(sqlite_url(srv), "select count(*) from inbox") == [(0,)]


def test_relay_down_replies_wait_then_all_go_out(tmp_path: Path) -> None:
    sink = Sink()  # not started yet: the relay is down
    srv = PbmServer(tmp_path, sink_port=sink.port)
    srv.start()
    try:
        for uid in ("alice", "bob", "carol"):
            srv.send(f"{uid}@example.org", f"signup {uid} pw-{uid}")
        url = sqlite_url(srv)
        until(lambda: query(url, "select count(*) from inbox where status='done'") == [(3,)])
        pending = query(url, "select count(*), sum(attempts) from outbox where status='pending'")
        assert pending[0][0] == 3
        # Each is tried and deferred, no attempt charged: the relay, not the mail, is down.
        tried = "select count(*) from outbox where next_attempt_at > created_at"
        until(lambda: query(url, tried) == [(3,)])
        assert query(url, "select max(attempts) from outbox") == [(0,)]
        listing = srv.pbm("outbox", "list")
        assert listing.count("pending") >= 3
        sink.start()
        for uid in ("alice", "bob", "carol"):
            sink.wait_for(f"{uid}@example.org", "confirm your account")
        until(lambda: query(url, "select count(*) from outbox where status='sent'") == [(3,)])
        assert sink.drain() == []  # each sent once
    finally:
        srv.stop()
        sink.stop()


def test_sigkill_after_250_processes_after_restart(tmp_path: Path, sink: Sink) -> None:
    srv = PbmServer(tmp_path, sink_port=sink.port)
    srv.start()
    board = new_board(srv, sink)
    srv.stop()
    # Accept-only mode: the mail is committed and answered 250, then the process dies.
    srv.extra_env["PBM_SERVER_PROCESS_INBOX"] = "false"
    srv.start()
    srv.send("alice@example.org", f"accasta move {board} alice pw-alice a1:C+b2,HS-c1")
    srv.kill()
    url = sqlite_url(srv)
    assert query(url, "select status from inbox order by id desc limit 1") == [("new",)]
    srv.extra_env.pop("PBM_SERVER_PROCESS_INBOX")
    srv.start()
    try:
        sink.wait_for("bob@example.org", "bob to move")
        until(lambda: query(url, "select count(*) from inbox where status='new'") == [(0,)])
        assert query(url, f"select count(*) from moves where board={board}") == [(1,)]
    finally:
        srv.stop()


def test_sigkill_mid_batch_loses_nothing(tmp_path: Path, sink: Sink) -> None:
    """A burst of moves on many boards, the server killed right after the last 250."""
    srv = PbmServer(tmp_path, sink_port=sink.port)
    srv.start()
    boards = [new_board(srv, sink, f"w{i}", f"b{i}") for i in range(6)]
    sink.drain()
    for i, board in enumerate(boards):
        srv.send(f"w{i}@example.org", f"accasta move {board} w{i} pw-w{i} a1:C+b2,HS-c1")
    srv.kill()
    srv.start()  # its claims are taken back at once, not when their leases end
    try:
        url = sqlite_url(srv)
        until(lambda: query(url, "select count(*) from moves") == [(6,)])
        until(lambda: query(url, "select count(*) from inbox where status='new'") == [(0,)])
        for i in range(6):
            sink.wait_for(f"b{i}@example.org", f"b{i} to move")
    finally:
        srv.stop()


@pytest.mark.postgres
def test_two_servers_one_postgres_every_move_once(
    tmp_path: Path, sink: Sink, postgres_url: str
) -> None:
    """Two instances, mails spread over both: every move applied once, every reply sent once."""
    _truncate(postgres_url)
    # Instances of one site share the database and the secret of reply tokens.
    shared = {"PBM_MAIL_SECRET": "one-secret-for-the-site"}
    a = PbmServer(tmp_path / "a", postgres_url, sink.port, extra_env=dict(shared))
    b = PbmServer(tmp_path / "b", postgres_url, sink.port, extra_env=dict(shared))
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    a.start()
    b.start()
    servers = [a, b]
    try:
        n_boards = 4
        boards = [new_board(servers[i % 2], sink, f"w{i}", f"b{i}") for i in range(n_boards)]
        sink.drain()
        game = get_game("accasta")
        states = {board: game.new() for board in boards}
        plies = 6
        for ply in range(plies):
            for i, board in enumerate(boards):
                st = states[board]
                move = st.legal_moves()[(ply * 7 + i) % len(st.legal_moves())]
                uid = f"w{i}" if ply % 2 == 0 else f"b{i}"
                srv = servers[(ply + i) % 2]
                mid = srv.send(
                    f"{uid}@example.org", f"accasta move {board} {uid} pw-{uid} {move}#{ply + 1}"
                )
                # The same mail delivered to the other instance too.
                servers[(ply + i + 1) % 2].send(
                    f"{uid}@example.org",
                    f"accasta move {board} {uid} pw-{uid} {move}#{ply + 1}",
                    message_id=mid,
                )
                states[board] = st.play(move)[0]
            for i in range(n_boards):
                nxt = f"w{i}" if ply % 2 == 1 else f"b{i}"
                for who in (f"w{i}", f"b{i}"):
                    sink.wait_for(f"{who}@example.org", f"{nxt} to move")
        rows = query(postgres_url, "select board, count(*) from moves group by board")
        assert sorted(rows) == sorted((board, plies) for board in boards)
        until(
            lambda: (
                query(postgres_url, "select count(*) from outbox where status='pending'") == [(0,)]
            )
        )
        extra = sink.drain()
        assert [about(m) for m in extra if "error" not in about(m)] == []
        sent = query(postgres_url, "select message_id from outbox where status='sent'")
        assert len(sent) == len({r[0] for r in sent})
        # Each instance took part: the mails really were spread over both.
        workers = query(postgres_url, "select distinct processed_by from inbox")
        hosts = {str(w[0]).split(":")[1] for w in workers if w[0]}
        assert len(hosts) == 2
    finally:
        a.stop()
        b.stop()


def test_starttls_when_a_certificate_is_configured(tmp_path: Path, sink: Sink) -> None:
    """RFC 3207: with smtp.tls_cert and smtp.tls_key set, the listener offers STARTTLS."""
    cert, key = self_signed_cert(tmp_path)
    srv = PbmServer(
        tmp_path / "site",
        sink_port=sink.port,
        extra_env={"PBM_SMTP_TLS_CERT": str(cert), "PBM_SMTP_TLS_KEY": str(key)},
    )
    (tmp_path / "site").mkdir()
    srv.start()
    try:
        with srv.smtp() as s:
            s.ehlo()
            assert s.has_extn("starttls")
            s.starttls(context=ssl._create_unverified_context())
            s.ehlo()
            msg = EmailMessage()
            msg["From"], msg["To"], msg["Subject"] = ALICE, SERVER_ADDRESS, "signup alice pw-a"
            msg["Message-ID"] = "<tls-1@client.test>"
            msg.set_content("\n")
            s.send_message(msg)
        sink.wait_for(ALICE, "confirm your account alice")
    finally:
        srv.stop()


def test_a_failed_commit_answers_451_and_the_client_keeps_the_mail(
    server: PbmServer, sink: Sink
) -> None:
    """RFC 5321 §4.2.1: if the inbox cannot take the mail, a 4yz: the sender retries later."""
    url = sqlite_url(server)
    engine = sa.create_engine(url)
    with engine.begin() as conn:  # the inbox is gone: every commit of a mail fails
        conn.exec_driver_sql("ALTER TABLE inbox RENAME TO inbox_away")
    try:
        with pytest.raises(smtplib.SMTPDataError) as exc:
            server.send(ALICE, "signup alice pw-a")
        assert exc.value.smtp_code == 451
        assert b"Temporary failure" in exc.value.smtp_error
        assert b"Error" not in exc.value.smtp_error  # nothing of our internals on the wire
    finally:
        with engine.begin() as conn:
            conn.exec_driver_sql("ALTER TABLE inbox_away RENAME TO inbox")
        engine.dispose()
    # The client's retry goes through.
    server.send(ALICE, "signup alice pw-a")
    sink.wait_for(ALICE, "confirm your account alice")
