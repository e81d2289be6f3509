"""The computer player (issue 25) on a real database: challenged like a person, it accepts
at once and plays its moves through the same use cases as a mailed move, in a process of
its own; it grants an undo of its last move, keeps to the site's limits and is rated."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest
from conftest import Clock
from sqlmodel import col, select

from pbm.games.accasta.engine import choose
from pbm.refusals import BadRequest
from pbm.runners.computer_runner import ComputerRunner
from pbm.store.engine import Database
from pbm.store.tables import Game, OutboxMessage, Player
from pbm.usecases import queries, unit
from pbm.usecases.auth import Password, Who
from pbm.usecases.challenges import Challenge
from pbm.usecases.computer import ComputerHelp, Work
from pbm.usecases.moves import Move, Resign
from pbm.usecases.proposals import Undo
from pbm.usecases.site import Site

ALICE = "alice@example.org"
PW = Password("pw")


@pytest.fixture
def player(site: Site) -> Iterator[ComputerRunner]:
    found = ComputerRunner(site)
    yield found
    found.close()


def challenge(site: Site, *options: str, variant: str | None = None) -> int:
    opts = dict(o.split("=") for o in options)
    [sent, *_] = unit.run(
        site, Challenge("accasta", "alice", "computer", sender=ALICE, options=opts, variant=variant)
    )
    assert sent.board is not None
    return sent.board


def game(db: Database, board: int) -> Game:
    with db.transaction() as s:
        found = s.get(Game, board)
        assert found is not None
        return found


def test_it_accepts_a_challenge_at_once_and_answers_each_move(
    db: Database, site: Site, player: ComputerRunner
) -> None:
    board = challenge(site, "level=2")
    assert game(db, board).status == "waiting"
    assert asyncio.run(player.run_once()) == 1  # accepted
    assert (game(db, board).status, game(db, board).computer_level) == ("active", 2)
    for _ in range(3):
        pos = queries.view(site, board).state.position  # type: ignore[attr-defined]
        mine = choose(pos, 2, seed=1, nodes=2_000)
        from pbm.games.accasta.notation import turn_to_text

        unit.run(site, Move(board, turn_to_text(pos, mine.turn)), Who("alice", PW))
        assert asyncio.run(player.run_once()) == 1  # its answer
        assert game(db, board).ply % 2 == 0  # alice to move again
    with db.transaction() as s:
        mails = s.exec(select(OutboxMessage).order_by(col(OutboxMessage.id))).all()
        accounts = s.exec(select(Player.userid)).all()
    assert "computer" in accounts
    assert all(m.to_addr != "computer@computer.invalid" for m in mails)  # it reads no mail
    assert any("Move 6, computer (Black)" in m.body for m in mails if m.to_addr == ALICE)
    assert not any("site admin" in m.body for m in mails)  # its moves are its own


def test_nobody_else_acts_as_the_computer(site: Site) -> None:
    from pbm.refusals import WrongPassword
    from pbm.usecases.auth import COMPUTER

    board = challenge(site)
    with pytest.raises(WrongPassword, match="Only the computer player acts as the computer"):
        unit.run(site, Resign(board), Who("alice", COMPUTER))


def test_it_grants_an_undo_and_a_resignation_is_rated(
    db: Database, site: Site, player: ComputerRunner, clock: Clock
) -> None:
    board = challenge(site, "level=1")
    asyncio.run(player.run_once())
    legal = queries.view(site, board).state.legal_moves()
    unit.run(site, Move(board, legal[0]), Who("alice", PW))
    asyncio.run(player.run_once())
    assert game(db, board).ply == 2
    # alice moves and, before the computer's answer, asks to take her move back.
    unit.run(site, Move(board, queries.view(site, board).state.legal_moves()[0]), Who("alice", PW))
    unit.run(site, Undo(board), Who("alice", PW))
    assert asyncio.run(player.run_once()) == 1  # granted; her turn again, nothing to play
    assert game(db, board).ply == 2
    unit.run(site, Resign(board), Who("alice", PW))
    done = game(db, board)
    assert (done.status, done.result) == ("finished", "0-1")
    assert done.black_rating_after is not None and done.black_rating_after > 1500


def test_the_limits_of_a_game_against_the_computer(site: Site) -> None:
    for _ in range(3):
        challenge(site)
    with pytest.raises(BadRequest, match="alice plays 3 games against the computer already"):
        challenge(site)
    with pytest.raises(BadRequest, match="level 1 to 5, not 9"):
        unit.run(
            site,
            Challenge(
                "accasta", "bob", "computer", sender="bob@example.org", options={"level": "9"}
            ),
        )
    with pytest.raises(BadRequest, match="--level is for a game against the computer"):
        unit.run(
            site,
            Challenge("accasta", "bob", "alice", sender="bob@example.org", options={"level": "2"}),
        )


def test_help_computer_names_it_and_its_levels(site: Site) -> None:
    from pbm.commands import parse

    found = parse("help computer")
    assert found is not None and found.args.topic == "computer"
    [answer] = unit.run(site, ComputerHelp("x@example.org"))
    text = " ".join(answer.body.split())
    assert "The computer player is the account computer" in text
    assert "accasta challenge YOURID computer --level=3" in text
    assert "Accasta, --level=N (default 3):" in text
    assert "1: almost at random" in text and "5: searches as deep as its whole time" in text
    assert "Chess, --level=N (default 3):" in text and "Stockfish at skill 0" in text


def test_it_plays_chess_with_stockfish(db: Database, site: Site, player: ComputerRunner) -> None:
    [sent, *_] = unit.run(
        site,
        Challenge("chess", "alice", "computer", sender=ALICE, options={"level": "1"}),
    )
    assert sent.board is not None
    board = sent.board
    asyncio.run(player.run_once())
    for move in ("e4", "Nf3"):
        unit.run(site, Move(board, move), Who("alice", PW))
        assert asyncio.run(player.run_once()) == 1
    view = queries.view(site, board)
    assert view.state.ply == 4  # type: ignore[attr-defined]
    with db.transaction() as s:
        bodies = [m.body for m in s.exec(select(OutboxMessage)).all() if m.to_addr == ALICE]
    assert any("computer (Black):" in b for b in bodies)


def test_a_game_whose_engine_is_not_installed_is_refused(
    site: Site, monkeypatch: pytest.MonkeyPatch
) -> None:
    import pbm.games

    # As on a machine without Stockfish: the program the chess computer needs is missing.
    monkeypatch.setattr(pbm.games.get("chess"), "computer_program", "no-such-engine-here")
    with pytest.raises(BadRequest, match="No engine for Chess is installed here"):
        unit.run(site, Challenge("chess", "bob", "computer", sender="bob@example.org"))


def test_a_board_whose_move_cannot_be_made_does_not_hold_up_the_others(
    db: Database, site: Site, player: ComputerRunner
) -> None:
    broken, other = challenge(site, "level=1"), challenge(site, "level=1")
    assert asyncio.run(player.run_once()) == 2  # both accepted
    for board in (broken, other):  # the broken board has waited longest for its answer
        legal = queries.view(site, board).state.legal_moves()
        unit.run(site, Move(board, legal[0]), Who("alice", PW))
    with db.transaction() as s:  # as a bug might leave it: a level no engine has
        found = s.get(Game, broken)
        assert found is not None
        found.computer_level = 9
        s.add(found)
    # The broken board first: no move, set aside; then the other board's move is made.
    assert asyncio.run(player.run_once()) == 2
    assert (game(db, broken).ply, game(db, other).ply) == (1, 2)
    assert player.claim() is None  # set aside for a while


class Ticks:
    """A monotonic clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_its_time_is_shared_by_person_not_by_board(db: Database, site: Site) -> None:
    """alice has three boards waiting for the computer, bob one: bob's is answered after
    at most one of alice's, however long hers have waited (round robin by person)."""
    ticks = Ticks()
    player = ComputerRunner(site, clock=ticks)
    try:
        alices = [challenge(site, "level=1") for _ in range(3)]
        [sent, *_] = unit.run(
            site,
            Challenge(
                "accasta", "bob", "computer", sender="bob@example.org", options={"level": "1"}
            ),
        )
        assert sent.board is not None
        bobs = sent.board
        asyncio.run(player.run_once())  # all four accepted
        for board, uid in [*((b, "alice") for b in alices), (bobs, "bob")]:
            legal = queries.view(site, board).state.legal_moves()
            unit.run(site, Move(board, legal[0]), Who(uid, PW))
            ticks.now += 1  # alice's boards have waited longest
        served = []
        for _ in range(3):
            job = player.claim()
            assert job is not None
            served.append(job.board)
            asyncio.run(player.handle(job))
            ticks.now += 1
        assert served == [alices[0], bobs, alices[1]]
    finally:
        player.close()


def test_while_others_wait_nobody_gets_more_than_his_share_of_the_hour(site: Site) -> None:
    """alice's thinking this hour is past her half (two people wait): bob is served, though
    she was served longer ago; alone, she would be served all the same."""
    ticks = Ticks()
    player = ComputerRunner(site, clock=ticks)
    hour = site.config.computer.seconds_per_hour
    player._spent.append((ticks.now, "alice", hour * 0.6))
    player._served.update(alice=ticks.now - 10, bob=ticks.now)
    alice = Work(1, "move", "accasta", "", 1, 1, "alice")
    bob = Work(2, "move", "accasta", "", 1, 1, "bob")
    assert player._next_move([alice, bob], ticks.now) == bob
    assert player._next_move([alice], ticks.now) == alice
