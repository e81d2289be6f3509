"""Replies become messages: an outbox row -> an RFC 5322 message (pure).

The same row always gives the same message (``Date`` is the row's
``created_at``), so a retried mail is byte for byte the first attempt. The
``Reply-To`` of a mail about a board is the reader's reply-token address
(``pbm.mail.addresses``), made here from the row's ``board`` and
``reply_as``: the use cases never see the secret.
"""

from __future__ import annotations

from datetime import UTC, datetime
from email.headerregistry import Address
from email.message import EmailMessage
from email.policy import SMTP
from email.utils import format_datetime
from typing import Protocol

from pbm.config import Config
from pbm.mail.addresses import token_address

MAX_LINE = 78  # RFC 5322 2.1.1: lines SHOULD be no more than 78 characters


class OutgoingMail(Protocol):
    """The fields of an outbox row that make up a message."""

    @property
    def to_addr(self) -> str: ...
    @property
    def subject(self) -> str: ...
    @property
    def body(self) -> str: ...
    @property
    def board(self) -> int | None: ...
    @property
    def reply_as(self) -> str | None: ...
    @property
    def in_reply_to(self) -> str | None: ...
    @property
    def message_id(self) -> str: ...
    @property
    def created_at(self) -> datetime: ...


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

    The use cases wrap their text already; this is the defensive hard wrap
    that keeps us within RFC 5322 2.1.1 whatever they hand us.
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


def from_header(config: Config) -> str:
    """The ``From`` value for the server: the display name quoted as RFC 5322 3.4 needs."""
    return str(Address(display_name=config.mail.from_name, addr_spec=config.mail.address))


def reply_address(mail: OutgoingMail, config: Config) -> str | None:
    """The reader's reply-token address, for a mail about a board that names a reader.

    None without a ``mail.secret``: tokens made with an empty secret could be forged.
    """
    if mail.board is None or not mail.reply_as or not config.mail.secret:
        return None
    return token_address(config.mail.address, config.mail.secret, mail.board, mail.reply_as)


def build_message(mail: OutgoingMail, config: Config) -> EmailMessage:
    """The message for one outbox row: headers, threading, a plain-text body."""
    msg = EmailMessage(policy=SMTP)
    msg["From"] = from_header(config)
    msg["To"] = mail.to_addr
    msg["Subject"] = mail.subject
    # RFC 5322 3.6.1: the origination date is when the reply was committed.
    msg["Date"] = format_datetime(_utc(mail.created_at))
    msg["Message-ID"] = mail.message_id  # RFC 5322 3.6.4, our own, made at insert
    reply_to = reply_address(mail, config)
    if reply_to:
        msg["Reply-To"] = reply_to
    if mail.in_reply_to:
        # RFC 5322 3.6.4: we only know the parent's id, so References is just that.
        msg["In-Reply-To"] = mail.in_reply_to
        msg["References"] = mail.in_reply_to
    # RFC 3834 5: we answer mail automatically; well-behaved responders stay quiet.
    msg["Auto-Submitted"] = "auto-replied"
    msg["X-Auto-Response-Suppress"] = "All"  # Exchange's spelling of the same wish
    body = wrap_body(mail.body)
    if body.isascii():
        msg.set_content(body, subtype="plain", charset="us-ascii", cte="7bit")
    else:
        # RFC 2045 6.7: quoted-printable keeps mostly-ASCII text readable.
        msg.set_content(body, subtype="plain", charset="utf-8", cte="quoted-printable")
    return msg
