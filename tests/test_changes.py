"""pbm.usecases.changes on a real SQLite file and a real PostgreSQL: a decision's values
saved as the difference from what it read, each guarded by a compare-and-set.

The boards and accounts here are made with the changes themselves (``before`` None) and
read back with the store's loaders (``pbm.store``), as the unit of work does.
"""

from __future__ import annotations

import threading
import time
from dataclasses import replace
from datetime import timedelta

import pytest
import sqlalchemy as sa
from conftest import T0

import pbm.games
from pbm.config import Config
from pbm.model import Account, Away, Board, Follower, Pause, PlayedMove, Queued, Standing
from pbm.refusals import UnknownBoard
from pbm.store.accounts import load_accounts
from pbm.store.boards import load_boards
from pbm.store.engine import Database
from pbm.store.statements import Stale
from pbm.store.stops import load_pauses, load_vacations
from pbm.usecases.changes import AccountChange, BoardChange, PauseChange, VacationChange
from pbm.usecases.world import World

ACCASTA = pbm.games.get("accasta")
START = ACCASTA.new()
FIRST = START.legal_moves()[0]
AFTER_FIRST, FIRST_CANONICAL = START.play(FIRST)
SECOND = AFTER_FIRST.legal_moves()[0]
AFTER_SECOND, SECOND_CANONICAL = AFTER_FIRST.play(SECOND)


def account(userid: str, **kw: object) -> Account:
    values: dict[str, object] = {
        "userid": userid,
        "display": userid.title(),
        "email": f"{userid}@example.org",
        "full_name": "",
        "password_hash": "scrypt$16$8$1$AA==$AA==",
        "created_at": T0,
    }
    values.update(kw)
    return Account(**values)  # type: ignore[arg-type]


def new_board(number: int = 1, **kw: object) -> Board:
    values: dict[str, object] = {
        "number": number,
        "game": "accasta",
        "variant": "standard",
        "options": {"castle_win": "immediate"},
        "white": "alice",
        "black": "bob",
        "status": "active",
        "result": None,
        "termination": None,
        "position": START.dump(),
        "ply": 0,
        "version": 0,
        "nag_days": 7,
        "forfeit_days": 21,
        "created_at": T0,
        "last_move_at": None,
        "last_nag_at": None,
        "archived_at": None,
        "ended_at": None,
        "undo_request_by": None,
        "cancel_request_by": None,
        "clock_since": T0,
        "white_rating_before": None,
        "white_rating_after": None,
        "black_rating_before": None,
        "black_rating_after": None,
        "draw_offer_by": None,
        "challenger": None,
        "time_control": "classic 7/21",
        "clock": None,
        "timer_at": None,
        "computer_level": None,
    }
    values.update(kw)
    return Board(**values)  # type: ignore[arg-type]


def played(ply: int, userid: str, notation: str, before: str, **kw: object) -> PlayedMove:
    return PlayedMove(
        ply=ply,
        userid=userid,
        notation=notation,
        text=notation,
        comment=str(kw.pop("comment", "")),
        created_at=T0 + timedelta(hours=ply),
        position_before=before,
        **kw,  # type: ignore[arg-type]
    )


def load(db: Database, number: int = 1) -> Board:
    with db.read() as s:
        return load_boards(s, [number])[number]


def save(db: Database, *changes: object) -> None:
    with db.transaction() as s:
        for change in changes:
            change.save(s)  # type: ignore[attr-defined]


def behind_its_back(db: Database, sql: str) -> None:
    """Someone else's committed change."""
    with db.transaction() as s:
        s.execute(sa.text(sql))


@pytest.fixture
def players(db: Database) -> Database:
    """The database with the accounts alice, bob and carol."""
    save(db, *(AccountChange(None, account(u)) for u in ("alice", "bob", "carol")))
    return db


@pytest.fixture
def board(players: Database) -> Board:
    """Board 1, alice-bob, as just created and read back."""
    save(players, BoardChange(None, new_board()))
    return load(players)


def row_of(b: Board) -> Board:
    """The board without what is loaded around it, to compare the row alone (its
    ``timer_at`` is the clock's, checked on its own)."""
    return replace(
        b, moves=(), followers=(), queue=(), people={}, vacations=(), pauses=(), timer_at=None
    )


# ---------------------------------------------------------------- boards


