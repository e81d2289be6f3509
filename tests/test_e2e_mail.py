"""End to end over real SMTP: mail as real clients write it, refusals, silence, every verb.

Each test starts its own ``pbm serve`` (fixtures ``sink`` and ``server``),
talks to it over loopback SMTP and reads what it sends from the sink. Mails
that must look like a given client's are written as raw bytes, exactly as
that client puts them on the wire. Nothing sleeps: every wait is for a mail
(the sink's deadline), and "no answer" is checked once a later mail's answer
has come back (the server handles its inbox in order) by reading the outbox
and the inbox rows of the server's own database.
"""

from __future__ import annotations

import base64
import contextlib
import re
import smtplib
import sqlite3
from email.message import EmailMessage
from email.utils import formatdate, make_msgid

import mailserver
import pytest
from mailserver import (
    SERVER_ADDRESS,
    PbmServer,
    Sink,
    StartServer,
    board_number,
    body_of,
    reply_to,
    sign_up,
)

import pbm.games

pytestmark = pytest.mark.e2e

ALICE = "alice@example.org"
BOB = "bob@example.net"
CAROL = "carol@example.com"
DAVE = "dave@example.com"

FIRST = "a1:C-d1"  # a legal first move for White
SECOND = "e3:S+e4"  # a legal answer for Black
THIRD = "a1:H+b2"  # and White's next move


# -- helpers


def signup(server: PbmServer, sink: Sink, uid: str, addr: str, pw: str) -> None:
    sign_up(server, sink, uid, addr, pw)


def start_board(server: PbmServer, sink: Sink) -> tuple[int, EmailMessage, EmailMessage]:
    """alice and bob sign up, alice challenges bob: the board and both board mails."""
    signup(server, sink, "alice", ALICE, "pw-a")
    signup(server, sink, "bob", BOB, "pw-b")
    mail_a = mailserver.challenge_accepted(server, sink, ALICE, "accasta challenge alice bob", BOB)
    mail_b = sink.wait_for(BOB, "alice to move")
    assert board_number(mail_a) == board_number(mail_b)
    return board_number(mail_a), mail_a, mail_b


def status(board: int, what: str) -> re.Pattern[str]:
    """The subject of a board mail: ``Accasta Board 1 - bob to move``."""
    return re.compile(rf"Board {board} - {re.escape(what)}$")


def moved(sink: Sink, board: int, to_move: str) -> tuple[EmailMessage, EmailMessage]:
    """Both players' board mails after a move: (alice's, bob's)."""
    a = sink.wait_for(ALICE, status(board, f"{to_move} to move"))
    b = sink.wait_for(BOB, status(board, f"{to_move} to move"))
    return a, b


def shown(server: PbmServer, sink: Sink, addr: str, board: int) -> str:
    """The body of ``accasta show B`` as mailed back to ``addr``."""
    server.send(addr, f"accasta show {board}")
    return body_of(sink.wait_for(addr, re.compile(rf"Board {board} - (?!error)")))


def position_shown(server: PbmServer, sink: Sink, addr: str, board: int) -> str:
    """``shown`` without its clock's lines: the times of the next reminder and of the
    forfeit count from the last change, made at this test's pace on the real clock."""
    text = shown(server, sink, addr, board)
    return "\n".join(line for line in text.splitlines() if not CLOCK_LINE.search(line))


CLOCK_LINE = re.compile(r"\d\d:\d\d UTC")


def error_text(sink: Sink, addr: str) -> str:
    """The body of the next error reply to ``addr``, whitespace made single spaces."""
    msg = sink.wait_for(addr, re.compile(r" - error$"))
    assert msg["Auto-Submitted"] == "auto-replied"
    return " ".join(body_of(msg).split())


def query(server: PbmServer, sql: str, *args: str) -> list[tuple[str, ...]]:
    """Rows of the server's own SQLite database, read-only."""
    db = server.root / "data" / "pbm.sqlite3"
    with contextlib.closing(sqlite3.connect(f"file:{db}?mode=ro", uri=True)) as con:
        return [tuple(str(v or "") for v in row) for row in con.execute(sql, args)]


def outbox(server: PbmServer) -> list[tuple[str, ...]]:
    """(to, subject) of every reply the server queued, in order."""
    return query(server, "SELECT to_addr, subject FROM outbox ORDER BY id")


def inbox_row(server: PbmServer, message_id: str) -> tuple[str, ...]:
    """(status, note) of the inbox row of a received mail."""
    rows = query(server, "SELECT status, note FROM inbox WHERE message_id = ?", message_id)
    assert len(rows) == 1, f"no inbox row for {message_id}"
    return rows[0]


def raw_mail(headers: dict[str, str], body: bytes | str) -> tuple[bytes, str]:
    """A message as a client writes it: CRLF lines, a Date and a Message-ID; (bytes, id)."""
    mid = make_msgid(domain="client.test")
    head = {"Date": formatdate(localtime=True), "Message-ID": mid, **headers}
    data = body.encode("ascii") if isinstance(body, str) else body
    lines = [f"{k}: {v}" for k, v in head.items()]
    raw = "\r\n".join(lines).encode("ascii") + b"\r\n\r\n"
    raw += data.replace(b"\r\n", b"\n").replace(b"\n", b"\r\n")
    return raw, mid


