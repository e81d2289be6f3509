"""The unit of work (``pbm.usecases.unit``): decided on a snapshot, written later.

The inbox worker decides a whole batch on one snapshot (``decide_all`` with
``site.db.read()``), holding no lock, then writes it in one transaction
(``write``). What a command does must not depend on that: a decision whose
board or account was written since (by an earlier command of the batch, or by
anyone: the compare-and-set fails) is decided again on fresh values, nothing
is written twice, a mail's Message-ID acts once, and a refusal changes nothing
unless it is to be answered. Passwords are checked once per (hash, password):
``PasswordCheck``.
"""

from __future__ import annotations

import random
import threading
from collections.abc import Sequence
from dataclasses import fields
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from conftest import Clock
from sqlmodel import col, select

import pbm.games
import pbm.usecases.auth
from pbm.config import Config, DatabaseConfig
from pbm.model import Board
from pbm.refusals import (
    AlreadyProcessed,
    BadRequest,
    BoardChanged,
    IllegalMoveRefused,
    NotYourTurn,
    Refused,
    UnknownBoard,
    UserExists,
    WrongPassword,
)
from pbm.store import inbox
from pbm.store.boards import load_boards
from pbm.store.engine import Database, init_db
from pbm.store.tables import (
    ClockPause,
    Game,
    Move,
    MoveTree,
    OutboxMessage,
    Player,
    ProcessedMessage,
    Subscription,
    Vacation,
)
from pbm.usecases import queries, unit, weblinks
from pbm.usecases.accounts import ChangePassword, Signup
from pbm.usecases.answers import Quoted
from pbm.usecases.auth import ByReply, Password, PasswordCheck, Who, hash_password
from pbm.usecases.challenges import Challenge
from pbm.usecases.moves import Move as MoveAction
from pbm.usecases.moves import Resign
from pbm.usecases.proposals import Accept, Undo
from pbm.usecases.queries.reading import Show
from pbm.usecases.queue import CLEAR, Queue
from pbm.usecases.site import Site
from pbm.usecases.talk import Chat, Subscribe
from pbm.usecases.timers import PauseClocks, ResumeClocks
from pbm.usecases.vacations import Vacation as GoAway
from pbm.usecases.vacations import vacation_time
from pbm.usecases.world import World

ACCASTA = pbm.games.get("accasta")
PW = Password("pw")
ALICE, BOB, CAROL = "alice@example.org", "bob@example.org", "carol@example.org"
OPENING = ACCASTA.new().legal_moves()[0]


@pytest.fixture
def board(site: Site) -> int:
    """alice (White) against bob; carol follows the board."""
    b = unit.run(site, Challenge("accasta", "alice", "bob", admin=True))[0].board or 0
    unit.run(site, Subscribe(b), Who("carol", PW))
    return b


def request(
    action: Any,
    userid: str | None = None,
    credentials: Any = PW,
    *,
    sender: str | None = None,
    message_id: str | None = None,
    quoted: Quoted | None = None,
) -> unit.Request:
    who = Who(userid, credentials) if userid is not None else None
    return unit.Request(action, who, sender, message_id, message_id, quoted)


def on_snapshot(site: Site, requests: Sequence[unit.Request]) -> list[unit.Decided]:
    """Decide ``requests`` on one snapshot, as the inbox worker does before it writes."""
    with site.db.read() as snapshot:
        return unit.decide_all(site, snapshot, requests)


def write(site: Site, decided: Sequence[unit.Decided]) -> list[unit.Outcome]:
    """Write decided requests in one transaction."""
    with site.db.transaction() as session:
        return unit.write(site, session, decided)


def batch(site: Site, requests: Sequence[unit.Request]) -> list[unit.Outcome]:
    return write(site, on_snapshot(site, requests))


def game(db: Database, board: int) -> Game:
    with db.read() as s:
        g = s.get(Game, board)
        assert g is not None
        return g


def position(db: Database, board: int) -> Any:
    return ACCASTA.load(game(db, board).position)


