"""Queued and conditional moves, on a real database with the real Accasta.

The position used: after ``a4:C+b4,H-c6,S-b5`` (alice, White) and
``f4:H-e5,S+f3`` (bob, Black), White to move. Black's ``g1:C-d1`` is legal
after White's ``a1:C+b2`` but not after ``a1:C-d1`` (d1 then holds a White
stack, which can only be captured).
"""

from __future__ import annotations

from typing import Any

import pytest
from conftest import accepted
from sqlmodel import col, select

from pbm.replies import Reply
from pbm.store.engine import Database
from pbm.store.tables import Game, Move, OutboxMessage, QueuedMove
from pbm.usecases import unit
from pbm.usecases.auth import ByReply, Password, Who
from pbm.usecases.challenges import Challenge
from pbm.usecases.moves import Move as MoveAction
from pbm.usecases.moves import Resign
from pbm.usecases.proposals import Accept, Undo
from pbm.usecases.queue import Queue
from pbm.usecases.reading import History
from pbm.usecases.refusals import (
    BadRequest,
    GameOver,
    NotAPlayer,
    NotYourTurn,
    Refused,
    WrongPassword,
)
from pbm.usecases.site import Site

PW = Password("pw")
ALICE, BOB = "alice@example.org", "bob@example.org"
OPENING = ("a4:C+b4,H-c6,S-b5", "f4:H-e5,S+f3")


def move(site: Site, board: int, userid: str, text: str, comment: str = "") -> tuple[Reply, ...]:
    return unit.run(site, MoveAction(board, text, comment=comment), Who(userid, PW))


def queue(
    site: Site, board: int, userid: str, text: str | None, if_move: str | None = None, who: Any = PW
) -> tuple[Reply, ...]:
    return unit.run(site, Queue(board, text, if_move), Who(userid, who))


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


def queued(db: Database) -> list[tuple[str, str, str | None]]:
    with db.transaction() as s:
        rows = s.exec(select(QueuedMove).order_by(col(QueuedMove.id))).all()
        return [(q.userid, q.move_text, q.if_move) for q in rows]


def flat(text: str) -> str:
    return " ".join(text.split())


def snapshot(db: Database) -> tuple[Any, ...]:
    with db.transaction() as s:
        return tuple(
            [r.model_dump() for r in s.exec(select(table)).all()]
            for table in (Game, Move, QueuedMove, OutboxMessage)
        )


def refused(db: Database, error: type[Refused], call: Any) -> str:
    before = snapshot(db)
    with pytest.raises(error) as info:
        call()
    assert type(info.value) is error
    assert snapshot(db) == before
    return info.value.message


# ---------------------------------------------------------------- playing the queue


def test_a_conditional_reply_is_played_the_moment_its_condition_is_met(
    db: Database, site: Site, board: int
) -> None:
    [ack] = queue(site, board, "bob", "g1:C-d1", "A1:C+B2")  # any spelling of the move
    assert ack.to == BOB and "1. g1:C-d1   if alice plays A1:C+B2" in ack.body
    replies = move(site, board, "alice", "a1:C+b2", comment="your move")
    played = moves(db, board)
    assert [(m.ply, m.notation, m.queued) for m in played[2:]] == [
        (3, "a1:C+b2", False),
        (4, "g1:C-d1", True),
    ]
    assert played[3].message_id is None and played[3].userid == "bob"
    assert queued(db) == []
    g = game(db, board)
    assert g.ply == 4 and g.status == "active"
    # One board mail each for the exchange: both moves, alice's comment, bob's queue told.
    assert sorted(r.to for r in replies) == [ALICE, BOB]
    assert all(r.subject.endswith("alice to move") for r in replies)
    for r in replies:
        text = flat(r.body)
        assert "alice played a1:C+b2 (move 3); bob's queued answer g1:C-d1 was played" in text
        assert "alice writes: > your move" in text
        assert "Move 4, bob (Black): g1:C-d1 (queued)" in r.body
    [to_bob] = [r for r in replies if r.to == BOB]
    assert flat(to_bob.body).startswith("Your queued move g1:C-d1 was played at once as move 4")
    history = unit.run(site, History(board, BOB), sender=BOB)[0].body
    assert "g1:C-d1 (queued)" in history


def test_an_unmet_condition_leaves_the_turn_to_the_player(
    db: Database, site: Site, board: int
) -> None:
    queue(site, board, "bob", "g1:C-d1", "a1:C+b2")
    replies = move(site, board, "alice", "a1:C-d1")
    assert game(db, board).ply == 3 and queued(db) == []
    [note] = [r for r in replies if r.to == BOB]
    body = flat(note.body)
    assert "None of your queued moves could be played after alice's a1:C-d1" in body
    assert "g1:C-d1 if a1:C+b2: dropped, alice played a1:C-d1." in body
    assert note.reply_as == "bob" and note.subject.endswith("bob to move")
    [to_alice] = [r for r in replies if r.to == ALICE]
    assert "queued" not in to_alice.body


