"""Outbound mail: messages, transports over a real SMTP sink and a real Maildir, the outbox."""

from __future__ import annotations

import asyncio
import email
import email.policy
import socket
import sqlite3
from collections.abc import AsyncIterator, Awaitable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from email.message import EmailMessage
from pathlib import Path
from typing import Any, TypeVar

import pytest
from aiosmtpd.smtp import SMTP, Envelope, Session
from click.testing import CliRunner

from pbm import store
from pbm.cli.outbox import outbox as outbox_cli
from pbm.config import Config, from_mapping
from pbm.mail.outbound import (
    MAX_LINE,
    MaildirTransport,
    OutboxSender,
    PermanentFailure,
    SmtpTransport,
    TemporaryFailure,
    Transport,
    build_message,
    list_outbox,
    retry,
    retry_delay,
    transport_from_config,
    wrap_body,
)
from pbm.replies import Reply
from pbm.store import Database, OutboxMessage

T = TypeVar("T")
T0 = datetime(2024, 3, 1, 12, 0, 0, tzinfo=UTC)


def run(coro: Awaitable[T]) -> T:
    async def main() -> T:
        return await coro

    return asyncio.run(main())


def make_config(**outbound: Any) -> Config:
    return from_mapping(
        {
            "mail": {"address": "pbm@example.org", "from_name": "PBM Server", "secret": "s"},
            "outbound": outbound,
        },
        env={},
    )


@dataclass
class Row:
    """Stands in for an outbox row where only the message fields matter."""

    to_addr: str = "bob@example.net"
    subject: str = "Accasta Board 12 - bob to move"
    body: str = "Hello bob.\n"
    reply_to: str | None = None
    in_reply_to: str | None = None
    message_id: str = "<1.abc@example.org>"
    created_at: datetime = T0


def parse(msg: EmailMessage) -> EmailMessage:
    parsed = email.message_from_bytes(msg.as_bytes(), policy=email.policy.default)
    assert isinstance(parsed, EmailMessage)
    return parsed


def text_of(msg: EmailMessage) -> str:
    """The decoded body text with LF line ends."""
    content = msg.get_content()
    assert isinstance(content, str)
    return content.replace("\r\n", "\n")


# --- build_message ---------------------------------------------------------


def test_headers() -> None:
    msg = build_message(Row(), make_config())
    assert msg["From"] == '"PBM Server" <pbm@example.org>' or msg["From"] == (
        "PBM Server <pbm@example.org>"
    )
    assert msg["From"].addresses[0].addr_spec == "pbm@example.org"
    assert msg["From"].addresses[0].display_name == "PBM Server"
    assert msg["To"] == "bob@example.net"
    assert msg["Subject"] == "Accasta Board 12 - bob to move"
    assert msg["Message-ID"] == "<1.abc@example.org>"
    assert msg["Auto-Submitted"] == "auto-replied"
    assert msg["X-Auto-Response-Suppress"] == "All"
    assert msg["MIME-Version"] == "1.0"
    assert email.utils.parsedate_to_datetime(msg["Date"]) == T0
    assert msg["Reply-To"] is None
    assert msg["In-Reply-To"] is None and msg["References"] is None
    # Each header once.
    assert sorted(msg.keys()) == sorted(set(msg.keys()))


@pytest.mark.parametrize("name", ["Games Room, Inc.", "Spielraum Jürgen"])
def test_from_name_quoted_or_encoded(name: str) -> None:
    config = from_mapping(
        {"mail": {"address": "pbm@example.org", "from_name": name, "secret": "s"}}, env={}
    )
    raw = build_message(Row(), config).as_bytes()
    assert raw.isascii()
    msg = parse(build_message(Row(), config))
    assert msg["From"].addresses[0].display_name == name
    assert msg["From"].addresses[0].addr_spec == "pbm@example.org"


def test_threading_and_reply_to() -> None:
    row = Row(reply_to="pbm+12.bob.0123456789@example.org", in_reply_to="<cmd-7@example.net>")
    msg = parse(build_message(row, make_config()))
    assert msg["Reply-To"] == "pbm+12.bob.0123456789@example.org"
    assert msg["In-Reply-To"] == "<cmd-7@example.net>"
    assert msg["References"] == "<cmd-7@example.net>"


def test_naive_created_at_is_utc() -> None:
    msg = build_message(Row(created_at=T0.replace(tzinfo=None)), make_config())
    assert email.utils.parsedate_to_datetime(msg["Date"]) == T0


