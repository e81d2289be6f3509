"""Transports (pbm.mail.transports): SMTP to a real relay on loopback, Maildir on a real disk.

What a failure is decides what the outbox sender does with the rest of its
round: a 5xx is that message's own (``PermanentFailure``), a 4xx too but
worth another try (``TemporaryFailure``), and only a relay that cannot be
reached or that closes the channel (421, RFC 5321 3.8) is ``relay_down``.
"""

from __future__ import annotations

import asyncio
import email
import email.policy
import shutil
from email.message import EmailMessage
from pathlib import Path
from typing import Any

import pytest
from conftest import Row
from smtp_relay import Greeter, Relay, free_port, greeter, outbound_config, relay, run

from pbm.config import ConfigError
from pbm.mail.message import build_message
from pbm.mail.transports import (
    DeliveryError,
    MaildirTransport,
    PermanentFailure,
    SmtpTransport,
    TemporaryFailure,
    transport_from_config,
)

SENDER = "pbm@example.org"  # the envelope sender the outbox sender gives


def message(**kw: Any) -> bytes:
    return build_message(Row(**kw), outbound_config())


def text_of(msg: EmailMessage) -> str:
    """The decoded body text with LF line ends."""
    content = msg.get_content()
    assert isinstance(content, str)
    return content.replace("\r\n", "\n")


def smtp(port: int) -> SmtpTransport:
    return SmtpTransport("127.0.0.1", port, timeout=5)


def send_to(handler: Relay, recipients: list[str], **kw: Any) -> None:
    """Send one message through a relay served with ``handler``."""

    async def go() -> None:
        async with relay(handler, **kw) as port:
            await smtp(port).send(message(to_addr=recipients[0]), SENDER, recipients)

    run(go())


# --- SMTP: delivered ----------------------------------------------------------


def test_smtp_transport_delivers() -> None:
    handler = Relay()

    async def go() -> None:
        async with relay(handler) as port:
            msg = message(body="Grüße\n" + "y" * 100)
            await smtp(port).send(msg, SENDER, ["bob@example.net"])

    run(go())
    assert len(handler.received) == 1
    mail_from, rcpts, _ = handler.received[0]
    assert mail_from == "pbm@example.org"
    assert rcpts == ["bob@example.net"]
    got = handler.messages()[0]
    assert got["Message-ID"] == "<1.abc@example.org>"
    assert text_of(got) == "Grüße\n" + "y" * 78 + "\n" + "y" * 22 + "\n"


def test_a_non_ascii_address_goes_through_a_relay_with_smtputf8() -> None:
    handler = Relay()
    send_to(handler, ["jürgen@example.net"], smtputf8=True)
    assert handler.recipients() == ["jürgen@example.net"]


# --- SMTP: what a refusal means ---------------------------------------------------


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
    handler = Relay(data_script=[reply])
    with pytest.raises(failure) as info:
        send_to(handler, ["bob@example.net"])
    assert reply.split()[0] in str(info.value)
    assert not getattr(info.value, "relay_down", False)  # this message's own failure


@pytest.mark.parametrize(
    ("reply", "failure"),
    [("450 4.2.1 mailbox busy", TemporaryFailure), ("550 5.1.1 unknown", PermanentFailure)],
)
def test_smtp_transport_classifies_rcpt_replies(reply: str, failure: type[Exception]) -> None:
    handler = Relay(rcpt_script=[reply])
    with pytest.raises(failure) as info:
        send_to(handler, ["bob@example.net"])
    assert reply.split()[0] in str(info.value)
    assert not getattr(info.value, "relay_down", False)
    assert handler.received == []


def test_some_recipients_refused_is_a_failure_of_the_message() -> None:
    handler = Relay(refuse_rcpt={"nobody@example.net": ["550 5.1.1 no such user"]})
    with pytest.raises(PermanentFailure, match=r"550 5\.1\.1 no such user"):
        send_to(handler, ["bob@example.net", "nobody@example.net"])
    assert handler.recipients() == ["bob@example.net"]  # the relay took it for bob


def test_a_non_ascii_address_without_smtputf8_fails_that_message_alone() -> None:
    """A relay without SMTPUTF8 can never take this message; the relay is not down."""
    handler = Relay()
    with pytest.raises(PermanentFailure) as info:
        send_to(handler, ["jürgen@example.net"], smtputf8=False)
    assert "SMTPUTF8" in str(info.value)
    assert not getattr(info.value, "relay_down", False)
    assert handler.received == []
    send_to(handler, ["bob@example.net"], smtputf8=False)  # others still go through
    assert handler.recipients() == ["bob@example.net"]


# --- SMTP: the relay is down ------------------------------------------------------


@pytest.mark.parametrize("where", ["DATA", "RCPT"])
def test_a_421_closes_the_channel_and_is_relay_down(where: str) -> None:
    """RFC 5321 3.8: 421 is the service closing the channel, whatever command it answers."""
    answer = ["421 4.3.2 shutting down"]
    handler = Relay(data_script=answer) if where == "DATA" else Relay(rcpt_script=answer)
    with pytest.raises(TemporaryFailure) as info:
        send_to(handler, ["bob@example.net"])
    assert "421" in str(info.value)
    assert info.value.relay_down
    assert handler.received == []


