"""Inbound mail: decoding what real clients send, finding the new text, never answering robots."""

from __future__ import annotations

import base64
import email
from email import policy
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pbm.commands import CommandError, parse, parse_reply
from pbm.games import get as get_game
from pbm.mail.addresses import token_address
from pbm.mail.body import decode_bytes, html_to_text, unflow
from pbm.mail.inbound import Inbound, read_message
from pbm.mail.quotes import command_candidates, strip_reply, subject_command_text
from pbm.mail.robots import never_answer

MAILS = Path(__file__).parent / "mails"
SERVER = "pbm@example.org"


def candidates(inbound: Inbound, **kw: Any) -> tuple[list[str], str]:
    """The command lines of a decoded mail (``command_candidates`` on its texts)."""
    return command_candidates(inbound.text, inbound.new_text, inbound.subject, **kw)


def read(raw: bytes, mail_from: str = "someone@example.net", rcpt: str = SERVER) -> Inbound:
    return read_message(raw, mail_from=mail_from, rcpt_tos=[rcpt], server_address=SERVER)


def fixture(name: str) -> bytes:
    """A stored mail with CRLF line ends, as it arrives over SMTP."""
    return (MAILS / name).read_bytes().replace(b"\r\n", b"\n").replace(b"\n", b"\r\n")


def mail(headers: str, body: bytes) -> bytes:
    return headers.strip().replace("\n", "\r\n").encode() + b"\r\n\r\n" + body


def is_command(line: str) -> bool:
    """Whether a line is a command in the classic form (a malformed one is not)."""
    try:
        return parse(line) is not None
    except CommandError:
        return False


def is_reply_command(line: str) -> bool:
    """Whether a line is a command in a reply about an Accasta board."""
    try:
        return parse_reply(line, get_game("accasta").looks_like_move) is not None
    except CommandError:
        return False


# --- real client mails --------------------------------------------------------------


def test_gmail_multipart_alternative_quoted_printable_top_posted_reply() -> None:
    rcpt = "pbm+12.bob.0123456789@example.org"
    inbound = read(fixture("gmail_alternative_qp.eml"), "bob.smith@gmail.com", rcpt)
    assert inbound.sender == "bob.smith@gmail.com"
    assert inbound.sender_name == "Bob Smith"
    assert inbound.message_id == "<CAB1x2y3=abc@mail.gmail.com>"
    assert inbound.in_reply_to == "<board-12-7@example.org>"
    assert inbound.references == ("<board-12-7@example.org>",)
    assert inbound.rcpt == (rcpt,)
    assert inbound.token is not None
    assert (inbound.token.board, inbound.token.userid) == (12, "bob")
    assert inbound.ignore_reason is None
    # text/plain is preferred over the HTML part, QP soft breaks undone
    assert "Schöner Zug von dir, jetzt bin ich dran — mal sehen, ob das so klappt." in inbound.text
    # the two-line "On ... <\naddress> wrote:" header and the quoted board are cut
    assert inbound.new_text == (
        "a1:C-d1,H-b1,+b1#7\n\n"
        "Schöner Zug von dir, jetzt bin ich dran — mal sehen, ob das so klappt."
    )
    lines, comment = candidates(inbound, reply_mode=True, is_command=is_reply_command)
    assert lines == ["a1:C-d1,H-b1,+b1#7"]
    assert comment == "Schöner Zug von dir, jetzt bin ich dran — mal sehen, ob das so klappt."


def test_gmail_html_part_alone_gives_the_same_new_text() -> None:
    msg = email.message_from_bytes(fixture("gmail_alternative_qp.eml"), policy=policy.default)
    html = msg.get_body(preferencelist=("html",))
    assert html is not None
    text = html_to_text(html.get_content())
    assert "> Accasta Board 12 - bob to move" in text  # the blockquote comes back quoted
    assert strip_reply(text) == (
        "a1:C-d1,H-b1,+b1#7\n\n"
        "Schöner Zug von dir, jetzt bin ich dran — mal sehen, ob das so klappt."
    )


