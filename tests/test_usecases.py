"""The use cases, on a real database (SQLite file and PostgreSQL) with the real Accasta.

Every command goes the one way it goes in the server: ``unit.run(site, Action,
Who(...))``; a refusal raises and leaves every table as it was.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

import pytest
from conftest import Clock, accepted
from sqlmodel import col, select

import pbm.games
from pbm import commands
from pbm.config import Config
from pbm.mail.addresses import token_address
from pbm.mail.message import reply_address
from pbm.refusals import (
    AlreadyProcessed,
    BadRequest,
    BoardChanged,
    GameOver,
    IllegalMoveRefused,
    NotAPlayer,
    NotConfirmed,
    NotYourTurn,
    Refuse,
    Refused,
    UnknownBoard,
    UnknownPlayer,
    UserExists,
    WrongPassword,
)
from pbm.replies import Reply
from pbm.store import inbox
from pbm.store.engine import Database
from pbm.store.tables import Game, Move, OutboxMessage, Player, ProcessedMessage, Subscription
from pbm.usecases import queries, unit, weblinks
from pbm.usecases.accounts import ChangeAddress, ChangePassword, ConfirmAddress, Signup
from pbm.usecases.answers import Quoted
from pbm.usecases.auth import ADMIN, ByReply, Password, Who, verify_password
from pbm.usecases.challenges import CHALLENGE_DAYS, Challenge, ExpireChallenge, lapsed_challenges
from pbm.usecases.moves import Move as MoveAction
from pbm.usecases.moves import Resign
from pbm.usecases.proposals import Accept, Cancel, Reject, Undo
from pbm.usecases.queries.reading import ActiveBoards, History, LegalMoves, Show
from pbm.usecases.site import Site
from pbm.usecases.talk import Chat, Subscribe, Unsubscribe

ACCASTA = pbm.games.get("accasta")
PW = Password("pw")
ALICE = "alice@example.org"


def as_(userid: str, credentials: Any = PW) -> Who:
    return Who(userid, credentials)


@pytest.fixture
def site(db: Database, config: Config, clock: Clock) -> Site:
    """alice signs up as ``Alice``: mail names her so, her userid is ``alice``."""
    s = Site(db, config, clock)
    unit.run(s, Signup("Alice", "pw", "alice@example.org", confirmed=True))
    unit.run(s, Signup("bob", "pw", "bob@example.org", confirmed=True))
    unit.run(s, Signup("carol", "pw", "carol@example.org", confirmed=True))
    return s


@pytest.fixture
def board(site: Site) -> int:
    return accepted(site, Challenge("accasta", "alice", "bob", sender="alice@example.org"))


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


def refused(db: Database, error: type[Exception], call: Callable[[], object]) -> str:
    """Run ``call``, expect ``error``, check nothing changed; the player-facing text."""
    before = snapshot(db)
    with pytest.raises(error) as info:
        call()
    assert type(info.value) is error
    assert snapshot(db) == before
    if isinstance(info.value, Refused):
        assert info.value.message
        return info.value.message
    return str(info.value)


def outbox(db: Database) -> list[OutboxMessage]:
    with db.transaction() as s:
        return list(s.exec(select(OutboxMessage).order_by(col(OutboxMessage.id))).all())


def move(site: Site, board: int, userid: str, text: str, **kw: Any) -> tuple[Reply, ...]:
    """``userid`` (password pw) plays ``text``; ``expect``/``comment`` as in ``Move``.

    A ``message_id`` is the mail's, as the mail side gives it to both the move and the unit.
    """
    expect, comment = kw.pop("expect", None), kw.pop("comment", "")
    action = MoveAction(board, text, expect, comment, message_id=kw.get("message_id"))
    return unit.run(site, action, as_(userid), **kw)


def play(site: Site, board: int, userid: str, **kw: Any) -> tuple[Reply, ...]:
    pos = game_row(site.db, board).position
    return move(site, board, userid, first_move(pos), **kw)


# ---------------------------------------------------------------- accounts


def test_signup_stores_the_player_and_welcomes(db: Database, site: Site) -> None:
    with db.transaction() as s:
        alice = s.get(Player, "alice")
        assert alice is not None
        assert alice.display == "Alice" and alice.email == "alice@example.org"
        assert alice.password_hash != "pw" and verify_password("pw", alice.password_hash)
    welcome = [o for o in outbox(db) if o.to_addr == "alice@example.org"]
    assert len(welcome) == 1 and "Alice" in welcome[0].subject


def test_signup_refusals(db: Database, site: Site) -> None:
    def signup(uid: str, pw: str, email: str) -> Callable[[], object]:
        return lambda: unit.run(site, Signup(uid, pw, email, confirmed=True))

    assert "taken" in refused(db, UserExists, signup("ALICE", "x", "a@b.org"))
    refused(db, BadRequest, signup("1abc", "x", "a@b.org"))
    refused(db, BadRequest, signup("has.dot", "x", "a@b.org"))
    refused(db, BadRequest, signup("dave", "two words", "a@b.org"))
    refused(db, BadRequest, signup("dave", "x", "not-an-address"))


def test_change_password(db: Database, site: Site, board: int) -> None:
    def change(who: Who, new: str) -> Callable[[], object]:
        return lambda: unit.run(site, ChangePassword(new), who)

    refused(db, WrongPassword, change(as_("alice", Password("bad")), "new"))
    refused(db, UnknownPlayer, change(as_("zed"), "new"))
    # A reply address is no password: it lets its player act on its board only.
    refused(db, WrongPassword, change(as_("alice", ByReply(board)), "new"))
    refused(db, BadRequest, change(as_("alice"), "two words"))
    replies = unit.run(site, ChangePassword("new"), as_("ALICE"))
    assert [r.to for r in replies] == ["alice@example.org"]
    refused(db, WrongPassword, change(as_("alice"), "newer"))
    change(as_("alice", Password("new")), "newer")()
    change(as_("alice", ADMIN), "reset")()
    change(as_("alice", Password("reset")), "pw")()
    refused(db, WrongPassword, change(as_("alice", Password("newer")), "x"))


def test_change_address_tells_old_and_new(db: Database, site: Site) -> None:
    def change(who: Who, email: str) -> Callable[[], object]:
        return lambda: unit.run(site, ChangeAddress(email), who)

    refused(db, WrongPassword, change(as_("bob", Password("no")), "b2@x.org"))
    refused(db, BadRequest, change(as_("bob"), "nope"))
    refused(db, BadRequest, change(as_("bob"), "bob@example.org"))
    replies = change(as_("bob"), "b2@x.org")()
    assert isinstance(replies, tuple)
    assert {r.to for r in replies} == {"b2@x.org", "bob@example.org"}
    # Used once a reply from it confirms it (``ConfirmAddress``): mail goes to the old one.
    assert queries.player(site, "BOB").email == "bob@example.org"
    nonce = queries.player(site, "bob").new_email_nonce
    assert nonce is not None
    refused(db, WrongPassword, lambda: unit.run(site, ConfirmAddress("bob", "old-nonce")))
    told = unit.run(site, ConfirmAddress("bob", nonce))
    assert {r.to for r in told} == {"b2@x.org", "bob@example.org"}
    assert queries.player(site, "BOB").email == "b2@x.org"


# ---------------------------------------------------------------- challenge


def test_a_challenge_waits_for_the_other_player(db: Database, site: Site, config: Config) -> None:
    """bob challenges alice: a waiting board, unclocked; alice gets the challenge with
    bob's comment and a reply address, bob a note; alice's accept starts the board."""
    replies = unit.run(
        site, Challenge("accasta", "alice", "bob", sender="BOB@example.org", comment="A game?")
    )
    board = replies[0].board
    assert board is not None
    g = game_row(db, board)
    assert (g.status, g.challenger, g.clock_since) == ("waiting", "bob", None)
    ask, note = replies
    assert (ask.to, ask.reply_as, note.to) == ("alice@example.org", "alice", "bob@example.org")
    assert ask.subject == f"Accasta Board {board} - challenge from bob"
    assert "bob writes:\n  > A game?" in ask.body
    assert "reply to this mail with accept" in ask.body
    with pytest.raises(GameOver, match="waits for Alice to accept"):
        move(site, board, "bob", first_move(g.position))
    with pytest.raises(NotAPlayer, match="Your opponent answers your challenge"):
        unit.run(site, Accept(board), Who("bob", PW))
    before = len(outbox(db))
    replies = unit.run(site, Accept(board), Who("alice", PW))
    g = game_row(db, board)
    assert (g.status, g.clock_since, g.ply) == ("active", site.clock(), 0)
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
    expected = token_address("pbm@example.org", "test-secret", board, "alice")
    assert reply_address(to_alice, config) == expected


def test_a_declined_or_cancelled_challenge_is_off(db: Database, site: Site) -> None:
    declined = unit.run(site, Challenge("accasta", "alice", "bob", sender=ALICE))[0].board or 0
    replies = unit.run(site, Reject(declined), Who("bob", PW))
    assert game_row(db, declined).status == "cancelled"
    assert {r.to for r in replies} == {ALICE, "bob@example.org"}
    assert "bob declined Alice's challenge" in replies[0].body
    taken_back = unit.run(site, Challenge("accasta", "alice", "bob", sender=ALICE))[0].board or 0
    unit.run(site, Cancel(taken_back), Who("alice", PW))
    assert game_row(db, taken_back).status == "cancelled"
    with pytest.raises(GameOver):
        unit.run(site, Accept(taken_back), Who("bob", PW))


def test_an_unanswered_challenge_lapses(db: Database, site: Site, clock: Clock) -> None:
    board = unit.run(site, Challenge("accasta", "alice", "bob", sender=ALICE))[0].board or 0
    with db.read() as s:
        assert lapsed_challenges(s, clock()) == []
    clock.advance(days=CHALLENGE_DAYS, seconds=1)
    with db.read() as s:
        assert lapsed_challenges(s, clock()) == [board]
    told, them = unit.run(site, ExpireChallenge(board))  # both are told
    assert told.to == ALICE and "did not answer it within 7 days" in told.body
    assert them.to == "bob@example.org" and "it waited 7 days for your answer" in them.body
    assert game_row(db, board).status == "cancelled"
    assert game_row(db, board).termination == "lapsed"
    assert unit.run(site, ExpireChallenge(board)) == ()  # twice: nothing


def test_nobody_is_challenged_before_confirming(db: Database, site: Site) -> None:
    unit.run(site, Signup("dave", "pw", "dave@example.org"))  # not confirmed
    with pytest.raises(NotConfirmed, match="dave has not confirmed"):
        unit.run(site, Challenge("accasta", "alice", "dave", sender=ALICE))


def test_challenge_with_variant_options_and_times(site: Site, db: Database) -> None:
    replies = unit.run(
        site,
        Challenge(
            "accasta",
            "bob",
            "carol",
            admin=True,
            variant="pari",
            options={"castle_win": "next_turn", "d4_opening": "banned"},
            nag_days=3,
            forfeit_days=9,
        ),
    )
    assert replies[0].board is not None
    g = game_row(db, replies[0].board)
    assert g.variant == "pari"
    assert g.options == {"castle_win": "next_turn", "d4_opening": "banned"}
    assert (g.nag_days, g.forfeit_days, g.white) == (3, 9, "bob")
    assert ACCASTA.load(g.position).variant == "pari"


def test_challenge_refusals(db: Database, site: Site) -> None:
    def ch(**kw: Any) -> Callable[[], object]:
        args = {"game": "accasta", "white": "alice", "black": "bob", "sender": "alice@example.org"}
        args.update(kw)
        return lambda: unit.run(site, Challenge(**args))

    assert "alice" in refused(db, NotAPlayer, ch(sender="carol@example.org")).lower()
    refused(db, NotAPlayer, ch(sender=None))
    refused(db, UnknownPlayer, ch(black="zed"))
    refused(db, BadRequest, ch(black="ALICE"))
    refused(db, BadRequest, ch(game="shogi"))
    refused(db, BadRequest, ch(variant="giant"))
    refused(db, BadRequest, ch(options={"castle_win": "never"}))
    refused(db, BadRequest, ch(nag_days=0))


# ---------------------------------------------------------------- moves


def test_move_applies_and_mails_everyone(db: Database, site: Site, board: int) -> None:
    start = game_row(db, board).position
    text = first_move(start)
    expected_state, canonical = ACCASTA.load(start).play(text)
    before = len(outbox(db))
    replies = move(
        site, board, "alice", text, comment="Good luck!", sender="alice@example.org",
        message_id="<m1@x>",
    )  # fmt: skip
    g = game_row(db, board)
    assert (g.ply, g.version, g.position) == (1, 2, expected_state.dump())  # 1: accepted
    assert g.last_move_at is not None
    with db.transaction() as s:
        (m,) = s.exec(select(Move)).all()
        assert (m.ply, m.userid, m.notation, m.text) == (1, "alice", canonical, text)
        assert (m.comment, m.position_before) == ("Good luck!", start)
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


def test_a_move_row_names_the_mail_it_came_in(db: Database, site: Site, board: int) -> None:
    """The ``moves`` row keeps the command mail's Message-ID (as before the redesign)."""
    text = first_move(game_row(db, board).position)
    move(site, board, "alice", text, sender="alice@example.org", message_id="<m1@x>")
    with db.read() as s:
        (m,) = s.exec(select(Move)).all()
    assert m.message_id == "<m1@x>"
    assert queries.board(site, board).moves[-1].message_id == "<m1@x>"


