"""ParsedOnce: header lookups parsed once, and never stale after a change."""

from __future__ import annotations

import email
from email import policy

from pbm.mail.headers import ParsedOnce


def test_a_lookup_is_parsed_once() -> None:
    msg = email.message_from_bytes(
        b"Subject: =?utf-8?q?Gr=C3=BC=C3=9Fe?=\r\nContent-Type: text/plain\r\n\r\nhi\r\n",
        _class=ParsedOnce,
        policy=policy.default,
    )
    assert isinstance(msg, ParsedOnce)
    first = msg["Subject"]
    assert first == "Grüße"
    assert msg.get("subject") is first  # the same header object: not parsed again
    assert msg.get("X-Missing", "none") == "none"
    assert msg.get("X-Missing") is None


def test_every_change_is_seen() -> None:
    msg = ParsedOnce(policy=policy.SMTP)
    msg.set_raw("Subject", "one")
    assert msg["Subject"] == "one"
    del msg["Subject"]
    assert msg["Subject"] is None
    msg["Subject"] = "two"
    assert msg["Subject"] == "two"
    msg.replace_header("Subject", "three")
    assert msg["Subject"] == "three"
    assert msg.get_content_type() == "text/plain"  # the default, remembered as absent
    msg.add_header("Content-Type", "text/html")
    assert msg.get_content_type() == "text/html"
    msg.set_raw("X-Seen", "yes")
    assert msg["X-Seen"] == "yes"
    msg.set_content("Grüße\n", subtype="plain", charset="utf-8", cte="quoted-printable")
    assert msg.get_content_type() == "text/plain"
    assert msg.get_content_charset() == "utf-8"
    assert msg.get_content().replace("\r\n", "\n") == "Grüße\n"