def test_ascii_body_is_7bit_us_ascii() -> None:
    body = "Board 12\n\n  a b c\n5 . w . .\n"
    msg = build_message(Row(body=body), make_config())
    assert msg.get_content_type() == "text/plain"
    assert msg.get_content_charset() == "us-ascii"
    assert msg["Content-Transfer-Encoding"] == "7bit"
    raw = msg.as_bytes()
    assert raw.isascii()
    assert b"5 . w . .\r\n" in raw
    assert text_of(parse(msg)) == body


def test_non_ascii_body_is_utf8_quoted_printable() -> None:
    body = "Grüße from Jürgen: \N{WHITE CHESS KING}\n"
    msg = build_message(Row(body=body, subject="Zug von Jürgen"), make_config())
    assert msg.get_content_charset() == "utf-8"
    assert msg["Content-Transfer-Encoding"] == "quoted-printable"
    raw = msg.as_bytes()
    assert raw.isascii()  # RFC 2047 subject, RFC 2045 quoted-printable body
    parsed = parse(msg)
    assert text_of(parsed) == body
    assert parsed["Subject"] == "Zug von Jürgen"


def test_long_lines_are_wrapped() -> None:
    words = " ".join(f"word{i}" for i in range(60))
    body = f"{words}\n{'x' * 200}\nshort\n"
    msg = build_message(Row(body=body), make_config())
    raw = msg.as_bytes()
    _, _, payload = raw.partition(b"\r\n\r\n")
    for line in raw.split(b"\r\n"):
        assert len(line) <= MAX_LINE, line
    text = text_of(parse(msg))
    assert text.replace("\n", " ").split() == (
        f"{words} {'x' * 78} {'x' * 78} {'x' * 44} short".split()
    )
    assert payload.endswith(b"short\r\n")


def test_long_non_ascii_lines_stay_short_when_encoded() -> None:
    body = "ä" * 200 + "\n"
    raw = build_message(Row(body=body), make_config()).as_bytes()
    assert all(len(line) <= MAX_LINE for line in raw.split(b"\r\n"))
    assert text_of(parse(build_message(Row(body=body), make_config()))) == (
        "ä" * 78 + "\n" + "ä" * 78 + "\n" + "ä" * 44 + "\n"
    )


def test_wrap_body_normalises_line_ends_and_keeps_short_lines() -> None:
    assert wrap_body("a\r\nb\rc") == "a\nb\nc\n"
    assert wrap_body("") == "\n"
    diagram = "   +---+---+\n 1 | w |   |\n"
    assert wrap_body(diagram) == diagram
    assert wrap_body("aaa bbb ccc", width=7) == "aaa bbb\nccc\n"


def test_same_row_same_bytes() -> None:
    row = Row(in_reply_to="<x@y>")
    assert build_message(row, make_config()).as_bytes() == (
        build_message(row, make_config()).as_bytes()
    )


# --- an SMTP sink on loopback ----------------------------------------------


@dataclass
class SinkHandler:
    """An aiosmtpd handler that keeps what it accepts and answers DATA from a script."""

    script: list[str] = field(default_factory=list)  # replies to DATA, then "250 OK"
    rcpt_script: list[str] = field(default_factory=list)  # replies to RCPT, then accept
    received: list[tuple[str, list[str], bytes]] = field(default_factory=list)

    async def handle_RCPT(
        self, server: SMTP, session: Session, envelope: Envelope, address: str, options: list[str]
    ) -> str:
        if self.rcpt_script:
            return self.rcpt_script.pop(0)
        envelope.rcpt_tos.append(address)
        return "250 OK"

    async def handle_DATA(self, server: SMTP, session: Session, envelope: Envelope) -> str:
        if self.script:
            return self.script.pop(0)
        content = envelope.content
        assert isinstance(content, bytes)
        self.received.append((str(envelope.mail_from), list(envelope.rcpt_tos), content))
        return "250 OK"

    def messages(self) -> list[EmailMessage]:
        out = []
        for _, _, data in self.received:
            msg = email.message_from_bytes(data, policy=email.policy.default)
            assert isinstance(msg, EmailMessage)
            out.append(msg)
        return out


