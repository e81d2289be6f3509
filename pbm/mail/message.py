"""Replies become messages: an outbox row -> the bytes of an RFC 5322 message (pure).

Every message pbm sends has one shape (a plain-text body and a dozen
headers), so it is written here directly rather than through the email
package's general machinery, ten times the cost for the same bytes. The
same row always gives the same message (``Date`` is the row's
``created_at``), so a retried mail is byte for byte the first attempt. The
``Reply-To`` of a mail about a board is the reader's reply-token address
(``pbm.mail.addresses``), made here from the row's ``board`` and
``reply_as``: the use cases never see the secret.
"""

from __future__ import annotations

import base64
import hashlib
import quopri
import re
from datetime import UTC, datetime
from email.header import Header
from email.utils import format_datetime, formataddr
from typing import Protocol

from pbm.config import Config
from pbm.mail.addresses import BOARD, BOARD_KINDS, context_address, thread_root
from pbm.mail.html import Shown, html_part_of
from pbm.replies import attachments_of, pictures_of
from pbm.usecases.pictures.raster import png

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
    def reply_key(self) -> str | None: ...
    @property
    def in_reply_to(self) -> str | None: ...
    @property
    def message_id(self) -> str: ...
    @property
    def created_at(self) -> datetime: ...
    @property
    def thread(self) -> str | None: ...
    @property
    def attachment(self) -> str | None: ...
    @property
    def picture(self) -> str | None: ...


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


# Characters that must never reach a header: C0 controls and DEL, and the other
# characters Python's str.splitlines() takes for line ends (U+0085, U+2028,
# U+2029): any of them could end a header early and start one of a sender's.
_UNSAFE = re.compile("[\x00-\x1f\x7f\x85\u2028\u2029]")


def header_value(value: str) -> str:
    """A value made safe for a header: every control character becomes a space."""
    return _UNSAFE.sub(" ", value).strip()


def fold(name: str, value: str) -> str:
    """``Name: value``, folded at spaces to lines of at most 78 characters (RFC 5322 2.2.3).

    A word longer than a line (a long msg-id) stays whole: RFC 5322 2.1.1 allows 998.
    """
    line, lines = f"{name}:", []
    for word in value.split(" "):
        if len(line) + 1 + len(word) > MAX_LINE and line.strip() and not line.endswith(":"):
            lines.append(line)
            line = ""
        line += f" {word}"
    lines.append(line)
    return "\n".join(lines)


def _text_header(name: str, value: str) -> str:
    """A header of free text: RFC 2047 encoded words when it is not ASCII."""
    value = header_value(value)
    if value.isascii():
        return fold(name, value)
    encoded = Header(value, "utf-8", header_name=name).encode(linesep="\n")
    return f"{name}: {encoded}"


def _address_header(name: str, address: str) -> str:
    """A header of one address; a non-ASCII address as UTF-8 (RFC 6532: needs SMTPUTF8)."""
    return fold(name, header_value(address))


def from_header(config: Config) -> str:
    """The ``From`` value for the server: the display name quoted and encoded as RFC 5322
    3.4 and RFC 2047 need."""
    name = header_value(config.mail.from_name)
    return formataddr((name, header_value(config.mail.address)), charset="utf-8")


def reply_address(mail: OutgoingMail, config: Config) -> str | None:
    """The reader's reply-token address: for his board, or the context ``reply_key`` names.

    None without a ``mail.secret``: tokens made with an empty secret could be forged.
    """
    secret, address = config.mail.secret, config.mail.address
    if not mail.reply_as or not secret:
        return None
    kind, _, nonce = (mail.reply_key or BOARD).partition(":")
    if kind in BOARD_KINDS and mail.board is None:
        return None
    return context_address(address, secret, kind, mail.reply_as, board=mail.board, nonce=nonce)


def build_message(mail: OutgoingMail, config: Config) -> bytes:
    """The message for one outbox row, as bytes with LF line ends.

    One text/plain part, built from our own values; each header value is made
    safe first (``header_value``), so nothing a sender wrote can add a header.
    """
    headers = [
        f"From: {from_header(config)}",
        _address_header("To", mail.to_addr),
        # A game's mails share its thread's subject; each says what it is on its first line.
        _text_header("Subject", mail.thread or mail.subject),
        # RFC 5322 3.6.1: the origination date is when the reply was committed.
        f"Date: {format_datetime(_utc(mail.created_at))}",
        f"Message-ID: {header_value(mail.message_id)}",  # RFC 5322 3.6.4, made at insert
    ]
    reply_to = reply_address(mail, config)
    if reply_to:
        headers.append(_address_header("Reply-To", reply_to))
    parent = header_value(mail.in_reply_to) if mail.in_reply_to else ""
    if mail.board is not None:
        # A game's mails are one thread: each names the board's thread root first
        # (RFC 5322 3.6.4), then the mail it answers, if any.
        root = thread_root(config.mail.address, config.mail.secret, mail.board)
        refs = " ".join(dict.fromkeys(r for r in (root, parent) if r))
        headers += [f"In-Reply-To: {parent or root}", fold("References", refs)]
    elif parent:
        # RFC 5322 3.6.4: we only know the parent's id, so References is just that.
        headers += [f"In-Reply-To: {parent}", f"References: {parent}"]
    # RFC 3834 5: we answer mail automatically; well-behaved responders stay quiet.
    headers += ["Auto-Submitted: auto-replied", "X-Auto-Response-Suppress: All"]
    headers.append("MIME-Version: 1.0")  # RFC 2045 4
    text = wrap_body(f"{mail.subject}\n\n{mail.body}" if mail.thread else mail.body)
    part_headers, body = _text_part(text)
    files = attachments_of(mail.attachment)
    if mail.picture and not files:
        return _with_picture(mail, headers, part_headers, body, text, config.web.base)
    if not files:
        return "\n".join([*headers, *part_headers]).encode("utf-8") + b"\n\n" + body
    # RFC 2046 5.1.3: the text, then each file. The boundary is made from the
    # Message-ID, so that a retried mail is the same bytes.
    boundary = "pbm-" + hashlib.sha256(mail.message_id.encode()).hexdigest()[:32]
    headers.append(f'Content-Type: multipart/mixed; boundary="{boundary}"')
    parts = [b"\n".join(h.encode() for h in part_headers) + b"\n\n" + body]
    for file in files:
        name = header_value(file.filename).replace('"', "")
        encoded = base64.encodebytes(file.text.encode("utf-8")).replace(b"\r", b"")
        parts.append(
            (
                f'Content-Type: {header_value(file.content_type)}; charset="utf-8"; '
                f'name="{name}"\n'
                f'Content-Disposition: attachment; filename="{name}"\n'
                "Content-Transfer-Encoding: base64\n\n"
            ).encode()
            + encoded
        )
    mime = b"".join(b"--" + boundary.encode() + b"\n" + p + b"\n" for p in parts)
    return "\n".join(headers).encode("utf-8") + b"\n\n" + mime + b"--" + boundary.encode() + b"--\n"


