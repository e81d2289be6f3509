"""Queued and conditional moves (a conditional tree, ``usecases.trees``), on a real
database with the real Accasta: today's form, ``MOVE if THEIRS``, as a line of one step.

The position used: after ``a4:C+b4,H-c6,S-b5`` (alice, White) and
``f4:H-e5,S+f3`` (bob, Black), White to move. Black's ``g1:C-d1`` is legal
after White's ``a1:C+b2`` but not after ``a1:C-d1`` (d1 then holds a White
stack, which can only be captured).
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from conftest import accepted
from sqlmodel import col, select

from pbm.refusals import (
    BadRequest,
    GameOver,
    NotAPlayer,
    NotYourTurn,
    Refused,
    WrongPassword,
)
from pbm.replies import Reply
from pbm.store.engine import Database
from pbm.store.tables import Game, Move, MoveTree, OutboxMessage
from pbm.usecases import unit
from pbm.usecases.auth import ByReply, Password, Who
from pbm.usecases.challenges import Challenge
from pbm.usecases.moves import Move as MoveAction
from pbm.usecases.moves import Resign
from pbm.usecases.proposals import Accept, Undo
from pbm.usecases.queries.reading import History
from pbm.usecases.queue import CLEAR, Queue
from pbm.usecases.site import Site

PW = Password("pw")
ALICE, BOB = "alice@example.org", "bob@example.org"
OPENING = ("a4:C+b4,H-c6,S-b5", "f4:H-e5,S+f3")


def move(site: Site, board: int, userid: str, text: str, comment: str = "") -> tuple[Reply, ...]:
    return unit.run(site, MoveAction(board, text, comment=comment), Who(userid, PW))


def queue(
    site: Site, board: int, userid: str, text: str | None, if_move: str | None = None, who: Any = PW
) -> tuple[Reply, ...]:
    """Today's form: ``MOVE [if THEIRS]``; None clears the tree."""
    if text is None:
        return unit.run(site, Queue(board, what=CLEAR), Who(userid, who))
    line = f"{text} if {if_move}" if if_move else text
    return unit.run(site, Queue(board, (line,)), Who(userid, who))


@pytest.fixture
def board(site: Site) -> int:
    b = accepted(site, Challenge("accasta", "alice", "bob", sender=ALICE))
    move(site, b, "alice", OPENING[0])
    move(site, b, "bob", OPENING[1])
    return b


def game(db: Database, board: int) -> Game:
    with db.transaction() as s:
        g = s.get(Game, board)
        assert g is not None
        return g


def moves(db: Database, board: int) -> list[Move]:
    with db.transaction() as s:
        return list(s.exec(select(Move).where(Move.board == board).order_by(col(Move.ply))).all())


def queued(db: Database) -> list[tuple[str, list[list[str]]]]:
    """Each tree: its owner and its lines."""
    with db.transaction() as s:
        rows = s.exec(select(MoveTree).order_by(col(MoveTree.id))).all()
        return [(q.userid, json.loads(q.lines)) for q in rows]


def flat(text: str) -> str:
    return " ".join(text.split())


# ---------------------------------------------------------------- playing the tree


def snapshot(db: Database) -> tuple[Any, ...]:
    with db.transaction() as s:
        return tuple(
            [r.model_dump() for r in s.exec(select(table)).all()]
            for table in (Game, Move, MoveTree, OutboxMessage)
        )


def refused(db: Database, error: type[Refused], call: Any) -> str:
    before = snapshot(db)
    with pytest.raises(error) as info:
        call()
    assert type(info.value) is error
    assert snapshot(db) == before
    return info.value.message


def test_a_conditional_reply_is_played_the_moment_its_condition_is_met(
    db: Database, site: Site, board: int
) -> None:
    [ack] = queue(site, board, "bob", "g1:C-d1", "A1:C+B2")  # any spelling of the move
    assert ack.to == BOB and "if a1:C+b2 then g1:C-d1" in ack.body  # canonical now
    replies = move(site, board, "alice", "a1:C+b2", comment="your move")
    played = moves(db, board)
    assert [(m.ply, m.notation, m.queued) for m in played[2:]] == [
        (3, "a1:C+b2", False),
        (4, "g1:C-d1", True),
    ]
    assert played[3].message_id is None and played[3].userid == "bob"
    assert queued(db) == []  # the tree is used up
    g = game(db, board)
    assert g.ply == 4 and g.status == "active"
    # One board mail each for the exchange: both moves, alice's comment, bob's tree told.
    assert sorted(r.to for r in replies) == [ALICE, BOB]
    assert all(r.subject.endswith("alice to move") for r in replies)
    for r in replies:
        text = flat(r.body)
        assert (
            "alice played a1:C+b2 (move 3); bob's answer g1:C-d1 from the conditional tree "
            "was played at once (move 4), costing no time." in text
        )
        assert "alice writes: > your move" in text
        assert "Move 4, bob (Black): g1:C-d1 (queued)" in r.body
    [to_bob] = [r for r in replies if r.to == BOB]
    assert flat(to_bob.body).startswith(
        "Your conditional tree answered alice's a1:C+b2 with g1:C-d1: played at once as "
        "move 4, costing no time on your clock."
    )
    history = unit.run(site, History(board, BOB), sender=BOB)[0].body
    assert "g1:C-d1 (queued)" in history