def comment_lines(body: str) -> list[str]:
    """The comment of the last move as the board mail shows it (``  > ...`` lines)."""
    return [ln[4:] for ln in body.splitlines() if ln.startswith("  > ")]


# -- 1. mail as real clients write it


def test_multipart_alternative_quoted_printable(server: PbmServer, sink: Sink) -> None:
    """Thunderbird/Gmail: text/plain and text/html alternatives, both quoted-printable."""
    board, _, _ = start_board(server, sink)
    raw, _ = raw_mail(
        {
            "From": "Alice Example <alice@example.org>",
            "To": f"PBM Server <{SERVER_ADDRESS}>",
            "Subject": "mein Zug",
            "MIME-Version": "1.0",
            "Content-Type": 'multipart/alternative; boundary="000000000000b1c2d3e4f5"',
        },
        f"""--000000000000b1c2d3e4f5
Content-Type: text/plain; charset="UTF-8"
Content-Transfer-Encoding: quoted-printable

accasta move {board} alice pw-a {FIRST}#1

Sch=C3=B6ner Er=C3=B6ffnungszug, finde ich =E2=80=94 mal sehen, was du dazu s=
agst.

--000000000000b1c2d3e4f5
Content-Type: text/html; charset="UTF-8"
Content-Transfer-Encoding: quoted-printable

<div dir=3D"ltr"><div>accasta move {board} alice pw-a {FIRST}#1</div><div><br>=
</div><div>Sch=C3=B6ner Er=C3=B6ffnungszug, finde ich =E2=80=94 mal sehen, was=
 du dazu sagst.</div></div>

--000000000000b1c2d3e4f5--
""",
    )
    server.send_message(raw, ALICE, SERVER_ADDRESS)
    bob_body = body_of(moved(sink, board, "bob")[1])
    assert f"Move 1, alice (White): {FIRST}" in bob_body
    assert comment_lines(bob_body) == [
        "Schöner Eröffnungszug, finde ich — mal sehen, was du dazu sagst."
    ]


def test_html_only_mail(server: PbmServer, sink: Sink) -> None:
    """Outlook: only text/html (windows-1252, quoted-printable), &nbsp; and <br>."""
    board, _, _ = start_board(server, sink)
    raw, _ = raw_mail(
        {
            "From": '"Alice Example" <alice@example.org>',
            "To": f'"{SERVER_ADDRESS}" <{SERVER_ADDRESS}>',
            "Subject": "Zug",
            "Content-Type": 'text/html; charset="Windows-1252"',
            "Content-Transfer-Encoding": "quoted-printable",
            "MIME-Version": "1.0",
        },
        f"""<html><head>
<meta http-equiv=3D"Content-Type" content=3D"text/html; charset=3DWindows-1252">
<style type=3D"text/css" style=3D"display:none;"> P {{margin-top:0;margin-bott=
om:0;}} </style>
</head>
<body dir=3D"ltr">
<div style=3D"font-family: Calibri, Arial; font-size: 12pt;">accasta&nbsp;move&nbsp;{board}&nb=
sp;alice pw-a {FIRST}#1<br></div>
<p>Viel&nbsp;Gl=FCck &amp; bis bald =96 Alice</p>
</body>
</html>
""",
    )
    server.send_message(raw, ALICE, SERVER_ADDRESS)
    bob_body = body_of(moved(sink, board, "bob")[1])
    assert f"Move 1, alice (White): {FIRST}" in bob_body
    assert comment_lines(bob_body) == ["Viel Glück & bis bald – Alice"]


def test_format_flowed_command_line(server: PbmServer, sink: Sink) -> None:
    """A command longer than the client's line length is soft-wrapped (RFC 3676)."""
    long_address = "caroline.longname@a-rather-long-mail-domain.example.org"
    line = f"signup carol secret-pw {long_address}"
    assert len(line) > 72  # Thunderbird wraps here
    raw, _ = raw_mail(
        {
            "From": f"Carol <{CAROL}>",
            "To": SERVER_ADDRESS,
            "Subject": "hello",
            "MIME-Version": "1.0",
            "Content-Type": "text/plain; charset=UTF-8; format=flowed",
            "Content-Transfer-Encoding": "7bit",
        },
        f"signup carol secret-pw \n{long_address}\n",
    )
    server.send_message(raw, CAROL, SERVER_ADDRESS)
    ask = sink.wait_for(long_address, "pbm - confirm your account carol")
    assert "signed up for the account carol with this address" in " ".join(body_of(ask).split())
    # Nothing went to the sender's own address: the email of the command was used.
    server.send(DAVE, "help")
    sink.wait_for(DAVE, "pbm - help")
    assert [to for to, _ in outbox(server)] == [long_address, DAVE]


