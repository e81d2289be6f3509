"""Finished games -> record files (``pbm.usecases.records.archive``), read back by ``replay``.

``pending_boards`` finds the finished games not yet archived, ``archive_board`` writes one
record and marks its game archived; ``archive_all`` below is the loop ``pbm archive`` runs
(its progress bar is the command line's, tested in test_cli_admin).
"""

from __future__ import annotations

import json
import random
from datetime import datetime, timedelta
from pathlib import Path

import pytest
from conftest import T0, Clock

import pbm.games
from pbm.games import Outcome, Termination
from pbm.refusals import UnknownBoard
from pbm.store.engine import Database
from pbm.store.tables import Game
from pbm.usecases import queries, unit
from pbm.usecases.auth import ADMIN, Who
from pbm.usecases.challenges import Challenge
from pbm.usecases.endings import finish
from pbm.usecases.moves import Move, Resign
from pbm.usecases.proposals import Cancel
from pbm.usecases.records import archive, formats
from pbm.usecases.records.replay import parse_record, replay
from pbm.usecases.site import Site

ACCASTA = pbm.games.get("accasta")


@pytest.fixture
def out(tmp_path: Path) -> Path:
    """The archive folder (the SQLite file lives in tmp_path itself)."""
    folder = tmp_path / "records"
    folder.mkdir()
    return folder


def new_board(site: Site, *, variant: str | None = None, **options: str) -> int:
    action = Challenge("accasta", "alice", "bob", admin=True, variant=variant, options=options)
    board = unit.run(site, action)[0].board
    assert board is not None
    return board


def move(site: Site, board: int, userid: str, text: str, comment: str = "") -> None:
    unit.run(site, Move(board, text, comment=comment), Who(userid, ADMIN))


def resign(site: Site, board: int, userid: str) -> None:
    unit.run(site, Resign(board), Who(userid, ADMIN))


def play(site: Site, board: int, moves: list[str], comments: dict[int, str] | None = None) -> None:
    for i, mv in enumerate(moves):
        move(site, board, ("alice", "bob")[i % 2], mv, (comments or {}).get(i, ""))


def archive_all(
    site: Site, out: Path, fmt: str = "text", since: datetime | None = None
) -> list[archive.ArchivedGame]:
    """What ``pbm archive`` does: every pending game, oldest first."""
    return [archive.archive_board(site, n, out, fmt) for n in archive.pending_boards(site, since)]


def random_moves(seed: int, plies: int, variant: str = "standard") -> list[str]:
    rng = random.Random(seed)
    state = ACCASTA.new(variant)
    out = []
    while len(out) < plies:
        state, canonical = state.play(rng.choice(state.legal_moves()))
        assert state.outcome is None
        out.append(canonical)
    return out


def archived_at(db: Database, board: int) -> object:
    with db.read() as s:
        g = s.get(Game, board)
        assert g is not None
        return g.archived_at


def test_text_record_tags_moves_comments_and_result(
    site: Site, db: Database, clock: Clock, out: Path
) -> None:
    board = new_board(site)
    moves = random_moves(1, 3)
    clock.advance(days=1)
    move(site, board, "alice", moves[0], "Opening (book)\nmove {1}")
    clock.advance(days=2)
    move(site, board, "bob", moves[1], "reply")
    clock.advance(days=3)
    move(site, board, "alice", moves[2])
    resign(site, board, "bob")

    [done] = archive_all(site, out)
    assert done == archive.ArchivedGame(board, out / f"accasta-board-{board}.txt")
    assert done.path.read_text(encoding="utf-8") == (
        '[Game "Accasta"]\n'
        '[Variant "standard"]\n'
        f'[Board "{board}"]\n'
        '[White "alice"]\n'
        '[Black "bob"]\n'
        '[Started "2025.03.01"]\n'
        '[Ended "2025.03.07"]\n'
        '[Result "1-0"]\n'
        '[Termination "resign"]\n'
        '[TimeControl "classic 7/21"]\n'
        '[Option "castle_win=immediate d4_opening=allowed"]\n'
        "\n"
        # Accasta numbers every turn, as its board mails and #N do.
        f"1. {moves[0]} {{Opening [book] move [1]}} 2. {moves[1]} {{reply}}\n"
        f"3. {moves[2]}\n"
        "1-0\n"
    )
    assert archived_at(db, board) == clock.now

    record = parse_record(done.path.read_text(encoding="utf-8"))
    assert [m.text for m in record.moves] == moves
    assert record.moves[0].comment == "Opening [book] move [1]"
    rep = replay(record)
    assert (rep.result, rep.termination, rep.canonical) == ("1-0", "resign", moves)