def _multipart(kind: str, boundary: str, parts: list[bytes]) -> tuple[str, bytes]:
    """The Content-Type header and the body of a multipart of ``parts`` (RFC 2046 5.1)."""
    body = b"".join(b"--" + boundary.encode() + b"\n" + p + b"\n" for p in parts)
    return f'Content-Type: multipart/{kind}; boundary="{boundary}"', body + (
        b"--" + boundary.encode() + b"--\n"
    )


def _with_picture(
    mail: OutgoingMail,
    headers: list[str],
    part_headers: list[str],
    body: bytes,
    text: str,
    site_url: str,
) -> bytes:
    """RFC 2046 5.1.4: the text part as it is, then (preferred by clients that can) the
    HTML part with the board as a PNG in the same mail (RFC 2387 multipart/related,
    RFC 2392 ``cid:``): no remote image, nothing fetched."""
    pictures = pictures_of(mail.picture)
    seed = hashlib.sha256(mail.message_id.encode()).hexdigest()
    domain = _domain(mail.message_id)
    # One picture: board.SEED; more (a digest): board-N.SEED, in order.
    cids = [
        f"board.{seed[:16]}@{domain}" if len(pictures) == 1 else f"board-{n}.{seed[:16]}@{domain}"
        for n in range(1, len(pictures) + 1)
    ]
    html = html_part_of(
        mail.thread or mail.subject,
        text,
        [Shown(p.diagram, cid, p.alt, p.legend) for p, cid in zip(pictures, cids, strict=True)],
        site_url,
    )
    # Any character past ASCII as a character reference (HTML 5 13.1.4): the part is
    # then 7bit as it is (RFC 2045 2.7), unless a line is too long for mail (RFC 5322
    # 2.1.1), when quoted-printable folds it.
    html_bytes = html.encode("ascii", "xmlcharrefreplace")
    encoding = "7bit"
    if max(map(len, html_bytes.split(b"\n"))) > 998:
        html_bytes, encoding = quopri.encodestring(html_bytes), "quoted-printable"
    html_headers = (
        f'Content-Type: text/html; charset="utf-8"\nContent-Transfer-Encoding: {encoding}'
    )
    images = []
    for picture, cid in zip(pictures, cids, strict=True):
        name = cid.partition(".")[0] + ".png"
        image = base64.encodebytes(png(picture)).replace(b"\r", b"")
        image_headers = (
            f'Content-Type: image/png; name="{name}"\n'
            f'Content-Disposition: inline; filename="{name}"\n'
            f"Content-ID: <{cid}>\nContent-Transfer-Encoding: base64"
        )
        images.append(image_headers.encode() + b"\n\n" + image)
    related_type, related = _multipart(
        'related; type="text/html"',
        f"pbm-r-{seed[:24]}",
        [html_headers.encode() + b"\n\n" + html_bytes, *images],
    )
    plain = "\n".join(part_headers).encode() + b"\n\n" + body
    top_type, top = _multipart(
        "alternative", f"pbm-a-{seed[:24]}", [plain, related_type.encode() + b"\n\n" + related]
    )
    return "\n".join([*headers, top_type]).encode("utf-8") + b"\n\n" + top


def _domain(message_id: str) -> str:
    """The domain of one of our Message-IDs (``<pbm.UUID@domain>``)."""
    return message_id.strip("<>").rpartition("@")[2] or "localhost"


def _text_part(text: str) -> tuple[list[str], bytes]:
    """The headers and body of the text/plain part."""
    if text.isascii():
        return [
            'Content-Type: text/plain; charset="us-ascii"',
            "Content-Transfer-Encoding: 7bit",
        ], text.encode("ascii")
    # RFC 2045 6.7: quoted-printable keeps mostly-ASCII text readable.
    return [
        'Content-Type: text/plain; charset="utf-8"',
        "Content-Transfer-Encoding: quoted-printable",
    ], quopri.encodestring(text.encode("utf-8"))
