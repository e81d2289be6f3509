"""An email message -> who sent it, the text to read commands from, or why never to answer.

``read_message`` turns raw bytes into an ``Inbound`` and never raises: mail
from the internet is anything at all. The body is decoded by ``body``, what
the sender wrote is told apart from what he quoted by ``quotes``, and mail
never to be answered is recognised by ``robots``. ``Inbound.token`` names the
reply-token address the mail was sent to, if any.
"""

from __future__ import annotations

import email
import re
from dataclasses import dataclass

from pbm.mail.addresses import TokenAddress, parse_token_address
from pbm.mail.body import body_text
from pbm.mail.controls import one_line, strip_controls
from pbm.mail.headers import (
    DEFAULT_POLICY,
    ParsedOnce,
    clean,
    from_mailbox,
    header_text,
    msg_id,
)
from pbm.mail.quotes import strip_reply
from pbm.mail.robots import never_answer


@dataclass(frozen=True, slots=True)
class Inbound:
    """One received mail, decoded.

    ``sender`` is the address to answer: the From address (the envelope
    sender when there is no From). ``message_id`` is the mail's Message-ID
    as written (without control characters), its key against acting twice;
    ``thread_id`` the same only if it is a valid msg-id (RFC 5322 3.6.4):
    only that is copied into our replies' ``In-Reply-To``. ``return_path`` is the SMTP envelope
    sender ("" for a bounce) and ``rcpt`` the envelope recipients. ``text`` is
    the whole body as plain text, ``new_text`` only what the sender wrote
    (``strip_reply``). ``token`` is the first recipient that is a reply-token
    address of this server (not yet checked against the secret).
    ``ignore_reason`` is set when the mail must get no answer at all
    (``never_answer``); the caller logs it and drops the mail.
    """

    sender: str
    sender_name: str
    return_path: str
    rcpt: tuple[str, ...]
    message_id: str
    thread_id: str | None
    subject: str
    in_reply_to: str
    references: tuple[str, ...]
    text: str
    new_text: str
    token: TokenAddress | None
    ignore_reason: str | None


def read_message(
    raw: bytes, *, mail_from: str, rcpt_tos: list[str], server_address: str
) -> Inbound:
    """Parse a received mail. Never raises: garbage gives an Inbound with an ``ignore_reason``."""
    return_path = one_line(clean(mail_from)).strip("<>").strip()
    rcpt = tuple(one_line(clean(r)).strip("<>") for r in rcpt_tos)
    try:
        msg = email.message_from_bytes(raw, _class=ParsedOnce, policy=DEFAULT_POLICY)
        sender_name, sender, unclear = from_mailbox(msg)
        if unclear is None:  # no From at all: the envelope sender
            sender = sender or return_path
        # Cleaned here, where it enters: nothing with a NUL or a bidi override is stored
        # or mailed on (``pbm.mail.controls``).
        text = strip_controls(body_text(msg))
        message_id = _CONTROLS.sub("", header_text(msg, "Message-ID")).strip()[:250]
        ignore = never_answer(msg, return_path, server_address)
        if ignore is None and unclear is not None:  # none, rather than a wrong one
            ignore = f"no answer: {unclear}"
        if ignore is None and not usable_address(sender):
            ignore = f"no address to answer ({sender!r})"
        return Inbound(
            sender=sender,
            sender_name=one_line(sender_name),
            return_path=return_path,
            rcpt=rcpt,
            message_id=message_id,
            thread_id=msg_id(message_id),
            subject=one_line(header_text(msg, "Subject")),
            in_reply_to=one_line(header_text(msg, "In-Reply-To")),
            references=tuple(one_line(header_text(msg, "References")).split()),
            text=text,
            new_text=strip_reply(text),
            token=_token(rcpt, server_address),
            ignore_reason=ignore,
        )
    except Exception as exc:  # a parser bug must not lose the mail's log line or crash the runner
        return Inbound(
            sender=return_path,
            sender_name="",
            return_path=return_path,
            rcpt=rcpt,
            message_id="",
            thread_id=None,
            subject="",
            in_reply_to="",
            references=(),
            text="",
            new_text="",
            token=None,
            ignore_reason=f"unreadable message ({type(exc).__name__})",
        )


_CONTROLS = re.compile("[\x00-\x1f\x7f\x85\u2028\u2029]")
# A mailbox we can write to: one word with an "@", no controls (RFC 5321 4.5.3.1.3: 254).
_USABLE = re.compile(r"[^\s@<>()\[\]\\,;:\"]+@[^\s@<>()\[\]\\,;:\"]+")


def usable_address(address: str) -> bool:
    """Whether ``address`` is one we can answer: a plain mailbox, no controls, not too long."""
    return (
        len(address) <= 254
        and _USABLE.fullmatch(address) is not None
        and _CONTROLS.search(address) is None
    )


def _token(rcpt: tuple[str, ...], server_address: str) -> TokenAddress | None:
    for address in rcpt:
        try:
            token = parse_token_address(address, server_address)
        except ValueError:  # int() of an absurd board number
            continue
        if token is not None:
            return token
    return None