def test_a_game_won_on_the_board_replays_to_the_same_end(
    site: Site, db: Database, out: Path
) -> None:
    rng = random.Random(2078)  # a random game that ends with a castle taken in 18 turns
    state = ACCASTA.new()
    moves = []
    while state.outcome is None:
        state, canonical = state.play(rng.choice(state.legal_moves()))
        moves.append(canonical)
    assert state.outcome is not None and state.outcome.termination == "castle"
    board = new_board(site)
    play(site, board, moves)
    [done] = archive_all(site, out)
    record = parse_record(done.path.read_text(encoding="utf-8"))
    expected = "1-0" if state.outcome.winner == 0 else "0-1"
    assert record.tags["Result"] == expected
    assert record.tags["Termination"] == "castle"
    rep = replay(record)
    assert (rep.result, rep.termination) == (expected, "castle")
    assert rep.state.dump() == state.dump()


def test_variant_and_options_travel_with_the_record(site: Site, db: Database, out: Path) -> None:
    board = new_board(site, variant="pari", castle_win="next_turn")
    moves = random_moves(5, 4, "pari")
    play(site, board, moves)
    resign(site, board, "alice")
    [done] = archive_all(site, out)
    record = parse_record(done.path.read_text(encoding="utf-8"))
    assert record.variant == "pari"
    assert record.options() == {"castle_win": "next_turn", "d4_opening": "allowed"}
    rep = replay(record)
    assert rep.state.variant == "pari"
    assert rep.state.options["castle_win"] == "next_turn"
    assert rep.result == "0-1"


def test_a_game_resigned_before_any_move(site: Site, db: Database, out: Path) -> None:
    board = new_board(site)
    resign(site, board, "alice")
    [done] = archive_all(site, out)
    text = done.path.read_text(encoding="utf-8")
    assert text.endswith(
        '[Termination "resign"]\n[TimeControl "classic 7/21"]\n'
        '[Option "castle_win=immediate d4_opening=allowed"]\n\n0-1\n'
    )
    assert replay(parse_record(text)).result == "0-1"


def test_json_record(site: Site, db: Database, clock: Clock, out: Path) -> None:
    board = new_board(site)
    moves = random_moves(2, 2)
    play(site, board, moves, comments={0: "a {braced} (note)"})
    resign(site, board, "alice")
    [done] = archive_all(site, out, "json")
    assert done.path.name == f"accasta-board-{board}.json"
    data = json.loads(done.path.read_text(encoding="utf-8"))
    assert data["tags"]["Result"] == "0-1"
    assert data["tags"]["Board"] == str(board)
    assert data["moves"] == [
        {
            "ply": 1,
            "player": "alice",
            "notation": moves[0],
            "text": moves[0],
            "comment": "a {braced} (note)",
            "time": T0.isoformat(),
        },
        {
            "ply": 2,
            "player": "bob",
            "notation": moves[1],
            "text": moves[1],
            "comment": "",
            "time": T0.isoformat(),
        },
    ]


def test_only_finished_games_not_yet_archived(
    site: Site, db: Database, clock: Clock, out: Path
) -> None:
    active = new_board(site)
    play(site, active, random_moves(3, 1))
    cancelled = new_board(site)
    unit.run(site, Cancel(cancelled), Who("alice", ADMIN))
    early = new_board(site)
    play(site, early, random_moves(4, 1))
    resign(site, early, "bob")
    clock.advance(days=10)
    late = new_board(site)
    play(site, late, random_moves(6, 1))
    resign(site, late, "bob")

    assert archive.pending_boards(site) == [early, late]
    assert archive.pending_boards(site, since=T0 + timedelta(days=5)) == [late]
    assert archive.pending_boards(site, since=T0 + timedelta(days=11)) == []

    done = archive_all(site, out, since=T0 + timedelta(days=5))
    assert [d.board for d in done] == [late]
    assert archive.pending_boards(site) == [early]
    done = archive_all(site, out)
    assert [d.board for d in done] == [early]
    assert archive_all(site, out) == []
    assert sorted(p.name for p in out.iterdir()) == sorted(
        f"accasta-board-{b}.txt" for b in (early, late)
    )
    # Archived games are still there to look at.
    assert {b.board for b in queries.boards(site, status="finished")} == {early, late}
    assert queries.view(site, early).status == "finished"

    with pytest.raises(ValueError, match=f"board {active} is not a finished game"):
        archive.archive_board(site, active, out, "text")


