"""End to end: playing by conversation. Every mail the server sends can be answered by
Reply, and the answer does what a player means by it.

Each reply goes to the server's own mail by its Reply-To, as a mail client sends
it: ``Re:`` subject, In-Reply-To, the mail quoted below the text.
"""

from __future__ import annotations

from email.message import EmailMessage

import pytest
from mailserver import (
    PbmServer,
    Sink,
    answer,
    board_number,
    body_of,
    challenge_accepted,
    sign_up,
)

import pbm.games

pytestmark = pytest.mark.e2e

ALICE, BOB, CAROL = "alice@example.org", "bob@example.net", "carol@example.com"
START = pbm.games.get("accasta").new()
FIRST = START.legal_moves()[0]
SECOND = START.play(FIRST)[0].legal_moves()[0]


def flat(msg: EmailMessage) -> str:
    return " ".join(body_of(msg).split())


def started(server: PbmServer, sink: Sink) -> tuple[int, EmailMessage, EmailMessage]:
    """alice (White) and bob on a new board; their first board mails."""
    sign_up(server, sink, "alice", ALICE, "pw-a")
    sign_up(server, sink, "bob", BOB, "pw-b")
    to_alice = challenge_accepted(server, sink, ALICE, "accasta challenge alice bob", BOB)
    to_bob = sink.wait_for(BOB, "alice to move")
    return board_number(to_alice), to_alice, to_bob


def test_resign_by_replying_to_a_show_answer(server: PbmServer, sink: Sink) -> None:
    board, _, _ = started(server, sink)
    server.send(BOB, f"accasta show {board}")
    shown = sink.wait_for(BOB, f"Board {board} - alice to move")
    assert "Reply to this mail" in body_of(shown) or "By reply you can" in body_of(shown)
    answer(server, BOB, shown, "resign")
    final = sink.wait_for(ALICE, f"Board {board} - White wins")
    assert "bob resigned." in body_of(final)


def test_a_corrected_move_by_replying_to_the_error_mail(server: PbmServer, sink: Sink) -> None:
    board, _, _ = started(server, sink)
    server.send(ALICE, f"accasta move {board} alice pw-a a1:C-g4")
    error = sink.wait_for(ALICE, f"Board {board} - error")
    answer(server, ALICE, error, FIRST)
    sink.wait_for(BOB, f"Board {board} - bob to move")


def test_a_move_by_replying_to_the_moves_list(server: PbmServer, sink: Sink) -> None:
    board, _, _ = started(server, sink)
    server.send(ALICE, f"accasta moves {board}")
    listed = sink.wait_for(ALICE, f"Board {board} - legal moves")
    move = START.legal_moves()[3]
    assert move in body_of(listed).split()
    assert "To play one of them, reply to this mail with it." in flat(listed)
    answer(server, ALICE, listed, move)
    moved = sink.wait_for(BOB, f"Board {board} - bob to move")
    assert f"Move 1, alice (White): {move}" in body_of(moved)


def test_a_greeting_above_the_move(server: PbmServer, sink: Sink) -> None:
    """The lines after the move are its comment; the greeting above it is none."""
    board, to_alice, _ = started(server, sink)
    answer(server, ALICE, to_alice, f"Hi Bob,\n\n{FIRST}\n\nGood luck!")
    moved = sink.wait_for(BOB, f"Board {board} - bob to move")
    assert f"Move 1, alice (White): {FIRST}" in body_of(moved)
    assert "alice writes: > Good luck!" in flat(moved)
    assert "Hi Bob" not in flat(moved)


def test_an_answer_to_a_chat_is_passed_on(server: PbmServer, sink: Sink) -> None:
    board, _, to_bob = started(server, sink)
    answer(server, BOB, to_bob, "chat Good luck, Alice!")
    chat = sink.wait_for(ALICE, f"Board {board} - chat from bob")
    answer(server, ALICE, chat, "Thanks Bob, we will see!")
    back = sink.wait_for(BOB, f"Board {board} - chat from alice")
    assert "Thanks Bob, we will see!" in body_of(back)
    assert "Good luck" not in body_of(back)  # the quote stays out


def test_accept_by_replying_to_a_challenge(server: PbmServer, sink: Sink) -> None:
    sign_up(server, sink, "alice", ALICE, "pw-a")
    sign_up(server, sink, "bob", BOB, "pw-b")
    server.send(ALICE, "accasta challenge alice bob --variant=pari", "A game of Pari?")
    asked = sink.wait_for(BOB, "challenge from alice")
    assert "A game of Pari?" in body_of(asked)
    answer(server, BOB, asked, "Gladly!\naccept")
    started_mail = sink.wait_for(ALICE, "alice to move")
    assert "bob accepted alice's challenge" in body_of(started_mail)


def test_a_forgotten_password_is_reset_by_reply(server: PbmServer, sink: Sink) -> None:
    board, _, _ = started(server, sink)
    server.send(CAROL, "password reset alice")  # anyone may ask; only alice's address hears
    told = sink.wait_for(CAROL, "pbm - password reset")
    assert "went to the account's own address" in flat(told)
    reset = sink.wait_for(ALICE, "pbm - reset the password of alice")
    assert "pbm+r.alice." in str(reset["Reply-To"])
    answer(server, ALICE, reset, "brand-new-pw")
    sink.wait_for(ALICE, "pbm - password changed")
    answer(server, ALICE, reset, "another-pw")  # the reset address works once
    used = sink.wait_for(ALICE, "pbm - error")
    assert "not valid" in flat(used)
    server.send(ALICE, f"accasta move {board} alice brand-new-pw {FIRST}")
    sink.wait_for(BOB, f"Board {board} - bob to move")


def test_a_followers_reply_cannot_move(server: PbmServer, sink: Sink) -> None:
    board, _, _ = started(server, sink)
    sign_up(server, sink, "carol", CAROL, "pw-c")
    server.send(CAROL, f"accasta subscribe {board} carol pw-c")
    following = sink.wait_for(CAROL, f"Board {board} - alice to move")
    assert "pbm+f" in str(following["Reply-To"])
    answer(server, CAROL, following, FIRST)
    refused = sink.wait_for(CAROL, f"Board {board} - error")
    assert "A follower's reply may hold only show, history, moves, record, chat" in flat(refused)
    answer(server, CAROL, following, "unsubscribe")
    sink.wait_for(CAROL, f"Board {board} - unsubscribed")


def test_a_queued_reply_makes_one_board_mail_per_reader(server: PbmServer, sink: Sink) -> None:
    board, to_alice, to_bob = started(server, sink)
    sign_up(server, sink, "carol", CAROL, "pw-c")
    server.send(CAROL, f"accasta subscribe {board} carol pw-c")
    sink.wait_for(CAROL, f"Board {board}")
    answer(server, BOB, to_bob, f"queue {SECOND} if {FIRST}")
    sink.wait_for(BOB, f"Board {board} - queued moves")
    answer(server, ALICE, to_alice, FIRST)
    for who in (ALICE, BOB, CAROL):
        mail = sink.wait_for(who, f"Board {board} - alice to move")
        assert f"bob's answer {SECOND} from the conditional tree was played at once" in flat(mail)
    server.send(CAROL, f"accasta show {board}")  # a marker: everything before it has come
    sink.wait_for(CAROL, f"Board {board} - alice to move")
    assert [m["Subject"] for m in sink.drain()] == []
