"""The use cases, on a real database (SQLite file and PostgreSQL) with the real Accasta."""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

import pytest
from conftest import Clock
from sqlmodel import col, select

import pbm.games
from pbm import store
from pbm.config import Config
from pbm.replies import Reply, reply_token, token_address
from pbm.service import (
    ADMIN,
    AlreadyProcessed,
    BadRequest,
    BoardChanged,
    GameOver,
    IllegalMoveError,
    NotAPlayer,
    NotYourTurn,
    Password,
    ReplyToken,
    Service,
    ServiceError,
    UnknownBoard,
    UnknownPlayer,
    UserExists,
    WrongPassword,
)
from pbm.store import Database, Game, Move, OutboxMessage, Player, ProcessedMessage, Subscription

ACCASTA = pbm.games.get("accasta")
PW = Password("pw")


@pytest.fixture
def svc(db: Database, config: Config, clock: Clock) -> Service:
    s = Service(db, config, clock)
    s.signup("Alice", "pw", "alice@example.org")
    s.signup("bob", "pw", "bob@example.org")
    s.signup("carol", "pw", "carol@example.org")
    return s


@pytest.fixture
def board(svc: Service) -> int:
    replies = svc.challenge("accasta", "alice", "bob", sender="alice@example.org")
    b = replies[0].board
    assert b is not None
    return b


def first_move(position: str) -> str:
    return ACCASTA.load(position).legal_moves()[0]


def game_row(db: Database, board: int) -> Game:
    with db.transaction() as s:
        g = s.get(Game, board)
        assert g is not None
        return g


def snapshot(db: Database) -> tuple[Any, ...]:
    """Everything a command could change."""
    with db.transaction() as s:
        games = [g.model_dump() for g in s.exec(select(Game).order_by(col(Game.board))).all()]
        moves = [m.model_dump() for m in s.exec(select(Move).order_by(col(Move.id))).all()]
        players = [p.model_dump() for p in s.exec(select(Player)).all()]
        subs = [x.model_dump() for x in s.exec(select(Subscription)).all()]
        out = len(s.exec(select(OutboxMessage)).all())
        seen = len(s.exec(select(ProcessedMessage)).all())
    return games, moves, players, subs, out, seen


def refused(db: Database, error: type[ServiceError], call: Callable[[], object]) -> str:
    """Run ``call``, expect ``error``, check nothing changed; the player-facing text."""
    before = snapshot(db)
    with pytest.raises(error) as info:
        call()
    assert type(info.value) is error
    assert snapshot(db) == before
    assert info.value.message
    return info.value.message


def outbox(db: Database) -> list[OutboxMessage]:
    with db.transaction() as s:
        return list(s.exec(select(OutboxMessage).order_by(col(OutboxMessage.id))).all())


def play(svc: Service, board: int, userid: str, **kw: Any) -> list[Reply]:
    pos = game_row(svc.db, board).position
    return svc.move(board, userid, PW, first_move(pos), **kw)


# ---------------------------------------------------------------- accounts


def test_signup_stores_the_player_and_welcomes(db: Database, svc: Service) -> None:
    with db.transaction() as s:
        alice = s.get(Player, "alice")
        assert alice is not None
        assert alice.display == "Alice" and alice.email == "alice@example.org"
        assert alice.password_hash != "pw" and store.verify_password("pw", alice.password_hash)
    welcome = [o for o in outbox(db) if o.to_addr == "alice@example.org"]
    assert len(welcome) == 1 and "Alice" in welcome[0].subject


def test_signup_refusals(db: Database, svc: Service) -> None:
    assert "taken" in refused(db, UserExists, lambda: svc.signup("ALICE", "x", "a@b.org"))
    refused(db, BadRequest, lambda: svc.signup("1abc", "x", "a@b.org"))
    refused(db, BadRequest, lambda: svc.signup("has.dot", "x", "a@b.org"))
    refused(db, BadRequest, lambda: svc.signup("dave", "two words", "a@b.org"))
    refused(db, BadRequest, lambda: svc.signup("dave", "x", "not-an-address"))


