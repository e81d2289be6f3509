"""End to end: queued replies, reminders and forfeits over real SMTP with a real ``pbm serve``.

Time is moved with ``pbm tick --now``; nothing sleeps. The position used:
after ``a4:C+b4,H-c6,S-b5`` and ``f4:H-e5,S+f3`` Black's ``g1:C-d1`` is legal
after White's ``a1:C+b2`` but not after ``a1:C-d1``.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from email.message import EmailMessage

import pytest
from mailserver import PbmServer, Sink, board_number, body_of, challenge_accepted, reply_to, sign_up

pytestmark = pytest.mark.e2e

ALICE = "alice@example.org"
BOB = "bob@example.net"
OPENING = ("a4:C+b4,H-c6,S-b5", "f4:H-e5,S+f3")


def flat(text: str) -> str:
    return " ".join(text.split())


def start_board(server: PbmServer, sink: Sink) -> int:
    sign_up(server, sink, "alice", ALICE, "pw-a")
    sign_up(server, sink, "bob", BOB, "pw-b")
    board = board_number(
        challenge_accepted(server, sink, ALICE, "accasta challenge alice bob", BOB)
    )
    sink.wait_for(BOB, "alice to move")
    return board


def play_opening(server: PbmServer, sink: Sink, board: int) -> EmailMessage:
    """The two opening moves by mail; bob's board mail after them."""
    server.send(ALICE, f"accasta move {board} alice pw-a {OPENING[0]}")
    sink.wait_for(ALICE, f"Board {board} - bob to move")
    sink.wait_for(BOB, f"Board {board} - bob to move")
    server.send(BOB, f"accasta move {board} bob pw-b {OPENING[1]}")
    sink.wait_for(ALICE, f"Board {board} - alice to move")
    return sink.wait_for(BOB, f"Board {board} - alice to move")


def test_a_queued_reply_is_played_the_moment_its_condition_is_met(
    server: PbmServer, sink: Sink
) -> None:
    board = start_board(server, sink)
    waiting = play_opening(server, sink, board)
    # bob answers his board mail with a conditional queued move (reply mode).
    server.send(
        BOB,
        f"Re: {waiting['Subject']}",
        "queue g1:C-d1 if a1:C+b2\n",
        to=reply_to(waiting),
    )
    ack = sink.wait_for(BOB, f"Board {board} - queued moves")
    assert "  if a1:C+b2 then g1:C-d1" in body_of(ack)
    server.send(ALICE, f"accasta move {board} alice pw-a a1:C+b2")
    # alice moved and bob's reply was played at once: she is to move again, and each
    # gets one board mail for the exchange.
    for who in (ALICE, BOB):
        mail = sink.wait_for(who, f"Board {board} - alice to move")
        assert "Move 4, bob (Black): g1:C-d1 (queued)" in body_of(mail)
        if who == BOB:
            assert (
                "Your conditional tree answered alice's a1:C+b2 with g1:C-d1: played at once "
                "as move 4, costing no time on your clock." in flat(body_of(mail))
            )
    server.send(BOB, f"accasta history {board}")
    history = body_of(sink.wait_for(BOB, f"Board {board} - history"))
    assert re.search(r"4\. bob\s+g1:C-d1 \(queued\)", history)


def test_a_queued_move_that_became_illegal_is_dropped_with_the_reason(
    server: PbmServer, sink: Sink
) -> None:
    board = start_board(server, sink)
    play_opening(server, sink, board)
    server.send(BOB, f"accasta queue {board} bob pw-b g1:C-d1")
    sink.wait_for(BOB, f"Board {board} - queued moves")
    server.send(ALICE, f"accasta move {board} alice pw-a a1:C-d1")
    note = sink.wait_for(BOB, f"Board {board} - bob to move")
    text = flat(body_of(note))
    assert (
        "Your tree's answer g1:C-d1 is not legal after alice's a1:C-d1: "
        "d1 is a stack headed by White: write x not -. The tree on board" in text
    )
    # Nothing was played for bob: the board waits for him (alice is told so too).
    assert "queued" not in body_of(sink.wait_for(ALICE, f"Board {board} - bob to move"))


def iso(t: datetime) -> str:
    return t.isoformat(timespec="seconds")


def test_reminder_and_forfeit_by_pbm_tick(server: PbmServer, sink: Sink) -> None:
    started = datetime.now(UTC)
    board = start_board(server, sink)
    # The board started at or after ``started``: 6 days later no reminder is due.
    assert server.pbm("tick", "--now", iso(started + timedelta(days=6))).startswith("0 board")
    out = server.pbm("tick", "--now", iso(started + timedelta(days=7, hours=1)))
    assert out.startswith("1 board")
    nag = sink.wait_for(ALICE, f"Nag: Accasta Board {board} - alice to move")
    assert "you have not moved for 7 days" in flat(body_of(nag))
    assert server.pbm("tick", "--now", iso(started + timedelta(days=8))).startswith("0 board")
    # Away from the keyboard: alice's vacation stops her clock.
    server.pbm("player", "vacation", "alice", "5", "--now", iso(started + timedelta(days=9)))
    sink.wait_for(ALICE, "pbm - vacation")
    assert server.pbm("tick", "--now", iso(started + timedelta(days=22))).startswith("1 board")
    sink.wait_for(ALICE, f"Nag: Accasta Board {board}")  # the 14-day reminder, not a forfeit
    out = server.pbm("tick", "--now", iso(started + timedelta(days=26, hours=1)))
    assert out.startswith("1 board")
    for who in (ALICE, BOB):
        final = sink.wait_for(who, f"Accasta Board {board} - Black wins")
        text = flat(body_of(final))
        assert "alice did not move for 21 days" in text
        assert "bob (Black) wins (forfeit)" in text
        assert "alice 1500 -> 1484 (-16), bob 1500 -> 1516 (+16)" in text
    assert "bob" in server.pbm("ratings")