@pytest.mark.parametrize("greeting", ["421 4.3.2 too busy, come back later", "554 5.7.1 go away"])
def test_a_relay_that_greets_with_a_refusal_is_down(greeting: str) -> None:
    handler = Greeter(greeting)

    async def go() -> None:
        async with greeter(handler) as port:
            await smtp(port).send(message(), SENDER, ["bob@example.net"])

    with pytest.raises(TemporaryFailure) as info:
        run(go())
    assert info.value.relay_down
    assert greeting.split()[0] in str(info.value)


def test_a_relay_that_hangs_up_is_down() -> None:
    handler = Greeter("")

    async def go() -> None:
        async with greeter(handler) as port:
            await smtp(port).send(message(), SENDER, ["bob@example.net"])

    with pytest.raises(TemporaryFailure) as info:
        run(go())
    assert info.value.relay_down
    assert handler.connections == 1


def test_a_relay_that_wants_a_login_we_lack_is_down() -> None:
    """530 to MAIL FROM (RFC 4954): our missing credentials, not the mail, are at fault.

    As with a refused login, every message would be refused alike: keep them
    all until the configuration is fixed, fail none for good.
    """
    handler = Relay()
    with pytest.raises(TemporaryFailure) as info:
        send_to(handler, ["bob@example.net"], login_required=True)
    assert "530" in str(info.value)
    assert info.value.relay_down
    assert handler.received == []


def test_smtp_transport_relay_down_is_temporary() -> None:
    port = free_port()
    with pytest.raises(TemporaryFailure) as info:
        run(smtp(port).send(message(), SENDER, ["bob@example.net"]))
    assert info.value.relay_down
    assert f"127.0.0.1:{port}" in str(info.value)


def test_failures_are_delivery_errors() -> None:
    assert issubclass(TemporaryFailure, DeliveryError)
    assert issubclass(PermanentFailure, DeliveryError)
    assert not TemporaryFailure("451 later").relay_down
    assert TemporaryFailure("down", relay_down=True).relay_down


# --- Maildir ---------------------------------------------------------------------


def test_maildir_transport_one_file_per_mail(tmp_path: Path) -> None:
    box = tmp_path / "outbox"
    transport = MaildirTransport(box)

    async def go() -> None:
        for n in range(3):
            row = Row(message_id=f"<{n}@example.org>", body=f"mail {n}\nGrüße\n")
            await transport.send(build_message(row, outbound_config()), SENDER, [row.to_addr])

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
    run(MaildirTransport(box).send(message(), SENDER, ["bob@example.net"]))
    assert len(list((box / "new").iterdir())) == 1


def test_maildir_transport_when_the_folder_goes_away(tmp_path: Path) -> None:
    """A Maildir removed under a running server is made again for the next mail."""
    box = tmp_path / "outbox"
    transport = MaildirTransport(box)
    run(transport.send(message(), SENDER, ["bob@example.net"]))
    shutil.rmtree(box)
    run(transport.send(message(), SENDER, ["bob@example.net"]))
    assert len(list((box / "new").iterdir())) == 1
    assert list((box / "tmp").iterdir()) == []


def test_maildir_reader_may_take_each_mail_at_once(tmp_path: Path) -> None:
    """A mail reader moves what it read from new/ to cur/: delivery never looks back."""
    box = tmp_path / "outbox"
    transport = MaildirTransport(box)
    names: set[str] = set()
    for n in range(3):
        run(transport.send(message(message_id=f"<{n}@x>"), SENDER, ["b@x"]))
        (path,) = (box / "new").iterdir()
        names.add(path.name)
        path.rename(box / "cur" / f"{path.name}:2,S")
    assert len(names) == 3  # each file its own unique name
    assert len(list((box / "cur").iterdir())) == 3


def test_maildir_transport_side_by_side_each_mail_once(tmp_path: Path) -> None:
    box = tmp_path / "outbox"
    transport = MaildirTransport(box)

    async def go() -> None:
        await asyncio.gather(
            *(transport.send(message(message_id=f"<{n}@x>"), SENDER, ["b@x"]) for n in range(10))
        )

    run(go())
    files = list((box / "new").iterdir())
    assert len(files) == 10
    ids = {email.message_from_bytes(p.read_bytes())["Message-ID"] for p in files}
    assert ids == {f"<{n}@x>" for n in range(10)}


def test_a_maildir_that_cannot_be_written_is_a_relay_down(tmp_path: Path) -> None:
    """A disk fault is no fault of the mail: it is kept, and the others wait too."""
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    with pytest.raises(TemporaryFailure) as info:
        run(MaildirTransport(blocker / "box").send(message(), SENDER, ["bob@example.net"]))
    assert info.value.relay_down
    assert "maildir" in str(info.value)


# --- from the config -----------------------------------------------------------------


def test_transport_from_config(tmp_path: Path) -> None:
    maildir = transport_from_config(outbound_config(maildir=str(tmp_path / "box")))
    assert isinstance(maildir, MaildirTransport)
    assert maildir.path == tmp_path / "box"
    smtp_transport = transport_from_config(
        outbound_config(transport="smtp", smtp_host="relay.example", smtp_port=587, starttls=True)
    )
    assert isinstance(smtp_transport, SmtpTransport)
    assert (
        smtp_transport.host,
        smtp_transport.port,
        smtp_transport.starttls,
    ) == ("relay.example", 587, True)
    with pytest.raises(ConfigError, match=r"outbound\.transport"):
        transport_from_config(outbound_config(transport="carrier-pigeon"))
