"""Replies leave the house: outbox rows -> email messages -> a transport.

``build_message`` turns one outbox row into an RFC 5322 message (pure).
A ``Transport`` delivers a message: ``SmtpTransport`` hands it to a relay,
``MaildirTransport`` drops it into a Maildir. The ``OutboxSender`` claims due
rows, sends them, and records the outcome: sent, retried later with backoff
on a temporary failure, or failed for good.
"""

from __future__ import annotations

import asyncio
import email.policy
import mailbox
import os
from collections.abc import Sequence
from datetime import UTC, datetime
from email.headerregistry import Address
from email.message import EmailMessage
from email.utils import format_datetime
from pathlib import Path
from typing import Protocol

import aiosmtplib

from pbm.config import Config, ConfigError

MAX_LINE = 78  # RFC 5322 §2.1.1: lines SHOULD be no more than 78 characters


class OutgoingMail(Protocol):
    """The fields of an outbox row that make up a message."""

    @property
    def to_addr(self) -> str: ...
    @property
    def subject(self) -> str: ...
    @property
    def body(self) -> str: ...
    @property
    def reply_to(self) -> str | None: ...
    @property
    def in_reply_to(self) -> str | None: ...
    @property
    def message_id(self) -> str: ...
    @property
    def created_at(self) -> datetime: ...


# ---------------------------------------------------------------------------
# Building messages (pure)


def wrap_line(line: str, width: int = MAX_LINE) -> list[str]:
    """``line`` cut into pieces of at most ``width`` characters, at spaces if possible."""
    pieces: list[str] = []
    while len(line) > width:
        cut = line.rfind(" ", 1, width + 1)
        if cut <= 0 or not line[:cut].strip():
            pieces.append(line[:width])  # no space to break at: a hard cut
            line = line[width:]
        else:
            pieces.append(line[:cut].rstrip(" "))
            line = line[cut + 1 :]
    pieces.append(line)
    return pieces


def wrap_body(text: str, width: int = MAX_LINE) -> str:
    """The body with LF line ends, every line at most ``width`` characters, ending in LF.

    The service wraps its text already; this is the defensive hard wrap that
    keeps us within RFC 5322 §2.1.1 whatever it hands us.
    """
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    lines: list[str] = []
    for line in text.split("\n"):
        lines.extend(wrap_line(line, width))
    while len(lines) > 1 and lines[-1] == "":
        lines.pop()
    return "\n".join(lines) + "\n"


def _utc(moment: datetime) -> datetime:
    """Naive datetimes from the database are UTC."""
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment


def build_message(mail: OutgoingMail, config: Config) -> EmailMessage:
    """The message for one outbox row: headers, threading, a plain-text body.

    The same row always gives the same message (``Date`` is the row's
    ``created_at``), so a retried mail is byte-for-byte the first attempt.
    """
    msg = EmailMessage(policy=email.policy.SMTP)
    msg["From"] = Address(display_name=config.mail.from_name, addr_spec=config.mail.address)
    msg["To"] = mail.to_addr
    msg["Subject"] = mail.subject
    # RFC 5322 §3.6.1: the origination date is when the reply was committed.
    msg["Date"] = format_datetime(_utc(mail.created_at))
    msg["Message-ID"] = mail.message_id  # RFC 5322 §3.6.4, our own, made at insert
    if mail.reply_to:
        msg["Reply-To"] = mail.reply_to  # the player's reply-token address
    if mail.in_reply_to:
        # RFC 5322 §3.6.4: we only know the parent's id, so References is just that.
        msg["In-Reply-To"] = mail.in_reply_to
        msg["References"] = mail.in_reply_to
    # RFC 3834 §5: we answer mail automatically; well-behaved responders stay quiet.
    msg["Auto-Submitted"] = "auto-replied"
    msg["X-Auto-Response-Suppress"] = "All"  # Exchange's spelling of the same wish
    msg["MIME-Version"] = "1.0"  # RFC 2045 §4
    body = wrap_body(mail.body)
    if body.isascii():
        msg.set_content(body, subtype="plain", charset="us-ascii", cte="7bit")
    else:
        # RFC 2045 §6.7: quoted-printable keeps mostly-ASCII text readable.
        msg.set_content(body, subtype="plain", charset="utf-8", cte="quoted-printable")
    return msg


# ---------------------------------------------------------------------------
# Transports


class DeliveryError(Exception):
    """A message could not be handed over; ``str()`` says why."""