def test_change_password(db: Database, svc: Service) -> None:
    refused(db, WrongPassword, lambda: svc.change_password("alice", Password("bad"), "new"))
    refused(db, UnknownPlayer, lambda: svc.change_password("zed", PW, "new"))
    refused(db, WrongPassword, lambda: svc.change_password("alice", ReplyToken("x"), "new"))
    replies = svc.change_password("ALICE", PW, "new")
    assert [r.to for r in replies] == ["alice@example.org"]
    refused(db, WrongPassword, lambda: svc.change_password("alice", PW, "newer"))
    svc.change_password("alice", Password("new"), "newer")
    svc.change_password("alice", ADMIN, "reset")
    svc.change_password("alice", Password("reset"), "pw")


def test_change_address_tells_old_and_new(db: Database, svc: Service) -> None:
    refused(db, WrongPassword, lambda: svc.change_address("bob", Password("no"), "b2@x.org"))
    refused(db, BadRequest, lambda: svc.change_address("bob", PW, "nope"))
    replies = svc.change_address("bob", PW, "b2@x.org")
    assert {r.to for r in replies} == {"b2@x.org", "bob@example.org"}
    assert svc.player("BOB").email == "b2@x.org"


# ---------------------------------------------------------------- challenge


def test_challenge_makes_a_board_and_mails_both(db: Database, svc: Service) -> None:
    before = len(outbox(db))
    replies = svc.challenge("accasta", "alice", "bob", sender="BOB@example.org")
    board = replies[0].board
    assert board is not None
    g = game_row(db, board)
    assert (g.white, g.black, g.status, g.ply, g.version) == ("alice", "bob", "active", 0, 0)
    assert (g.variant, g.nag_days, g.forfeit_days) == ("standard", 7, 21)
    assert g.position == ACCASTA.new().dump()
    assert {r.to: r.reply_as for r in replies} == {
        "alice@example.org": "alice",
        "bob@example.org": "bob",
    }
    assert all(r.subject == f"Accasta Board {board} - Alice to move" for r in replies)
    rows = outbox(db)[before:]
    assert len(rows) == 2
    to_alice = next(o for o in rows if o.to_addr == "alice@example.org")
    assert to_alice.reply_to == token_address("pbm@example.org", "test-secret", board, "alice")


def test_challenge_with_variant_options_and_times(svc: Service, db: Database) -> None:
    replies = svc.challenge(
        "accasta",
        "bob",
        "carol",
        admin=True,
        variant="pari",
        options={"castle_win": "next_turn", "d4_opening": "banned"},
        nag_days=3,
        forfeit_days=9,
    )
    assert replies[0].board is not None
    g = game_row(db, replies[0].board)
    assert g.variant == "pari"
    assert g.options == {"castle_win": "next_turn", "d4_opening": "banned"}
    assert (g.nag_days, g.forfeit_days, g.white) == (3, 9, "bob")
    assert ACCASTA.load(g.position).variant == "pari"


def test_challenge_refusals(db: Database, svc: Service) -> None:
    def ch(**kw: Any) -> Callable[[], object]:
        args = {"game": "accasta", "white": "alice", "black": "bob", "sender": "alice@example.org"}
        args.update(kw)
        return lambda: svc.challenge(**args)

    assert "alice" in refused(db, NotAPlayer, ch(sender="carol@example.org")).lower()
    refused(db, NotAPlayer, ch(sender=None))
    refused(db, UnknownPlayer, ch(black="zed"))
    refused(db, BadRequest, ch(black="ALICE"))
    refused(db, BadRequest, ch(game="chess"))
    refused(db, BadRequest, ch(variant="giant"))
    refused(db, BadRequest, ch(options={"castle_win": "never"}))
    refused(db, BadRequest, ch(nag_days=0))


# ---------------------------------------------------------------- moves