def test_a_new_board_is_inserted_with_what_goes_with_it(players: Database) -> None:
    b = new_board(
        ply=1,
        position=AFTER_FIRST.dump(),
        last_move_at=T0 + timedelta(hours=1),
        moves=(played(1, "alice", FIRST_CANONICAL, START.dump(), comment="hi"),),
        followers=(Follower("carol", None, T0), Follower(None, "kibitz@example.net", T0)),
        queue=(Queued("bob", f'[["*","{SECOND}"],["{FIRST}","g1:C-e1"]]', T0),),
        standings={"alice": Standing("alice", 1520.0, 3)},
    )
    change = BoardChange(None, b)
    assert change.keys == {("board", 1), ("boards", "new")}
    save(players, change)
    got = load(players)
    assert row_of(got) == row_of(b)  # version 0, every column as given
    assert got.timer_at == b.clock_start + timedelta(days=7)  # the first reminder
    assert got.moves == b.moves
    assert {(f.userid, f.email) for f in got.followers} == {
        ("carol", None),
        (None, "kibitz@example.net"),
    }
    assert all(f.id is not None for f in got.followers)
    assert [(q.userid, q.lines) for q in got.queue] == [
        ("bob", f'[["*","{SECOND}"],["{FIRST}","g1:C-e1"]]'),  # the tree's lines in order
    ]
    assert got.standings == {"alice": Standing("alice", 1520.0, 3)}
    assert set(got.people) >= {"alice", "bob", "carol"}


def test_a_board_number_taken_meanwhile_is_refused(board: Board, players: Database) -> None:
    with pytest.raises(sa.exc.IntegrityError), players.transaction() as s:
        BoardChange(None, new_board(white="carol")).save(s)
    assert load(players).white == "alice"


def test_a_move_played_and_undone(board: Board, players: Database) -> None:
    move1 = played(1, "alice", FIRST_CANONICAL, START.dump(), comment="opening")
    after = replace(
        board,
        moves=(move1,),
        ply=1,
        position=AFTER_FIRST.dump(),
        last_move_at=move1.created_at,
        clock_since=move1.created_at,
    )
    change = BoardChange(board, after)
    assert change.keys == {("board", 1)}
    save(players, change)
    got = load(players)
    assert got.version == 1
    assert row_of(got) == replace(row_of(after), version=1)
    assert got.moves == (move1,)

    move2 = played(2, "bob", SECOND_CANONICAL, AFTER_FIRST.dump(), queued=True, message_id="<m@x>")
    save(players, BoardChange(got, replace(got, moves=(move1, move2), ply=2)))
    got = load(players)
    assert (got.version, got.moves) == (2, (move1, move2))

    # Undo: the last move goes, the position comes back.
    undone = replace(got, moves=(move1,), ply=1, position=move2.position_before)
    save(players, BoardChange(got, undone))
    got = load(players)
    assert (got.version, got.ply, got.moves) == (3, 1, (move1,))
    assert got.position == AFTER_FIRST.dump()

    # A move replaced by another at the same ply (an undo and a new move in one decision).
    other = replace(move2, notation="x", text="x", comment="second try")
    save(players, BoardChange(got, replace(got, moves=(move1, other), ply=2)))
    assert load(players).moves == (move1, other)


def test_followers_come_and_go(board: Board, players: Database) -> None:
    carol = Follower("carol", None, T0)
    save(players, BoardChange(board, replace(board, followers=(carol,))))
    got = load(players)
    [stored] = got.followers
    assert (stored.userid, stored.email, stored.created_at) == ("carol", None, T0)
    assert stored.id is not None and got.version == 1
    assert "carol" in got.people

    guest = Follower(None, "kibitz@example.net", T0 + timedelta(days=1))
    save(players, BoardChange(got, replace(got, followers=(*got.followers, guest))))
    got = load(players)
    assert [(f.userid, f.email) for f in got.followers] == [
        ("carol", None),
        (None, "kibitz@example.net"),
    ]
    assert got.followers[0] == stored  # the one already there is left as it was

    save(players, BoardChange(got, replace(got, followers=got.followers[1:])))
    got = load(players)
    assert [(f.userid, f.email) for f in got.followers] == [(None, "kibitz@example.net")]
    assert got.version == 3


def test_the_trees_are_written_and_cleared(board: Board, players: Database) -> None:
    queued = (
        Queued("bob", f'[["{FIRST}","{SECOND}"],["*","g1:C-e1"]]', T0),
        Queued("alice", '[["*","b2:C-c2"]]', T0),
    )
    save(players, BoardChange(board, replace(board, queue=queued)))
    got = load(players)
    assert [(q.userid, q.lines) for q in got.queue] == [(q.userid, q.lines) for q in queued]
    assert got.version == 1
    # What follows bob's answer is his tree now; alice's stays as it was.
    bob = next(q for q in got.queue if q.userid == "bob")
    rest = (replace(bob, lines='[["a1:C-d1","g1:C-d1"]]'),)
    save(players, BoardChange(got, replace(got, queue=(*rest, *got.queue[1:]))))
    got = load(players)
    assert sorted((q.userid, q.lines) for q in got.queue) == [
        ("alice", '[["*","b2:C-c2"]]'),
        ("bob", '[["a1:C-d1","g1:C-d1"]]'),
    ]
    # Bob's tree is used up; alice's stays as it was.
    kept = tuple(q for q in got.queue if q.userid == "alice")
    save(players, BoardChange(got, replace(got, queue=kept)))
    got = load(players)
    assert got.queue == kept
    save(players, BoardChange(got, replace(got, queue=())))
    assert load(players).queue == ()


