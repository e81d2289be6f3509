"""Replies become messages (pbm.mail.message): headers, threading, Reply-To, body wrapping."""

from __future__ import annotations

import email
import email.policy
import email.utils
from dataclasses import replace
from email.message import EmailMessage
from typing import Any

import pytest
from conftest import T0, Row

from pbm.config import Config, from_mapping
from pbm.mail.addresses import parse_token_address, token_address
from pbm.mail.message import (
    MAX_LINE,
    build_message,
    from_header,
    reply_address,
    wrap_body,
    wrap_line,
)


def make_config(secret: str = "s", **mail: Any) -> Config:
    fields = {"address": "pbm@example.org", "from_name": "PBM Server", "secret": secret, **mail}
    return from_mapping({"mail": fields}, env={})


def parse(data: bytes) -> EmailMessage:
    parsed = email.message_from_bytes(data, policy=email.policy.default)
    assert isinstance(parsed, EmailMessage)
    return parsed


def build(row: Row, config: Config) -> EmailMessage:
    """The message for ``row``, as a mail reader parses its bytes."""
    return parse(build_message(row, config))


def text_of(msg: EmailMessage) -> str:
    """The decoded body text with LF line ends."""
    content = msg.get_content()
    assert isinstance(content, str)
    return content.replace("\r\n", "\n")


# --- headers -----------------------------------------------------------------


def test_headers() -> None:
    msg = build(Row(), make_config())
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
    config = make_config(from_name=name)
    raw = build_message(Row(), config)
    assert raw.isascii()
    msg = parse(raw)
    assert msg["From"].addresses[0].display_name == name
    assert msg["From"].addresses[0].addr_spec == "pbm@example.org"


def test_from_header_quotes_the_display_name() -> None:
    assert from_header(make_config(from_name="Games Room, Inc.")) == (
        '"Games Room, Inc." <pbm@example.org>'
    )
    assert from_header(make_config(from_name="PBM Server")) == "PBM Server <pbm@example.org>"


def test_threading() -> None:
    msg = build(Row(in_reply_to="<cmd-7@example.net>"), make_config())
    assert msg["In-Reply-To"] == "<cmd-7@example.net>"
    assert msg["References"] == "<cmd-7@example.net>"


def test_naive_created_at_is_utc() -> None:
    msg = build(Row(created_at=T0.replace(tzinfo=None)), make_config())
    assert email.utils.parsedate_to_datetime(msg["Date"]) == T0


def test_same_row_same_bytes() -> None:
    row = Row(in_reply_to="<x@y>", board=12, reply_as="bob")
    assert build_message(row, make_config()) == build_message(row, make_config())


# --- Reply-To: the reader's token address, made from the row's board and reply_as ----


def test_reply_to_of_a_board_mail_is_the_readers_token_address() -> None:
    config = make_config(secret="s3cret")
    msg = build(Row(board=12, reply_as="bob"), config)
    expected = token_address("pbm@example.org", "s3cret", 12, "bob")
    assert msg["Reply-To"] == expected
    assert expected.startswith("pbm+12.bob.") and expected.endswith("@example.org")
    token = parse_token_address(msg["Reply-To"], "pbm@example.org")
    assert token is not None
    assert (token.board, token.userid) == (12, "bob")
    assert token.is_valid("s3cret")
    assert not token.is_valid("another secret")


def test_reply_to_names_the_reader_and_the_board_of_the_row() -> None:
    config = make_config()
    alice = reply_address(Row(board=3, reply_as="Alice"), config)
    bob = reply_address(Row(board=3, reply_as="bob"), config)
    other_board = reply_address(Row(board=4, reply_as="bob"), config)
    assert alice == token_address("pbm@example.org", "s", 3, "alice")  # userids lower-cased
    assert alice is not None and alice.startswith("pbm+3.alice.")
    assert len({alice, bob, other_board}) == 3


@pytest.mark.parametrize(
    ("row", "secret"),
    [
        (Row(board=12, reply_as="bob"), ""),  # tokens of an empty secret could be forged
        (Row(board=None, reply_as="bob"), "s"),  # not about a board
        (Row(board=12, reply_as=None), "s"),  # nobody to reply as (a follower, say)
        (Row(board=12, reply_as=""), "s"),
    ],
)
def test_no_reply_to_without_secret_board_or_reader(row: Row, secret: str) -> None:
    config = make_config(secret=secret)
    assert reply_address(row, config) is None
    msg = build(row, config)
    assert msg["Reply-To"] is None


def test_reply_to_follows_the_secret_not_the_row() -> None:
    """The row keeps no address: a new secret makes new addresses for unsent mail."""
    row = Row(board=12, reply_as="bob")
    first = build(row, make_config(secret="one"))["Reply-To"]
    second = build(replace(row), make_config(secret="two"))["Reply-To"]
    assert first != second
    assert first == token_address("pbm@example.org", "one", 12, "bob")


# --- body --------------------------------------------------------------------


