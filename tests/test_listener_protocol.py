"""The listener's protocol answers an attack run found wrong, over real loopback connections:
no AUTH advertised (pbm has no SMTP logins, RFC 4954 §3), a second STARTTLS refused with
503 (RFC 3207 §4.2), an oversize mail over LMTP answered once per recipient (RFC 2033 §4.2),
and envelope addresses with control characters refused with 553, storing nothing."""

# ruff: noqa: F811 (the listener fixtures are imported by name)
from __future__ import annotations

import logging
import smtplib
import ssl
from collections.abc import Iterator
from pathlib import Path

import pytest
from smtp_relay import self_signed_cert
from test_listener import (  # noqa: F401 (fixtures)
    ADDRESS,
    WAIT,
    Running,
    bob,
    db_file,
    inbox_recipients,
    lmtp_data,
    mail,
    reply,
    site_config,
    smtp_listener,
    socket_path,
)

from pbm.smtp import codes


@pytest.fixture
def tls_listener(db_file: Path, tmp_path: Path) -> Iterator[Running]:
    cert, key = self_signed_cert(tmp_path)
    running = Running(site_config(db_file, tls_cert=str(cert), tls_key=str(key))).start()
    yield running
    running.stop()


def test_no_auth_before_or_after_starttls_and_starttls_only_once(tls_listener: Running) -> None:
    with tls_listener.smtp() as s:
        s.ehlo("client.example")
        assert s.has_extn("starttls")
        assert not s.has_extn("auth")
        s.starttls(context=ssl._create_unverified_context())
        s.ehlo("client.example")
        assert not s.has_extn("auth"), s.esmtp_features
        assert not s.has_extn("starttls")
        assert reply(s.docmd("STARTTLS")) == codes.TLS_ACTIVE
        assert s.noop()[0] == 250  # the session goes on, inside TLS
        assert s.sendmail("alice@example.org", [ADDRESS], mail()) == {}


def test_auth_login_under_tls_floods_the_log_no_more(
    tls_listener: Running, caplog: pytest.LogCaptureFixture
) -> None:
    """Issue 35, case 9: EHLO, STARTTLS, EHLO, then AUTH LOGIN 200 times got 451 196
    times and 3,200 log lines (a TypeError in push). Now each is 502, logged once."""
    caplog.set_level(logging.INFO)
    with tls_listener.smtp() as s:
        s.ehlo("client.example")
        s.starttls(context=ssl._create_unverified_context())
        s.ehlo("client.example")
        answers = {reply(s.docmd("AUTH LOGIN")) for _ in range(200)}
        assert answers == {codes.NO_AUTH}
        assert reply(s.docmd("AUTH PLAIN AGFsaWNlAHB3")) == codes.NO_AUTH
        assert s.noop()[0] == 250  # the session goes on
        assert s.sendmail("alice@example.org", [ADDRESS], mail()) == {}
    about_auth = [r.getMessage() for r in caplog.records if r.name == "pbm.listener"]
    assert len(about_auth) == 1 and "answered 502" in about_auth[0], about_auth
    assert not [r for r in caplog.records if r.exc_info or r.levelno >= logging.WARNING]


def test_an_oversize_mail_over_lmtp_is_refused_for_every_recipient(
    db_file: Path, socket_path: Path
) -> None:
    config = site_config(
        db_file, protocol="lmtp", listen=f"unix:{socket_path}", max_message_bytes=2000
    )
    running = Running(config).start()
    try:
        assert running.listener is not None
        with smtplib.LMTP(str(socket_path), timeout=WAIT) as s:
            s.ehlo("mx.example.org")
            assert s.docmd("MAIL FROM:<alice@example.org>")[0] == 250
            assert s.docmd(f"RCPT TO:<{ADDRESS}>")[0] == 250
            assert s.docmd(f"RCPT TO:<{bob(1)}>")[0] == 250
            big = mail() + b"x" * 80 + (b"\r\n" + b"y" * 76) * 60 + b"\r\n"
            answers = lmtp_data(s, big, 2)
            assert answers == [
                codes.LMTP_TOO_BIG.format(address=ADDRESS),
                codes.LMTP_TOO_BIG.format(address=bob(1)),
            ]
            assert s.noop()[0] == 250  # client and server agree on what was said
    finally:
        running.stop()
    assert inbox_recipients(db_file) == []


def test_an_oversize_mail_over_smtp_gets_one_552(db_file: Path) -> None:
    running = Running(site_config(db_file, max_message_bytes=2000)).start()
    try:
        with running.smtp() as s:
            s.ehlo("client.example")
            assert s.docmd("MAIL FROM:<alice@example.org>")[0] == 250
            assert s.docmd(f"RCPT TO:<{ADDRESS}>")[0] == 250
            assert s.docmd("DATA")[0] == 354
            s.send(mail() + (b"y" * 76 + b"\r\n") * 60 + b".\r\n")
            assert reply(s.getreply()) == codes.TOO_BIG
            assert s.noop()[0] == 250
    finally:
        running.stop()


@pytest.mark.parametrize("control", ["\x00", "\x07", "\x1b", "\u202e"])
def test_envelope_addresses_with_controls_are_refused(
    smtp_listener: Running, db_file: Path, control: str
) -> None:
    with smtp_listener.smtp() as s:
        s.command_encoding = "utf-8"  # as SMTPUTF8 clients write
        s.ehlo("client.example")
        sender = f"eve{control}@example.org"
        assert reply(s.docmd(f"MAIL FROM:<{sender}>")) == codes.BAD_ADDRESS
        assert s.docmd("MAIL FROM:<eve@example.org>")[0] == 250
        assert reply(s.docmd(f"RCPT TO:<pbm{control}@example.org>")) == codes.BAD_ADDRESS
    assert inbox_recipients(db_file) == []