class TemporaryFailure(DeliveryError):
    """Try again later (RFC 5321 §4.2.1: 4yz replies, or no answer at all).

    ``relay_down`` marks failures that have nothing to do with this message
    (the relay unreachable): the rest of the batch waits too.
    """

    def __init__(self, message: str, *, relay_down: bool = False) -> None:
        super().__init__(message)
        self.relay_down = relay_down


class PermanentFailure(DeliveryError):
    """Do not try again (RFC 5321 §4.2.1: 5yz replies)."""


class Transport(Protocol):
    """Delivers one message to its recipients or raises a ``DeliveryError``."""

    async def send(self, msg: EmailMessage, recipients: Sequence[str]) -> None: ...


class MaildirTransport:
    """One file per mail in a Maildir (its ``new/``), for a local MDA or a person to read."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)

    def _deliver(self, data: bytes) -> None:
        # Maildir.add writes into tmp/ and renames into new/: readers never see half a mail.
        box = mailbox.Maildir(self.path, factory=None, create=True)
        box.add(data)

    async def send(self, msg: EmailMessage, recipients: Sequence[str]) -> None:
        # Files on disk use the local line end, not SMTP's CRLF.
        data = msg.as_bytes(policy=msg.policy.clone(linesep="\n"))
        try:
            await asyncio.to_thread(self._deliver, data)
        except OSError as exc:  # a full disk or a missing permission may well pass
            raise TemporaryFailure(f"maildir {self.path}: {exc}", relay_down=True) from exc


def _smtp_failure(code: int, text: str) -> DeliveryError:
    """RFC 5321 §4.2.1: 4yz is a transient, 5yz a permanent negative completion."""
    message = f"{code} {text}".strip()
    if 500 <= code < 600:
        return PermanentFailure(message)
    return TemporaryFailure(message)


class SmtpTransport:
    """Hands each message to an SMTP relay (aiosmtplib), one connection per message."""

    def __init__(
        self,
        host: str,
        port: int,
        starttls: bool = False,
        username: str = "",
        password: str = "",
        *,
        sender: str = "",
        timeout: float = 60.0,
    ) -> None:
        self.host = host
        self.port = port
        self.starttls = starttls
        self.username = username
        self.password = password
        self.sender = sender
        self.timeout = timeout

    async def send(self, msg: EmailMessage, recipients: Sequence[str]) -> None:
        where = f"{self.host}:{self.port}"
        try:
            errors, _ = await aiosmtplib.send(
                msg,
                sender=self.sender or None,
                recipients=list(recipients),
                hostname=self.host,
                port=self.port,
                start_tls=self.starttls,
                username=self.username or None,
                password=self.password or None,
                timeout=self.timeout,
            )
        except aiosmtplib.SMTPRecipientsRefused as exc:
            # Every recipient refused: the mildest code decides (4yz before 5yz).
            refused = min(exc.recipients, key=lambda r: r.code)
            raise _smtp_failure(refused.code, refused.message) from exc
        except aiosmtplib.SMTPAuthenticationError as exc:
            # Our credentials, not the mail, are at fault: keep it until they are fixed.
            raise TemporaryFailure(
                f"relay {where} refused our login: {exc.code} {exc.message}", relay_down=True
            ) from exc
        except aiosmtplib.SMTPConnectResponseError as exc:
            # A 421/554 greeting: the relay will not talk to us at all right now.
            raise TemporaryFailure(
                f"relay {where} greeted with {exc.code} {exc.message}", relay_down=True
            ) from exc
        except aiosmtplib.SMTPResponseException as exc:
            raise _smtp_failure(exc.code, exc.message) from exc
        except (aiosmtplib.SMTPException, OSError) as exc:
            # No reply at all (refused, reset, timed out, STARTTLS missing): try later.
            raise TemporaryFailure(f"relay {where}: {exc}", relay_down=True) from exc
        if errors:  # some recipients refused, the others accepted
            reply = min(errors.values(), key=lambda r: r.code)
            raise _smtp_failure(reply.code, reply.message)


def transport_from_config(config: Config) -> Transport:
    """The transport ``outbound.transport`` names."""
    out = config.outbound
    if out.transport == "maildir":
        return MaildirTransport(config.maildir_path)
    if out.transport == "smtp":
        return SmtpTransport(
            out.smtp_host,
            out.smtp_port,
            out.starttls,
            out.username,
            out.password,
            sender=config.mail.address,
        )
    raise ConfigError(f'outbound.transport must be "maildir" or "smtp", not {out.transport!r}')


def now_utc() -> datetime:
    """The default clock."""
    return datetime.now(UTC)