def dump(db: Database) -> dict[str, list[dict[str, Any]]]:
    """Every row a command could write, without the keys and Message-IDs that differ by site."""
    with db.read() as s:
        return {
            "games": [g.model_dump() for g in s.exec(select(Game).order_by(col(Game.board)))],
            "moves": [
                m.model_dump(exclude={"id"}) for m in s.exec(select(Move).order_by(col(Move.id)))
            ],
            "queue": [
                q.model_dump(exclude={"id"})
                for q in s.exec(select(MoveTree).order_by(col(MoveTree.id)))
            ],
            "followers": [
                f.model_dump(exclude={"id"})
                for f in s.exec(select(Subscription).order_by(col(Subscription.id)))
            ],
            "players": [  # each site salts its hashes apart
                p.model_dump(exclude={"password_hash"})
                for p in s.exec(select(Player).order_by(col(Player.userid)))
            ],
            "vacations": [
                v.model_dump(exclude={"id"})
                for v in s.exec(select(Vacation).order_by(col(Vacation.id)))
            ],
            "pauses": [
                p.model_dump(exclude={"id"})
                for p in s.exec(select(ClockPause).order_by(col(ClockPause.id)))
            ],
            "outbox": [
                o.model_dump(exclude={"id", "message_id"})
                for o in s.exec(select(OutboxMessage).order_by(col(OutboxMessage.id)))
            ],
            "seen": [
                p.model_dump()
                for p in s.exec(select(ProcessedMessage).order_by(ProcessedMessage.message_id))
            ],
        }


def moves_played(db: Database, board: int) -> list[tuple[int, str, bool]]:
    with db.read() as s:
        rows = s.exec(select(Move).where(Move.board == board).order_by(col(Move.ply))).all()
        return [(m.ply, m.userid, m.queued) for m in rows]


# ---------------------------------------------------------------- decided again when stale


def test_a_move_decided_on_a_snapshot_then_made_meanwhile_is_not_made_twice(
    db: Database, site: Site, board: int
) -> None:
    decided = on_snapshot(site, [request(MoveAction(board, OPENING), "alice")])
    assert not isinstance(decided[0].decision, Refused)  # legal on the snapshot
    # The same move, from another mail, is written first.
    unit.run(site, MoveAction(board, OPENING), Who("alice", PW), message_id="<other@x>")
    before = dump(db)
    (out,) = write(site, decided)
    assert isinstance(out.refused, NotYourTurn)
    assert "bob's turn" in out.refused.message
    assert (out.replies, out.already_done) == ((), False)
    assert dump(db) == before
    assert moves_played(db, board) == [(1, "alice", False)]


def test_a_move_decided_on_a_snapshot_still_legal_is_played_on_fresh_values(
    db: Database, site: Site, board: int
) -> None:
    """alice asks to take her move back meanwhile: bob's move, decided again, answers it."""
    unit.run(site, MoveAction(board, OPENING), Who("alice", PW))
    answer = position(db, board).legal_moves()[0]
    decided = on_snapshot(site, [request(MoveAction(board, answer, 2), "bob")])
    assert not isinstance(decided[0].decision, Refused)
    unit.run(site, Undo(board), Who("alice", PW))
    assert game(db, board).undo_request_by == "alice"
    (out,) = write(site, decided)
    assert out.refused is None
    g = game(db, board)
    assert (g.ply, g.undo_request_by) == (2, None)
    assert moves_played(db, board) == [(1, "alice", False), (2, "bob", False)]
    assert sorted(r.to for r in out.replies) == [ALICE, BOB, CAROL]
    assert all(r.subject == f"Accasta Board {board} - alice to move" for r in out.replies)
    assert "asks to take back" not in out.replies[0].body


def test_a_queued_answer_written_after_the_snapshot_is_played(
    db: Database, site: Site, board: int
) -> None:
    """What the decision on the snapshot did not know: alice queued her answer meanwhile."""
    unit.run(site, MoveAction(board, OPENING), Who("alice", PW))
    now = position(db, board)
    answer = now.legal_moves()[0]
    decided = on_snapshot(site, [request(MoveAction(board, answer), "bob")])
    assert not isinstance(decided[0].decision, Refused)
    queued = now.play(answer)[0].legal_moves()[0]
    unit.run(site, Queue(board, (queued,)), Who("alice", PW))
    (out,) = write(site, decided)
    assert out.refused is None
    assert moves_played(db, board) == [(1, "alice", False), (2, "bob", False), (3, "alice", True)]
    to_alice = [r for r in out.replies if r.to == ALICE]
    assert [r.body.startswith("Your conditional tree answered") for r in to_alice] == [True]
    with db.read() as s:
        assert s.exec(select(MoveTree)).all() == []