def test_format_flowed_chat_message(server: PbmServer, sink: Sink) -> None:
    """A long chat line soft-wrapped by the client reaches the opponent as one line."""
    board, _, _ = start_board(server, sink)
    text = "I have played Accasta for years and this opening is my favourite, good luck!"
    assert 72 < len(text) <= 78
    cut = text.rindex(" ", 0, 72) + 1
    raw, _ = raw_mail(
        {
            "From": ALICE,
            "To": SERVER_ADDRESS,
            "Subject": "chat",
            "MIME-Version": "1.0",
            "Content-Type": "text/plain; charset=UTF-8; format=flowed; delsp=no",
            "Content-Transfer-Encoding": "7bit",
        },
        # A space typed at the end of the last line flows it into... nothing: the
        # signature separator is neither fixed nor flowed (RFC 3676 §4.3).
        f"accasta chat {board} alice pw-a\n\n{text[:cut]}\n{text[cut:]} \n-- \nAlice\n",
    )
    server.send_message(raw, ALICE, SERVER_ADDRESS)
    chat = sink.wait_for(BOB, status(board, "chat from alice"))
    lines = body_of(chat).splitlines()
    assert lines[0] == f"alice writes on board {board}:"
    assert text in lines
    assert "Alice" not in lines  # the signature stays home


def test_rfc2047_subjects(server: PbmServer, sink: Sink) -> None:
    """Subject-mode commands in encoded words: ISO-8859-1 base64, then folded UTF-8 Q."""
    board, _, _ = start_board(server, sink)
    subject = base64.b64encode("password alice pw-a grüße".encode("iso-8859-1")).decode()
    raw, _ = raw_mail(
        {"From": ALICE, "To": SERVER_ADDRESS, "Subject": f"=?iso-8859-1?b?{subject}?="}, "\n"
    )
    server.send_message(raw, ALICE, SERVER_ADDRESS)
    changed = sink.wait_for(ALICE, "pbm - password changed")
    assert "The password of alice was changed." in body_of(changed)
    # The new password, non-ASCII, in a subject folded over two encoded words.
    raw, _ = raw_mail(
        {
            "From": ALICE,
            "To": SERVER_ADDRESS,
            "Subject": (
                f"=?utf-8?q?accasta_move_{board}_alice_gr=C3=BC=C3=9Fe?=\r\n"
                f" =?utf-8?q?_{FIRST.replace(':', '=3A')}=231?="
            ),
        },
        "\n",
    )
    server.send_message(raw, ALICE, SERVER_ADDRESS)
    moved(sink, board, "bob")


def test_re_and_aw_subjects(server: PbmServer, sink: Sink) -> None:
    board, _, _ = start_board(server, sink)
    server.send(ALICE, f"Re: accasta move {board} alice pw-a {FIRST}#1", "> quoted stuff\n")
    moved(sink, board, "bob")
    server.send(BOB, f"AW: AW: accasta move {board} bob pw-b {SECOND}#2")
    bob_body = body_of(moved(sink, board, "alice")[1])
    assert f"Move 2, bob (Black): {SECOND}" in bob_body


def test_top_posted_replies_to_the_board_mail(server: PbmServer, sink: Sink) -> None:
    """Outlook and Gmail replies to the Reply-To address: the bare move over the quote."""
    board, mail_a, _ = start_board(server, sink)
    quoted = body_of(mail_a)
    assert f"accasta move {board} alice PASSWORD" in quoted  # a command in the quote
    outlook = (
        f"{FIRST}\n\nSent from Outlook\n\n"
        "-----Original Message-----\n"
        f"From: PBM Server <{SERVER_ADDRESS}>\n"
        "Sent: Sunday, March 3, 2024 10:00 AM\n"
        f"To: Alice Example <{ALICE}>\n"
        f"Subject: {mail_a['Subject']}\n\n"
        f"{quoted}"
    )
    server.send(
        ALICE,
        f"RE: {mail_a['Subject']}",
        outlook,
        to=reply_to(mail_a),
        headers={"In-Reply-To": str(mail_a["Message-ID"])},
    )
    _, mail_b = moved(sink, board, "bob")
    assert f"Move 1, alice (White): {FIRST}" in body_of(mail_b)
    assert comment_lines(body_of(mail_b)) == ["Sent from Outlook"]  # and not the original
    # Gmail quotes with ">" under an attribution line it wraps in two.
    quote = "\n".join("> " + ln for ln in body_of(mail_b).splitlines())
    gmail = (
        f"{SECOND}\n\n"
        "On Sun, Mar 3, 2024 at 10:00 AM PBM Server <\n"
        f"{reply_to(mail_b)}> wrote:\n\n{quote}\n"
    )
    server.send(BOB, f"Re: {mail_b['Subject']}", gmail, to=reply_to(mail_b))
    mail_a, _ = moved(sink, board, "alice")
    assert f"Move 2, bob (Black): {SECOND}" in body_of(mail_a)
    assert comment_lines(body_of(mail_a)) == []
    assert not [s for _, s in outbox(server) if s.endswith("- error")]


def test_outlook_top_post_in_body_mode(server: PbmServer, sink: Sink) -> None:
    """A command over an unquoted Outlook original: the commands in the original are not run."""
    board, mail_a, _ = start_board(server, sink)
    body = (
        f"accasta move {board} alice pw-a {FIRST}#1\n"
        "Here we go.\n\n"
        "________________________________\n"
        f"From: PBM Server <{SERVER_ADDRESS}>\n"
        "Sent: Sunday, March 3, 2024 10:00 AM\n"
        f"To: Alice Example <{ALICE}>\n"
        f"Subject: {mail_a['Subject']}\n\n"
        f"{body_of(mail_a)}"
    )
    server.send(ALICE, f"RE: {mail_a['Subject']}", body)
    bob_body = body_of(moved(sink, board, "bob")[1])
    assert comment_lines(bob_body) == ["Here we go."]
    server.send(ALICE, f"accasta history {board}")
    sink.wait_for(ALICE, status(board, "history"))
    assert not [s for _, s in outbox(server) if s.endswith("- error")]