def test_move_applies_and_mails_everyone(db: Database, svc: Service, board: int) -> None:
    start = game_row(db, board).position
    text = first_move(start)
    expected_state, canonical = ACCASTA.load(start).play(text)
    before = len(outbox(db))
    replies = svc.move(
        board, "alice", PW, text, comment="Good luck!", sender="alice@example.org",
        message_id="<m1@x>",
    )  # fmt: skip
    g = game_row(db, board)
    assert (g.ply, g.version, g.position) == (1, 1, expected_state.dump())
    assert g.last_move_at is not None
    with db.transaction() as s:
        (m,) = s.exec(select(Move)).all()
        assert (m.ply, m.userid, m.notation, m.text) == (1, "alice", canonical, text)
        assert (m.comment, m.message_id, m.position_before) == ("Good luck!", "<m1@x>", start)
        assert s.get(ProcessedMessage, "<m1@x>") is not None
    assert len(outbox(db)) == before + 2
    by_to = {r.to: r for r in replies}
    to_bob = by_to["bob@example.org"]
    assert to_bob.subject == f"Accasta Board {board} - bob to move"
    assert to_bob.reply_as == "bob"
    assert "Good luck!" in to_bob.body and canonical in to_bob.body
    assert f"accasta move {board} bob PASSWORD " in to_bob.body
    assert f"#{2}" in to_bob.body
    assert by_to["alice@example.org"].in_reply_to == "<m1@x>"  # threaded for the sender
    assert to_bob.in_reply_to is None


def test_move_by_reply_token(db: Database, svc: Service, board: int) -> None:
    good = ReplyToken(reply_token("test-secret", board, "alice"))
    wrong_board = ReplyToken(reply_token("test-secret", board + 1, "alice"))
    other_player = ReplyToken(reply_token("test-secret", board, "bob"))
    text = first_move(game_row(db, board).position)
    refused(db, WrongPassword, lambda: svc.move(board, "alice", wrong_board, text))
    refused(db, WrongPassword, lambda: svc.move(board, "alice", other_player, text))
    refused(db, WrongPassword, lambda: svc.move(board, "alice", ReplyToken("0" * 10), text))
    svc.move(board, "alice", good, text)
    assert game_row(db, board).ply == 1


def test_move_refusals_leave_the_board_unchanged(db: Database, svc: Service, board: int) -> None:
    text = first_move(game_row(db, board).position)
    refused(db, WrongPassword, lambda: svc.move(board, "alice", Password("nope"), text))
    refused(db, UnknownBoard, lambda: svc.move(board + 100, "alice", PW, text))
    refused(db, UnknownPlayer, lambda: svc.move(board, "zed", PW, text))
    refused(db, NotAPlayer, lambda: svc.move(board, "carol", PW, text))
    assert "alice" in refused(db, NotYourTurn, lambda: svc.move(board, "bob", PW, text)).lower()
    msg = refused(db, IllegalMoveError, lambda: svc.move(board, "alice", PW, "a1:C-g4"))
    with pytest.raises(pbm.games.IllegalMove) as rules_says:
        ACCASTA.new().play("a1:C-g4")
    assert msg == str(rules_says.value)
    refused(db, IllegalMoveError, lambda: svc.move(board, "alice", PW, "hello world"))
    refused(db, BoardChanged, lambda: svc.move(board, "alice", PW, f"{text}#2"))
    refused(db, BoardChanged, lambda: svc.move(board, "alice", PW, text, expected_move=3))
    refused(db, BadRequest, lambda: svc.move(board, "alice", PW, "  "))
    svc.move(board, "alice", PW, f"{text}#1")
    assert game_row(db, board).ply == 1


def test_stale_move_number_after_a_move(db: Database, svc: Service, board: int) -> None:
    play(svc, board, "alice")
    text = first_move(game_row(db, board).position)
    assert "move 2" in refused(db, BoardChanged, lambda: svc.move(board, "bob", PW, f"{text}#1"))
    svc.move(board, "bob", PW, text, expected_move=2)
    assert game_row(db, board).ply == 2