def test_a_record_that_cannot_be_written_leaves_the_game_to_the_next_run(
    site: Site, db: Database, out: Path
) -> None:
    board = new_board(site)
    resign(site, board, "alice")
    blocker = out / f"accasta-board-{board}.txt"
    blocker.mkdir()
    with pytest.raises(OSError):
        archive_all(site, out)
    assert archived_at(db, board) is None
    assert [p.name for p in out.iterdir()] == [blocker.name]  # no temporary file left
    blocker.rmdir()
    assert [d.board for d in archive_all(site, out)] == [board]
    assert archived_at(db, board) is not None


def test_an_existing_record_is_replaced_whole(site: Site, db: Database, out: Path) -> None:
    board = new_board(site)
    resign(site, board, "alice")
    path = out / f"accasta-board-{board}.txt"
    path.write_text("an old, longer file " * 100, encoding="utf-8")
    [done] = archive_all(site, out)
    assert done.path == path
    assert path.read_text(encoding="utf-8").startswith('[Game "Accasta"]')
    assert path.read_text(encoding="utf-8").endswith("\n0-1\n")
    assert [p.name for p in out.iterdir()] == [path.name]


def test_ended_is_when_the_game_ended_not_its_last_move(
    site: Site, db: Database, clock: Clock, out: Path
) -> None:
    """A game resigned days after its last move ends, in the record, on the day it ended."""
    board = new_board(site)
    move(site, board, "alice", "a1:C+b2,HS-c1")
    clock.advance(days=5)
    resign(site, board, "bob")
    # --since counts from the end too: a day before the resignation finds it.
    assert archive.pending_boards(site, since=clock.now - timedelta(days=1)) == [board]
    [done] = archive_all(site, out)
    tags = parse_record(done.path.read_text(encoding="utf-8")).tags
    assert tags["Ended"] == f"{clock.now:%Y.%m.%d}" != f"{T0:%Y.%m.%d}"


def test_a_game_still_going_has_an_open_record(site: Site) -> None:
    """``record_text`` of any board: an active game has no result yet and replays so."""
    board = new_board(site)
    moves = random_moves(7, 3)
    play(site, board, moves, comments={1: "thinking"})
    text = formats.record_text(queries.board(site, board))
    assert '[Result "*"]\n[Termination ""]\n[TimeControl "classic 7/21"]\n' in text
    assert text.endswith(f"1. {moves[0]} 2. {moves[1]} {{thinking}}\n3. {moves[2]}\n*\n")
    record = parse_record(text)
    assert record.result is None
    rep = replay(record)
    assert (rep.result, rep.termination, rep.canonical) == (None, None, moves)
    assert rep.state.dump() == queries.board(site, board).position


def test_a_drawn_game_record_replays_as_a_draw(site: Site, clock: Clock) -> None:
    """A game drawn by agreement: the record says so in its tags and at its end."""
    board = new_board(site)
    moves = random_moves(8, 2)
    play(site, board, moves)
    drawn = finish(queries.board(site, board), Outcome(None, Termination.AGREEMENT), clock.now)
    text = formats.record_text(drawn)
    assert '[Result "1/2-1/2"]\n[Termination "agreement"]\n' in text
    assert '[TimeControl "classic 7/21"]' in text
    assert text.endswith(f"1. {moves[0]} 2. {moves[1]}\n1/2-1/2\n")
    record = parse_record(text)
    assert record.result == "1/2-1/2"
    rep = replay(record)
    assert (rep.result, rep.termination, rep.canonical) == ("1/2-1/2", "agreement", moves)
    data = json.loads(formats.record_json(drawn))
    assert (data["tags"]["Result"], data["tags"]["Termination"]) == ("1/2-1/2", "agreement")


def test_archiving_a_board_there_is_not(site: Site, out: Path) -> None:
    with pytest.raises(UnknownBoard, match="There is no board 42"):
        archive.archive_board(site, 42, out, "text")
    assert list(out.iterdir()) == []