def test_a_queue_made_and_cleared_meanwhile_changes_nothing_of_the_move(
    db: Database, site: Site, board: int
) -> None:
    unit.run(site, MoveAction(board, OPENING), Who("alice", PW))
    now = position(db, board)
    answer = now.legal_moves()[0]
    decided = on_snapshot(site, [request(MoveAction(board, answer), "bob")])
    snapshot_decision = decided[0].decision
    assert isinstance(snapshot_decision, unit.Decision)
    unit.run(site, Queue(board, (now.play(answer)[0].legal_moves()[0],)), Who("alice", PW))
    unit.run(site, Queue(board, what=CLEAR), Who("alice", PW))
    version = game(db, board).version
    (out,) = write(site, decided)
    assert out.refused is None
    g = game(db, board)
    assert (g.ply, g.version) == (2, version + 1)
    assert moves_played(db, board) == [(1, "alice", False), (2, "bob", False)]
    # The same mails, decided again (written, they end with the board's web page).
    assert [(r.to, r.subject, r.body.split(f"\n\n{weblinks.LEAD}")[0]) for r in out.replies] == [
        (r.to, r.subject, r.body.rstrip("\n")) for r in snapshot_decision.replies
    ]


def test_two_moves_for_one_board_in_one_batch(db: Database, site: Site, board: int) -> None:
    """On the snapshot bob's move is not his turn yet; written after alice's, it is played."""
    answer = ACCASTA.new().play(OPENING)[0].legal_moves()[0]
    requests = [
        request(MoveAction(board, OPENING), "alice", sender=ALICE, message_id="<1@x>"),
        request(MoveAction(board, answer, 2), "bob", sender=BOB, message_id="<2@x>"),
    ]
    decided = on_snapshot(site, requests)
    assert isinstance(decided[1].decision, BoardChanged)  # move 2 meant, the board at move 1
    first, second = write(site, decided)
    assert first.refused is None and second.refused is None
    assert moves_played(db, board) == [(1, "alice", False), (2, "bob", False)]
    g = game(db, board)
    assert (g.ply, g.version, g.position) == (
        2,
        3,
        ACCASTA.new().play(OPENING)[0].play(answer)[0].dump(),
    )
    assert all(r.subject.endswith("bob to move") for r in first.replies)
    assert all(r.subject.endswith("alice to move") for r in second.replies)
    assert len(first.replies) == len(second.replies) == 3
    assert {r.to: r.in_reply_to for r in second.replies}[BOB] == "<2@x>"
    with db.read() as s:
        assert inbox.seen(s, "<1@x>") and inbox.seen(s, "<2@x>")


def test_the_second_of_two_moves_by_one_player_in_a_batch_is_refused(
    db: Database, site: Site, board: int
) -> None:
    legal = ACCASTA.new().legal_moves()
    decided = on_snapshot(
        site,
        [
            request(MoveAction(board, legal[0]), "alice", message_id="<1@x>"),
            request(MoveAction(board, legal[1]), "alice", message_id="<2@x>"),
        ],
    )
    assert not any(isinstance(d.decision, Refused) for d in decided)  # both legal on it
    first, second = write(site, decided)
    assert first.refused is None and isinstance(second.refused, NotYourTurn)
    assert second.replies == ()
    assert moves_played(db, board) == [(1, "alice", False)]
    with db.read() as s:
        assert inbox.seen(s, "<1@x>") and not inbox.seen(s, "<2@x>")


def test_a_refusal_on_the_snapshot_is_decided_again_after_an_earlier_command(
    db: Database, site: Site
) -> None:
    """alice's challenge, then bob's ``accept 1`` in the same batch: the board starts."""

    decided = on_snapshot(
        site,
        [
            request(Challenge("accasta", "alice", "bob", sender=ALICE), sender=ALICE),
            request(Accept(1), "bob", sender=BOB, quoted=Quoted("accasta accept", 1, "accasta")),
        ],
    )
    assert isinstance(decided[1].decision, UnknownBoard)  # no board 1 on the snapshot
    challenged, accepting = write(site, decided)
    assert challenged.refused is None and accepting.refused is None
    assert not any(r.is_error for r in accepting.replies)
    g = game(db, 1)
    assert (g.white, g.black, g.status) == ("alice", "bob", "active")
    assert {r.to for r in accepting.replies} == {ALICE, BOB}


def test_a_request_after_a_move_of_the_same_batch_sees_the_move(
    db: Database, site: Site, board: int
) -> None:
    """``undo`` is refused on the snapshot (no move yet) but not after the batch's move."""
    decided = on_snapshot(
        site,
        [
            request(MoveAction(board, OPENING), "alice"),
            request(Undo(board), "alice"),
        ],
    )
    assert isinstance(decided[1].decision, BadRequest)
    moved, undo = write(site, decided)
    assert moved.refused is None and undo.refused is None
    assert game(db, board).undo_request_by == "alice"
    assert {r.to for r in undo.replies} == {ALICE, BOB}