def test_duplicate_message_id_changes_nothing(db: Database, svc: Service, board: int) -> None:
    text = first_move(game_row(db, board).position)
    svc.move(board, "alice", PW, text, message_id="<dup@x>")
    refused(db, AlreadyProcessed, lambda: svc.move(board, "alice", PW, text, message_id="<dup@x>"))
    # Even a valid command in a redelivered mail is not acted on.
    reply = first_move(game_row(db, board).position)
    refused(db, AlreadyProcessed, lambda: svc.move(board, "bob", PW, reply, message_id="<dup@x>"))
    refused(db, AlreadyProcessed, lambda: svc.show(board, sender="x@y.org", message_id="<dup@x>"))


def test_failed_command_does_not_remember_its_message_id(
    db: Database, svc: Service, board: int
) -> None:
    text = first_move(game_row(db, board).position)
    refused(
        db, WrongPassword, lambda: svc.move(board, "alice", Password("x"), text, message_id="<f@x>")
    )
    svc.move(board, "alice", PW, text, message_id="<f@x>")


def test_game_over_after_resign(db: Database, svc: Service, board: int) -> None:
    play(svc, board, "alice")
    replies = svc.resign(board, "alice", PW, comment="Too strong for me.")
    g = game_row(db, board)
    assert (g.status, g.result, g.termination) == ("finished", "0-1", "resign")
    assert all(r.subject == f"Accasta Board {board} - black wins" for r in replies)
    assert all(r.reply_as is None for r in replies)
    assert "Alice resigned." in replies[0].body and "Too strong" in replies[0].body
    text = first_move(g.position)
    refused(db, GameOver, lambda: svc.move(board, "bob", PW, text))
    refused(db, GameOver, lambda: svc.resign(board, "bob", PW))
    refused(db, GameOver, lambda: svc.undo(board, "bob", PW))
    refused(db, GameOver, lambda: svc.cancel(board, "bob", PW))


def test_resign_as_a_move(db: Database, svc: Service, board: int) -> None:
    svc.move(board, "bob", PW, "resign")
    g = game_row(db, board)
    assert (g.status, g.result, g.termination, g.ply) == ("finished", "1-0", "resign", 0)
    refused(db, NotAPlayer, lambda: svc.resign(board, "carol", PW))


def test_a_game_played_to_the_end_by_the_rules(db: Database, svc: Service, board: int) -> None:
    """Seeded random play through the service until the rules decide the game.

    The service's stored position must equal the pure engine's after the
    same moves, and the rules' verdict must close the board.
    """
    rng = random.Random(4)  # with this seed the game ends by castle in about 50 turns
    state = ACCASTA.new()
    for _ in range(300):
        if state.outcome is not None:
            break
        text = rng.choice(state.legal_moves())
        state, _ = state.play(text)
        g = game_row(db, board)
        svc.move(board, g.player_at(g.ply % 2), PW, text, expected_move=g.ply + 1)
    assert state.outcome is not None, "the seeded game no longer ends; pick another seed"
    g = game_row(db, board)
    assert (g.position, g.ply) == (state.dump(), state.ply)
    assert g.status == "finished"
    assert g.result == ("1-0" if state.outcome.winner == 0 else "0-1")
    assert g.termination == state.outcome.termination
    with db.transaction() as s:
        assert len(s.exec(select(Move).where(Move.board == board)).all()) == g.ply
    loser = g.player_at(state.outcome.winner ^ 1)
    refused(db, GameOver, lambda: svc.move(board, loser, PW, "a1:C-b1"))
    refused(db, GameOver, lambda: svc.resign(board, loser, PW))


# ---------------------------------------------------------------- undo and cancel


def test_undo_accepted_restores_the_position(db: Database, svc: Service, board: int) -> None:
    start = game_row(db, board).position
    play(svc, board, "alice")
    asked = svc.undo(board, "alice", PW)
    to_bob = next(r for r in asked if r.to == "bob@example.org")
    assert to_bob.reply_as == "bob" and "accept" in to_bob.body
    assert game_row(db, board).undo_request_by == "alice"
    refused(db, BadRequest, lambda: svc.undo(board, "alice", PW))  # asked already
    refused(db, NotAPlayer, lambda: svc.accept_undo(board, "alice", PW))  # not hers to answer
    refused(db, NotAPlayer, lambda: svc.accept_undo(board, "carol", PW))
    replies = svc.accept_undo(board, "bob", PW)
    g = game_row(db, board)
    assert (g.position, g.ply, g.undo_request_by, g.last_move_at) == (start, 0, None, None)
    with db.transaction() as s:
        assert s.exec(select(Move)).all() == []
    assert all(r.subject == f"Accasta Board {board} - Alice to move" for r in replies)
    assert "taken back" in replies[0].body
    play(svc, board, "alice")  # and the game goes on from there
    assert game_row(db, board).ply == 1