def test_move_by_reply_address(db: Database, site: Site, board: int) -> None:
    """``ByReply(board)``: the pipeline checked the token; it is good for that board only."""
    other = unit.run(site, Challenge("accasta", "alice", "carol", admin=True))[0].board
    assert other is not None
    text = first_move(game_row(db, board).position)
    wrong_board = MoveAction(board, text)
    why = refused(
        db, WrongPassword, lambda: unit.run(site, wrong_board, as_("alice", ByReply(other)))
    )
    assert "use your password" in why
    unit.run(site, MoveAction(board, text), as_("alice", ByReply(board)))
    assert game_row(db, board).ply == 1


def test_move_refusals_leave_the_board_unchanged(db: Database, site: Site, board: int) -> None:
    text = first_move(game_row(db, board).position)

    def mv(uid: str, t: str, credentials: Any = PW, b: int = board, **kw: Any) -> Any:
        return lambda: unit.run(site, MoveAction(b, t, **kw), as_(uid, credentials))

    refused(db, WrongPassword, mv("alice", text, Password("nope")))
    # The player is checked before the board: a wrong password on no board is a wrong password.
    refused(db, WrongPassword, mv("alice", text, Password("nope"), b=board + 100))
    refused(db, UnknownBoard, mv("alice", text, b=board + 100))
    refused(db, UnknownPlayer, mv("zed", text))
    refused(db, NotAPlayer, mv("carol", text))
    assert "alice" in refused(db, NotYourTurn, mv("bob", text)).lower()
    msg = refused(db, IllegalMoveRefused, mv("alice", "a1:C-g4"))
    with pytest.raises(pbm.games.IllegalMove) as rules_says:
        ACCASTA.new().play("a1:C-g4")
    assert msg == str(rules_says.value)
    refused(db, IllegalMoveRefused, mv("alice", "hello world"))
    refused(db, BoardChanged, mv("alice", text, expect=2))
    refused(db, BoardChanged, mv("alice", text, expect=3))
    refused(db, BadRequest, mv("alice", "  "))
    unit.run(site, MoveAction(board, text, 1), as_("alice"))
    assert game_row(db, board).ply == 1