def test_a_password_changed_earlier_in_the_batch_is_checked_again(
    db: Database, site: Site, board: int
) -> None:
    decided = on_snapshot(
        site,
        [
            request(ChangePassword("new"), "alice"),
            request(Chat(board, "hello"), "alice"),  # still with the old password
            request(Chat(board, "hello again"), "alice", Password("new")),
        ],
    )
    assert not isinstance(decided[1].decision, Refused)
    assert isinstance(decided[2].decision, WrongPassword)
    changed, old, new = write(site, decided)
    assert changed.refused is None
    assert isinstance(old.refused, WrongPassword) and old.replies == ()
    assert new.refused is None and {r.to for r in new.replies} == {BOB, CAROL}


def test_a_signup_decided_on_a_snapshot_loses_to_one_written_meanwhile(
    db: Database, site: Site
) -> None:
    decided = on_snapshot(
        site, [request(Signup("dave", "first", "dave@example.org", confirmed=True))]
    )
    assert not isinstance(decided[0].decision, Refused)
    unit.run(site, Signup("Dave", "second", "dave2@example.org", confirmed=True))
    before = dump(db)
    (out,) = write(site, decided)
    assert isinstance(out.refused, UserExists)
    assert dump(db) == before
    assert queries.player(site, "dave").email == "dave2@example.org"


def test_a_vacation_decided_on_a_snapshot_then_another_written_keeps_the_allowance(
    db: Database, site: Site, clock: Clock
) -> None:
    """Two vacations of one player, the first decided before the second was written.

    Decided again, the first replaces the vacation now running (as a vacation
    asked while away does); it must never add a second vacation beside it,
    which would count both against the yearly allowance of 30 days.
    """
    decided = on_snapshot(site, [request(GoAway(20), "alice")])
    assert not isinstance(decided[0].decision, Refused)
    unit.run(site, GoAway(25), Who("alice", PW))
    (out,) = write(site, decided)
    with db.read() as s:
        rows = s.exec(select(Vacation).order_by(col(Vacation.id))).all()
    now = clock.now + timedelta(hours=1)
    running = [v for v in rows if v.starts_at <= now < v.ends_at]
    assert len(running) <= 1, [(v.starts_at, v.ends_at) for v in rows]
    assert sum((vacation_time(v) for v in rows), timedelta(0)) <= timedelta(days=30)  # type: ignore[arg-type]
    if out.refused is None:  # told what is true: 20 days from now, 10 of 30 left
        (note,) = out.replies
        assert "until 2025-03-21 12:00 UTC" in note.body
        assert "Vacation days left in 2025: 10 of 30" in " ".join(note.body.split())


def test_a_clock_pause_decided_on_a_snapshot_then_another_written_is_refused(
    db: Database, site: Site
) -> None:
    decided = on_snapshot(site, [request(PauseClocks())])
    assert not isinstance(decided[0].decision, Refused)
    unit.run(site, PauseClocks())
    before = dump(db)
    (out,) = write(site, decided)
    assert isinstance(out.refused, BadRequest) and "already stopped" in out.refused.message
    assert dump(db) == before


# ---------------------------------------------------------------- Message-IDs and refusals


def test_a_remembered_message_id_makes_the_request_already_done(
    db: Database, site: Site, board: int
) -> None:
    unit.run(site, Show(board, CAROL), sender=CAROL, message_id="<d@x>")
    before = dump(db)
    outcomes = batch(
        site,
        [
            request(MoveAction(board, OPENING), "alice", sender=ALICE, message_id="<d@x>"),
            request(
                MoveAction(board, "a1:C-g4"),
                "alice",
                sender=ALICE,
                message_id="<d@x>",
                quoted=Quoted("accasta move", board, "accasta"),
            ),
        ],
    )
    for out in outcomes:
        assert out.already_done and out.refused is None
        assert out.replies == ()
    assert dump(db) == before


def test_one_message_id_twice_in_a_batch_acts_once(db: Database, site: Site, board: int) -> None:
    same = request(MoveAction(board, OPENING), "alice", message_id="<twice@x>")
    first, second = batch(site, [same, same])
    assert first.refused is None and not first.already_done and len(first.replies) == 3
    assert second.already_done and second.replies == () and second.refused is None
    assert moves_played(db, board) == [(1, "alice", False)]