def test_signature_is_not_the_comment(server: PbmServer, sink: Sink) -> None:
    board, _, _ = start_board(server, sink)
    server.send(
        ALICE,
        "my move",
        f"accasta move {board} alice pw-a {FIRST}#1\nGood game so far.\n"
        "-- \nAlice Example\naccasta help\n",
    )
    bob_body = body_of(moved(sink, board, "bob")[1])
    assert comment_lines(bob_body) == ["Good game so far."]
    server.send(ALICE, f"accasta history {board}")
    sink.wait_for(ALICE, status(board, "history"))
    assert [s for to, s in outbox(server) if to == ALICE].count("Accasta - help") == 0


def test_body_charsets(server: PbmServer, sink: Sink) -> None:
    """8-bit Latin-1, a bogus charset label and base64 UTF-8: three moves of one game."""
    board, _, _ = start_board(server, sink)
    raw, _ = raw_mail(
        {
            "From": ALICE,
            "To": SERVER_ADDRESS,
            "Subject": "Zug",
            "MIME-Version": "1.0",
            "Content-Type": "text/plain; charset=ISO-8859-1",
            "Content-Transfer-Encoding": "8bit",
        },
        f"accasta move {board} alice pw-a {FIRST}#1\nGr\xfc\xdfe, sch\xf6ner Tag!\n".encode(
            "latin-1"
        ),
    )
    server.send_message(raw, ALICE, SERVER_ADDRESS)
    bob_body = body_of(moved(sink, board, "bob")[1])
    assert comment_lines(bob_body) == ["Grüße, schöner Tag!"]
    # An unknown charset label: the bytes are read as UTF-8, which they are.
    raw, _ = raw_mail(
        {
            "From": BOB,
            "To": SERVER_ADDRESS,
            "Subject": "coup",
            "MIME-Version": "1.0",
            "Content-Type": 'text/plain; charset="x-klingon-9"',
            "Content-Transfer-Encoding": "8bit",
        },
        f"Bonne chance à toi\naccasta move {board} bob pw-b {SECOND}#2\n".encode(),
    )
    server.send_message(raw, BOB, SERVER_ADDRESS)
    alice_body = body_of(moved(sink, board, "alice")[0])
    assert comment_lines(alice_body) == ["Bonne chance à toi"]
    msg = EmailMessage()
    msg["From"] = ALICE
    msg["To"] = SERVER_ADDRESS
    msg["Subject"] = "move"
    msg["Message-ID"] = make_msgid(domain="client.test")
    msg.set_content(
        f"Grüße aus Zürich! ♞\naccasta move {board} alice pw-a {THIRD}#3\n",
        charset="utf-8",
        cte="base64",
    )
    assert "Content-Transfer-Encoding: base64" in msg.as_string()
    server.send_message(msg, ALICE, SERVER_ADDRESS)
    bob_body = body_of(moved(sink, board, "bob")[1])
    assert f"Move 3, alice (White): {THIRD}" in bob_body
    assert comment_lines(bob_body) == ["Grüße aus Zürich! ♞"]


# -- 2. refusals: nothing changes, the reply says why


def test_wrong_password(server: PbmServer, sink: Sink) -> None:
    board, _, _ = start_board(server, sink)
    before = shown(server, sink, ALICE, board)
    server.send(ALICE, f"accasta move {board} alice pw-x {FIRST}#1")
    text = error_text(sink, ALICE)
    assert f"Your command: > accasta move {board} alice ****** {FIRST}#1" in text
    assert "Wrong password for alice." in text
    assert "Nothing was changed." in text
    assert shown(server, sink, ALICE, board) == before


def test_wrong_reply_token(server: PbmServer, sink: Sink) -> None:
    board, mail_a, _ = start_board(server, sink)
    before = shown(server, sink, ALICE, board)
    good = reply_to(mail_a)
    local, _, domain = good.partition("@")
    token = local.rsplit(".", 1)[1]
    assert re.fullmatch(r"[0-9a-f]{10}", token)
    bad = f"{local[:-1]}{'0' if local[-1] != '0' else '1'}@{domain}"
    # Refused at RCPT (issue 35, case 16): the sending server tells its user, pbm stores
    # nothing and sends nothing.
    with pytest.raises(smtplib.SMTPRecipientsRefused) as refused:
        server.send(ALICE, f"Re: {mail_a['Subject']}", f"{FIRST}\n", to=bad)
    assert refused.value.recipients[bad][0] == 550
    # Nor does bob's name with alice's token act for bob (or anyone).
    forged = good.replace(".alice.", ".bob.")
    with pytest.raises(smtplib.SMTPRecipientsRefused):
        server.send(BOB, "Re: board", "resign\n", to=forged)
    assert shown(server, sink, ALICE, board) == before
    assert query(server, "SELECT id FROM inbox WHERE rcpt_to LIKE ?", "%" + bad) == []