def test_stale_move_number_after_a_move(db: Database, site: Site, board: int) -> None:
    play(site, board, "alice")
    text = first_move(game_row(db, board).position)
    why = refused(db, BoardChanged, lambda: move(site, board, "bob", text, expect=1))
    assert "move 2" in why
    move(site, board, "bob", text, expect=2)
    assert game_row(db, board).ply == 2


def test_duplicate_message_id_changes_nothing(db: Database, site: Site, board: int) -> None:
    text = first_move(game_row(db, board).position)
    move(site, board, "alice", text, message_id="<dup@x>")
    refused(db, AlreadyProcessed, lambda: move(site, board, "alice", text, message_id="<dup@x>"))
    # Even a valid command in a redelivered mail is not acted on.
    reply = first_move(game_row(db, board).position)
    refused(db, AlreadyProcessed, lambda: move(site, board, "bob", reply, message_id="<dup@x>"))
    show = Show(board, "x@y.org")
    refused(
        db,
        AlreadyProcessed,
        lambda: unit.run(site, show, sender="x@y.org", message_id="<dup@x>"),
    )
    assert game_row(db, board).ply == 1


def test_failed_command_does_not_remember_its_message_id(
    db: Database, site: Site, board: int
) -> None:
    text = first_move(game_row(db, board).position)
    refused(
        db,
        WrongPassword,
        lambda: unit.run(
            site, MoveAction(board, text), as_("alice", Password("x")), message_id="<f@x>"
        ),
    )
    move(site, board, "alice", text, message_id="<f@x>")
    assert game_row(db, board).ply == 1