def test_standings_are_inserted_and_updated(board: Board, players: Database) -> None:
    rated = {"alice": Standing("alice", 1516.0, 1), "bob": Standing("bob", 1484.0, 1)}
    save(players, BoardChange(board, replace(board, standings=rated)))
    got = load(players)
    assert got.standings == rated
    again = {"alice": Standing("alice", 1530.5, 2), "bob": Standing("bob", 1484.0, 1)}
    save(players, BoardChange(got, replace(got, standings=again, status="finished")))
    got = load(players)
    assert (got.standings, got.status) == (again, "finished")
    with players.read() as s:
        ratings = s.execute(sa.text("SELECT userid, rating, games_played FROM ratings")).all()
    assert sorted(ratings) == [("alice", 1530.5, 2), ("bob", 1484.0, 1)]


def test_a_standing_changed_meanwhile_is_stale(board: Board, players: Database) -> None:
    rated = {"alice": Standing("alice", 1516, 1)}
    save(players, BoardChange(board, replace(board, standings=rated)))
    got = load(players)
    # Another game of alice's was rated meanwhile.
    behind_its_back(players, "UPDATE ratings SET rating = 1540, games_played = 2")
    after = replace(got, status="finished", standings={"alice": Standing("alice", 1530, 2)})
    with pytest.raises(Stale), players.transaction() as s:
        BoardChange(got, after).save(s)
    got = load(players)
    assert got.status == "active"  # nothing of the decision was written
    assert got.standings == {"alice": Standing("alice", 1540, 2)}


def test_a_board_changed_meanwhile_is_stale_and_nothing_is_written(
    board: Board, players: Database
) -> None:
    move1 = played(1, "alice", FIRST_CANONICAL, START.dump())
    mine = replace(board, moves=(move1,), ply=1, position=AFTER_FIRST.dump())
    theirs = replace(board, cancel_request_by="bob")
    save(players, BoardChange(board, theirs))  # someone else's decision, on the same version
    with pytest.raises(Stale), players.transaction() as s:
        BoardChange(board, mine).save(s)
    got = load(players)
    assert (got.version, got.ply, got.moves, got.cancel_request_by) == (1, 0, (), "bob")

    # Also when the row itself would not change, only what goes with it.
    with pytest.raises(Stale), players.transaction() as s:
        BoardChange(board, replace(board, followers=(Follower("carol", None, T0),))).save(s)
    assert load(players).followers == ()

    # Decided again on the fresh board, it goes through.
    save(players, BoardChange(got, replace(got, moves=(move1,), ply=1)))
    assert load(players).version == 2


def test_a_board_that_is_gone_is_stale(board: Board, players: Database) -> None:
    with pytest.raises(Stale), players.transaction() as s:
        BoardChange(replace(board, number=99), replace(board, number=99, ply=1)).save(s)


def test_no_difference_writes_nothing(board: Board, players: Database) -> None:
    save(players, BoardChange(board, replace(board)))
    assert load(players).version == 0
    # What a board carries without owning it (people, vacations, pauses) is not written.
    save(players, BoardChange(board, replace(board, people={}, pauses=(Pause(T0, None),))))
    assert load(players).version == 0
    with players.read() as s:
        assert load_pauses(s) == ()


@pytest.mark.postgres
def test_postgres_a_board_locked_for_a_decision_makes_a_second_writer_wait(
    postgres_db: Database,
) -> None:
    db = postgres_db
    save(db, *(AccountChange(None, account(u)) for u in ("alice", "bob")))
    save(db, BoardChange(None, new_board()))
    seen: list[int] = []

    def second() -> None:
        with db.transaction() as s2:
            seen.append(World(s2, Config(), T0, lock=True).board(1).version)

    with db.transaction() as s:
        b = World(s, Config(), T0, lock=True).board(1)
        t = threading.Thread(target=second)
        t.start()
        _until_a_backend_waits_for_a_lock(db)
        assert seen == []  # still waiting for our lock
        BoardChange(b, replace(b, ply=1)).save(s)
    t.join(10)
    assert seen == [1]  # it saw our committed change, not the old row