def test_undo_rejected_keeps_the_move(db: Database, svc: Service, board: int) -> None:
    play(svc, board, "alice")
    after = game_row(db, board).position
    svc.undo(board, "alice", PW)
    replies = svc.reject_undo(board, "bob", PW)
    assert {r.to for r in replies} == {"alice@example.org", "bob@example.org"}
    g = game_row(db, board)
    assert (g.position, g.ply, g.undo_request_by) == (after, 1, None)
    refused(db, BadRequest, lambda: svc.accept_undo(board, "bob", PW))  # nothing asked


def test_undo_refusals(db: Database, svc: Service, board: int) -> None:
    refused(db, BadRequest, lambda: svc.undo(board, "alice", PW))  # no move yet
    play(svc, board, "alice")
    refused(db, BadRequest, lambda: svc.undo(board, "bob", PW))  # not his move
    refused(db, WrongPassword, lambda: svc.undo(board, "alice", Password("x")))
    refused(db, UnknownBoard, lambda: svc.undo(board + 1, "alice", PW))


def test_a_move_answers_a_pending_undo(db: Database, svc: Service, board: int) -> None:
    play(svc, board, "alice")
    svc.undo(board, "alice", PW)
    play(svc, board, "bob")
    assert game_row(db, board).undo_request_by is None
    refused(db, BadRequest, lambda: svc.accept_undo(board, "bob", PW))


def test_cancel_before_any_move(db: Database, svc: Service, board: int) -> None:
    refused(db, NotAPlayer, lambda: svc.cancel(board, "carol", PW))
    replies = svc.cancel(board, "bob", PW)
    assert game_row(db, board).status == "cancelled"
    assert all(r.subject == f"Accasta Board {board} - cancelled" for r in replies)
    refused(db, GameOver, lambda: play(svc, board, "alice"))


def test_cancel_after_moves_needs_both(db: Database, svc: Service, board: int) -> None:
    play(svc, board, "alice")
    asked = svc.cancel(board, "alice", PW)
    assert next(r for r in asked if r.to == "bob@example.org").reply_as == "bob"
    g = game_row(db, board)
    assert (g.status, g.cancel_request_by) == ("active", "alice")
    refused(db, BadRequest, lambda: svc.cancel(board, "alice", PW))
    svc.cancel(board, "bob", PW)
    g = game_row(db, board)
    assert (g.status, g.result, g.cancel_request_by) == ("cancelled", None, None)


def test_admin_cancels_at_once(db: Database, svc: Service, board: int) -> None:
    play(svc, board, "alice")
    svc.cancel(board, "bob", ADMIN)
    assert game_row(db, board).status == "cancelled"


# ---------------------------------------------------------------- reading


def test_show_history_and_moves_answer_the_sender(db: Database, svc: Service, board: int) -> None:
    play(svc, board, "alice", comment="my opening")
    play(svc, board, "bob", comment="and mine")
    before = len(outbox(db))
    (shown,) = svc.show(board, sender="carol@example.org", message_id="<s@x>")
    assert shown.to == "carol@example.org" and shown.in_reply_to == "<s@x>"
    assert shown.subject == f"Accasta Board {board} - Alice to move"
    assert ACCASTA.load(game_row(db, board).position).diagram().splitlines()[3] in shown.body
    (hist,) = svc.history(board, sender="carol@example.org")
    assert "my opening" in hist.body and "and mine" in hist.body
    with db.transaction() as s:
        notations = [m.notation for m in s.exec(select(Move).order_by(col(Move.ply))).all()]
    assert all(n in hist.body for n in notations)
    (legal,) = svc.legal_moves(board, sender="carol@example.org")
    expected = ACCASTA.load(game_row(db, board).position).legal_moves()
    assert f"{len(expected)} legal moves for Alice (move 3)" in legal.body
    assert legal.body.split()[-1] == expected[-1]
    assert len(outbox(db)) == before + 3
    refused(db, UnknownBoard, lambda: svc.show(board + 5, sender="x@y.org"))
    refused(db, UnknownBoard, lambda: svc.history(board + 5, sender="x@y.org"))
    refused(db, UnknownBoard, lambda: svc.legal_moves(board + 5, sender="x@y.org"))