def test_game_over_after_resign(db: Database, site: Site, board: int) -> None:
    play(site, board, "alice")
    replies = unit.run(site, Resign(board, comment="Too strong for me."), as_("alice"))
    g = game_row(db, board)
    assert (g.status, g.result, g.termination) == ("finished", "0-1", "resign")
    assert all(r.subject == f"Accasta Board {board} - Black wins" for r in replies)
    assert {r.reply_as for r in replies} == {"alice", "bob"}  # a reply may still ask to show
    assert "Alice resigned." in replies[0].body and "Too strong" in replies[0].body
    text = first_move(g.position)
    bob = as_("bob")
    refused(db, GameOver, lambda: unit.run(site, MoveAction(board, text), bob))
    refused(db, GameOver, lambda: unit.run(site, Resign(board), bob))
    refused(db, GameOver, lambda: unit.run(site, Undo(board), bob))
    refused(db, GameOver, lambda: unit.run(site, Cancel(board), bob))


def test_resign_as_a_move(db: Database, site: Site, board: int) -> None:
    """``move B UID PW resign`` is read as a resignation where the command is read."""
    action, who = help_request(f"accasta move {board} bob pw resign", "bob@example.org")
    assert isinstance(action, Resign) and who is not None
    unit.run(site, action, who)
    g = game_row(db, board)
    assert (g.status, g.result, g.termination, g.ply) == ("finished", "1-0", "resign", 0)
    refused(db, NotAPlayer, lambda: unit.run(site, Resign(board), as_("carol")))