def test_thunderbird_format_flowed_subject_command() -> None:
    inbound = read(fixture("thunderbird_flowed.eml"))
    assert inbound.subject == "accasta move 12 alice s3cret g1:CHxd1"
    assert inbound.text.startswith(
        "Dear Bob, this is a rather long comment line that my mail client has wrapped "
        "with soft line breaks, because it sends format=flowed text as RFC 3676 says.\n"
    )
    # a space-stuffed ">" line is text, not a quote (RFC 3676 §4.4)
    assert " >this line was space-stuffed." in inbound.text
    assert "Thunderbird" not in inbound.new_text  # cut at the "-- " signature
    lines, comment = candidates(inbound, reply_mode=False, is_command=is_command)
    assert lines == ["accasta move 12 alice s3cret g1:CHxd1"]
    assert comment == inbound.new_text
    assert comment.endswith("as RFC 3676 says.\n >this line was space-stuffed.")


def test_apple_mail_base64_flowed_delsp_and_german_quote_header() -> None:
    inbound = read(fixture("apple_delsp_base64.eml"))
    assert inbound.sender_name == "Jürgen Müller"
    assert inbound.subject == "AW: Accasta Board 12 – jürgen to move"
    assert inbound.new_text == (
        "a1:-d1\n\nDas ist ein langer Kommentar, den Apple Mail mit delsp=yes umbricht: "
        "ein Leerzeichen am Zeilenende wird entfernt, auch mitten im Wortzusammenhang. Grüße!"
    )
    assert "> Accasta Board 12 - jürgen to move" in inbound.text


def test_outlook_html_only_windows_1252_with_from_sent_block() -> None:
    inbound = read(fixture("outlook_html_only.eml"))
    assert inbound.subject == "RE: [pbm] FW: accasta show 12"  # RFC 2047, iso-8859-1, base64
    assert subject_command_text(inbound.subject) == "accasta show 12"
    assert "ignored title" not in inbound.text
    assert "margin-top" not in inbound.text
    assert inbound.new_text == (
        "accasta move 12 carla Pa55 c1Ccc4\nPerché no? Un bel caffè & via – ciao!\nseconda riga"
    )
    # subject mode wins: the subject is a command, the body is its comment
    lines, comment = candidates(inbound, reply_mode=False, is_command=is_command)
    assert lines == ["accasta show 12"]
    assert comment.startswith("accasta move 12 carla Pa55 c1Ccc4")


def test_body_mode_collects_commands_and_the_comment() -> None:
    raw = mail(
        """
From: Bob <bob@example.net>
To: pbm@example.org
Subject: Re: my moves
Content-Type: text/plain; charset=utf-8
""",
        b"Hi!\r\naccasta move 12 bob pw a1:-d1\r\n\r\nACCASTA SHOW 13\r\nSee you.\r\n"
        b"-- \r\nBob\r\naccasta resign 12 bob pw\r\n",
    )
    inbound = read(raw)
    lines, comment = candidates(inbound, reply_mode=False, is_command=is_command)
    assert lines == ["accasta move 12 bob pw a1:-d1", "ACCASTA SHOW 13"]
    assert comment == "Hi!\n\nSee you."


def test_body_mode_without_commands() -> None:
    inbound = read(mail("From: bob@example.net\nSubject: hello", b"How do I play?\r\n"))
    assert candidates(inbound, reply_mode=False, is_command=is_command) == (
        [],
        "How do I play?",
    )


def test_reply_mode_never_reads_the_subject() -> None:
    raw = mail("From: bob@example.net\nSubject: Re: Accasta Board 12 - bob to move", b"\r\n")
    inbound = read(raw)
    assert candidates(inbound, reply_mode=True, is_command=lambda line: True) == ([], "")
    # ... while subject mode would have taken it (a game command after the prefix)
    assert subject_command_text(inbound.subject) == "Accasta Board 12 - bob to move"


