"""Conditional move trees on a real database (issue 41): lines given by mail are checked
and merged; the opponent plays into one and its answer is played at once, costing no
time; what follows stays; a move off the tree drops it; today's flat queue records
become trees in the migration."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest
import sqlalchemy as sa
from conftest import Clock, accepted
from sqlmodel import col, select

from pbm.refusals import BadRequest
from pbm.store import engine
from pbm.store.engine import Database
from pbm.store.tables import Move, MoveTree, OutboxMessage
from pbm.usecases import queries, unit
from pbm.usecases.auth import Password, Who
from pbm.usecases.challenges import Challenge
from pbm.usecases.clocks import clock_of
from pbm.usecases.moves import Move as MoveAction
from pbm.usecases.queue import CLEAR, SHOW, Queue
from pbm.usecases.site import Site

PW = Password("pw")
ALICE, BOB = "alice@example.org", "bob@example.org"
OPENING = ("a4:C+b4,H-c6,S-b5", "f4:H-e5,S+f3")
# After the opening, White to move: two lines for bob, the first two steps deep.
LINES = (
    "if a1:C+b2 then g1:C-d1 if a1:H-b1 then d1:C-c1",
    "if a1:C-d1 then g1:C-e1",
)


def flat(text: str) -> str:
    return " ".join(text.split())


def move(site: Site, board: int, userid: str, text: str) -> list[str]:
    replies = unit.run(site, MoveAction(board, text), Who(userid, PW))
    return [r.body for r in replies]


def trees(db: Database) -> list[tuple[str, list[list[str]]]]:
    with db.transaction() as s:
        rows = s.exec(select(MoveTree).order_by(col(MoveTree.id))).all()
        return [(t.userid, json.loads(t.lines)) for t in rows]


@pytest.fixture
def board(site: Site) -> int:
    challenge = Challenge("accasta", "alice", "bob", sender=ALICE, time="fischer 10d+1d max 20d")
    b = accepted(site, challenge)
    move(site, b, "alice", OPENING[0])
    move(site, b, "bob", OPENING[1])
    return b


def test_the_opponent_plays_into_a_line_and_its_answer_costs_no_time(
    db: Database, site: Site, clock: Clock, board: int
) -> None:
    [ack] = unit.run(site, Queue(board, LINES), Who("bob", PW))
    assert ack.to == BOB and ack.subject.endswith("queued moves")
    # The answer shows the tree as indented text.
    assert (
        "  if a1:C+b2 then g1:C-d1\n    if a1:H-b1 then d1:C-c1\n  if a1:C-d1 then g1:C-e1\n"
        in ack.body
    )
    bob_left = clock_of(queries.board(site, board)).left[1]
    clock.advance(days=2)  # alice thinks for two days
    bodies = move(site, board, "alice", "a1:C+b2")
    played = queries.board(site, board)
    assert [(m.notation, m.queued) for m in played.moves[2:]] == [
        ("a1:C+b2", False),
        ("g1:C-d1", True),
    ]
    # bob's clock ran not a moment: his bank only grew by the move's day.
    assert clock_of(played).left[1] == bob_left + timedelta(days=1)
    assert any(
        "from the conditional tree was played at once (move 4), costing no time" in flat(b)
        for b in bodies
    )
    # What follows in the tree stays for alice's next move.
    assert trees(db) == [("bob", [["a1:H-b1", "d1:C-c1"]])]
    clock.advance(hours=5)
    move(site, board, "alice", "a1:H-b1")
    assert queries.board(site, board).moves[-1].notation == "d1:C-c1"
    assert trees(db) == []  # used up


def test_a_move_off_the_tree_drops_it(db: Database, site: Site, board: int) -> None:
    unit.run(site, Queue(board, LINES), Who("bob", PW))
    bodies = move(site, board, "alice", "a1:C-b1")
    assert trees(db) == [] and queries.board(site, board).ply == 3
    assert any("a move off your conditional tree" in flat(b) for b in bodies)


def test_lines_are_merged_shown_and_cleared(db: Database, site: Site, board: int) -> None:
    unit.run(site, Queue(board, LINES[:1]), Who("bob", PW))
    unit.run(site, Queue(board, LINES[1:]), Who("bob", PW))  # another mail, another line
    unit.run(site, Queue(board, ("g1:C-f1 if a1:C-c1",)), Who("bob", PW))  # today's form
    assert [len(lines) for _, lines in trees(db)] == [3]
    [shown] = unit.run(site, Queue(board, what=SHOW), Who("bob", PW))
    assert "(3 of 30 lines)" in shown.body and "if a1:C-c1 then g1:C-f1" in shown.body
    [gone] = unit.run(site, Queue(board, what=CLEAR), Who("bob", PW))
    assert "is forgotten" in gone.body and trees(db) == []


def snapshot(db: Database) -> tuple[object, ...]:
    with db.transaction() as s:
        return tuple(
            len(s.exec(select(table)).all()) for table in (Move, MoveTree, OutboxMessage)
        ) + tuple(json.loads(t.lines) == [] for t in s.exec(select(MoveTree)).all())


@pytest.mark.parametrize(
    ("lines", "says"),
    [
        (
            (LINES[0], "if a1:C+b2 then g1:C-e1"),
            "Line 2: Your tree answers a1:C+b2 with g1:C-d1 already; a line cannot answer "
            "it with g1:C-e1 as well. Clear the tree to change it.",
        ),
        (
            ("if a1:C+b2 then g1:C-d1 if a1:H-b1 then g7:S-a1",),
            "Line 1, ply 4 (your move 6, g7:S-a1): g7 is not a cell of the board",
        ),
        (
            tuple(f"if a1:C+b2 then g1:C-d1 if {m}" for m in ["x"]),
            "Line 1: A line ends with your answer, after 'then'",
        ),
    ],
)
def test_a_bad_line_is_refused_with_the_reason_and_changes_nothing(
    db: Database, site: Site, board: int, lines: tuple[str, ...], says: str
) -> None:
    before = snapshot(db)
    with pytest.raises(BadRequest) as info:
        unit.run(site, Queue(board, lines), Who("bob", PW))
    assert info.value.message.startswith(says)
    assert snapshot(db) == before


def test_a_thirty_first_line_is_refused(db: Database, site: Site) -> None:
    # Chess: a line for each of two replies to the first answer to each of White's 20
    # first moves: 40 lines that do not conflict.
    b = accepted(site, Challenge("chess", "alice", "bob", sender=ALICE))
    state = queries.board(site, b).state
    chosen = []
    for first in state.legal_moves():
        after, _ = state.play(first)
        answer = after.legal_moves()[0]
        second, _ = after.play(answer)
        for reply in second.legal_moves()[:2]:
            third, _ = second.play(reply)
            chosen.append(f"if {first} then {answer} if {reply} then {third.legal_moves()[0]}")
    # bob waits for alice (White): his tree.
    with pytest.raises(BadRequest) as info:
        unit.run(site, Queue(b, tuple(chosen[:31])), Who("bob", PW))
    assert info.value.message == (
        "A tree holds at most 30 lines; your mail gives 31: line 31 is one too many."
    )
    [ack] = unit.run(site, Queue(b, tuple(chosen[:30])), Who("bob", PW))
    assert "(30 of 30 lines)" in ack.body
    # A 31st line in another mail: the tree holds 30 already.
    with pytest.raises(BadRequest) as info:
        unit.run(site, Queue(b, (chosen[30],)), Who("bob", PW))
    assert info.value.message == (
        "Line 1: A tree holds at most 30 lines; this one would be line 31. Clear the tree, "
        "or give fewer lines."
    )


def test_chess_lines_the_pgn_way(db: Database, site: Site) -> None:
    b = accepted(site, Challenge("chess", "alice", "bob", sender=ALICE))
    [ack] = unit.run(site, Queue(b, ("if 1.e4 e5 2.Nf3 Nc6", "if 1.d4 1...d5")), Who("bob", PW))
    assert "  if e4 then e5\n    if Nf3 then Nc6\n  if d4 then d5\n" in ack.body
    move(site, b, "alice", "e2e4")
    move(site, b, "alice", "Nf3")
    assert [m.notation for m in queries.board(site, b).moves] == ["e4", "e5", "Nf3", "Nc6"]


def test_the_flat_queue_becomes_trees_in_the_migration(db: Database, site: Site) -> None:
    """Queued moves of before (0010) are lines of one step, the opponent's move in the
    board's own notation; of two answers to one reply the first stays."""
    b = accepted(site, Challenge("accasta", "alice", "bob", sender=ALICE))
    move(site, b, "alice", OPENING[0])
    move(site, b, "bob", OPENING[1])
    engine.downgrade(db, "0010")
    t0 = site.clock()
    insert = sa.text(
        "INSERT INTO queued_moves (board, userid, move_text, if_move, created_at) "
        "VALUES (:b, 'bob', :m, :i, :t)"
    )
    with db.engine.begin() as conn:
        for text, cond in [
            ("g1:C-d1", "A1:C+B2"),  # written otherwise than the board writes it
            ("g1:C-e1", "a1:C+b2"),  # the same reply: the first was the one played
            ("g1:C-f1", None),  # whatever alice plays
        ]:
            conn.execute(insert, {"b": b, "m": text, "i": cond, "t": t0})
    engine.upgrade(db)
    assert trees(db) == [("bob", [["a1:C+b2", "g1:C-d1"], ["*", "g1:C-f1"]])]
    move(site, b, "alice", "A1:C+B2")
    assert queries.board(site, b).moves[-1].notation == "g1:C-d1"
    # ... and back: a tree's first steps are queued moves again.
    move(site, b, "alice", "a1:H-b1")
    move(site, b, "bob", "d1:C-c1")
    line = ("if b1:H-c2 then c1:C-d1 if c2:H-d3 then d1:C-e1",)
    unit.run(site, Queue(b, line), Who("bob", PW))
    engine.downgrade(db, "0010")
    with db.engine.begin() as conn:
        rows = conn.execute(sa.text("SELECT move_text, if_move FROM queued_moves")).all()
    assert [tuple(r) for r in rows] == [("c1:C-d1", "b1:H-c2")]
    engine.upgrade(db)
