"""End to end over real SMTP with a real ``pbm serve`` (issue 41): a digest at its time
(``pbm tick --now``) answered by one reply with a move for three boards and a bad line,
all answered in one mail; a conditional tree given by mail, the opponent plays into its
first line, the answer is played at once and costs no time. Nothing sleeps: time is
moved with ``pbm tick --now``, mail is waited for as it comes."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest
from mailserver import (
    PbmServer,
    Sink,
    answer,
    board_number,
    body_of,
    challenge_accepted,
    full_body_of,
    sign_up,
)

pytestmark = pytest.mark.e2e

ALICE = "alice@example.org"
BOB = "bob@example.net"


def flat(text: str) -> str:
    return " ".join(text.split())


def next_eight_in_berlin(after: datetime) -> datetime:
    """08:00 Europe/Berlin after ``after``, in UTC."""
    zone = ZoneInfo("Europe/Berlin")
    local = after.astimezone(zone)
    for days in range(3):
        day = local.date() + timedelta(days=days)
        found = datetime(day.year, day.month, day.day, 8, 0, tzinfo=zone).astimezone(UTC)
        if found > after:
            return found
    raise AssertionError("no 08:00 within three days")


def test_a_digest_at_eight_answered_with_moves_for_three_boards(
    server: PbmServer, sink: Sink
) -> None:
    sign_up(server, sink, "alice", ALICE, "pw-a")
    sign_up(server, sink, "bob", BOB, "pw-b")
    server.send(ALICE, "notify alice pw-a digest 08:00 Europe/Berlin")
    told = sink.wait_for(ALICE, "pbm - notify")
    assert "alice gets a digest at 08:00 Europe/Berlin time" in flat(body_of(told))
    boards = []
    for _ in range(4):
        started = challenge_accepted(server, sink, BOB, "accasta challenge bob alice", ALICE)
        board = board_number(started)
        boards.append(board)
        # bob moves: alice reads a digest, so his move's mail waits for it.
        server.send(BOB, f"accasta move {board} bob pw-b a1:C+b2")
        sink.wait_for(BOB, f"Board {board} - alice to move")
    due = next_eight_in_berlin(datetime.now(UTC))
    server.pbm("tick", "--now", (due - timedelta(minutes=1)).isoformat(timespec="seconds"))
    out = server.pbm("tick", "--now", (due + timedelta(minutes=1)).isoformat(timespec="seconds"))
    assert out.startswith("1 board")
    digest = sink.wait_for(ALICE, "pbm - digest: 4 boards wait for your move")
    text = body_of(digest)
    assert [int(n) for n in re.findall(r"^== Accasta Board (\d+),", text, re.M)] == boards
    assert "pbm+d.alice." in str(digest["Reply-To"])
    # The HTML part has each board's picture.
    html = digest.get_body(("html",))
    assert html is not None
    assert len(re.findall(r'<img src="cid:board-\d\.', html.get_content())) == 4
    # No board mail of bob's moves came to alice meanwhile (only what she asked for).
    early = [m for m in sink.drain() if str(m["X-Envelope-To"]).lower() == ALICE]
    assert all("to move" not in str(m["Subject"]) for m in early)
    examples = dict(re.findall(r"^Reply: (\d+): YOUR-MOVE\s+\(such as \d+: (\S+)\)", text, re.M))
    one, two, three, four = boards
    reply = "\n".join(
        [
            "Good morning!",
            f"{one}: {examples[str(one)]}",
            f"{two}: {examples[str(two)]}",
            f"{three}: a1:C-g7",  # no such cell: refused by name, the others play
            f"{four}: {examples[str(four)]}",
        ]
    )
    answer(server, ALICE, digest, reply)
    answered = sink.wait_for(ALICE, "4 answers to your mail")
    whole = flat(full_body_of(answered))
    for board in (one, two, four):
        assert f"== Accasta Board {board} - bob to move ==" in whole
    assert f"== Accasta Board {three} - error ==" in whole
    assert f"> {three}: a1:C-g7" in whole and "g7 is not a cell of the board" in whole
    # bob got each move's board mail; the bad line moved nothing.
    for board in (one, two, four):
        sink.wait_for(BOB, f"Board {board} - bob to move")
    server.send(BOB, f"accasta history {three}")
    assert "2." not in body_of(sink.wait_for(BOB, f"Board {three} - history")).split("\n", 2)[2]
    # One answer to her mail: nothing else came to alice.
    later = [m for m in sink.drain() if str(m["X-Envelope-To"]).lower() == ALICE]
    assert later == []


def test_a_tree_by_mail_plays_its_answer_at_once_and_costs_no_time(
    server: PbmServer, sink: Sink
) -> None:
    sign_up(server, sink, "alice", ALICE, "pw-a")
    sign_up(server, sink, "bob", BOB, "pw-b")
    started = challenge_accepted(
        server, sink, ALICE, 'accasta challenge alice bob --time="fischer 10d+1d max 20d"', BOB
    )
    board = board_number(started)
    server.send(ALICE, f"accasta move {board} alice pw-a a4:C+b4,H-c6,S-b5")
    sink.wait_for(BOB, f"Board {board} - bob to move")
    sink.drain()
    server.send(BOB, f"accasta move {board} bob pw-b f4:H-e5,S+f3")
    waiting = flat(body_of(sink.wait_for(BOB, f"Board {board} - alice to move")))
    # bob's time after his move: his 10 days, less the seconds it took, and a day.
    assert "Black bob: 10 days 23 hours left" in waiting
    # bob's tree: the command, then a line a line below it.
    server.send(
        BOB,
        "My tree",
        f"accasta queue {board} bob pw-b\n"
        "if a1:C+b2 then g1:C-d1 if a1:H-b1 then d1:C-c1\n"
        "if a1:C-d1 then g1:C-e1\n",
    )
    ack = sink.wait_for(BOB, f"Board {board} - queued moves")
    assert (
        "  if a1:C+b2 then g1:C-d1\n    if a1:H-b1 then d1:C-c1\n  if a1:C-d1 then g1:C-e1"
        in body_of(ack).replace("\r\n", "\n")
    )
    sink.drain()  # what came before
    server.send(ALICE, f"accasta move {board} alice pw-a a1:C+b2")
    for who in (ALICE, BOB):
        mail = body_of(sink.wait_for(who, f"Board {board} - alice to move"))
        assert "Move 4, bob (Black): g1:C-d1 (queued)" in mail
        assert "from the conditional tree was played at once (move 4), costing no time" in flat(
            mail
        )
        # Not a moment of bob's time: as before, and the move's day more.
        assert "Black bob: 11 days 23 hours left" in flat(mail)
    # What follows stays for alice's next move.
    server.send(ALICE, f"accasta move {board} alice pw-a a1:H-b1")
    mail = body_of(sink.wait_for(BOB, f"Board {board} - alice to move"))
    assert "Move 6, bob (Black): d1:C-c1 (queued)" in mail
    assert "Your tree on board" in flat(mail) and "is used up" in flat(mail)