def test_reply_mode_takes_the_first_command_line_the_lines_after_it_are_comment() -> None:
    raw = mail("From: bob@example.net\nSubject: Re: x", b"\r\n\r\nnice move\r\nresign\r\n")
    inbound = read(raw)
    assert candidates(inbound, reply_mode=True, is_command=is_reply_command) == (["resign"], "")
    raw = mail("From: bob@example.net\nSubject: Re: x", b"Hi!\r\nresign\r\n\r\nGood game.\r\n")
    assert candidates(read(raw), reply_mode=True, is_command=is_reply_command) == (
        ["resign"],
        "Good game.",
    )
    raw = mail("From: bob@example.net\nSubject: Re: x", b"Thanks, see you!\r\n")
    assert candidates(read(raw), reply_mode=True, is_command=is_reply_command) == (
        [],
        "Thanks, see you!",
    )


def is_meant_command(line: str) -> bool:
    """Whether a reply's line about an Accasta board is a command as a person means it."""
    try:
        return parse_reply(line, get_game("accasta").looks_like_move, lenient=True) is not None
    except CommandError:
        return False


def test_reply_mode_finds_a_command_as_written_before_one_as_meant_in_one_pass() -> None:
    """Issue 37 item 6: one pass over the lines finds the first command as written, else the
    first as a person means it ("OK, accept")."""
    looked: list[str] = []

    def meant(line: str) -> bool:
        looked.append(line)
        return is_meant_command(line)

    written = read(mail("From: bob@example.net\nSubject: Re: x", b"OK, accept\r\nresign\r\n"))
    assert candidates(written, reply_mode=True, is_command=is_reply_command, is_meant=meant) == (
        ["resign"],
        "",
    )
    assert looked == ["OK, accept"]  # the line as written came after it: no more guessing
    looked.clear()
    guessed = read(
        mail("From: bob@example.net\nSubject: Re: x", b"OK, accept\r\nYes, I resign.\r\n")
    )
    assert candidates(guessed, reply_mode=True, is_command=is_reply_command, is_meant=meant) == (
        ["OK, accept"],
        "Yes, I resign.",
    )
    assert looked == ["OK, accept"]  # once one is meant, the rest are read as written only


def test_reply_mode_reads_a_bottom_posted_move_under_the_quote() -> None:
    body = (
        b"On Sun, 22 Nov 2026 at 10:00, PBM Server\r\n"
        b"<pbm@example.org> wrote:\r\n"
        b"> Accasta Board 12 - bob to move\r\n"
        b"> accasta move 12 bob PASSWORD e3:S+e4#2\r\n"
        b"\r\n"
        b"g2:C+f2,H+f3\r\n"
        b"Nice opening!\r\n"
        b"-- \r\n"
        b"Bob\r\n"
    )
    inbound = read(mail("From: bob@example.net\nSubject: Re: Accasta Board 12", body))
    assert inbound.new_text == ""
    assert candidates(inbound, reply_mode=True, is_command=is_reply_command) == (
        ["g2:C+f2,H+f3"],
        "Nice opening!",
    )


def test_token_address_recipient() -> None:
    rcpt = token_address(SERVER, "secret", 7, "Alice")
    inbound = read(mail("From: alice@example.net", b"a1:-d1"), "alice@example.net", rcpt)
    assert inbound.token is not None
    assert inbound.token.is_valid("secret")
    assert read(mail("From: alice@example.net", b"x")).token is None


# --- charsets and encodings -------------------------------------------------------


