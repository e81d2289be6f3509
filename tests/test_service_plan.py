"""Moves planned on a snapshot (``Service.plan_move``), then written under the lock.

A plan must change nothing about what a move does: the same rows and the same
mails as a move made the usual way, and when the board changed between the
plan and its writing, the usual way decides.
"""

from __future__ import annotations

import contextlib
import random
import threading
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from conftest import Clock
from sqlmodel import col, select

import pbm.games
from pbm import store
from pbm.config import Config, DatabaseConfig
from pbm.replies import reply_token
from pbm.service import ADMIN, NotYourTurn, Password, ReplyToken, Service
from pbm.store import Database, Game, Move, OutboxMessage, ProcessedMessage, QueuedMove

ACCASTA = pbm.games.get("accasta")
PW = Password("pw")


@pytest.fixture
def board(svc: Service) -> int:
    b = svc.challenge("accasta", "alice", "bob", sender="alice@example.org")[0].board
    assert b is not None
    svc.subscribe(b, "carol", PW)
    return b


def dump(db: Database) -> dict[str, list[dict[str, Any]]]:
    """The rows a move writes, without the keys and Message-IDs that differ between sites."""
    with db.read() as s:
        return {
            "games": [g.model_dump() for g in s.exec(select(Game))],
            "moves": [
                m.model_dump(exclude={"id"}) for m in s.exec(select(Move).order_by(col(Move.id)))
            ],
            "outbox": [
                o.model_dump(exclude={"id", "message_id"})
                for o in s.exec(select(OutboxMessage).order_by(col(OutboxMessage.id)))
            ],
            "seen": [p.model_dump() for p in s.exec(select(ProcessedMessage))],
        }


def test_a_planned_game_writes_what_a_plain_game_writes(
    db: Database, svc: Service, board: int, config: Config, clock: Clock, tmp_path: Path
) -> None:
    """A whole seeded game, on two sites: moves planned first on one, plain on the other."""
    other = store.init_db(f"sqlite:///{tmp_path / 'plain.sqlite3'}")
    plain = Service(other, config, clock)
    for uid in ("alice", "bob", "carol"):
        plain.signup(uid, "pw", f"{uid}@example.org")
    assert plain.challenge("accasta", "alice", "bob", sender="alice@example.org")[0].board == board
    plain.subscribe(board, "carol", PW)

    rng = random.Random(4)  # this game ends by castle in about 50 turns
    state = ACCASTA.new()
    planned = 0
    for n in range(1, 300):
        if state.outcome is not None:
            break
        text = rng.choice(state.legal_moves())
        state, _ = state.play(text)
        uid = ("alice", "bob")[(n - 1) % 2]
        token = ReplyToken(reply_token(config.mail.secret, board, uid))
        move = f"{text}#{n}" if n % 3 == 0 else text  # some with the move-number guard
        args: dict[str, Any] = {
            "comment": f"move {n}",
            "sender": f"{uid}@example.org",
            "message_id": f"<m{n}@example.org>",
        }
        clock.advance(minutes=7)
        if n in (10, 20):  # site-wide clock pauses: the board mails' dates and notes
            assert svc.pause_clocks() == plain.pause_clocks()
        elif n in (14, 24):
            assert svc.resume_clocks() == plain.resume_clocks()
        plan = svc.plan_move(board, uid, token, move, comment=f"move {n}")
        planned += plan is not None
        assert svc.move(board, uid, token, move, plan=plan, **args) == plain.move(
            board, uid, token, move, **args
        )
        assert dump(db) == dump(other), f"after move {n}"
    other.close()
    assert state.outcome is not None
    assert planned == n - 2  # every move but the last, which ended the game