def test_a_move_off_the_tree_drops_it_and_leaves_the_turn_to_the_player(
    db: Database, site: Site, board: int
) -> None:
    queue(site, board, "bob", "g1:C-d1", "a1:C+b2")
    replies = move(site, board, "alice", "a1:C-d1")
    assert game(db, board).ply == 3 and queued(db) == []
    [note] = [r for r in replies if r.to == BOB]
    body = flat(note.body)
    assert (
        "alice played a1:C-d1, a move off your conditional tree: the tree on board "
        f"{board} is dropped, and it is your turn." in body
    )
    assert note.reply_as == "bob" and note.subject.endswith("bob to move")
    [to_alice] = [r for r in replies if r.to == ALICE]
    assert "tree" not in to_alice.body


def test_an_answer_to_any_reply_that_became_illegal_drops_the_tree_with_the_reason(
    db: Database, site: Site, board: int
) -> None:
    queue(site, board, "bob", "g1:C-d1")  # whatever alice plays
    replies = move(site, board, "alice", "a1:C-d1")
    assert game(db, board).ply == 3  # nothing played for bob
    [note] = [r for r in replies if r.to == BOB]
    assert (
        "Your tree's answer g1:C-d1 is not legal after alice's a1:C-d1: d1 is a stack "
        "headed by White: write x not -" in flat(note.body)
    )


def test_a_reply_for_that_very_move_wins_over_one_for_any(
    db: Database, site: Site, board: int
) -> None:
    queue(site, board, "bob", "g1:C-f1")  # any other move
    queue(site, board, "bob", "g1:C-e1", "a1:C-d1")
    move(site, board, "alice", "a1:C-d1")
    assert moves(db, board)[-1].notation == "g1:C-e1" and moves(db, board)[-1].queued


def test_clear_forgets_the_tree(db: Database, site: Site, board: int) -> None:
    queue(site, board, "bob", "g1:C-d1", "a1:C+b2")
    queue(site, board, "bob", "g1:C-e1", "a1:C-d1")
    [ack] = queue(site, board, "bob", None)
    assert f"Your conditional tree on board {board} is forgotten." in ack.body
    assert queued(db) == []
    move(site, board, "alice", "a1:C+b2")
    assert game(db, board).ply == 3


def test_a_reply_address_may_queue(db: Database, site: Site, board: int) -> None:
    queue(site, board, "bob", "g1:C-d1", "a1:C+b2", who=ByReply(board))
    assert queued(db) == [("bob", [["a1:C+b2", "g1:C-d1"]])]


def test_an_accepted_undo_drops_the_tree(db: Database, site: Site, board: int) -> None:
    unit.run(site, Undo(board), Who("bob", PW))
    queue(site, board, "bob", "g1:C-e1")
    assert queued(db) == [("bob", [["*", "g1:C-e1"]])]
    replies = unit.run(site, Accept(board), Who("alice", PW))  # bob is to move again
    assert queued(db) == []
    assert "queued moves on this board were dropped" in flat(replies[0].body)


def test_the_end_of_the_game_drops_the_tree(db: Database, site: Site, board: int) -> None:
    queue(site, board, "bob", "g1:C-d1")
    unit.run(site, Resign(board), Who("alice", PW))
    assert queued(db) == []


# ---------------------------------------------------------------- refusals


def test_queue_refusals(db: Database, site: Site, board: int) -> None:
    assert "your turn" in refused(db, NotYourTurn, lambda: queue(site, board, "alice", "a1:C+b2"))
    why = refused(db, BadRequest, lambda: queue(site, board, "bob", "g1:C-d1", "a1:C-z9"))
    assert why.startswith("Line 1, ply 1 (alice's move 3, a1:C-z9): z9 is not a cell")
    why = refused(db, BadRequest, lambda: queue(site, board, "bob", "g1:C-d1", "a1:C-d1"))
    assert why.startswith("Line 1, ply 2 (your move 4, g1:C-d1): d1 is a stack")
    why = refused(db, BadRequest, lambda: queue(site, board, "bob", "hello"))
    assert "'hello' is not an Accasta move" in why
    refused(db, BadRequest, lambda: queue(site, board, "bob", "resign"))
    assert "no conditional tree" in refused(db, BadRequest, lambda: queue(site, board, "bob", None))
    refused(db, WrongPassword, lambda: queue(site, board, "bob", "g1:C-d1", who=Password("x")))
    # A reply address of another board does not let bob queue here.
    other = ByReply(board + 1)
    refused(db, WrongPassword, lambda: queue(site, board, "bob", "g1:C-d1", who=other))
    refused(db, NotAPlayer, lambda: queue(site, board, "carol", "g1:C-d1"))
    unit.run(site, Resign(board), Who("bob", PW))
    refused(db, GameOver, lambda: queue(site, board, "bob", "g1:C-d1"))