def test_a_game_played_to_the_end_by_the_rules(db: Database, site: Site, board: int) -> None:
    """Seeded random play through the use cases until the rules decide the game.

    The stored position must equal the pure engine's after the same moves,
    and the rules' verdict must close the board.
    """
    rng = random.Random(4)  # with this seed the game ends by castle in about 50 turns
    state = ACCASTA.new()
    for _ in range(300):
        if state.outcome is not None:
            break
        text = rng.choice(state.legal_moves())
        state, _ = state.play(text)
        g = game_row(db, board)
        move(site, board, (g.white, g.black)[g.ply % 2], text, expect=g.ply + 1)
    assert state.outcome is not None, "the seeded game no longer ends; pick another seed"
    g = game_row(db, board)
    assert (g.position, g.ply) == (state.dump(), state.ply)
    assert g.status == "finished"
    assert g.result == ("1-0" if state.outcome.winner == 0 else "0-1")
    assert g.termination == state.outcome.termination
    with db.transaction() as s:
        assert len(s.exec(select(Move).where(Move.board == board)).all()) == g.ply
    loser = (g.white, g.black)[state.outcome.winner ^ 1]
    refused(db, GameOver, lambda: move(site, board, loser, "a1:C-b1"))
    refused(db, GameOver, lambda: unit.run(site, Resign(board), as_(loser)))


# ---------------------------------------------------------------- undo and cancel


def test_undo_accepted_restores_the_position(db: Database, site: Site, board: int) -> None:
    start = game_row(db, board).position
    play(site, board, "alice")
    asked = unit.run(site, Undo(board), as_("alice"))
    to_bob = next(r for r in asked if r.to == "bob@example.org")
    assert to_bob.reply_as == "bob" and "accept" in to_bob.body
    assert game_row(db, board).undo_request_by == "alice"
    refused(db, BadRequest, lambda: unit.run(site, Undo(board), as_("alice")))  # asked already
    # Not hers to answer; carol plays not at all.
    refused(db, NotAPlayer, lambda: unit.run(site, Accept(board), as_("alice")))
    refused(db, NotAPlayer, lambda: unit.run(site, Accept(board), as_("carol")))
    replies = unit.run(site, Accept(board), as_("bob"))
    g = game_row(db, board)
    assert (g.position, g.ply, g.undo_request_by, g.last_move_at) == (start, 0, None, None)
    with db.transaction() as s:
        assert s.exec(select(Move)).all() == []
    assert all(r.subject == f"Accasta Board {board} - Alice to move" for r in replies)
    assert "taken back" in replies[0].body
    play(site, board, "alice")  # and the game goes on from there
    assert game_row(db, board).ply == 1


def test_undo_rejected_keeps_the_move(db: Database, site: Site, board: int) -> None:
    play(site, board, "alice")
    after = game_row(db, board).position
    unit.run(site, Undo(board), as_("alice"))
    replies = unit.run(site, Reject(board), as_("bob"))
    assert {r.to for r in replies} == {"alice@example.org", "bob@example.org"}
    assert all(r.subject == f"Accasta Board {board} - undo refused" for r in replies)
    g = game_row(db, board)
    assert (g.position, g.ply, g.undo_request_by) == (after, 1, None)
    # Nothing asked any more.
    refused(db, BadRequest, lambda: unit.run(site, Accept(board), as_("bob")))


def test_undo_refusals(db: Database, site: Site, board: int) -> None:
    def undo(uid: str, credentials: Any = PW, b: int = board) -> Callable[[], object]:
        return lambda: unit.run(site, Undo(b), as_(uid, credentials))

    refused(db, BadRequest, undo("alice"))  # no move yet
    play(site, board, "alice")
    refused(db, BadRequest, undo("bob"))  # not his move
    refused(db, WrongPassword, undo("alice", Password("x")))
    refused(db, UnknownBoard, undo("alice", b=board + 1))