def test_reading_without_a_sender_queues_nothing(db: Database, svc: Service, board: int) -> None:
    before = len(outbox(db))
    (shown,) = svc.show(board)
    assert shown.to == "" and "Board" in shown.body
    assert len(outbox(db)) == before


def test_games_lists_active_boards(db: Database, svc: Service, board: int) -> None:
    other = svc.challenge("accasta", "carol", "bob", admin=True)[0].board
    third = svc.challenge("accasta", "carol", "alice", admin=True)[0].board
    assert third is not None
    svc.cancel(third, "carol", PW)
    (mine,) = svc.games("Alice", sender="alice@example.org")
    assert f"Board {board:>5}" in mine.body and f"Board {other:>5}" not in mine.body
    assert f"Board {third:>5}" not in mine.body
    (all_games,) = svc.games(game="accasta", sender="alice@example.org")
    assert f"Board {board:>5}" in all_games.body and f"Board {other:>5}" in all_games.body
    refused(db, UnknownPlayer, lambda: svc.games("zed", sender="a@b.org"))
    refused(db, BadRequest, lambda: svc.games(game="chess", sender="a@b.org"))


# ---------------------------------------------------------------- chat and following


def test_chat_goes_to_everyone_else(db: Database, svc: Service, board: int) -> None:
    svc.subscribe(board, "carol", PW)
    replies = svc.chat(board, "alice", PW, "Hello Bob!")
    assert {r.to for r in replies} == {"bob@example.org", "carol@example.org"}
    assert all("Hello Bob!" in r.body for r in replies)
    assert {r.to: r.reply_as for r in replies}["bob@example.org"] == "bob"
    svc.signup("dave", "pw", "dave@example.org")
    refused(db, NotAPlayer, lambda: svc.chat(board, "dave", PW, "hi"))
    refused(db, BadRequest, lambda: svc.chat(board, "alice", PW, "  "))
    refused(db, WrongPassword, lambda: svc.chat(board, "alice", Password("x"), "hi"))


def test_subscribers_get_every_board_mail(db: Database, svc: Service, board: int) -> None:
    (first,) = svc.subscribe(board, "carol", PW)
    assert first.to == "carol@example.org" and "follow" in first.body
    refused(db, BadRequest, lambda: svc.subscribe(board, "carol", PW))
    refused(db, BadRequest, lambda: svc.subscribe(board, "alice", PW))
    refused(db, UnknownBoard, lambda: svc.subscribe(board + 9, "carol", PW))
    replies = play(svc, board, "alice")
    to_carol = next(r for r in replies if r.to == "carol@example.org")
    assert to_carol.reply_as is None and "bob to move" in to_carol.subject
    svc.unsubscribe(board, "carol", PW)
    refused(db, BadRequest, lambda: svc.unsubscribe(board, "carol", PW))
    replies = play(svc, board, "bob")
    assert {r.to for r in replies} == {"alice@example.org", "bob@example.org"}


# ---------------------------------------------------------------- board mail and errors