@pytest.mark.parametrize(
    ("content_type", "cte", "body", "expected"),
    [
        (
            "text/plain; charset=iso-8859-1",
            "8bit",
            "Caf\xe9 cr\xe8me".encode("latin-1"),
            "Café crème",
        ),
        ("text/plain; charset=utf-8", "base64", base64.b64encode("Grüße ✓".encode()), "Grüße ✓"),
        ("text/plain; charset=us-ascii", "8bit", "naïve".encode(), "naïve"),  # mislabelled UTF-8
        ("text/plain; charset=x-bogus-42", "8bit", "Grüße".encode(), "Grüße"),
        ("text/plain; charset=x-bogus-42", "8bit", "Gr\xfc\xdfe".encode("latin-1"), "Grüße"),
        ("text/plain; charset=base64", "8bit", b"plain", "plain"),  # a codec, not a charset
        ("text/plain; charset=utf-8", "8bit", b"ok \xff\xfe", "ok \ufffd\ufffd"),
        (
            "text/plain; charset=utf-8",
            "quoted-printable",
            b"caf=C3=A9 =\r\nau lait",
            "café au lait",
        ),
        ("text/plain; charset=koi8-r", "8bit", "Привет".encode("koi8-r"), "Привет"),
        ("text/plain", "8bit", b"no charset", "no charset"),
        ("", "7bit", b"no content type", "no content type"),
        ("text/html; charset=utf-8", "7bit", b"<p>a&amp;b</p><p>c&nbsp;d</p>", "a&b\nc d"),
    ],
)
def test_bodies_in_any_charset(content_type: str, cte: str, body: bytes, expected: str) -> None:
    headers = "From: bob@example.net\nSubject: x\nMIME-Version: 1.0\n"
    if content_type:
        headers += f"Content-Type: {content_type}\n"
    headers += f"Content-Transfer-Encoding: {cte}"
    assert read(mail(headers, body)).text.strip() == expected


def test_decode_bytes_falls_back_in_order() -> None:
    assert decode_bytes("é".encode("cp1252"), "cp1252") == "é"
    assert decode_bytes("é".encode(), "latin-1") == "Ã©"  # fits the declared one: trusted
    assert decode_bytes(b"\xe9", None) == "é"
    assert decode_bytes(b"\xe9", "utf-8") == "\ufffd"
    assert decode_bytes(b"\xe9", "no-such-charset") == "é"
    assert decode_bytes(b"\\x41", "unicode_escape") == "\\x41"  # no escapes interpreted
    assert decode_bytes(b"YQ==", "base64") == "YQ=="  # a Python codec, not a charset


@pytest.mark.parametrize(
    ("header", "expected"),
    [
        ("=?utf-8?q?accasta_move_12_j=C3=BCrgen_pw_a1-b1?=", "accasta move 12 jürgen pw a1-b1"),
        ("=?iso-8859-1?b?UmU6IENhZukgYXUgbGFpdA==?=", "Re: Café au lait"),
        ("=?UTF-8?B?QVc6IEFjY2FzdGEgQm9hcmQgMTI=?=", "AW: Accasta Board 12"),
        ("Re: =?utf-8?q?=C3=A9?= =?utf-8?q?t=C3=A9?=", "Re: été"),
        ("=?x-bogus?q?caf=E9?=", "caf\ufffd"),
        ("plain\r\n folded   subject", "plain folded subject"),
        ("Caf\udce9", "Caf\ufffd"),
    ],
)
def test_encoded_subjects(header: str, expected: str) -> None:
    raw = b"From: bob@example.net\r\nSubject: " + header.encode("utf-8", "surrogateescape")
    assert read(raw + b"\r\n\r\nbody").subject == expected


def test_unflow_rfc3676() -> None:
    assert unflow("one \ntwo \nthree\nfour") == "one two three\nfour"
    assert unflow("split wo \nrd", delsp=True) == "split word"
    assert unflow("> quoted \n> more\n>> deeper") == "> quoted more\n>> deeper"
    assert unflow("> flowed \nunquoted") == "> flowed \nunquoted"  # depth change ends it
    assert unflow("-- \nsig") == "-- \nsig"  # the signature separator never flows
    assert unflow(" From stuffed") == "From stuffed"


def test_html_to_text_keeps_pre_and_drops_scripts() -> None:
    html = (
        "<html><head><style>p{}</style><script>alert(1)</script></head><body>"
        "<p>Move:</p><pre>a1:-d1\n  b2</pre><ul><li>one</li><li>two</li></ul>"
        "<blockquote><blockquote>deep</blockquote></blockquote>end<br>line</body></html>"
    )
    assert html_to_text(html) == "Move:\na1:-d1\n  b2\none\ntwo\n> > deep\nend\nline"
    assert html_to_text("<head><title>t</title><body>shown") == "shown"
    assert html_to_text("<![if !supportLists]>x<![endif]> <p>text").endswith("text")


# --- the new text of a reply --------------------------------------------------------