def test_what_is_not_planned(db: Database, svc: Service, board: int, config: Config) -> None:
    """Refusals, resignations and queue answers are left to ``move`` under the lock."""
    first = ACCASTA.new().legal_moves()[0]
    assert svc.plan_move(board, "bob", PW, first) is None  # not his turn
    assert svc.plan_move(board, "alice", Password("nope"), first) is None
    assert svc.plan_move(board, "carol", PW, first) is None  # not a player
    assert svc.plan_move(board, "alice", PW, "a1:C-a9") is None  # illegal
    assert svc.plan_move(board, "alice", PW, f"{first}#2") is None  # wrong move number
    assert svc.plan_move(board, "alice", PW, "resign") is None
    # Reply tokens: only alice's own, for this board, lets her move here.
    alice, bob = (ReplyToken(reply_token(config.mail.secret, board, u)) for u in ("alice", "bob"))
    assert svc.plan_move(board, "alice", alice, first) is not None
    assert svc.plan_move(board, "alice", bob, first) is None
    assert svc.plan_move(board, "alice", ReplyToken("0" * len(alice.token)), first) is None
    other = ReplyToken(reply_token(config.mail.secret, board + 1, "alice"))
    assert svc.plan_move(board, "alice", other, first) is None
    assert svc.plan_move(board, "alice", ADMIN, first) is None  # the CLI moves the usual way
    assert svc.plan_move(board + 1, "alice", PW, first) is None  # no such board
    svc.move(board, "alice", PW, first)
    reply = ACCASTA.load(game(db, board).position).legal_moves()[0]
    assert svc.plan_move(board, "bob", PW, reply) is not None
    after = ACCASTA.load(game(db, board).position).play(reply)[0]
    svc.queue(board, "alice", PW, after.legal_moves()[0])
    assert svc.plan_move(board, "bob", PW, reply) is None  # alice's queued move answers it


def game(db: Database, board: int) -> Game:
    with db.read() as s:
        g = s.get(Game, board)
        assert g is not None
        return g


def test_a_plan_outdated_by_another_move_is_not_written(
    db: Database, svc: Service, board: int
) -> None:
    first = ACCASTA.new().legal_moves()[0]
    plan = svc.plan_move(board, "alice", PW, first)
    assert plan is not None
    svc.move(board, "alice", PW, first)  # the same move, made meanwhile by another mail
    before = dump(db)
    with pytest.raises(NotYourTurn):
        svc.move(board, "alice", PW, first, plan=plan)
    assert dump(db) == before


def test_a_plan_outdated_by_an_undo_request_is_decided_afresh(
    db: Database, svc: Service, board: int
) -> None:
    opening = ACCASTA.new().legal_moves()[0]
    svc.move(board, "alice", PW, opening)
    answer = ACCASTA.load(game(db, board).position).legal_moves()[0]
    plan = svc.plan_move(board, "bob", PW, f"{answer}#2")
    assert plan is not None
    svc.undo(board, "alice", PW)  # changes the board row: the plan's version is gone
    svc.move(board, "bob", PW, f"{answer}#2", plan=plan)
    g = game(db, board)
    # Made afresh: a move answers (declines) the pending undo request, as it always does.
    assert g.ply == 2 and g.undo_request_by is None


def test_a_move_queued_after_the_plan_is_still_answered(
    db: Database, svc: Service, board: int
) -> None:
    """Queuing bumps the board's version, so the plan is found outdated and not used."""
    opening = ACCASTA.new().legal_moves()[0]
    svc.move(board, "alice", PW, opening)
    position = ACCASTA.load(game(db, board).position)
    answer = position.legal_moves()[0]
    plan = svc.plan_move(board, "bob", PW, answer)
    assert plan is not None
    queued = position.play(answer)[0].legal_moves()[0]
    svc.queue(board, "alice", PW, queued)
    assert game(db, board).version == plan.version + 1
    replies = svc.move(board, "bob", PW, answer, plan=plan)
    g = game(db, board)
    assert g.ply == 3  # bob's move, then alice's queued one at once
    assert any("queued" in r.subject for r in replies)
    with db.read() as s:
        assert s.exec(select(QueuedMove)).all() == []


def test_a_queue_cleared_again_outdates_a_plan(db: Database, svc: Service, board: int) -> None:
    """Queued and cleared between plan and write: no queue is left, but the plan is not used."""
    opening = ACCASTA.new().legal_moves()[0]
    svc.move(board, "alice", PW, opening)
    position = ACCASTA.load(game(db, board).position)
    answer = position.legal_moves()[0]
    plan = svc.plan_move(board, "bob", PW, answer)
    assert plan is not None
    svc.queue(board, "alice", PW, position.play(answer)[0].legal_moves()[0])
    svc.queue(board, "alice", PW, None)
    assert game(db, board).version == plan.version + 2
    replies = svc.move(board, "bob", PW, answer, plan=plan)
    assert game(db, board).ply == 2
    # Made afresh: new board mails, not the plan's.
    assert len(replies) == len(plan.replies)
    assert not any(r is p for r, p in zip(replies, plan.replies, strict=True))


def test_a_plan_for_another_command_is_ignored(db: Database, svc: Service, board: int) -> None:
    legal = ACCASTA.new().legal_moves()
    plan = svc.plan_move(board, "alice", PW, legal[0])
    assert plan is not None
    svc.move(board, "alice", PW, legal[1], plan=plan)
    with db.read() as s:
        (played,) = s.exec(select(Move)).all()
    assert played.text == legal[1]


