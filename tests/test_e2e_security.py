"""End to end: the attacks of the open-internet review, against a real ``pbm serve``.

Each test does what the attacker did, over real SMTP, and checks that the
server held: nothing changed that should not, no address was flooded, no
header was planted, and the players were not locked out. (Passwords left
in the database files after ``pbm prune``: tests/test_e2e_prune.py.)
"""

from __future__ import annotations

import contextlib
import re
import sqlite3
import threading
import time
from datetime import UTC, datetime, timedelta
from email.message import EmailMessage

import pytest
from mailserver import (
    SERVER_ADDRESS,
    PbmServer,
    Sink,
    StartServer,
    board_number,
    body_of,
    challenge_accepted,
    reply_to,
    sign_up,
    until,
)

import pbm.games

pytestmark = pytest.mark.e2e

ALICE, BOB, CAROL = "alice@example.org", "bob@example.net", "carol@example.com"
VICTIM = "victim@example.org"
THIEF = "thief@evil.example"
OPENING = pbm.games.get("accasta").new().legal_moves()[0]


def query(server: PbmServer, sql: str) -> list[tuple[object, ...]]:
    db = server.root / "data" / "pbm.sqlite3"
    with contextlib.closing(sqlite3.connect(f"file:{db}?mode=ro", uri=True)) as con:
        return list(con.execute(sql))


def settled(server: PbmServer) -> None:
    """Wait until every mail received was worked out and every reply left."""

    def done() -> bool:
        ((waiting,),) = query(server, "SELECT count(*) FROM inbox WHERE status = 'new'")
        ((pending,),) = query(server, "SELECT count(*) FROM outbox WHERE status = 'pending'")
        return waiting == 0 and pending == 0

    until(done, timeout=120)


def address_of(server: PbmServer, userid: str) -> str:
    ((email,),) = query(server, f"SELECT email FROM players WHERE userid = '{userid}'")
    return str(email)


def taken(sink: Sink, address: str) -> list[EmailMessage]:
    """Every mail the sink holds for ``address`` (the others stay)."""
    got = sink.drain()
    mine = [m for m in got if str(m["X-Envelope-To"]).lower() == address.lower()]
    sink.kept = [m for m in got if m not in mine]
    return mine


def started(server: PbmServer, sink: Sink) -> tuple[int, EmailMessage]:
    """alice and bob on a new board; alice's first board mail (to reply to)."""
    sign_up(server, sink, "alice", ALICE, "pw-a")
    sign_up(server, sink, "bob", BOB, "pw-b")
    to_alice = challenge_accepted(server, sink, ALICE, "accasta challenge alice bob", BOB)
    sink.wait_for(BOB, "alice to move")
    return board_number(to_alice), to_alice


# 1. Account takeover by brute force


def test_a_brute_force_mail_changes_nothing_and_the_player_still_moves(
    server: PbmServer, sink: Sink
) -> None:
    board, to_alice = started(server, sink)
    guesses = [f"address alice guess{i} {THIEF}" for i in range(200)]
    guesses.insert(9, f"address alice pw-a {THIEF}")  # the right guess, tenth
    server.send(THIEF, "hello", "\n".join(guesses) + "\n")
    settled(server)
    assert address_of(server, "alice") == ALICE
    ((failures,),) = query(server, "SELECT count(*) FROM password_failures")
    assert failures == 5  # then the account was locked: no guess was checked
    warned = [m for m in taken(sink, ALICE) if m["Subject"] == "pbm - wrong passwords"]
    assert len(warned) == 1  # the owner is told, once
    answers = taken(sink, THIEF)
    assert 1 <= len(answers) <= 20
    said = " ".join(" ".join(body_of(m).split()) for m in answers)
    assert "Too many wrong passwords for alice" in said
    assert "Only the first 20 commands of a mail are carried out" in said
    # alice still plays by reply: her reply address is no password.
    server.send(ALICE, f"Re: {to_alice['Subject']}", f"{OPENING}\n", to=reply_to(to_alice))
    sink.wait_for(ALICE, f"Board {board} - bob to move")
    # ... while her password commands wait out the lock.
    server.send(ALICE, f"accasta resign {board} alice pw-a")
    refused = body_of(sink.wait_for(ALICE, f"Board {board} - error"))
    assert "Too many wrong passwords for alice" in " ".join(refused.split())


# 2. A spam cannon