@pytest.mark.parametrize(
    "tail",
    [
        "-- \nBob",
        "--\nBob",
        "--=20\nBob",
        "__\nSent from my phone",
        "________________________________\nFrom: PBM\nSent: today",
        "On Mon, 4 Mar 2024 at 09:12, PBM Server <pbm@example.org> wrote:\n> board",
        "On Mon, 4 Mar 2024 at 09:12, PBM Server <\npbm@example.org> wrote:\n> board",
        "On 04.03.24 09:12, PBM Server wrote:\nunquoted board text",
        "Am 04.03.2024 um 09:12 schrieb PBM Server <pbm@example.org>:\n> Brett",
        "Le lun. 4 mars 2024 à 09:12, PBM Server <pbm@example.org> a écrit :\n> plateau",
        "El lun, 4 mar 2024 a las 9:12, PBM Server (<pbm@example.org>) escribió:\n> x",
        "PBM Server <pbm@example.org> wrote:\n> board",
        "-----Original Message-----\nFrom: PBM Server\nboard",
        "----- Original Message -----\nboard",
        "-----Ursprüngliche Nachricht-----\nVon: PBM",
        "From: PBM Server <pbm@example.org>\nSent: Monday, March 4, 2024 9:12 AM\nTo: Bob",
        "Von: PBM Server <pbm@example.org>\nGesendet: Montag, 4. März 2024 09:12\nAn: Bob",
    ],
)
def test_strip_reply_cuts_at_signatures_and_quote_headers(tail: str) -> None:
    text = "a1:C-d1\nGood game so far.\n\n" + tail + "\nmore\n"
    assert strip_reply(text) == "a1:C-d1\nGood game so far."


def test_strip_reply_drops_quoted_lines_but_keeps_interleaved_text() -> None:
    text = "> Your move?\na1:-d1\n> Anything else?\nNo.\n"
    assert strip_reply(text) == "a1:-d1\nNo."


def test_strip_reply_keeps_ordinary_lines_that_resemble_markers() -> None:
    text = "From: the start, I liked it\nd -- .   .   X\n--- --- ---\nOn my way wrote down"
    assert strip_reply(text) == text


@pytest.mark.parametrize(
    ("subject", "expected"),
    [
        ("Re: accasta show 12", "accasta show 12"),
        ("RE: RE: Fwd: accasta show 12", "accasta show 12"),
        ("AW: WG: accasta show 12", "accasta show 12"),
        ("SV: VS: Antw: accasta show 12", "accasta show 12"),
        ("Fw: re:accasta show 12", "accasta show 12"),
        ("Re[2]: accasta show 12", "accasta show 12"),
        ("[pbm] Re: [ext] accasta show 12", "accasta show 12"),
        ("  accasta   show 12  ", "accasta show 12"),
        ("Ready: accasta show 12", "Ready: accasta show 12"),
        ("Re:", ""),
    ],
)
def test_subject_command_text(subject: str, expected: str) -> None:
    assert subject_command_text(subject) == expected


# --- never answered ---------------------------------------------------------------


def reason(headers: str, mail_from: str = "bob@example.net", body: bytes = b"hi") -> str | None:
    return read(mail(headers, body), mail_from).ignore_reason