def test_planning_takes_no_write_lock(clock: Clock, tmp_path: Path) -> None:
    """While another connection holds SQLite's write lock, a move is still planned."""
    url = f"sqlite:///{tmp_path / 'locked.sqlite3'}"
    db = store.init_db(url)
    svc = Service(db, Config(database=DatabaseConfig(url=url)), clock)
    for uid in ("alice", "bob"):
        svc.signup(uid, "pw", f"{uid}@example.org")
    board = svc.challenge("accasta", "alice", "bob", admin=True)[0].board
    assert board is not None
    first = ACCASTA.new().legal_moves()[0]
    holder = db.engine.connect()
    holder.exec_driver_sql("SELECT 1")  # opens BEGIN IMMEDIATE: the write lock is the holder's
    try:
        result: list[object] = []
        t = threading.Thread(target=lambda: result.append(svc.plan_move(board, "alice", PW, first)))
        t.start()
        t.join(5)
        assert not t.is_alive(), "planning waited for the write lock"
        assert result and result[0] is not None
    finally:
        holder.rollback()
        holder.close()
        db.close()


def test_plans_read_ahead_are_the_plans_read_board_by_board(
    db: Database, svc: Service, board: int, clock: Clock
) -> None:
    """``read_ahead`` reads a batch's boards at once; the plans must not differ at all."""
    second = svc.challenge("accasta", "bob", "carol", sender="bob@example.org")[0].board
    third = svc.challenge("accasta", "carol", "alice", sender="carol@example.org")[0].board
    assert second is not None and third is not None
    opening = ACCASTA.new().legal_moves()[0]
    svc.move(board, "alice", PW, opening)  # board: carol follows it (the fixture)
    svc.move(third, "carol", PW, opening)
    after = ACCASTA.load(game(db, third).position)
    svc.queue(third, "carol", PW, after.play(after.legal_moves()[0])[0].legal_moves()[0])
    clock.advance(minutes=30)
    svc.vacation("bob", PW, 3)  # bob's clocks stand still: the notes and dates say so
    clock.advance(minutes=30)
    answer = ACCASTA.load(game(db, board).position).legal_moves()[0]
    third_answer = ACCASTA.load(game(db, third).position).legal_moves()[0]
    wanted = [
        (board, "bob", answer),  # a subscriber, a player on vacation
        (second, "bob", opening),  # no moves yet
        (third, "alice", third_answer),  # carol's queued move answers it: no plan
        (board + 100, "bob", answer),  # no such board
        (board, "bob", answer),  # twice: the first plan changed nothing the second sees
    ]
    statements: list[str] = []

    def plans(ahead: bool) -> list[Any]:
        with db.read() as s:
            if ahead:
                svc.read_ahead(s, [b for b, _, _ in wanted])
            snapshot = svc.db
            try:  # the plans read from this very snapshot, as the worker's do
                svc.db = _OneSnapshot(s)  # type: ignore[assignment]
                out = []
                for i, (b, uid, move) in enumerate(wanted):
                    if i == 0:  # the statements one board's plan runs
                        sa.event.listen(db.engine, "before_cursor_execute", count)
                    out.append(svc.plan_move(b, uid, PW, move))
                    if i == 0:
                        sa.event.remove(db.engine, "before_cursor_execute", count)
                return out
            finally:
                svc.db = snapshot

    def count(conn: Any, cursor: Any, statement: str, *args: Any) -> None:
        statements.append(statement)

    plain = plans(False)
    reads_plain, statements[:] = len(statements), []
    read_ahead = plans(True)
    assert read_ahead == plain
    assert [p is not None for p in plain] == [True, True, False, False, True]
    assert plain[-1] == plain[0]
    # Read ahead, a board's plan reads nothing more of it (its game included): only
    # the password, and the site's clock pauses (once a snapshot).
    assert reads_plain >= 5
    others = [st for st in statements if not ("password_hash" in st or "clock_pauses" in st)]
    assert others == [] and len(statements) <= 2
    assert plain[0] is not None and "vacation" in plain[0].replies[0].body
    assert {r.to for r in plain[0].replies} == {
        "alice@example.org",
        "bob@example.org",
        "carol@example.org",
    }


class _OneSnapshot:
    """Transactions whose reads are all one session (the worker's ``BatchDatabase.snapshot``)."""

    def __init__(self, session: Any) -> None:
        self.session = session

    def read(self) -> Any:
        return contextlib.nullcontext(self.session)

    def transaction(self) -> Any:
        raise AssertionError("planning writes nothing")