def test_someone_elses_board(server: PbmServer, sink: Sink) -> None:
    board, _, _ = start_board(server, sink)
    signup(server, sink, "carol", CAROL, "pw-c")
    before = shown(server, sink, CAROL, board)
    server.send(CAROL, f"accasta move {board} carol pw-c {FIRST}")
    assert f"carol does not play on board {board}." in error_text(sink, CAROL)
    server.send(CAROL, f"accasta resign {board} carol pw-c")
    assert f"carol does not play on board {board}." in error_text(sink, CAROL)
    assert shown(server, sink, CAROL, board) == before


def test_not_your_turn(server: PbmServer, sink: Sink) -> None:
    board, _, mail_b = start_board(server, sink)
    before = shown(server, sink, BOB, board)
    server.send(BOB, f"accasta move {board} bob pw-b {SECOND}")
    assert f"It is alice's turn on board {board}, not yours." in error_text(sink, BOB)
    # Replying to the board mail is no way around it.
    server.send(BOB, f"Re: {mail_b['Subject']}", f"{SECOND}\n", to=reply_to(mail_b))
    assert f"It is alice's turn on board {board}, not yours." in error_text(sink, BOB)
    assert shown(server, sink, BOB, board) == before


def test_stale_move_number(server: PbmServer, sink: Sink) -> None:
    board, _, _ = start_board(server, sink)
    server.send(ALICE, f"accasta move {board} alice pw-a {FIRST}#1")
    moved(sink, board, "bob")
    before = shown(server, sink, BOB, board)
    server.send(BOB, f"accasta move {board} bob pw-b {SECOND}#1")
    text = error_text(sink, BOB)
    assert f"Your move was meant as move 1, but board {board} is at move 2 now." in text
    assert shown(server, sink, BOB, board) == before


def test_illegal_move(server: PbmServer, sink: Sink) -> None:
    board, _, _ = start_board(server, sink)
    before = shown(server, sink, ALICE, board)
    server.send(ALICE, f"accasta move {board} alice pw-a a1:H-b1")
    text = error_text(sink, ALICE)
    assert f"> accasta move {board} alice ****** a1:H-b1" in text
    assert "a1 holds C, H, S from the top; you wrote H" in text
    assert shown(server, sink, ALICE, board) == before


def test_unknown_and_malformed_commands(server: PbmServer, sink: Sink) -> None:
    """No command: help. A malformed one, or one with words left over: what is wrong."""
    server.send(DAVE, "Hello there", "Hi! How do I play here?\n\nThanks, Dave\n")
    help_mail = sink.wait_for(DAVE, "pbm - help")
    assert "G challenge USERID1 USERID2" in body_of(help_mail)
    assert help_mail["Auto-Submitted"] == "auto-replied"
    board, _, _ = start_board(server, sink)
    before = shown(server, sink, ALICE, board)
    usage = "accasta move needs: accasta move BOARD USERID PASSWORD MOVE[#N]"
    server.send(ALICE, "move", f"accasta move {board} alice\n")
    text = error_text(sink, ALICE)
    assert f"Your command: > accasta move {board} alice PASSWORD is missing. {usage}" in text
    # A line with words after a complete command is not that command, in the
    # body or in the subject.
    line = f"accasta move {board} alice pw-a {FIRST} please"
    for subject, body in (("move", f"{line}\n"), (line, "\n")):
        server.send(ALICE, subject, body)
        text = error_text(sink, ALICE)
        masked = line.replace("pw-a", "******")
        assert f"Your command: > {masked} 'please' is left over after the command." in text
        assert usage in text
    assert shown(server, sink, ALICE, board) == before


# -- 3. never answered


def _vacation() -> tuple[bytes, str, str]:
    raw, mid = raw_mail(
        {
            "From": f"Alice <{ALICE}>",
            "To": SERVER_ADDRESS,
            "Subject": "Automatic reply: help",
            "Auto-Submitted": "auto-replied",
            "Content-Type": "text/plain; charset=us-ascii",
        },
        "I am away until Monday and will read your mail when I return.\n",
    )
    return raw, mid, ALICE


def _bounce() -> tuple[bytes, str, str]:
    raw, mid = raw_mail(
        {"From": "Relay <relay@mx.example.net>", "To": SERVER_ADDRESS, "Subject": "help"},
        "help\n",
    )
    return raw, mid, ""


def _dsn() -> tuple[bytes, str, str]:
    raw, mid = raw_mail(
        {
            "From": "Mail Delivery System <mta@mx.example.net>",
            "To": SERVER_ADDRESS,
            "Subject": "Undelivered Mail Returned to Sender",
            "MIME-Version": "1.0",
            "Content-Type": (
                'multipart/report; report-type=delivery-status; boundary="B1.1709899200"'
            ),
        },
        """This is a MIME-encapsulated message.

--B1.1709899200
Content-Description: Notification
Content-Type: text/plain; charset=us-ascii

help
<nobody@example.net>: host mx.example.net said: 550 5.1.1 unknown user

--B1.1709899200
Content-Description: Delivery report
Content-Type: message/delivery-status

Reporting-MTA: dns; mx.example.net
Final-Recipient: rfc822; nobody@example.net
Action: failed
Status: 5.1.1

--B1.1709899200--
""",
    )
    return raw, mid, "mta@mx.example.net"