def free_port() -> int:
    """A loopback port that nothing listens on (just now)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


@asynccontextmanager
async def smtp_sink(handler: SinkHandler, port: int = 0) -> AsyncIterator[int]:
    """A real aiosmtpd server on 127.0.0.1 for the block; yields its port."""
    loop = asyncio.get_running_loop()
    server = await loop.create_server(
        lambda: SMTP(handler, hostname="sink.test"), "127.0.0.1", port, reuse_address=True
    )
    try:
        yield server.sockets[0].getsockname()[1]
    finally:
        server.close()
        await server.wait_closed()


def test_smtp_transport_delivers() -> None:
    handler = SinkHandler()

    async def go() -> None:
        async with smtp_sink(handler) as port:
            transport = SmtpTransport("127.0.0.1", port, sender="pbm@example.org")
            msg = build_message(Row(body="Grüße\n" + "y" * 100), make_config())
            await transport.send(msg, ["bob@example.net"])

    run(go())
    assert len(handler.received) == 1
    mail_from, rcpts, _ = handler.received[0]
    assert mail_from == "pbm@example.org"
    assert rcpts == ["bob@example.net"]
    got = handler.messages()[0]
    assert got["Message-ID"] == "<1.abc@example.org>"
    assert text_of(got) == "Grüße\n" + "y" * 78 + "\n" + "y" * 22 + "\n"


@pytest.mark.parametrize(
    ("reply", "failure"),
    [
        ("451 4.3.0 try again later", TemporaryFailure),
        ("452 4.3.1 insufficient storage", TemporaryFailure),
        ("550 5.1.1 no such user", PermanentFailure),
        ("554 5.6.0 message refused", PermanentFailure),
    ],
)
def test_smtp_transport_classifies_data_replies(reply: str, failure: type[Exception]) -> None:
    handler = SinkHandler(script=[reply])

    async def go() -> None:
        async with smtp_sink(handler) as port:
            await SmtpTransport("127.0.0.1", port).send(
                build_message(Row(), make_config()), ["bob@example.net"]
            )

    with pytest.raises(failure) as info:
        run(go())
    assert reply.split()[0] in str(info.value)
    assert not getattr(info.value, "relay_down", False)


@pytest.mark.parametrize(
    ("reply", "failure"),
    [("450 4.2.1 mailbox busy", TemporaryFailure), ("550 5.1.1 unknown", PermanentFailure)],
)
def test_smtp_transport_classifies_rcpt_replies(reply: str, failure: type[Exception]) -> None:
    handler = SinkHandler(rcpt_script=[reply])

    async def go() -> None:
        async with smtp_sink(handler) as port:
            await SmtpTransport("127.0.0.1", port).send(
                build_message(Row(), make_config()), ["bob@example.net"]
            )

    with pytest.raises(failure):
        run(go())
    assert handler.received == []


def test_smtp_transport_relay_down_is_temporary() -> None:
    port = free_port()

    async def go() -> None:
        await SmtpTransport("127.0.0.1", port, timeout=5).send(
            build_message(Row(), make_config()), ["bob@example.net"]
        )

    with pytest.raises(TemporaryFailure) as info:
        run(go())
    assert info.value.relay_down


# --- Maildir ---------------------------------------------------------------


def test_maildir_transport_one_file_per_mail(tmp_path: Path) -> None:
    box = tmp_path / "outbox"
    transport = MaildirTransport(box)

    async def go() -> None:
        for n in range(3):
            row = Row(message_id=f"<{n}@example.org>", body=f"mail {n}\nGrüße\n")
            await transport.send(build_message(row, make_config()), [row.to_addr])

    run(go())
    assert sorted(p.name for p in box.iterdir()) == ["cur", "new", "tmp"]
    assert list((box / "tmp").iterdir()) == []
    files = sorted((box / "new").iterdir())
    assert len(files) == 3
    ids = set()
    for path in files:
        data = path.read_bytes()
        assert b"\r\n" not in data  # local line ends on disk
        msg = email.message_from_bytes(data, policy=email.policy.default)
        assert isinstance(msg, EmailMessage)
        ids.add(msg["Message-ID"])
        assert text_of(msg).startswith("mail ")
        assert text_of(msg).endswith("Grüße\n")
    assert ids == {"<0@example.org>", "<1@example.org>", "<2@example.org>"}


def test_maildir_transport_into_an_existing_empty_folder(tmp_path: Path) -> None:
    box = tmp_path / "outbox"
    box.mkdir()
    run(MaildirTransport(box).send(build_message(Row(), make_config()), ["bob@example.net"]))
    assert len(list((box / "new").iterdir())) == 1


def test_maildir_transport_when_the_folder_goes_away(tmp_path: Path) -> None:
    """A Maildir removed under a running server is made again for the next mail."""
    import shutil

    box = tmp_path / "outbox"
    transport = MaildirTransport(box)
    run(transport.send(build_message(Row(), make_config()), ["bob@example.net"]))
    shutil.rmtree(box)
    run(transport.send(build_message(Row(), make_config()), ["bob@example.net"]))
    assert len(list((box / "new").iterdir())) == 1
    assert list((box / "tmp").iterdir()) == []


def test_maildir_reader_may_take_each_mail_at_once(tmp_path: Path) -> None:
    """A mail reader moves what it read from new/ to cur/: delivery never looks back."""
    box = tmp_path / "outbox"
    transport = MaildirTransport(box)
    names: set[str] = set()
    for n in range(3):
        run(transport.send(build_message(Row(message_id=f"<{n}@x>"), make_config()), ["b@x"]))
        (path,) = (box / "new").iterdir()
        names.add(path.name)
        path.rename(box / "cur" / f"{path.name}:2,S")
    assert len(names) == 3  # each file its own unique name
    assert len(list((box / "cur").iterdir())) == 3


def test_transport_from_config(tmp_path: Path) -> None:
    maildir = transport_from_config(make_config(maildir=str(tmp_path / "box")))
    assert isinstance(maildir, MaildirTransport)
    assert maildir.path == tmp_path / "box"
    smtp = transport_from_config(
        make_config(transport="smtp", smtp_host="relay.example", smtp_port=587, starttls=True)
    )
    assert isinstance(smtp, SmtpTransport)
    assert (smtp.host, smtp.port, smtp.starttls, smtp.sender) == (
        "relay.example",
        587,
        True,
        "pbm@example.org",
    )
    with pytest.raises(ValueError, match=r"outbound\.transport"):
        transport_from_config(make_config(transport="carrier-pigeon"))


# --- the outbox sender over a real database and a real SMTP sink -------------


class Clock:
    """A clock the test moves by hand."""

    def __init__(self, now: datetime = T0) -> None:
        self.now = now

    def __call__(self) -> datetime:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += timedelta(seconds=seconds)


def enqueue(db: Database, config: Config, *replies: Reply, now: datetime = T0) -> list[int]:
    with db.transaction() as session:
        return store.enqueue_replies(session, replies, config, now)


def reply(n: int = 0, **kw: Any) -> Reply:
    fields: dict[str, Any] = {
        "to": f"player{n}@example.net",
        "subject": f"Accasta Board {n} - your move",
        "body": f"Board {n}\n",
    }
    fields.update(kw)
    return Reply(**fields)


def row_of(db: Database, row_id: int) -> OutboxMessage:
    with db.transaction() as session:
        row = session.get(OutboxMessage, row_id)
        assert row is not None
        return row


def smtp_sender(db: Database, config: Config, port: int, clock: Clock, **kw: Any) -> OutboxSender:
    transport: Transport = SmtpTransport("127.0.0.1", port, sender=config.mail.address, timeout=5)
    return OutboxSender(db, config, transport, clock, **kw)


def test_sends_due_rows_once(db: Database) -> None:
    config = make_config()
    ids = enqueue(
        db,
        config,
        reply(1, board=1, reply_as="bob", in_reply_to="<cmd@example.net>"),
        reply(2),
        reply(3, body="Grüße\n"),
    )
    handler = SinkHandler()
    clock = Clock()

    async def go() -> tuple[int, int]:
        async with smtp_sink(handler) as port:
            sender = smtp_sender(db, config, port, clock)
            return await sender.run_once(), await sender.run_once()

    assert run(go()) == (3, 0)
    assert [rcpts for _, rcpts, _ in handler.received] == [
        ["player1@example.net"],
        ["player2@example.net"],
        ["player3@example.net"],
    ]
    first = handler.messages()[0]
    assert first["In-Reply-To"] == "<cmd@example.net>"
    assert first["Reply-To"].startswith("pbm+1.bob.")
    assert first["Message-ID"] == row_of(db, ids[0]).message_id
    assert text_of(handler.messages()[2]) == "Grüße\n"
    for row_id in ids:
        row = row_of(db, row_id)
        assert (row.status, row.attempts, row.sent_at) == ("sent", 1, T0)
        assert row.claimed_by is None and row.claimed_until is None


def test_temporary_failure_backs_off_then_sends(db: Database) -> None:
    config = make_config(retry_base_seconds=30)
    [row_id] = enqueue(db, config, reply())
    handler = SinkHandler(script=["451 4.3.0 greylisted", "451 4.3.0 greylisted again"])
    clock = Clock()

    async def go() -> None:
        async with smtp_sink(handler) as port:
            sender = smtp_sender(db, config, port, clock)
            assert await sender.run_once() == 0
            row = row_of(db, row_id)
            assert (row.status, row.attempts) == ("pending", 1)
            assert row.next_attempt_at == T0 + timedelta(seconds=30)
            assert row.last_error is not None and "451" in row.last_error

            clock.advance(29)
            assert await sender.run_once() == 0  # not due yet: the relay is not asked
            assert handler.script == ["451 4.3.0 greylisted again"]

            clock.advance(1)
            assert await sender.run_once() == 0
            row = row_of(db, row_id)
            assert (row.status, row.attempts) == ("pending", 2)
            assert row.next_attempt_at == clock.now + timedelta(seconds=60)  # doubled

            clock.advance(60)
            assert await sender.run_once() == 1

    run(go())
    row = row_of(db, row_id)
    assert (row.status, row.attempts, row.sent_at) == ("sent", 3, T0 + timedelta(seconds=90))
    assert len(handler.received) == 1


def test_permanent_failure_marks_failed(db: Database) -> None:
    config = make_config()
    bad, good = enqueue(db, config, reply(1), reply(2))
    handler = SinkHandler(script=["550 5.1.1 no such user"])
    clock = Clock()

    async def go() -> int:
        async with smtp_sink(handler) as port:
            sender = smtp_sender(db, config, port, clock)
            sent = await sender.run_once()
            clock.advance(3600)
            return sent + await sender.run_once()

    assert run(go()) == 1
    row = row_of(db, bad)
    assert (row.status, row.attempts) == ("failed", 1)
    assert row.last_error is not None and "550 5.1.1 no such user" in row.last_error
    assert row_of(db, good).status == "sent"
    assert [rcpts for _, rcpts, _ in handler.received] == [["player2@example.net"]]


def test_gives_up_after_max_attempts(db: Database) -> None:
    config = make_config(max_attempts=3, retry_base_seconds=10)
    [row_id] = enqueue(db, config, reply())
    handler = SinkHandler(script=["421 4.4.5 busy"] * 5)
    clock = Clock()

    async def go() -> None:
        async with smtp_sink(handler) as port:
            sender = smtp_sender(db, config, port, clock)
            for _ in range(5):
                assert await sender.run_once() == 0
                clock.advance(3600)

    run(go())
    row = row_of(db, row_id)
    assert (row.status, row.attempts) == ("failed", 3)
    assert len(handler.script) == 2  # asked three times, then left alone


def test_relay_down_rows_wait_then_all_go_out(db: Database) -> None:
    config = make_config(retry_base_seconds=30)
    ids = enqueue(db, config, *(reply(n) for n in range(4)))
    port = free_port()
    handler = SinkHandler()
    clock = Clock()

    async def go() -> tuple[int, int, int]:
        sender = smtp_sender(db, config, port, clock)
        down = await sender.run_once()
        for row_id in ids:
            row = row_of(db, row_id)
            assert (row.status, row.attempts) == ("pending", 1)
            assert row.next_attempt_at == T0 + timedelta(seconds=30)
        clock.advance(10)
        early = await sender.run_once()
        async with smtp_sink(handler, port):
            clock.advance(20)
            return down, early, await sender.run_once()

    assert run(go()) == (0, 0, 4)
    assert len(handler.received) == 4
    assert all(row_of(db, row_id).status == "sent" for row_id in ids)


def test_two_senders_never_send_one_row_twice(db: Database) -> None:
    config = make_config()
    enqueue(db, config, *(reply(n) for n in range(12)))
    handler = SinkHandler()
    clock = Clock()

    async def go() -> list[int]:
        async with smtp_sink(handler) as port:
            a = smtp_sender(db, config, port, clock, batch_size=5, worker="a")
            b = smtp_sender(db, config, port, clock, batch_size=5, worker="b")
            counts: list[int] = []
            for _ in range(3):
                counts.extend(await asyncio.gather(a.run_once(), b.run_once()))
            return counts

    counts = run(go())
    assert sum(counts) == 12
    recipients = [rcpts[0] for _, rcpts, _ in handler.received]
    assert sorted(recipients) == sorted(f"player{n}@example.net" for n in range(12))


def test_claim_of_a_dead_sender_expires(db: Database) -> None:
    config = make_config()
    [row_id] = enqueue(db, config, reply())
    with db.transaction() as session:
        store.claim_outbox(session, "dead", T0, lease=timedelta(minutes=5))
    handler = SinkHandler()
    clock = Clock()

    async def go() -> tuple[int, int]:
        async with smtp_sink(handler) as port:
            sender = smtp_sender(db, config, port, clock)
            before = await sender.run_once()
            clock.advance(5 * 60 + 1)
            return before, await sender.run_once()

    assert run(go()) == (0, 1)
    assert row_of(db, row_id).status == "sent"


class SlowTransport:
    """Delivers to a Maildir while the test clock moves on, as a slow relay would."""

    def __init__(self, path: Path, clock: Clock, seconds: float) -> None:
        self.inner = MaildirTransport(path)
        self.clock = clock
        self.seconds = seconds

    async def send(self, msg: EmailMessage, recipients: Sequence[str]) -> None:
        await self.inner.send(msg, recipients)
        self.clock.advance(self.seconds)


def test_rows_are_given_back_before_the_lease_runs_out(db: Database, tmp_path: Path) -> None:
    config = make_config()
    ids = enqueue(db, config, *(reply(n) for n in range(5)))
    clock = Clock()
    transport = SlowTransport(tmp_path / "box", clock, seconds=4 * 60)
    sender = OutboxSender(db, config, transport, clock, lease=timedelta(minutes=10), concurrency=1)
    assert run(sender.run_once()) == 3  # sends at 0, 4 and 8 minutes; at 12 the lease is near
    for row_id in ids[3:]:
        row = row_of(db, row_id)
        assert (row.status, row.attempts, row.claimed_by) == ("pending", 0, None)
    assert run(sender.run_once()) == 2
    assert len(list((tmp_path / "box" / "new").iterdir())) == 5


class BrokenTransport:
    """A transport with a bug in it."""

    async def send(self, msg: EmailMessage, recipients: Sequence[str]) -> None:
        raise RuntimeError("oops")


def test_an_unexpected_error_counts_as_a_failed_attempt(db: Database) -> None:
    config = make_config(max_attempts=2)
    [row_id] = enqueue(db, config, reply())
    clock = Clock()
    sender = OutboxSender(db, config, BrokenTransport(), clock)
    assert run(sender.run_once()) == 0
    row = row_of(db, row_id)
    assert (row.status, row.attempts) == ("pending", 1)
    assert row.last_error is not None and "oops" in row.last_error
    clock.advance(3600)
    assert run(sender.run_once()) == 0
    assert row_of(db, row_id).status == "failed"


def test_retry_delay_doubles_and_is_capped() -> None:
    assert [retry_delay(n, 30).total_seconds() for n in range(1, 6)] == [30, 60, 120, 240, 480]
    assert retry_delay(8, 30) == timedelta(hours=1)
    assert retry_delay(10_000, 30) == timedelta(hours=1)


def test_list_and_retry(db: Database) -> None:
    config = make_config()
    failed, sent, pending = enqueue(db, config, reply(1), reply(2), reply(3))
    with db.transaction() as session:
        store.outbox_failed(session, failed, "550 nope", T0, None)
        store.outbox_sent(session, sent, T0)
    assert [r.id for r in list_outbox(db, "failed")] == [failed]
    assert [r.id for r in list_outbox(db, "pending")] == [pending]
    assert [r.id for r in list_outbox(db, "all")] == [failed, sent, pending]
    assert [r.id for r in list_outbox(db)] == [failed, sent, pending]
    with pytest.raises(ValueError):
        list_outbox(db, "bogus")

    later = T0 + timedelta(hours=2)
    result = retry(db, [sent, 999], now=later)
    assert result.requeued == []
    assert result.skipped == {sent: "already sent", 999: "no such outbox row"}

    result = retry(db, all_failed=True, now=later)
    assert result.requeued == [failed]
    row = row_of(db, failed)
    assert (row.status, row.attempts, row.next_attempt_at) == ("pending", 0, later)

    handler = SinkHandler()

    async def go() -> int:
        async with smtp_sink(handler) as port:
            return await smtp_sender(db, config, port, Clock(later)).run_once()

    assert run(go()) == 2
    assert row_of(db, failed).status == "sent"


def test_maildir_through_the_sender(db: Database, tmp_path: Path) -> None:
    config = make_config(maildir=str(tmp_path / "box"))
    enqueue(db, config, reply(1), reply(2))
    sender = OutboxSender(db, config, transport_from_config(config), Clock())
    assert run(sender.run_once()) == 2
    assert len(list((tmp_path / "box" / "new").iterdir())) == 2


def test_run_forever_sends_when_woken_and_stops(db: Database) -> None:
    config = make_config()
    arrived = asyncio.Event()

    class Signalling(SinkHandler):
        async def handle_DATA(self, server: SMTP, session: Session, envelope: Envelope) -> str:
            answer = await super().handle_DATA(server, session, envelope)
            if len(self.received) == 2:
                arrived.set()
            return answer

    handler = Signalling()

    async def go() -> None:
        async with smtp_sink(handler) as port:
            sender = smtp_sender(db, config, port, Clock(), poll_seconds=3600)
            stop, wake = asyncio.Event(), asyncio.Event()
            task = asyncio.create_task(sender.run_forever(stop, wake))
            await asyncio.sleep(0)
            await asyncio.to_thread(enqueue, db, config, reply(1), reply(2))
            wake.set()  # what the inbox worker does after a command
            await asyncio.wait_for(arrived.wait(), timeout=10)
            stop.set()
            await asyncio.wait_for(task, timeout=10)

    run(go())
    assert len(handler.received) == 2


# --- pbm outbox list / retry -------------------------------------------------


def write_config(tmp_path: Path, db: Database | None = None) -> Path:
    path = tmp_path / "pbm.toml"
    url = f"sqlite:///{tmp_path / 'pbm.sqlite3'}"
    if db is not None:
        url = db.engine.url.render_as_string(hide_password=False)
    path.write_text(f'[database]\nurl = "{url}"\n[mail]\naddress = "pbm@example.org"\n')
    return path


def test_cli_list_and_retry(db: Database, tmp_path: Path) -> None:
    config = make_config()
    failed, sent, pending = enqueue(
        db, config, reply(1, subject="S" * 60), reply(2), reply(3, subject="waiting")
    )
    with db.transaction() as session:
        store.outbox_failed(
            session, failed, "550 5.1.1 <player1@example.net>: no such user", T0, None
        )
        store.outbox_sent(session, sent, T0)
    runner = CliRunner()
    obj = {"config_file": str(write_config(tmp_path, db))}

    result = runner.invoke(outbox_cli, ["list"], obj=obj)
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0].split() == ["ID", "STATUS", "ATTEMPTS", "TO", "SUBJECT", "LAST", "ERROR"]
    assert len(lines) == 2
    assert lines[1].split()[:5] == [str(pending), "pending", "0", "player3@example.net", "waiting"]

    result = runner.invoke(outbox_cli, ["list", "--status", "all"], obj=obj)
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert len(lines) == 4
    # Aligned: every column starts at the same place on every line.
    start = lines[0].index("SUBJECT")
    assert all(line[start - 2 : start] == "  " for line in lines[1:])
    assert lines[1][start:].startswith("S" * 37 + "...")
    assert "550 5.1.1 <player1@example.net>: no such user" in lines[1]

    result = runner.invoke(outbox_cli, ["retry"], obj=obj)
    assert result.exit_code != 0 and "--all-failed" in result.output

    result = runner.invoke(outbox_cli, ["retry", str(sent)], obj=obj)
    assert result.exit_code == 1
    assert f"outbox {sent}: not requeued: already sent" in result.output

    result = runner.invoke(outbox_cli, ["retry", "--all-failed"], obj=obj)
    assert result.exit_code == 0, result.output
    assert f"requeued 1: {failed}" in result.output
    assert row_of(db, failed).status == "pending"
    assert row_of(db, failed).attempts == 0

    result = runner.invoke(outbox_cli, ["list", "--status", "failed"], obj=obj)
    assert result.output.strip() == "no failed mail in the outbox"


def test_cli_without_a_database(tmp_path: Path) -> None:
    obj = {"config_file": str(write_config(tmp_path))}
    result = CliRunner().invoke(outbox_cli, ["list"], obj=obj)
    assert result.exit_code == 1
    assert "pbm init" in result.output
    assert not (tmp_path / "pbm.sqlite3").exists()


def test_cli_with_an_uninitialised_database(tmp_path: Path) -> None:
    Database.open(f"sqlite:///{tmp_path / 'pbm.sqlite3'}").close()
    with sqlite3.connect(tmp_path / "pbm.sqlite3") as conn:
        conn.execute("CREATE TABLE unrelated (x)")
    obj = {"config_file": str(write_config(tmp_path))}
    result = CliRunner().invoke(outbox_cli, ["list"], obj=obj)
    assert result.exit_code == 1
    assert "no such table: outbox" in result.output and "pbm init" in result.output


def test_next_due(db: Database) -> None:
    config = make_config(retry_base_seconds=30)
    clock = Clock()
    sender = OutboxSender(db, config, MaildirTransport("/nonexistent/never-used"), clock)
    assert sender.next_due(T0) is None
    first, second = enqueue(db, config, reply(1), reply(2))
    assert sender.next_due(T0) == T0
    with db.transaction() as session:
        store.outbox_failed(session, first, "451 later", T0, T0 + timedelta(seconds=30))
        store.claim_outbox(session, "other", T0, lease=timedelta(minutes=5))  # holds the second
    assert sender.next_due(T0) == T0 + timedelta(seconds=30)
    with db.transaction() as session:
        store.outbox_sent(session, second, T0)
    assert sender.next_due(T0) == T0 + timedelta(seconds=30)


class StoppingTransport:
    """Delivers to a Maildir and asks the sender to stop after the first mail."""

    def __init__(self, path: Path, stop: asyncio.Event) -> None:
        self.inner = MaildirTransport(path)
        self.stop = stop

    async def send(self, msg: EmailMessage, recipients: Sequence[str]) -> None:
        await self.inner.send(msg, recipients)
        self.stop.set()


def test_stop_ends_a_batch_and_gives_the_rest_back(db: Database, tmp_path: Path) -> None:
    config = make_config()
    ids = enqueue(db, config, *(reply(n) for n in range(3)))

    async def go() -> None:
        stop, wake = asyncio.Event(), asyncio.Event()
        transport = StoppingTransport(tmp_path / "box", stop)
        sender = OutboxSender(db, config, transport, Clock(), poll_seconds=3600)
        await asyncio.wait_for(sender.run_forever(stop, wake), timeout=10)

    run(go())
    assert [row_of(db, i).status for i in ids] == ["sent", "pending", "pending"]
    assert all(row_of(db, i).claimed_by is None for i in ids)


def claim_for(db: Database, ids: list[int], sender: OutboxSender) -> list[store.ClaimedMail]:
    """What the inbox worker does with the replies it wrote: claim them for our sender."""
    with db.transaction() as session:
        return store.claim_written(session, ids, sender.worker, T0, timedelta(minutes=3))


def test_handed_over_rows_are_sent_once(db: Database, tmp_path: Path) -> None:
    config = make_config()
    ids = enqueue(db, config, *(reply(n) for n in range(3)))
    box = tmp_path / "box"
    sender = OutboxSender(db, config, MaildirTransport(box), Clock(), worker="server-1")
    rows = claim_for(db, ids, sender)

    async def go() -> tuple[int, int]:
        handed = await sender.hand_over(rows)
        return handed, await sender.run_once()

    assert run(go()) == (3, 0)
    assert [row_of(db, i).status for i in ids] == ["sent"] * 3
    assert len(list((box / "new").iterdir())) == 3


def test_stop_gives_back_handed_over_rows_not_yet_sent(db: Database, tmp_path: Path) -> None:
    config = make_config()
    ids = enqueue(db, config, *(reply(n) for n in range(3)))

    async def go() -> None:
        stop, wake = asyncio.Event(), asyncio.Event()
        transport = StoppingTransport(tmp_path / "box", stop)
        sender = OutboxSender(db, config, transport, Clock(), poll_seconds=3600)
        running = asyncio.create_task(sender.run_forever(stop, wake))
        sender.hand_over(await asyncio.to_thread(claim_for, db, ids, sender))
        await asyncio.wait_for(running, timeout=10)  # returns once the handed rows are settled

    run(go())
    assert [row_of(db, i).status for i in ids] == ["sent", "pending", "pending"]
    assert all(row_of(db, i).claimed_by is None for i in ids)


def test_a_row_that_makes_no_message_fails_at_once(db: Database, tmp_path: Path) -> None:
    config = make_config(maildir=str(tmp_path / "box"))
    [bad, good] = enqueue(db, config, reply(1, subject="two\nlines"), reply(2))
    sender = OutboxSender(db, config, transport_from_config(config), Clock())
    assert run(sender.run_once()) == 1
    row = row_of(db, bad)
    assert (row.status, row.attempts) == ("failed", 1)
    assert row.last_error is not None and "cannot make a message" in row.last_error
    assert row_of(db, good).status == "sent"


def test_concurrent_sends_each_row_once(db: Database, tmp_path: Path) -> None:
    """pbm serve hands several mails to the transport at once: each lands once."""
    config = make_config()
    ids = enqueue(db, config, *(reply(n) for n in range(12)))
    box = tmp_path / "box"
    sender = OutboxSender(db, config, MaildirTransport(box), Clock(), concurrency=8)
    assert run(sender.run_once()) == 12
    assert run(sender.run_once()) == 0
    assert [row_of(db, i).status for i in ids] == ["sent"] * 12
    assert len(list((box / "new").iterdir())) == 12