def test_a_move_answers_a_pending_undo(db: Database, site: Site, board: int) -> None:
    play(site, board, "alice")
    unit.run(site, Undo(board), as_("alice"))
    play(site, board, "bob")
    assert game_row(db, board).undo_request_by is None
    refused(db, BadRequest, lambda: unit.run(site, Accept(board), as_("bob")))


def test_cancel_before_any_move(db: Database, site: Site, board: int) -> None:
    refused(db, NotAPlayer, lambda: unit.run(site, Cancel(board), as_("carol")))
    replies = unit.run(site, Cancel(board), as_("bob"))
    assert game_row(db, board).status == "cancelled"
    assert all(r.subject == f"Accasta Board {board} - Cancelled" for r in replies)
    refused(db, GameOver, lambda: play(site, board, "alice"))


def test_cancel_after_moves_needs_both(db: Database, site: Site, board: int) -> None:
    play(site, board, "alice")
    asked = unit.run(site, Cancel(board), as_("alice"))
    assert next(r for r in asked if r.to == "bob@example.org").reply_as == "bob"
    g = game_row(db, board)
    assert (g.status, g.cancel_request_by) == ("active", "alice")
    refused(db, BadRequest, lambda: unit.run(site, Cancel(board), as_("alice")))
    unit.run(site, Cancel(board), as_("bob"))
    g = game_row(db, board)
    assert (g.status, g.result, g.cancel_request_by) == ("cancelled", None, None)


def test_admin_cancels_at_once(db: Database, site: Site, board: int) -> None:
    play(site, board, "alice")
    unit.run(site, Cancel(board), as_("bob", ADMIN))
    assert game_row(db, board).status == "cancelled"


# ---------------------------------------------------------------- reading


def test_show_history_and_moves_answer_the_sender(db: Database, site: Site, board: int) -> None:
    carol = "carol@example.org"
    play(site, board, "alice", comment="my opening")
    play(site, board, "bob", comment="and mine")
    before = len(outbox(db))
    (shown,) = unit.run(site, Show(board, carol), sender=carol, message_id="<s@x>")
    assert shown.to == carol and shown.in_reply_to == "<s@x>"
    assert shown.subject == f"Accasta Board {board} - Alice to move"
    assert ACCASTA.load(game_row(db, board).position).diagram().splitlines()[3] in shown.body
    (hist,) = unit.run(site, History(board, carol), sender=carol)
    assert "my opening" in hist.body and "and mine" in hist.body
    with db.transaction() as s:
        notations = [m.notation for m in s.exec(select(Move).order_by(col(Move.ply))).all()]
    assert all(n in hist.body for n in notations)
    (legal,) = unit.run(site, LegalMoves(board, carol), sender=carol)
    expected = ACCASTA.load(game_row(db, board).position).legal_moves()
    assert f"{len(expected)} legal moves for Alice (move 3)" in legal.body
    # The last legal move ends the list; below it, the board's page on the web site.
    listed, link = legal.body.split(f"\n\n{weblinks.LEAD}")
    assert listed.split()[-1] == expected[-1] and link.strip().endswith(f"/boards/{board}")
    assert len(outbox(db)) == before + 3
    for action in (Show, History, LegalMoves):
        refused(db, UnknownBoard, lambda a=action: unit.run(site, a(board + 5, "x@y.org")))


def test_reading_without_a_sender_queues_nothing(db: Database, site: Site, board: int) -> None:
    before = len(outbox(db))
    (shown,) = unit.run(site, Show(board, ""))
    assert shown.to == "" and "Board" in shown.body
    assert len(outbox(db)) == before


def test_games_lists_active_boards(db: Database, site: Site, board: int) -> None:
    other = unit.run(site, Challenge("accasta", "carol", "bob", admin=True))[0].board
    third = unit.run(site, Challenge("accasta", "carol", "alice", admin=True))[0].board
    assert third is not None
    unit.run(site, Cancel(third), as_("carol"))
    alice = "alice@example.org"
    (mine,) = unit.run(site, ActiveBoards(alice, "Alice"), sender=alice)
    assert mine.subject == "pbm - active boards of Alice"
    assert f"Board {board:>5}" in mine.body and f"Board {other:>5}" not in mine.body
    assert f"Board {third:>5}" not in mine.body
    (all_games,) = unit.run(site, ActiveBoards(alice, game="accasta"), sender=alice)
    assert f"Board {board:>5}" in all_games.body and f"Board {other:>5}" in all_games.body
    refused(db, UnknownPlayer, lambda: unit.run(site, ActiveBoards("a@b.org", "zed")))
    refused(db, BadRequest, lambda: unit.run(site, ActiveBoards("a@b.org", game="shogi")))