def _plain(sender: str, **headers: str) -> tuple[bytes, str, str]:
    raw, mid = raw_mail({"From": sender, "To": SERVER_ADDRESS, "Subject": "help", **headers}, "\n")
    return raw, mid, sender


NEVER_ANSWERED = {
    "auto-submitted": (_vacation, "Auto-Submitted: auto-replied"),
    "bounce": (_bounce, "empty return path"),
    "dsn": (_dsn, "multipart/report"),
    "precedence-bulk": (lambda: _plain(ALICE, Precedence="bulk"), "Precedence: bulk"),
    "list-id": (
        lambda: _plain(ALICE, **{"List-Id": "Accasta fans <accasta.lists.example.org>"}),
        "List-Id",
    ),
    "mailer-daemon": (lambda: _plain("MAILER-DAEMON@mx.example.net"), "robot"),
    "noreply": (lambda: _plain("noreply@games.example.com"), "robot"),
    "ourselves": (lambda: _plain(SERVER_ADDRESS), "this server"),
}


def test_never_answered(server: PbmServer, sink: Sink) -> None:
    """Robots, bounces, lists and ourselves get no answer, each for its reason."""
    sent = {}
    for case, (build, reason) in NEVER_ANSWERED.items():
        raw, mid, envelope = build()
        server.send_message(raw, envelope, SERVER_ADDRESS)
        sent[case] = (mid, reason)
    # The same command from a person is answered; by then the others are done.
    server.send(DAVE, "help")
    sink.wait_for(DAVE, "pbm - help")
    for case, (mid, reason) in sent.items():
        status_, note = inbox_row(server, mid)
        assert (case, status_) == (case, "ignored")
        assert reason in note, case
    assert outbox(server) == [(DAVE, "pbm - help")]
    assert sink.drain() == []
    # The admin's view of the outbox agrees.
    listing = server.pbm("outbox", "list", "--status", "all").splitlines()
    assert len(listing) == 2 and DAVE in listing[1]


def test_error_replies_are_limited(start_server: StartServer, sink: Sink) -> None:
    # alice is a player: her allowance is the players' (strangers' would be the same here).
    limits = {
        "PBM_LIMITS_ERROR_REPLIES_PER_HOUR": "2",
        "PBM_LIMITS_PLAYER_ERROR_REPLIES_PER_HOUR": "2",
    }
    srv = start_server(**limits)
    signup(srv, sink, "alice", ALICE, "pw-a")
    for n in range(4):
        srv.send(ALICE, f"accasta show {90 + n}")
    sink.wait_for(ALICE, "Board 90 - error")
    sink.wait_for(ALICE, "Board 91 - error")
    # Good commands are still answered; the limit is on error replies.
    srv.send(ALICE, "help")
    sink.wait_for(ALICE, "pbm - help")
    to_alice = [s for to, s in outbox(srv) if to == ALICE]
    assert to_alice == [
        "pbm - confirm your account alice",
        "Welcome to pbm, alice",
        "Accasta Board 90 - error",
        "Accasta Board 91 - error",
        "pbm - help",
    ]
    assert sink.drain() == []
    # Another sender has an allowance of its own.
    srv.send(BOB, "accasta show 99")
    assert "There is no board 99." in error_text(sink, BOB)


# -- 4. every verb over mail


def test_signup_password_and_address(server: PbmServer, sink: Sink) -> None:
    new_address = "alice@new.example.org"
    welcome = sign_up(server, sink, "alice", ALICE, "pw-a")
    assert "Your account alice is ready." in body_of(welcome)
    signup(server, sink, "bob", BOB, "pw-b")
    server.send(ALICE, "password alice pw-a pw-new")
    changed = sink.wait_for(ALICE, "pbm - password changed")
    assert "The password of alice was changed." in body_of(changed)
    # The old password stops working, the new one works.
    server.send(ALICE, f"address alice pw-a {new_address}")
    assert "Wrong password for alice." in error_text(sink, ALICE)
    server.send(ALICE, f"address alice pw-new {new_address}")
    # The new address is used once a reply from it confirms it; the old one is told.
    ask = sink.wait_for(new_address, "pbm - confirm the new address of alice")
    assert new_address in body_of(sink.wait_for(ALICE, "pbm - a new address was asked for"))
    mailserver.answer(server, new_address, ask, "Yes, that is me.")
    told = f"The address of alice is now {new_address} (it was {ALICE})."
    for addr in (ALICE, new_address):
        mail = sink.wait_for(addr, "pbm - address changed")
        assert told in " ".join(body_of(mail).split())
    # Boards are started and mailed from and to the new address only (the old one is
    # now an address with no account: its one answer for the day is spent).
    server.send(ALICE, "accasta challenge alice bob")
    mailserver.challenge_accepted(server, sink, new_address, "accasta challenge alice bob", BOB)
    sink.wait_for(BOB, "alice to move")
    assert sink.drain() == []


