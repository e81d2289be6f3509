"""A received mail as it is kept once carried out: no password in it.

Received mail holds passwords (``signup alice pw-alice``, ``accasta move 3
bob pw ...``, the new password in the reply to a reset mail). Once a mail is
carried out, the copy the inbox keeps (for ``pbm inbox list`` and for the
admin's eyes, until ``server.keep_raw_days``) is this one: its headers and
its text, every password it held written ``******``, its other parts (an
HTML part, files) left out. A backup or a database dump then holds none.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from email.message import EmailMessage
from email.policy import SMTPUTF8

from pbm.mail.inbound import Inbound

MASK = "******"
_KEPT_HEADERS = ("From", "To", "Cc", "Date", "Message-ID", "In-Reply-To", "References", "Subject")


def redacted(inbound: Inbound, secrets: Iterable[str]) -> bytes:
    """The mail ``inbound`` was read from, kept without ``secrets``: its chief headers and
    its text, each secret masked wherever it stands as a word of its own."""
    words = sorted({s for s in secrets if s}, key=len, reverse=True)
    pattern = (
        re.compile("|".join(rf"(?<!\S){re.escape(w)}(?!\S)" for w in words)) if words else None
    )

    def masked(text: str) -> str:
        return pattern.sub(MASK, text) if pattern is not None else text

    kept = EmailMessage()
    headers = {
        "From": inbound.sender,
        "To": ", ".join(inbound.rcpt),
        "Message-ID": inbound.message_id,
        "In-Reply-To": inbound.in_reply_to,
        "References": " ".join(inbound.references),
        "Subject": masked(inbound.subject),
    }
    for name in _KEPT_HEADERS:
        value = headers.get(name, "")
        if value:
            kept[name] = value.replace("\r", " ").replace("\n", " ")
    kept.set_content(masked(inbound.text) or "\n")
    try:
        return kept.as_bytes(policy=SMTPUTF8)
    except (ValueError, TypeError, LookupError):  # headers no generator writes: the text alone
        return masked(inbound.text).encode("utf-8", "replace")