def test_a_missing_board_is_unknown_even_when_locking(players: Database) -> None:
    with players.transaction() as s:
        world = World(s, Config(), T0, lock=True)
        with pytest.raises(UnknownBoard, match="There is no board 99"):
            world.board(99)


def _until_a_backend_waits_for_a_lock(db: Database) -> None:
    sql = (
        "SELECT count(*) FROM pg_stat_activity"
        " WHERE datname = current_database() AND wait_event_type = 'Lock'"
    )
    deadline = time.monotonic() + 10
    with db.engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
        while conn.execute(sa.text(sql)).scalar() == 0:
            assert time.monotonic() < deadline, "the second writer never waited for the lock"
            time.sleep(0.01)


# ---------------------------------------------------------------- accounts


def test_a_new_account_is_inserted(db: Database) -> None:
    alice = account("alice", display="Alice", full_name="Alice A")
    change = AccountChange(None, alice)
    assert change.keys == {("account", "alice")}
    save(db, change)
    with db.read() as s:
        assert load_accounts(s, ["ALICE"]) == {"alice": alice}
    with pytest.raises(sa.exc.IntegrityError), db.transaction() as s:
        AccountChange(None, account("alice", email="other@example.org")).save(s)


def test_an_account_change_writes_the_changed_columns(players: Database) -> None:
    with players.read() as s:
        alice = load_accounts(s, ["alice"])["alice"]
    # Meanwhile her password was changed: a column this decision does not touch.
    behind_its_back(players, "UPDATE players SET password_hash = 'new' WHERE userid = 'alice'")
    save(players, AccountChange(alice, replace(alice, email="alice@new.example.org")))
    with players.read() as s:
        got = load_accounts(s, ["alice", "bob"])
    assert got["alice"].email == "alice@new.example.org"
    assert got["alice"].password_hash == "new"  # the other change is kept
    assert got["bob"] == account("bob")


def test_an_account_column_changed_meanwhile_is_stale(players: Database) -> None:
    with players.read() as s:
        alice = load_accounts(s, ["alice"])["alice"]
    behind_its_back(players, "UPDATE players SET email = 'x@example.org' WHERE userid = 'alice'")
    with pytest.raises(Stale), players.transaction() as s:
        AccountChange(alice, replace(alice, email="alice@new.example.org", full_name="A")).save(s)
    with players.read() as s:
        got = load_accounts(s, ["alice"])["alice"]
    assert (got.email, got.full_name) == ("x@example.org", "")
    # No difference: nothing is written, nothing compared.
    save(players, AccountChange(alice, alice))


# ---------------------------------------------------------------- vacations and pauses


def test_a_vacation_begun_and_cut_short(players: Database) -> None:
    away = Away("alice", T0, T0 + timedelta(days=14))
    change = VacationChange(None, away)
    assert change.keys == {("account", "alice")}
    save(players, change)
    with players.read() as s:
        [stored] = load_vacations(s, ["alice"])
    assert replace(stored, id=None) == away and stored.id is not None
    back = T0 + timedelta(days=3)
    save(players, VacationChange(stored, replace(stored, ends_at=back)))
    with players.read() as s:
        assert load_vacations(s, ["alice"]) == (replace(stored, ends_at=back),)
        assert load_vacations(s, ["alice"], ending_after=back) == ()


def test_a_vacation_changed_meanwhile_is_stale(players: Database) -> None:
    save(players, VacationChange(None, Away("alice", T0, T0 + timedelta(days=14))))
    with players.read() as s:
        [stored] = load_vacations(s, ["alice"])
    save(players, VacationChange(stored, replace(stored, ends_at=T0 + timedelta(days=1))))
    with pytest.raises(Stale), players.transaction() as s:
        VacationChange(stored, replace(stored, ends_at=T0 + timedelta(days=2))).save(s)
    with players.read() as s:
        [got] = load_vacations(s, ["alice"])
    assert got.ends_at == T0 + timedelta(days=1)


def test_a_pause_begun_and_ended_once(db: Database) -> None:
    change = PauseChange(None, Pause(T0, None))
    assert change.keys == {("pauses", "all")}
    save(db, change)
    with db.read() as s:
        [pause] = load_pauses(s)
    assert (pause.started_at, pause.ended_at) == (T0, None) and pause.id is not None
    end = T0 + timedelta(hours=5)
    save(db, PauseChange(pause, replace(pause, ended_at=end)))
    with db.read() as s:
        assert load_pauses(s) == (replace(pause, ended_at=end),)
    # Ended meanwhile by someone else: stale, the first end stays.
    with pytest.raises(Stale), db.transaction() as s:
        PauseChange(pause, replace(pause, ended_at=end + timedelta(hours=1))).save(s)
    with db.read() as s:
        assert load_pauses(s) == (replace(pause, ended_at=end),)