def test_ascii_body_is_7bit_us_ascii() -> None:
    body = "Board 12\n\n  a b c\n5 . w . .\n"
    raw = build_message(Row(body=body), make_config())
    msg = parse(raw)
    assert msg.get_content_type() == "text/plain"
    assert msg.get_content_charset() == "us-ascii"
    assert msg["Content-Transfer-Encoding"] == "7bit"
    assert raw.isascii()
    assert b"5 . w . .\n" in raw
    assert text_of(msg) == body


def test_non_ascii_body_is_utf8_quoted_printable() -> None:
    body = "Grüße from Jürgen: \N{WHITE CHESS KING}\n"
    raw = build_message(Row(body=body, subject="Zug von Jürgen"), make_config())
    parsed = parse(raw)
    assert parsed.get_content_charset() == "utf-8"
    assert parsed["Content-Transfer-Encoding"] == "quoted-printable"
    assert raw.isascii()  # RFC 2047 subject, RFC 2045 quoted-printable body
    assert text_of(parsed) == body
    assert parsed["Subject"] == "Zug von Jürgen"


def test_long_lines_are_wrapped() -> None:
    words = " ".join(f"word{i}" for i in range(60))
    body = f"{words}\n{'x' * 200}\nshort\n"
    raw = build_message(Row(body=body), make_config())
    _, _, payload = raw.partition(b"\n\n")
    for line in raw.split(b"\n"):
        assert len(line) <= MAX_LINE, line
    text = text_of(parse(raw))
    assert text.replace("\n", " ").split() == (
        f"{words} {'x' * 78} {'x' * 78} {'x' * 44} short".split()
    )
    assert payload.endswith(b"short\n")


def test_long_non_ascii_lines_stay_short_when_encoded() -> None:
    body = "ä" * 200 + "\n"
    raw = build_message(Row(body=body), make_config())
    assert all(len(line) <= MAX_LINE for line in raw.split(b"\n"))
    assert text_of(parse(raw)) == ("ä" * 78 + "\n" + "ä" * 78 + "\n" + "ä" * 44 + "\n")


def test_wrap_body_normalises_line_ends_and_keeps_short_lines() -> None:
    assert wrap_body("a\r\nb\rc") == "a\nb\nc\n"
    assert wrap_body("") == "\n"
    diagram = "   +---+---+\n 1 | w |   |\n"
    assert wrap_body(diagram) == diagram
    assert wrap_body("aaa bbb ccc", width=7) == "aaa bbb\nccc\n"


def test_wrap_body_drops_trailing_empty_lines() -> None:
    assert wrap_body("text\n\n\n") == "text\n"
    assert wrap_body("\n\n") == "\n"


def test_wrap_line_breaks_at_spaces_else_hard() -> None:
    assert wrap_line("short") == ["short"]
    assert wrap_line("aaa bbb ccc", width=7) == ["aaa bbb", "ccc"]
    assert wrap_line("x" * 10, width=4) == ["xxxx", "xxxx", "xx"]
    # Leading spaces are no place to break: an indented long word is cut hard.
    assert wrap_line("   " + "y" * 8, width=6) == ["   yyy", "yyyyy"]
    assert all(len(piece) <= MAX_LINE for piece in wrap_line("word " * 100))


# --- nothing a sender wrote can add a header (RFC 5322 2.2: a header ends at a line end) ---

CONTROLS = [chr(c) for c in (*range(0x20), 0x7F)] + ["\x85", "\u2028", "\u2029"]


@pytest.mark.parametrize("char", CONTROLS, ids=lambda c: f"U+{ord(c):04X}")
def test_no_control_character_reaches_a_header(char: str) -> None:
    """Each control character, in every value a reply copies from a received mail."""
    evil = f"{char}Reply-To: phish@evil.example{char}{char}Injected body"
    row = Row(
        to_addr=f"bob@example.net{char}Bcc: victim@example.org",
        subject=f"Accasta Board 12 - chat from bob{evil}",
        in_reply_to=f"<cmd-7@example.net>{evil}",
        message_id=f"<1.abc@example.org>{char}X-Evil: 1",
    )
    raw = build_message(row, make_config())
    head, _, body = raw.partition(b"\n\n")
    assert body == b"Hello bob.\n"
    names = [line.split(b":")[0] for line in head.split(b"\n") if not line[:1].isspace()]
    assert sorted(names) == sorted(
        [
            b"From",
            b"To",
            b"Subject",
            b"Date",
            b"Message-ID",
            b"In-Reply-To",
            b"References",
            b"Auto-Submitted",
            b"X-Auto-Response-Suppress",
            b"MIME-Version",
            b"Content-Type",
            b"Content-Transfer-Encoding",
        ]
    )
    for c in CONTROLS:
        if c != "\n":
            assert c.encode() not in head
    msg = parse(raw)
    assert msg["Reply-To"] is None and msg["Bcc"] is None and msg["X-Evil"] is None
    assert msg["Auto-Submitted"] == "auto-replied"