def test_help_games_and_pari_challenge(server: PbmServer, sink: Sink) -> None:
    signup(server, sink, "dave", DAVE, "pw-d")  # an address with no account: one answer a day
    server.send(DAVE, "help")
    assert "G challenge USERID1 USERID2" in body_of(sink.wait_for(DAVE, "pbm - help"))
    server.send(DAVE, "rules please", "help accasta\n")
    rules = body_of(sink.wait_for(DAVE, "Accasta - help"))
    assert rules.startswith("ACCASTA - a stacking game for two by Dieter Stein")
    assert "THE BOARD AND THE START" in rules
    board1, _, _ = start_board(server, sink)
    signup(server, sink, "carol", CAROL, "pw-c")
    pari = mailserver.challenge_accepted(
        server, sink, BOB, "accasta challenge bob carol --variant=pari", CAROL
    )
    sink.wait_for(CAROL, "bob to move")
    board2 = board_number(pari)
    assert board2 != board1
    assert "Variant: pari" in body_of(pari)
    server.send(DAVE, "games alice")
    mine = body_of(sink.wait_for(DAVE, "pbm - active boards of alice"))
    row1 = rf"Board\s+{board1}\s+accasta standard\s+alice - bob\s+move 1, alice to move"
    row2 = rf"Board\s+{board2}\s+accasta pari\s+bob - carol\s+move 1, bob to move"
    assert re.search(row1, mine) and not re.search(row2, mine)
    server.send(DAVE, "accasta games")
    every = body_of(sink.wait_for(DAVE, "pbm - active boards"))
    assert re.search(row1, every) and re.search(row2, every)


def test_show_board_history_and_moves(server: PbmServer, sink: Sink) -> None:
    board, _, _ = start_board(server, sink)
    server.send(ALICE, f"accasta move {board} alice pw-a {FIRST}#1", "Opening with the chariot.\n")
    _, mail_b = moved(sink, board, "bob")
    server.send(BOB, f"Re: {mail_b['Subject']}", f"{SECOND}\n", to=reply_to(mail_b))
    moved(sink, board, "alice")
    # Anyone may look; show and board are the same.
    signup(server, sink, "dave", DAVE, "pw-d")  # an address with no account: one answer a day
    server.send(DAVE, f"accasta board {board}")
    board_body = body_of(sink.wait_for(DAVE, status(board, "alice to move")))
    assert board_body == shown(server, sink, DAVE, board)
    assert f"Move 2, bob (Black): {SECOND}" in board_body
    server.send(DAVE, f"accasta history {board}")
    history = body_of(sink.wait_for(DAVE, status(board, "history"))).splitlines()
    assert re.fullmatch(rf"\s+1\. alice\s+{FIRST}\s+\d{{4}}-\d\d-\d\d \d\d:\d\d", history[2])
    assert history[3] == "        > Opening with the chariot."
    assert re.fullmatch(rf"\s+2\. bob\s+{re.escape(SECOND)}\s+\S+ \S+", history[4])
    server.send(DAVE, f"accasta moves {board}")
    listing = body_of(sink.wait_for(DAVE, status(board, "legal moves")))
    rules = pbm.games.get("accasta")
    state = rules.new("standard", rules.check_options("standard", {}))
    for move in (FIRST, SECOND):
        state, _ = state.play(move)
    legal = state.legal_moves()
    head, *rest = listing.splitlines()
    assert head == f"{len(legal)} legal moves for alice (move 3):"
    assert " ".join(rest).split() == list(legal)


def test_chat_subscribe_and_unsubscribe(server: PbmServer, sink: Sink) -> None:
    board, _, mail_b = start_board(server, sink)
    signup(server, sink, "carol", CAROL, "pw-c")
    server.send(CAROL, f"accasta subscribe {board} carol pw-c")
    follow = sink.wait_for(CAROL, status(board, "alice to move"))
    assert f"You now follow board {board}." in body_of(follow)
    assert "pbm+f" in str(follow["Reply-To"])  # a follower's: no moves by it
    server.send(ALICE, "hi", f"accasta chat {board} alice pw-a\nHello everyone, have fun!\n")
    for addr in (BOB, CAROL):
        chat = body_of(sink.wait_for(addr, status(board, "chat from alice")))
        assert chat.splitlines()[2] == "Hello everyone, have fun!"
    # By reply: chat on the first line, the message below it.
    server.send(BOB, "Re: board", "chat\nThanks, you too!\n", to=reply_to(mail_b))
    for addr in (ALICE, CAROL):
        chat = body_of(sink.wait_for(addr, status(board, "chat from bob")))
        assert chat.splitlines()[2] == "Thanks, you too!"
    # ... or the message begun on the chat line itself.
    server.send(BOB, "Re: board", "chat Good luck!\nSee you.\n", to=reply_to(mail_b))
    for addr in (ALICE, CAROL):
        chat = body_of(sink.wait_for(addr, status(board, "chat from bob")))
        assert chat.splitlines()[2:4] == ["Good luck!", "See you."]
    server.send(ALICE, f"accasta move {board} alice pw-a {FIRST}#1")
    moved(sink, board, "bob")
    sink.wait_for(CAROL, status(board, "bob to move"))
    server.send(CAROL, f"accasta unsubscribe {board} carol pw-c")
    gone = sink.wait_for(CAROL, status(board, "unsubscribed"))
    assert f"You no longer follow board {board}." in body_of(gone)
    server.send(BOB, f"accasta move {board} bob pw-b {SECOND}#2")
    moved(sink, board, "alice")
    to_carol = [s for to, s in outbox(server) if to == CAROL]
    assert to_carol == [
        "pbm - confirm your account carol",
        "Welcome to pbm, carol",
        f"Accasta Board {board} - alice to move",
        f"Accasta Board {board} - chat from alice",
        f"Accasta Board {board} - chat from bob",
        f"Accasta Board {board} - chat from bob",
        f"Accasta Board {board} - bob to move",
        f"Accasta Board {board} - unsubscribed",
    ]
    chats_to_sender = [s for to, s in outbox(server) if to == ALICE and "chat from alice" in s]
    assert chats_to_sender == []
    assert sink.drain() == []