def test_a_forged_flood_and_signups_for_a_third_party_bring_it_two_mails_a_day(
    server: PbmServer, sink: Sink
) -> None:
    """One answer (the mail's one reply) and one confirmation mail a day: an address that
    has confirmed no account gets no more, whoever writes in its name."""
    server.send(VICTIM, "help", "\n".join(["help"] * 20_000) + "\n")
    for i in range(30):
        server.send(THIEF, f"signup victim{i} pw{i} {VICTIM}")
    settled(server)
    to_victim = taken(sink, VICTIM)
    assert len(to_victim) == 2
    said = [" ".join(body_of(m).split()) for m in to_victim]
    assert sum("gets one answer a day" in text for text in said) == 1
    assert sum("confirm it, reply to this mail" in text for text in said) == 1
    # None of the signups became an account that can do anything.
    assert query(server, "SELECT count(*) FROM players WHERE status = 'active'") == [(0,)]


# 3. Header injection


CONTROLS = [chr(c) for c in range(0x20) if chr(c) not in "\r\n"] + ["\x7f"]
INJECTED = "Reply-To: phish@evil.example"


@pytest.mark.parametrize("header", ["Message-ID", "Subject", "From", "References"])
def test_no_control_character_reaches_a_reply_header(
    server: PbmServer, sink: Sink, header: str
) -> None:
    """Each C0 control character, with a header behind it, through a header our reply
    copies or quotes: the reply's headers hold none of it."""
    senders = []
    for char in CONTROLS:
        sender = f"probe{ord(char)}@example.org"
        senders.append(sender)
        value = f"x{char}{INJECTED}{char}y"
        fields = {
            "From": f"Probe {value} <{sender}>",
            "To": SERVER_ADDRESS,
            "Subject": "help",
            "Message-ID": f"<{ord(char)}.{value}@client.test>",
            "References": f"<ref{ord(char)}@client.test> <{value}@client.test>",
        }
        if header != "From":
            fields["From"] = sender
        if header != "Message-ID":
            fields["Message-ID"] = f"<probe-{header}-{ord(char)}@client.test>"
        if header != "References":
            del fields["References"]
        if header == "Subject":
            fields["Subject"] = f"help {value}"
        raw = "".join(f"{k}: {v}\r\n" for k, v in fields.items()) + "\r\nhelp\r\n"
        server.send_message(raw.encode("utf-8"), sender, SERVER_ADDRESS)
    settled(server)
    replies = sink.drain()
    if header != "From":
        assert sorted(str(m["X-Envelope-To"]) for m in replies) == sorted(senders)
    else:  # a From with a header in it does not parse cleanly: nobody is answered
        assert replies == []
        notes = {str(n) for (n,) in query(server, "SELECT note FROM inbox")}
        assert {n.partition(" (")[0] for n in notes} == {
            "no answer: the From header does not parse cleanly"
        }, notes
    ours = {
        "From",
        "To",
        "Subject",
        "Date",
        "Message-ID",
        "In-Reply-To",
        "References",
        "Reply-To",
        "Auto-Submitted",
        "Precedence",
        "X-Loop",
        "MIME-Version",
        "Content-Type",
        "Content-Transfer-Encoding",
        "X-Auto-Response-Suppress",
        "X-Envelope-From",
        "X-Envelope-To",
    }
    for reply in replies:
        assert set(reply.keys()) <= ours  # nothing planted
        for name, value in reply.items():
            assert not re.search(r"[\x00-\x1f\x7f]", str(value)), (name, value)
            if name not in ("To", "X-Envelope-To"):
                assert "phish" not in str(value), (name, value)
        assert reply.get_all("Reply-To") is None or len(reply.get_all("Reply-To")) == 1
        assert reply["Auto-Submitted"] == "auto-replied"
        if header == "Message-ID":
            assert reply["In-Reply-To"] is None  # not a valid msg-id: not threaded on


# 4. One mail locks everyone out