def test_board_mail_layout(db: Database, svc: Service, board: int) -> None:
    for mover in ("alice", "bob", "alice", "bob", "alice"):
        replies = play(svc, board, mover)
    to_bob = next(r for r in replies if r.to == "bob@example.org")
    body = to_bob.body
    assert all(len(line) <= 78 for r in replies for line in r.body.splitlines())
    assert "Alice (White) vs bob (Black)" in body
    assert "Variant: standard (castle_win=immediate, d4_opening=allowed)" in body
    with db.transaction() as s:
        n = [m.notation for m in s.exec(select(Move).order_by(col(Move.ply))).all()]
    lines = body.splitlines()
    row1 = next(line for line in lines if line.lstrip().startswith("1. "))
    assert row1.split() == ["1.", n[0], n[1]]
    row3 = next(line for line in lines if line.lstrip().startswith("3. "))
    assert row3.split() == ["3.", n[4]]
    assert f"Move 5, Alice (White): {n[4]}" in body
    assert "bob (Black) to move: move 6." in body
    assert f"accasta move {board} bob PASSWORD " in body and "#6" in body
    assert "Started:   2025-03-01 12:00 UTC" in body
    assert "Forfeit:   2025-03-22 12:00 UTC" in body
    to_alice = next(r for r in replies if r.to == "alice@example.org")
    assert "PASSWORD" not in to_alice.body and "Waiting for bob" in to_alice.body
    # Each copy is the same mail but for how its reader may reply.
    assert len({r.body.split("How to reply:")[0] for r in replies}) == 1
    assert len({r.body.split("Started:")[1] for r in replies}) == 1
    assert len({r.subject for r in replies}) == 1


def test_timing_follows_the_clock(db: Database, svc: Service, board: int, clock: Clock) -> None:
    clock.advance(days=2, hours=3)
    replies = play(svc, board, "alice")
    assert "Last move: 2025-03-03 15:00 UTC" in replies[0].body
    assert "Reminder:  2025-03-10 15:00 UTC" in replies[0].body


def test_report_error_quotes_and_remembers(db: Database, svc: Service) -> None:
    err = WrongPassword("Wrong password for Alice.")
    (reply,) = svc.report_error(
        "alice@example.org", err, command="accasta move 1 alice x a1", board=1, message_id="<e@x>"
    )
    assert reply.is_error and reply.subject == "Accasta Board 1 - error"
    assert "> accasta move 1 alice x a1" in reply.body and "Wrong password" in reply.body
    assert outbox(db)[-1].is_error
    assert svc.report_error("alice@example.org", err, message_id="<e@x>") == []
    assert svc.report_error("alice@example.org", AlreadyProcessed("seen")) == []


def test_board_view_and_player_queries(svc: Service, board: int) -> None:
    view = svc.board_view(board)
    assert (view.white, view.black, view.status, view.state.ply) == ("Alice", "bob", "active", 0)
    assert [p.userid for p in svc.players()] == ["alice", "bob", "carol"]
    with pytest.raises(UnknownBoard):
        svc.board_view(board + 1)
    with pytest.raises(UnknownPlayer):
        svc.player("zed")


def test_help_and_rules(db: Database, svc: Service) -> None:
    (general,) = svc.help(sender="x@y.org", message_id="<h@x>")
    assert "challenge" in general.body and general.in_reply_to == "<h@x>"
    assert all(len(line) <= 78 for line in general.body.splitlines())
    (rules,) = svc.help("ACCASTA", sender="x@y.org")
    assert rules.body == ACCASTA.help_text() and rules.subject == "Accasta - help"
    refused(db, BadRequest, lambda: svc.help("chess", sender="x@y.org"))
    assert svc.message_seen("<h@x>") and not svc.message_seen("<other@x>")


def test_list_boards_for_the_cli(svc: Service, board: int) -> None:
    other = svc.challenge("accasta", "carol", "bob", admin=True)[0].board
    assert other is not None
    play(svc, board, "alice")
    svc.resign(other, "bob", PW)
    active = svc.list_boards()
    assert [(b.board, b.white, b.black, b.to_move, b.ply) for b in active] == [
        (board, "Alice", "bob", "bob", 1)
    ]
    everything = svc.list_boards(status="all", userid="BOB")
    assert [(b.board, b.status, b.result, b.to_move) for b in everything] == [
        (board, "active", None, "bob"),
        (other, "finished", "1-0", None),
    ]
    assert [b.board for b in svc.list_boards(status="finished", game="accasta")] == [other]
    assert svc.board_players(other) == ("carol", "bob")
    with pytest.raises(UnknownBoard):
        svc.board_players(other + 1)