def test_a_refusal_with_an_answer_writes_it_and_remembers_the_mail(
    db: Database, site: Site, board: int
) -> None:
    command = f"accasta move {board} alice pw a1:C-g4"
    before = dump(db)
    (out,) = batch(
        site,
        [
            request(
                MoveAction(board, "a1:C-g4"),
                "alice",
                sender=ALICE,
                message_id="<e@x>",
                quoted=Quoted(command, board, "accasta"),
            )
        ],
    )
    assert isinstance(out.refused, IllegalMoveRefused)
    (reply,) = out.replies
    assert reply.to == ALICE and reply.is_error and reply.in_reply_to == "<e@x>"
    assert reply.subject == f"Accasta Board {board} - error"
    assert f"> {command}" in reply.body and out.refused.message.split()[0] in reply.body
    after = dump(db)
    assert after["games"] == before["games"] and after["moves"] == before["moves"]
    assert after["outbox"][:-1] == before["outbox"] and after["outbox"][-1]["is_error"]
    assert [p["message_id"] for p in after["seen"]] == ["<e@x>"]
    # The same mail again: already done, not answered twice.
    (again,) = batch(site, [request(MoveAction(board, OPENING), "alice", message_id="<e@x>")])
    assert again.already_done and dump(db) == after


def test_a_refusal_without_an_answer_changes_nothing(db: Database, site: Site, board: int) -> None:
    before = dump(db)
    (out,) = batch(
        site,
        [request(MoveAction(board, OPENING), "alice", Password("x"), message_id="<f@x>")],
    )
    assert isinstance(out.refused, WrongPassword)
    assert (out.replies, out.already_done) == ((), False)
    assert dump(db) == before
    (ok,) = batch(site, [request(MoveAction(board, OPENING), "alice", message_id="<f@x>")])
    assert ok.refused is None and not ok.already_done


def test_run_raises_what_write_returns(db: Database, site: Site, board: int) -> None:
    """``unit.run``: the one-shot of the same unit, a refusal raised, nothing changed."""
    before = dump(db)
    with pytest.raises(NotYourTurn):
        unit.run(site, MoveAction(board, OPENING), Who("bob", PW), message_id="<r@x>")
    assert dump(db) == before
    replies = unit.run(site, MoveAction(board, OPENING), Who("alice", PW), message_id="<r@x>")
    assert len(replies) == 3
    with pytest.raises(AlreadyProcessed):
        unit.run(site, Resign(board), Who("bob", PW), message_id="<r@x>")


# ---------------------------------------------------------------- the same, however it is written


def test_a_game_decided_on_snapshots_writes_what_a_game_run_one_by_one_writes(
    db: Database, site: Site, board: int, config: Config, clock: Clock, tmp_path: Path
) -> None:
    """A whole seeded game on two sites: each command decided on a snapshot and written
    later on one, ``unit.run`` on the other. Every row and every mail the same."""
    other = init_db(f"sqlite:///{tmp_path / 'plain.sqlite3'}")
    plain = Site(other, config, clock)
    for uid in ("alice", "bob", "carol"):
        unit.run(plain, Signup(uid, "pw", f"{uid}@example.org", confirmed=True))
    assert unit.run(plain, Challenge("accasta", "alice", "bob", admin=True))[0].board == board
    unit.run(plain, Subscribe(board), Who("carol", PW))
    assert dump(db) == dump(other)

    def both(
        action: Any, who: Who | None = None, sender: str | None = None, mid: str | None = None
    ) -> None:
        (out,) = batch(site, [unit.Request(action, who, sender, mid, mid)])
        if out.refused is not None:
            raise out.refused
        assert out.replies == unit.run(plain, action, who, sender=sender, message_id=mid)

    rng = random.Random(4)  # this game ends by castle in about 50 turns
    state = ACCASTA.new()
    n = 0
    try:
        for n in range(1, 300):
            if state.outcome is not None:
                break
            text = rng.choice(state.legal_moves())
            state, _ = state.play(text)
            uid = ("alice", "bob")[(n - 1) % 2]
            clock.advance(minutes=7)
            if n in (10, 20):  # site-wide clock pauses: the board mails' dates and notes
                both(PauseClocks())
            elif n in (14, 24):
                both(ResumeClocks())
            guard = n if n % 3 == 0 else None  # some with the move-number guard
            credentials = ByReply(board) if n % 2 else PW
            both(
                MoveAction(board, text, guard, comment=f"move {n}"),
                Who(uid, credentials),
                f"{uid}@example.org",
                f"<m{n}@example.org>",
            )
            assert dump(db) == dump(other), f"after move {n}"
    finally:
        other.close()
    assert state.outcome is not None and n > 40
    assert game(db, board).status == "finished"