# ---------------------------------------------------------------- chat and following


def test_chat_goes_to_everyone_else(db: Database, site: Site, board: int) -> None:
    unit.run(site, Subscribe(board), as_("carol"))
    replies = unit.run(site, Chat(board, "Hello Bob!"), as_("alice"))
    assert {r.to for r in replies} == {"bob@example.org", "carol@example.org"}
    assert all("Hello Bob!" in r.body for r in replies)
    assert {r.to: r.reply_as for r in replies}["bob@example.org"] == "bob"
    unit.run(site, Signup("dave", "pw", "dave@example.org", confirmed=True))
    refused(db, NotAPlayer, lambda: unit.run(site, Chat(board, "hi"), as_("dave")))
    refused(db, BadRequest, lambda: unit.run(site, Chat(board, "  "), as_("alice")))
    wrong = as_("alice", Password("x"))
    refused(db, WrongPassword, lambda: unit.run(site, Chat(board, "hi"), wrong))


def test_subscribers_get_every_board_mail(db: Database, site: Site, board: int) -> None:
    carol = as_("carol")
    (first,) = unit.run(site, Subscribe(board), carol)
    assert first.to == "carol@example.org" and "follow" in first.body
    refused(db, BadRequest, lambda: unit.run(site, Subscribe(board), carol))
    refused(db, BadRequest, lambda: unit.run(site, Subscribe(board), as_("alice")))
    refused(db, UnknownBoard, lambda: unit.run(site, Subscribe(board + 9), carol))
    replies = play(site, board, "alice")
    to_carol = next(r for r in replies if r.to == "carol@example.org")
    assert (to_carol.reply_as, to_carol.reply_key) == ("carol", "follow")
    assert "bob to move" in to_carol.subject
    unit.run(site, Unsubscribe(board), carol)
    refused(db, BadRequest, lambda: unit.run(site, Unsubscribe(board), carol))
    replies = play(site, board, "bob")
    assert {r.to for r in replies} == {"alice@example.org", "bob@example.org"}


# ---------------------------------------------------------------- board mail and errors


def test_board_mail_layout(db: Database, site: Site, board: int) -> None:
    for mover in ("alice", "bob", "alice", "bob", "alice"):
        replies = play(site, board, mover)
    to_bob = next(r for r in replies if r.to == "bob@example.org")
    body = to_bob.body
    assert all(len(line) <= 78 for r in replies for line in r.body.splitlines())
    assert "Alice (White) vs bob (Black)" in body
    assert "Variant: standard (castle_win=immediate, d4_opening=allowed)" in body
    with db.transaction() as s:
        n = [m.notation for m in s.exec(select(Move).order_by(col(Move.ply))).all()]
    lines = body.splitlines()
    row1 = next(line for line in lines if line.lstrip().startswith("1. "))
    # Accasta numbers every turn: the list, the header and #N count alike.
    assert row1.split() == ["1.", n[0], "2.", n[1]]
    row3 = next(line for line in lines if line.lstrip().startswith("5. "))
    assert row3.split() == ["5.", n[4]]
    assert f"Move 5, Alice (White): {n[4]}" in body
    assert "bob (Black) to move: move 6." in body
    assert f"accasta move {board} bob PASSWORD " in body and "#6" in body
    assert "Started:   2025-03-01 12:00 UTC" in body
    assert "Forfeit:   2025-03-22 12:00 UTC" in body
    to_alice = next(r for r in replies if r.to == "alice@example.org")
    assert "PASSWORD" not in to_alice.body and "Waiting for bob" in to_alice.body
    # Each copy is the same mail but for its diagram, drawn from its reader's side (bob's
    # turned round: row a at the top, its name at its right end), and how he may reply.
    assert len({r.body.split("Moves:")[0] for r in replies}) == 1
    diagrams = {r.to: r.body.split("How to reply:")[0].split("Moves:")[1] for r in replies}
    assert diagrams["alice@example.org"].index("a --") > diagrams["alice@example.org"].index("g --")
    assert diagrams["bob@example.org"].index("-- a") < diagrams["bob@example.org"].index("-- g")
    assert len({r.body.split("Started:")[1] for r in replies}) == 1
    assert len({r.subject for r in replies}) == 1