@pytest.mark.parametrize(
    ("headers", "mail_from", "words"),
    [
        (
            "From: bob@example.net\nAuto-Submitted: auto-replied",
            "bob@example.net",
            "Auto-Submitted",
        ),
        ("From: bob@example.net\nAuto-Submitted: Auto-Generated; x", "bob@example.net", "auto-gen"),
        ("From: bob@example.net\nPrecedence: bulk", "bob@example.net", "Precedence"),
        ("From: bob@example.net\nPrecedence: JUNK", "bob@example.net", "Precedence"),
        ("From: bob@example.net\nPrecedence: list", "bob@example.net", "Precedence"),
        ("From: bob@example.net\nList-Id: <games.example.net>", "bob@example.net", "List-Id"),
        ("From: bob@example.net\nList-Id:", "bob@example.net", "List-Id"),
        ("From: bob@example.net\nList-Unsubscribe: <mailto:u@x>", "bob@example.net", "List-Unsub"),
        ("From: bob@example.net\nX-Autoreply: yes", "bob@example.net", "X-Autoreply"),
        ("From: bob@example.net\nX-Autorespond: yes", "bob@example.net", "X-Autorespond"),
        ("From: bob@example.net", "", "empty return path"),
        ("From: bob@example.net", "<>", "empty return path"),
        ("From: MAILER-DAEMON@mx.example.net", "bob@example.net", "robot"),
        ("From: bob@example.net", "postmaster@example.net", "robot"),
        ("From: GitHub <noreply@github.com>", "bounce@github.com", "robot"),
        ("From: no-reply@example.net", "bounce@example.net", "robot"),
        ("From: do-not-reply@example.net", "bounce@example.net", "robot"),
        ("From: PBM <pbm@example.org>", "bob@example.net", "loop"),
        ("From: bob@example.net", "PBM@Example.org", "loop"),
        ("From: pbm+12.bob.0123456789@example.org", "x@example.net", "loop"),
        (
            "From: bob@example.net\nContent-Type: multipart/report; report-type=disposition-"
            "notification; boundary=b",
            "bob@example.net",
            "multipart/report",
        ),
    ],
)
def test_never_answer(headers: str, mail_from: str, words: str) -> None:
    found = reason(headers + "\nSubject: x", mail_from)
    assert found is not None
    assert words.lower() in found.lower()


@pytest.mark.parametrize(
    "headers",
    [
        "From: bob@example.net\nSubject: accasta show 12",
        "From: bob@example.net\nAuto-Submitted: no",
        "From: bob@example.net\nPrecedence: first-class",
        "From: pbm@other.example",
        "From: replyguy@example.net",
    ],
)
def test_ordinary_mail_is_answered(headers: str) -> None:
    assert reason(headers) is None


def test_fixtures_bounce_and_vacation_reply_are_never_answered() -> None:
    bounce = read(fixture("bounce_dsn.eml"), "<>")
    assert bounce.ignore_reason is not None
    msg = email.message_from_bytes(fixture("bounce_dsn.eml"), policy=policy.default)
    del msg["Auto-Submitted"]
    assert never_answer(msg, "bounces@mx.example.net", SERVER) == (
        "multipart/report (a delivery or read report)"
    )
    vacation = read(fixture("vacation_autoreply.eml"), "dave@example.com")
    assert vacation.ignore_reason == "Auto-Submitted: auto-replied"


def test_no_from_header_answers_the_envelope_sender() -> None:
    inbound = read(b"Subject: accasta show 12\r\n\r\n", "bob@example.net")
    assert inbound.sender == "bob@example.net"
    assert inbound.ignore_reason is None


@pytest.mark.parametrize(
    ("sender", "why"),
    [
        # Issue 35, case 15, as written: answered to victim-p; a reply header with CR/LF.
        ("victim-p@evil.example <e1p@example.org>", "does not parse cleanly"),
        ("=?utf-8?q?x=0D=0Avictim-m@evil.example?= <e1m@example.org>", "does not parse"),
        ("=?utf-8?q?x=0Avictim-m@evil.example?= <e1m@example.org>", "does not parse"),
        ("<e1p@example.org> victim@evil.example", "does not parse cleanly"),
        ("Eve <e1p@example.org", "does not parse cleanly"),
        ("victim@evil.example, e1p@example.org", "2 mailboxes"),
        ("undisclosed-recipients:;", "no mailbox"),
        ("e1p", "does not parse cleanly"),
    ],
)
def test_answers_go_to_a_mis_parsed_from_no_more(sender: str, why: str) -> None:
    """A From that the email package's header parser does not read cleanly (or that
    names more or less than one mailbox) gets no answer; the note says why. Neither the
    envelope sender nor a lenient ``parseaddr`` stands in for it."""
    inbound = read(mail(f"From: {sender}\nSubject: help", b"help\r\n"), "e1p@example.org")
    assert inbound.ignore_reason is not None and why in inbound.ignore_reason
    assert inbound.ignore_reason.startswith("no answer: the From header")
    assert inbound.sender == ""
    two = read(b"From: e1p@example.org\r\nFrom: victim@evil.example\r\n\r\nhelp\r\n")
    assert two.ignore_reason == "no answer: the mail has 2 From headers"