def test_undo_accept_and_reject(server: PbmServer, sink: Sink) -> None:
    board, _, _ = start_board(server, sink)
    start = position_shown(server, sink, ALICE, board)
    server.send(ALICE, f"accasta move {board} alice pw-a {FIRST}#1")
    moved(sink, board, "bob")
    server.send(ALICE, f"accasta undo {board} alice pw-a")
    asked = sink.wait_for(BOB, status(board, "undo asked"))
    assert f"alice asks to take back move 1 ({FIRST})." in " ".join(body_of(asked).split())
    note = sink.wait_for(ALICE, status(board, "undo asked"))
    assert "You asked bob to let you take back move 1." in body_of(note)
    # Bob agrees by replying to the request.
    server.send(BOB, f"Re: {asked['Subject']}", "accept\n", to=reply_to(asked))
    mail_a, _ = moved(sink, board, "alice")
    agreed = f"bob agreed: move 1 ({FIRST}) by alice was taken back."
    assert agreed in " ".join(body_of(mail_a).split())
    assert position_shown(server, sink, ALICE, board) == start
    # Again; this time bob says no, with the classic command.
    server.send(ALICE, f"accasta move {board} alice pw-a {FIRST}#1")
    moved(sink, board, "bob")
    after_move = position_shown(server, sink, ALICE, board)
    server.send(ALICE, f"accasta undo {board} alice pw-a")
    sink.wait_for(BOB, status(board, "undo asked"))
    sink.wait_for(ALICE, status(board, "undo asked"))
    server.send(BOB, f"accasta reject {board} bob pw-b")
    for addr in (ALICE, BOB):
        refused = body_of(sink.wait_for(addr, status(board, "undo refused")))
        assert "bob did not agree to take back the last move; it stands." in refused
    assert position_shown(server, sink, ALICE, board) == after_move


def test_cancel(server: PbmServer, sink: Sink) -> None:
    board1, _, _ = start_board(server, sink)
    # No move yet: one player cancels at once.
    server.send(BOB, f"accasta cancel {board1} bob pw-b")
    for addr in (ALICE, BOB):
        gone = body_of(sink.wait_for(addr, status(board1, "Cancelled")))
        assert "bob cancelled the board." in gone
    server.send(ALICE, f"accasta move {board1} alice pw-a {FIRST}")
    assert f"Board {board1} is cancelled" in error_text(sink, ALICE)
    # After a move both must agree.
    board2 = board_number(
        mailserver.challenge_accepted(server, sink, ALICE, "accasta challenge alice bob", BOB)
    )
    sink.wait_for(BOB, status(board2, "alice to move"))
    server.send(ALICE, f"accasta move {board2} alice pw-a {FIRST}#1")
    moved(sink, board2, "bob")
    server.send(ALICE, f"accasta cancel {board2} alice pw-a")
    asked = sink.wait_for(BOB, status(board2, "cancel asked"))
    assert f"alice asks to cancel board {board2}." in body_of(asked)
    sink.wait_for(ALICE, status(board2, "cancel asked"))
    still = shown(server, sink, ALICE, board2)
    assert "bob (Black) to move: move 2." in still
    assert "alice asks to cancel this board." in still
    # The request says: reply to this mail with cancel.
    server.send(BOB, f"Re: {asked['Subject']}", "cancel\n", to=reply_to(asked))
    for addr in (ALICE, BOB):
        gone = body_of(sink.wait_for(addr, status(board2, "Cancelled")))
        assert "bob cancelled the board." in gone
        assert "This board was cancelled." in gone


def test_resign(server: PbmServer, sink: Sink) -> None:
    board, _, _ = start_board(server, sink)
    server.send(ALICE, f"accasta move {board} alice pw-a {FIRST}#1")
    _, mail_b = moved(sink, board, "bob")
    server.send(BOB, f"Re: {mail_b['Subject']}", "resign\nWell played.\n", to=reply_to(mail_b))
    for addr in (ALICE, BOB):
        final = sink.wait_for(addr, status(board, "White wins"))
        text = body_of(final)
        assert "bob resigned." in text
        assert "Well played." in text
        assert "alice (White) wins (resign). Result 1-0." in text
        assert final["Reply-To"] is not None  # a reply may still ask for the history