def test_the_first_fitting_move_is_played_and_the_rest_dropped(
    db: Database, site: Site, board: int
) -> None:
    queue(site, board, "bob", "g1:C-d1", "a1:C+b2")  # condition not met
    queue(site, board, "bob", "g1:C-d1")  # fits, but illegal after a1:C-d1
    queue(site, board, "bob", "g1:C-e1", "a1:C-d1")  # fits and is legal: played
    queue(site, board, "bob", "g1:C-f1")  # comes after: dropped
    replies = move(site, board, "alice", "a1:C-d1")
    assert moves(db, board)[-1].notation == "g1:C-e1" and moves(db, board)[-1].queued
    assert queued(db) == []
    [note] = [r for r in replies if r.to == BOB]
    body = flat(note.body)
    assert "g1:C-d1 if a1:C+b2: dropped, alice played a1:C-d1." in body
    assert (
        "g1:C-d1: dropped, it is not legal after alice's a1:C-d1: "
        "d1 is a stack headed by White: write x not -" in body
    )
    assert "g1:C-f1: dropped, a move before it in your queue was played." in body


def test_a_queued_move_that_became_illegal_is_dropped_with_the_reason(
    db: Database, site: Site, board: int
) -> None:
    queue(site, board, "bob", "g1:C-d1")
    replies = move(site, board, "alice", "a1:C-d1")
    assert game(db, board).ply == 3  # nothing played for bob
    [note] = [r for r in replies if r.to == BOB]
    assert "not legal after alice's a1:C-d1: d1 is a stack headed by White" in flat(note.body)


def test_clear_forgets_the_queue(db: Database, site: Site, board: int) -> None:
    queue(site, board, "bob", "g1:C-d1")
    queue(site, board, "bob", "g1:C-e1")
    [ack] = queue(site, board, "bob", None)
    assert "Your 2 queued move(s) on board" in ack.body
    assert queued(db) == []
    move(site, board, "alice", "a1:C+b2")
    assert game(db, board).ply == 3


def test_a_reply_address_may_queue(db: Database, site: Site, board: int) -> None:
    queue(site, board, "bob", "g1:C-d1", "a1:C+b2", who=ByReply(board))
    assert queued(db) == [("bob", "g1:C-d1", "a1:C+b2")]


def test_an_accepted_undo_drops_the_queue(db: Database, site: Site, board: int) -> None:
    unit.run(site, Undo(board), Who("bob", PW))
    queue(site, board, "bob", "g1:C-e1")
    assert queued(db) == [("bob", "g1:C-e1", None)]
    replies = unit.run(site, Accept(board), Who("alice", PW))  # bob is to move again
    assert queued(db) == []
    assert "queued moves on this board were dropped" in flat(replies[0].body)


def test_the_end_of_the_game_drops_the_queue(db: Database, site: Site, board: int) -> None:
    queue(site, board, "bob", "g1:C-d1")
    unit.run(site, Resign(board), Who("alice", PW))
    assert queued(db) == []


# ---------------------------------------------------------------- refusals


def test_queue_refusals(db: Database, site: Site, board: int) -> None:
    assert "your turn" in refused(db, NotYourTurn, lambda: queue(site, board, "alice", "a1:C+b2"))
    why = refused(db, BadRequest, lambda: queue(site, board, "bob", "g1:C-d1", "a1:C-z9"))
    assert why.startswith("z9 is not a cell of the board: rows a to g have a1-a4")
    why = refused(db, BadRequest, lambda: queue(site, board, "bob", "g1:C-d1", "a1:C-d1"))
    assert why.startswith("After alice's a1:C-d1, g1:C-d1 is not legal: d1 is a stack")
    why = refused(db, BadRequest, lambda: queue(site, board, "bob", "hello"))
    assert why.startswith("'hello' is not an Accasta move")
    refused(db, BadRequest, lambda: queue(site, board, "bob", "resign"))
    assert "no queued moves" in refused(db, BadRequest, lambda: queue(site, board, "bob", None))
    refused(db, WrongPassword, lambda: queue(site, board, "bob", "g1:C-d1", who=Password("x")))
    # A reply address of another board does not let bob queue here.
    other = ByReply(board + 1)
    refused(db, WrongPassword, lambda: queue(site, board, "bob", "g1:C-d1", who=other))
    refused(db, NotAPlayer, lambda: queue(site, board, "carol", "g1:C-d1"))
    unit.run(site, Resign(board), Who("bob", PW))
    refused(db, GameOver, lambda: queue(site, board, "bob", "g1:C-d1"))


def test_a_queue_has_a_limit(db: Database, site: Site, board: int) -> None:
    for _ in range(20):
        queue(site, board, "bob", "g1:C-e1")
    assert "the most" in refused(db, BadRequest, lambda: queue(site, board, "bob", "g1:C-e1"))