def test_deciding_takes_no_write_lock(clock: Clock, tmp_path: Path) -> None:
    """While another connection holds SQLite's write lock, a batch is still decided."""
    url = f"sqlite:///{tmp_path / 'locked.sqlite3'}"
    db = init_db(url)
    site = Site(db, Config(database=DatabaseConfig(url=url)), clock)
    for uid in ("alice", "bob"):
        unit.run(site, Signup(uid, "pw", f"{uid}@example.org", confirmed=True))
    board = unit.run(site, Challenge("accasta", "alice", "bob", admin=True))[0].board
    assert board is not None
    holder = db.engine.connect()
    holder.exec_driver_sql("SELECT 1")  # opens BEGIN IMMEDIATE: the write lock is the holder's
    try:
        result: list[unit.Decided] = []
        requests = [request(MoveAction(board, OPENING), "alice")]
        t = threading.Thread(target=lambda: result.extend(on_snapshot(site, requests)))
        t.start()
        t.join(5)
        assert not t.is_alive(), "deciding waited for the write lock"
        assert result and isinstance(result[0].decision, unit.Decision)
    finally:
        holder.rollback()
        holder.close()
        db.close()


# ---------------------------------------------------------------- loading boards


@pytest.fixture
def three_boards(site: Site, clock: Clock) -> list[int]:
    """Three boards unlike each other: moves, a follower, a queue, ratings, vacations.

    The first starts before carol's vacation ends, the third (hers too) after.
    """
    unit.run(site, Signup("dave", "pw", "dave@example.org", confirmed=True))
    rated = unit.run(site, Challenge("accasta", "alice", "bob", admin=True))[0].board
    assert rated is not None
    unit.run(site, Resign(rated), Who("bob", PW))  # alice and bob have ratings now
    first = unit.run(site, Challenge("accasta", "carol", "dave", admin=True))[0].board
    unit.run(site, GoAway(2), Who("carol", PW))
    clock.advance(days=3)
    second = unit.run(site, Challenge("accasta", "alice", "bob", admin=True))[0].board
    third = unit.run(site, Challenge("accasta", "bob", "carol", admin=True))[0].board
    assert first is not None and second is not None and third is not None
    unit.run(site, MoveAction(second, OPENING, comment="hi"), Who("alice", PW))
    reply = ACCASTA.new().play(OPENING)[0]
    queued = reply.play(reply.legal_moves()[0])[0].legal_moves()[0]
    unit.run(site, Queue(second, (queued,)), Who("alice", PW))
    unit.run(site, Subscribe(second), Who("carol", PW))
    unit.run(site, GoAway(5), Who("bob", PW))
    unit.run(site, MoveAction(third, OPENING), Who("bob", PW))
    return [first, second, third]


def test_load_boards_gives_the_same_board_for_one_or_many(
    db: Database, three_boards: list[int]
) -> None:
    with db.read() as s:
        alone = {n: load_boards(s, [n])[n] for n in three_boards}
        together = load_boards(s, [*three_boards, 999])  # a board that does not exist: left out
    assert sorted(together) == three_boards
    second = alone[three_boards[1]]
    assert len(second.moves) == 1 and len(second.queue) == 1 and len(second.followers) == 1
    assert set(second.standings) == {"alice", "bob"}
    assert [v.userid for v in second.vacations] == ["bob"]
    differing = {
        n: [
            f.name
            for f in fields(Board)
            if getattr(together[n], f.name) != getattr(alone[n], f.name)
        ]
        for n in three_boards
    }
    assert differing == {n: [] for n in three_boards}
    assert {n: together[n] for n in three_boards} == alone


