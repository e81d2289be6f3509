"""ParsedOnce: header lookups parsed once, and never stale after a change."""

from __future__ import annotations

import email
from email import policy

from pbm.mail.headers import DEFAULT_POLICY, ParsedOnce


def parsed(headers: str, using: policy.Policy = policy.default) -> ParsedOnce:
    """A message of these header lines (CRLF-separated) and a one-line body."""
    msg = email.message_from_bytes(
        f"{headers}\r\n\r\nhi\r\n".encode(), _class=ParsedOnce, policy=using
    )
    assert isinstance(msg, ParsedOnce)
    return msg


def test_a_lookup_is_parsed_once() -> None:
    msg = parsed("Subject: =?utf-8?q?Gr=C3=BC=C3=9Fe?=\r\nContent-Type: text/plain")
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


def test_mime_headers_are_parsed_once_for_all_messages() -> None:
    def mail(content_type: str) -> ParsedOnce:
        return parsed(f"Content-Type: {content_type}")

    first, second = mail("text/plain; charset=utf-8"), mail("text/plain; charset=utf-8")
    assert first["Content-Type"] is second["Content-Type"]  # one parse, shared
    other = mail("text/html; charset=latin-1")
    assert other.get_content_type() == "text/html"
    assert other.get_content_charset() == "latin-1"
    assert first.get_content_charset() == "utf-8"
    # Flattening clones the policy; the shared parse still serves (and is still right).
    assert b"charset=utf-8" in first.as_bytes(policy=policy.SMTP.clone(linesep="\n"))


def test_a_senders_addresses_are_parsed_once_for_all_his_messages() -> None:
    def mail(sender: str) -> ParsedOnce:
        return parsed(f"From: {sender}\r\nTo: pbm@example.org")

    first, second = mail('"Bob B." <bob@example.net>'), mail('"Bob B." <bob@example.net>')
    assert first["From"] is second["From"]
    assert first["To"] is second["To"]
    other = mail("=?utf-8?q?J=C3=BCrgen?= <j@example.net>")
    assert other["From"].addresses[0].display_name == "Jürgen"
    assert first["From"].addresses[0].addr_spec == "bob@example.net"


def test_header_classes_are_made_once_per_kind() -> None:
    def mail(subject: str) -> ParsedOnce:
        headers = f"Subject: {subject}\r\nX-Mailer: x\r\nDate: Fri, 1 Mar 2024 12:00:00 +0000"
        return parsed(headers, DEFAULT_POLICY)

    first, second = mail("one"), mail("two")
    assert type(first["Subject"]) is type(second["Subject"])
    assert type(first["X-Mailer"]) is type(mail("three")["X-Mailer"])  # any name, one kind
    assert type(first["Date"]) is not type(first["Subject"])
    assert first["Date"].datetime.year == 2024 and second["Subject"] == "two"
    # The standard registry makes a class per header: ours is a drop-in for it.
    plain = email.message_from_bytes(b"Subject: one\r\n\r\n", policy=policy.default)
    assert type(plain["Subject"]) is not type(plain["Subject"])
    assert plain["Subject"] == first["Subject"]