def test_a_player_is_answered_within_seconds_during_a_hostile_1mb_mail(
    server: PbmServer, sink: Sink
) -> None:
    board, _ = started(server, sink)
    line = f"address alice guess-{'x' * 12} {THIEF}\n"
    hostile = line * (1_000_000 // len(line))
    attacker = threading.Thread(target=server.send, args=(THIEF, "hello", hostile))
    attacker.start()
    # Once the hostile mail is in the inbox, bob asks for his board.
    until(
        lambda: query(server, f"SELECT count(*) FROM inbox WHERE mail_from = '{THIEF}'") == [(1,)]
    )
    asked = time.monotonic()
    server.send(BOB, f"accasta show {board}")
    sink.wait_for(BOB, f"Board {board} - alice to move", timeout=5)
    assert time.monotonic() - asked < 5
    attacker.join()
    settled(server)
    assert address_of(server, "alice") == ALICE


# 5. A few bad replies fail the good ones


def test_a_batch_with_unsendable_replies_delivers_every_other_exactly_once(
    start_server: StartServer, sink: Sink
) -> None:
    refused = "gone@example.org"
    unicode_address = "jürgen@example.org"  # the relay offers no SMTPUTF8
    sink.refuse.add(refused)
    good = [f"player{i}@example.org" for i in range(6)]
    server = start_server()
    senders = [*good[:3], refused, unicode_address, *good[3:]]
    with server.smtp() as smtp:  # one connection: they arrive as one batch
        for sender in senders:
            msg = EmailMessage()
            msg["From"], msg["To"], msg["Subject"] = sender, SERVER_ADDRESS, "help"
            msg.set_content("help\n")
            smtp.send_message(msg, sender, [SERVER_ADDRESS])
    settled(server)
    got = [str(m["X-Envelope-To"]) for m in sink.drain()]
    assert sorted(got) == sorted(good)  # each once; the bad ones never arrive
    failed = query(server, "SELECT to_addr FROM outbox WHERE status = 'failed'")
    assert sorted(str(a) for (a,) in failed) == sorted([refused, unicode_address])
    sent = query(server, "SELECT attempts FROM outbox WHERE status = 'sent'")
    assert [a for (a,) in sent] == [1] * len(good)  # none charged for the bad ones


# 6. Forced games and rating farming


def test_a_strangers_challenge_never_accepted_costs_nothing(server: PbmServer, sink: Sink) -> None:
    sign_up(server, sink, "alice", ALICE, "pw-a")
    sign_up(server, sink, "carol", CAROL, "pw-c")
    server.send(CAROL, "accasta challenge carol alice", "You will lose.")
    asked = sink.wait_for(ALICE, "challenge from carol")
    board = board_number(asked)
    later = datetime.now(UTC) + timedelta(days=30)
    server.pbm("tick", "--now", later.isoformat())
    lapsed = sink.wait_for(CAROL, f"Board {board} - challenge lapsed")
    assert "alice did not answer it within 7 days" in " ".join(body_of(lapsed).split())
    ((state,),) = query(server, f"SELECT status FROM games WHERE board = {board}")
    assert state == "cancelled"
    assert query(server, "SELECT count(*) FROM ratings") == [(0,)]
    settled(server)
    # No reminder, no forfeit: only that the challenge lapsed (both are told).
    assert [str(m["Subject"]) for m in taken(sink, ALICE)] == [
        f"Accasta Board {board}: carol vs alice"
    ]


# 8. No limits on size; autoresponders answered


def test_recipients_past_the_100th_get_452(server: PbmServer) -> None:
    with server.smtp() as smtp:
        smtp.ehlo("client.test")
        assert smtp.mail(ALICE)[0] == 250
        codes = [smtp.rcpt(SERVER_ADDRESS)[0] for _ in range(150)]
    assert codes == [250] * 100 + [452] * 50


def test_an_autoresponders_mail_gets_no_answer(server: PbmServer, sink: Sink) -> None:
    server.send(VICTIM, "Out of office", "help\n", headers={"Precedence": "auto_reply"})
    server.send(VICTIM, "Loop", "help\n", headers={"X-Loop": SERVER_ADDRESS})
    server.send(VICTIM, "help")  # a person: answered
    settled(server)
    (answer,) = taken(sink, VICTIM)
    assert answer["Subject"] == "pbm - help"
    notes = [str(n) for (n,) in query(server, "SELECT note FROM inbox ORDER BY id")]
    assert notes[:2] == ["Precedence: auto_reply", f"X-Loop: {SERVER_ADDRESS}"]


# Issue 35, case 15


def test_answers_go_to_a_mis_parsed_from_no_more(server: PbmServer, sink: Sink) -> None:
    """``From: victim-p@evil.example <e1p@example.org>`` was answered to victim-p, and an
    encoded word that decodes to CR/LF made a reply header with a line break in it. Now a
    From that does not parse cleanly gets no answer at all (nor does its envelope sender),
    and the inbox says why; a clean From is answered as before."""
    forged = [
        "victim-p@evil.example <e1p@example.org>",
        "=?utf-8?q?x=0D=0Avictim-m@evil.example?= <e1m@example.org>",
    ]
    for i, sender in enumerate(forged):
        raw = (
            f"From: {sender}\r\nTo: {SERVER_ADDRESS}\r\nSubject: help\r\n"
            f"Message-ID: <forged-{i}@client.test>\r\n\r\nhelp\r\n"
        )
        server.send_message(raw.encode(), f"e1{'pm'[i]}@example.org", SERVER_ADDRESS)
    server.send("e1p@example.org", "help")  # the same sender, cleanly: answered
    settled(server)
    (answer,) = sink.drain()
    assert answer["X-Envelope-To"] == "e1p@example.org" and answer["Subject"] == "pbm - help"
    notes = [str(n) for (n,) in query(server, "SELECT note FROM inbox ORDER BY id")]
    assert notes[0] == (
        "no answer: the From header does not parse cleanly (invalid address in address-list)"
    )
    assert notes[1].startswith("no answer: the From header does not parse (")
    assert "traceback" not in server.log().lower()