@pytest.mark.parametrize(
    ("sender", "name", "address"),
    [
        ('"Doe, John" <j@example.net>', "Doe, John", "j@example.net"),
        ("John Q. Public <j@example.net>", "John Q. Public", "j@example.net"),  # obsolete
        ("=?utf-8?q?J=C3=B6rg?= <j@example.net>", "Jörg", "j@example.net"),
        ("Jörg <j@example.net>", "Jörg", "j@example.net"),  # RFC 6532: UTF-8 as it is
        ("j@example.net (John)", "", "j@example.net"),
        (
            "=?utf-8?q?victim=40evil.example?= <j@example.net>",
            "victim@evil.example",
            "j@example.net",
        ),
    ],
)
def test_a_from_that_parses_cleanly_is_answered(sender: str, name: str, address: str) -> None:
    raw = f"From: {sender}\r\nSubject: help\r\n\r\nhelp\r\n".encode()
    inbound = read(raw, "bounces@example.net")
    assert (inbound.sender_name, inbound.sender, inbound.ignore_reason) == (name, address, None)


# --- never crashes ------------------------------------------------------------------

HEADER_NAMES = [
    "From",
    "Subject",
    "Content-Type",
    "Content-Transfer-Encoding",
    "Auto-Submitted",
    "Precedence",
    "Message-ID",
    "References",
    "In-Reply-To",
    "List-Id",
]
HEADER_VALUES = st.one_of(
    st.text(max_size=60),
    st.sampled_from(
        [
            "multipart/alternative; boundary=b",
            'multipart/mixed; boundary="b"',
            "text/plain; charset=x-nope; format=flowed; delsp=yes",
            "text/html; charset=utf-16",
            "text/plain; charset=unicode_escape",
            "base64",
            "quoted-printable",
            "=?utf-8?b?!!!?=",
            "=?bogus?q?=ZZ?=",
            "<a@b> <c@d",
            '"unterminated <x@y>',
        ]
    ),
)


@st.composite
def messages(draw: st.DrawFn) -> bytes:
    headers = draw(st.lists(st.tuples(st.sampled_from(HEADER_NAMES), HEADER_VALUES), max_size=8))
    head = "".join(f"{name}: {value}\r\n" for name, value in headers)
    parts = draw(st.lists(st.binary(max_size=80), max_size=4))
    body = b"".join(b"--b\r\nContent-Type: text/html\r\n\r\n" + part + b"\r\n" for part in parts)
    tail = draw(st.binary(max_size=80))
    return head.encode("utf-8", "surrogateescape") + b"\r\n" + body + tail


@settings(max_examples=300)
@given(st.binary(max_size=2000))
def test_any_bytes_are_read_without_raising(raw: bytes) -> None:
    inbound = read_message(
        raw, mail_from="x@y.z", rcpt_tos=["pbm@example.org"], server_address=SERVER
    )
    assert isinstance(inbound.text, str)


@settings(max_examples=300)
@given(messages(), st.sampled_from(["", "<>", "bob@example.net", "pbm@example.org", "@"]))
def test_any_mail_like_bytes_are_read_without_raising(raw: bytes, mail_from: str) -> None:
    inbound = read_message(raw, mail_from=mail_from, rcpt_tos=[], server_address=SERVER)
    inbound.subject.encode("utf-8")  # printable: no lone surrogates
    inbound.text.encode("utf-8")
    candidates(inbound, reply_mode=False, is_command=is_command)
    candidates(inbound, reply_mode=True, is_command=is_command)


@given(st.text(max_size=500))
def test_any_text_lines_are_handled(text: str) -> None:
    stripped = strip_reply(text)
    assert all(not line.startswith(">") for line in stripped.split("\n"))
    subject_command_text(text)
    unflow(text, delsp=True)
    html_to_text(text)