def test_preload_loads_every_board_and_account_at_once(
    db: Database, site: Site, config: Config, clock: Clock, three_boards: list[int]
) -> None:
    with db.read() as s:
        world = World(s, config, clock.now)
        world.preload(boards=[*three_boards, 999], accounts=["Alice", "zed"])
        with world.reading() as reads:
            boards = [world.board(n) for n in three_boards]
            assert world.find_account("ALICE") is not None
            assert world.find_account("zed") is None
        assert reads == {("board", n) for n in three_boards} | {
            ("account", "alice"),
            ("account", "zed"),
        }
        # Loaded, they are what a world loading one at a time finds.
        fresh = World(s, config, clock.now)
        assert [(b.number, b.moves, b.queue, b.followers) for b in boards] == [
            (b.number, b.moves, b.queue, b.followers)
            for b in (fresh.board(n) for n in three_boards)
        ]
        with pytest.raises(UnknownBoard, match="no board 999"):
            world.board(999)
    # The decisions of a batch decided on a preloaded world are those of one-by-one worlds.
    requests = [
        request(MoveAction(three_boards[0], OPENING), "carol"),
        request(MoveAction(three_boards[1], "a1:C-b1"), "bob"),
        request(Show(three_boards[2], CAROL)),
        request(MoveAction(999, OPENING), "alice"),
    ]
    with db.read() as s:
        together = unit.decide_all(site, s, requests)
        alone = [unit.decide(site, World(s, config, clock.now), r) for r in requests]
    for a, b in zip(together, alone, strict=True):
        if isinstance(a.decision, Refused):
            assert type(a.decision) is type(b.decision)
            assert a.decision.message == b.decision.message  # type: ignore[union-attr]
        else:
            assert isinstance(b.decision, unit.Decision)
            assert a.decision.replies == b.decision.replies
        assert a.reads == b.reads


# ---------------------------------------------------------------- the password check


@pytest.fixture
def scrypt_runs(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, str]]:
    """Every run of scrypt's check (``verify_password``, what ``PasswordCheck`` remembers)."""
    runs: list[tuple[str, str]] = []
    real = pbm.usecases.auth.verify_password

    def counted(password: str, stored: str) -> bool:
        runs.append((password, stored))
        return real(password, stored)

    monkeypatch.setattr(pbm.usecases.auth, "verify_password", counted)
    return runs


def test_a_verification_is_remembered(scrypt_runs: list[tuple[str, str]]) -> None:
    check = PasswordCheck()
    stored = hash_password("Horse-Battery")
    assert check.verify("Horse-Battery", stored) is True
    assert check.verify("Horse-Battery", stored) is True
    assert len(scrypt_runs) == 1
    # A wrong password is remembered as wrong, apart from the right one.
    assert check.verify("horse-battery", stored) is False
    assert check.verify("horse-battery", stored) is False
    assert check.verify("Horse-Battery", stored) is True
    assert len(scrypt_runs) == 2


def test_a_new_hash_finds_nothing_remembered(scrypt_runs: list[tuple[str, str]]) -> None:
    check = PasswordCheck()
    old, new = hash_password("pw"), hash_password("pw")  # a new salt: another hash
    assert check.verify("pw", old) and check.verify("pw", new)
    assert len(scrypt_runs) == 2
    assert check.verify("pw", "not a hash") is False


def test_forget_drops_a_hash(scrypt_runs: list[tuple[str, str]]) -> None:
    check = PasswordCheck()
    one, two = hash_password("pw"), hash_password("other")
    check.verify("pw", one)
    check.verify("nope", one)
    check.verify("other", two)
    check.forget(one)
    assert len(scrypt_runs) == 3
    check.verify("other", two)  # still known
    assert len(scrypt_runs) == 3
    assert check.verify("pw", one) and not check.verify("nope", one)  # checked anew
    assert len(scrypt_runs) == 5


def test_the_check_never_holds_the_password(scrypt_runs: list[tuple[str, str]]) -> None:
    secret = "Correct-Horse-Battery-Staple"
    stored = hash_password(secret)
    check, other = PasswordCheck(), PasswordCheck()
    check.verify(secret, stored)
    check.verify(secret + "x", stored)
    other.verify(secret, stored)
    keys = list(check._known)
    assert len(keys) == 2
    for key in keys:
        for part in key:
            text = part if isinstance(part, str) else part.hex()
            raw = part.encode() if isinstance(part, str) else part
            assert secret not in text and secret.encode() not in raw
            assert secret.lower() not in text.lower()
    # Keyed by a key of this process's memory alone: another check marks the same pair apart.
    assert set(check._known).isdisjoint(other._known)


def test_a_check_of_limited_size_forgets_the_oldest(scrypt_runs: list[tuple[str, str]]) -> None:
    check = PasswordCheck(size=2)
    hashes = [hash_password(f"pw{i}") for i in range(3)]
    for i, stored in enumerate(hashes):
        assert check.verify(f"pw{i}", stored)
    assert len(scrypt_runs) == 3
    check.verify("pw2", hashes[2])
    check.verify("pw1", hashes[1])
    assert len(scrypt_runs) == 3
    check.verify("pw0", hashes[0])  # the oldest was dropped
    assert len(scrypt_runs) == 4