def test_timing_follows_the_clock(db: Database, site: Site, board: int, clock: Clock) -> None:
    clock.advance(days=2, hours=3)
    replies = play(site, board, "alice")
    assert "Last move: 2025-03-03 15:00 UTC" in replies[0].body
    assert "Reminder:  2025-03-10 15:00 UTC" in replies[0].body


def test_a_refusal_answered_quotes_the_command_and_remembers_the_mail(
    db: Database, site: Site
) -> None:
    """The mail pipeline's answer to a refused command: written with the mail's Message-ID."""
    command = "accasta move 1 alice x a1"

    def request(message_id: str) -> unit.Request:
        return unit.Request(
            Refuse(WrongPassword("Wrong password for Alice."), board=1),
            sender="alice@example.org",
            in_reply_to=message_id,
            message_id=message_id,
            quoted=Quoted(command, 1, "accasta"),
        )

    def carry_out(message_id: str) -> unit.Outcome:
        with db.read() as snap:
            decided = unit.decide_all(site, snap, [request(message_id)])
        with db.transaction() as s:
            (done,) = unit.write(site, s, decided)
        return done

    first = carry_out("<e@x>")
    assert isinstance(first.refused, WrongPassword) and not first.already_done
    (reply,) = first.replies
    assert reply.is_error and reply.subject == "Accasta Board 1 - error"
    assert "> accasta move 1 alice x a1" in reply.body and "Wrong password" in reply.body
    assert "Nothing was changed." in reply.body
    assert reply.in_reply_to == "<e@x>"
    assert outbox(db)[-1].is_error and outbox(db)[-1].body == reply.body
    before = snapshot(db)
    again = carry_out("<e@x>")  # the same mail once more: not answered again
    assert again.already_done and again.replies == ()
    assert snapshot(db) == before


def test_board_view_and_player_queries(site: Site, board: int) -> None:
    view = queries.view(site, board)
    assert (view.white, view.black, view.status, view.state.ply) == ("Alice", "bob", "active", 0)
    assert [p.userid for p in queries.players(site)] == ["alice", "bob", "carol"]
    assert queries.player(site, "ALICE").display == "Alice"
    with pytest.raises(UnknownBoard):
        queries.view(site, board + 1)
    with pytest.raises(UnknownPlayer):
        queries.player(site, "zed")


def help_request(line: str, sender: str) -> tuple[Any, Who | None]:
    """The action a mail's help line makes (as the mail pipeline builds it)."""
    parsed = commands.parse(line)
    assert parsed is not None
    return parsed.build(commands.Context(sender))


def test_help_and_rules(db: Database, site: Site) -> None:
    sender = "alice@example.org"  # a player's: a stranger gets one answer a day
    action, who = help_request("help", sender)
    (general,) = unit.run(site, action, who, sender=sender, message_id="<h@x>")
    assert general.to == sender and general.subject == "pbm - help"
    assert "challenge" in general.body and general.in_reply_to == "<h@x>"
    assert general.body == commands.help_text()
    assert all(len(line) <= 78 for line in general.body.splitlines())
    action, who = help_request("help ACCASTA", sender)
    (rules,) = unit.run(site, action, who, sender=sender)
    assert rules.body == ACCASTA.help_text() and rules.subject == "Accasta - help"
    with pytest.raises(commands.CommandError) as info:  # refused as the line is read
        help_request("help shogi", sender)
    assert "There is no game 'shogi' here" in str(info.value)
    with db.read() as s:
        assert inbox.seen(s, "<h@x>") and not inbox.seen(s, "<other@x>")


def test_list_boards_for_the_cli(site: Site, board: int) -> None:
    other = unit.run(site, Challenge("accasta", "carol", "bob", admin=True))[0].board
    assert other is not None
    play(site, board, "alice")
    unit.run(site, Resign(other), as_("bob"))
    active = queries.boards(site)
    assert [(b.board, b.white, b.black, b.to_move, b.ply) for b in active] == [
        (board, "Alice", "bob", "bob", 1)
    ]
    everything = queries.boards(site, status="all", userid="BOB")
    assert [(b.board, b.status, b.result, b.to_move) for b in everything] == [
        (board, "active", None, "bob"),
        (other, "finished", "1-0", None),
    ]
    assert [b.board for b in queries.boards(site, status="finished", game="accasta")] == [other]
    assert queries.board(site, other).players == ("carol", "bob")
    with pytest.raises(UnknownBoard):
        queries.board(site, other + 1)
    with pytest.raises(UnknownPlayer):
        queries.boards(site, userid="zed")