def test_the_site_checks_a_password_once(
    site: Site, board: int, scrypt_runs: list[tuple[str, str]]
) -> None:
    """Two commands of alice with her password: scrypt runs once; her new password anew."""
    unit.run(site, Chat(board, "one"), Who("alice", PW))
    unit.run(site, Chat(board, "two"), Who("alice", PW))
    assert [p for p, _ in scrypt_runs] == ["pw"]
    unit.run(site, ChangePassword("new"), Who("alice", PW))
    assert len(scrypt_runs) == 1
    with pytest.raises(WrongPassword):
        unit.run(site, Chat(board, "three"), Who("alice", PW))
    unit.run(site, Chat(board, "four"), Who("alice", Password("new")))
    assert [p for p, _ in scrypt_runs] == ["pw", "pw", "new"]


def test_a_locked_out_accounts_password_is_not_checked_at_all(
    site: Site, board: int, scrypt_runs: list[tuple[str, str]]
) -> None:
    """Once wrong passwords have locked alice out, her password commands are refused
    without argon2 work, the right password too: a guesser's mails cost nothing."""
    guesses = [
        request(
            Chat(board, "guess"),
            "alice",
            Password(f"guess{i}"),
            sender="x@example.org",
            quoted=Quoted("accasta chat"),
        )
        for i in range(site.config.limits.password_failures)
    ]
    for guess in guesses:  # each in a batch of its own: each counted
        (refused,) = write(site, on_snapshot(site, [guess]))
        assert isinstance(refused.refused, WrongPassword)
    checked = len(scrypt_runs)
    decided = on_snapshot(site, [request(Chat(board, "mine"), "alice")])
    assert [type(d.decision).__name__ for d in decided] == ["LockedOut"]
    assert len(scrypt_runs) == checked


def test_a_changed_password_leaves_nothing_remembered_of_the_old_hash(
    db: Database, site: Site, board: int, scrypt_runs: list[tuple[str, str]]
) -> None:
    unit.run(site, Chat(board, "one"), Who("alice", PW))
    with db.read() as s:
        alice = s.get(Player, "alice")
        assert alice is not None
        old = alice.password_hash
    assert site.passwords.verify("pw", old) and len(scrypt_runs) == 1  # remembered
    unit.run(site, ChangePassword("new"), Who("alice", PW))
    assert site.passwords.verify("pw", old)
    assert len(scrypt_runs) == 2  # checked anew: forgotten when the password changed


# ---------------------------------------------------------------- passwords of before


def test_a_scrypt_hash_of_before_is_made_argon2_at_its_next_use(
    db: Database, site: Site, board: int
) -> None:
    """An account hashed with scrypt (before argon2) moves with its password: the move is
    played and the hash is made anew at today's kind and cost, in the same unit."""
    import base64
    import hashlib
    import os

    salt = os.urandom(16)
    digest = hashlib.scrypt(b"pw", salt=salt, n=16, r=8, p=1, dklen=32)
    old = f"scrypt$16$8$1${base64.b64encode(salt).decode()}${base64.b64encode(digest).decode()}"
    with db.transaction() as s:
        alice = s.get(Player, "alice")
        assert alice is not None
        alice.password_hash = old
    unit.run(site, MoveAction(board, OPENING), Who("alice", PW))
    with db.read() as s:
        alice = s.get(Player, "alice")
        assert alice is not None
        assert alice.password_hash.startswith("$argon2id$")
    assert len(queries.board(site, board).moves) == 1
    # The new hash works; the old password text is what it hashes.
    unit.run(site, Show(board, ALICE), Who("alice", PW))


def test_a_batch_checks_its_passwords_side_by_side_once(
    site: Site, board: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``world_for`` verifies the batch's passwords at once; deciding asks nothing more."""
    calls: list[str] = []
    real = pbm.usecases.auth.verify_password

    def counted(password: str, stored: str) -> bool:
        calls.append(password)
        return real(password, stored)

    monkeypatch.setattr(pbm.usecases.auth, "verify_password", counted)
    site.passwords = PasswordCheck()
    requests = [
        request(Show(board, ALICE), "alice"),
        request(Show(board, BOB), "bob"),
        request(Show(board, BOB), "bob", Password("wrong")),
    ]
    decided = on_snapshot(site, requests)
    assert sorted(calls) == ["pw", "pw", "wrong"]
    assert [type(d.decision).__name__ for d in decided] == ["Decision", "Decision", "WrongPassword"]
