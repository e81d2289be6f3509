"""Finished games -> record files (``pbm.archive``) on a real database, read back by pbm.record."""

from __future__ import annotations

import json
import random
from datetime import timedelta
from pathlib import Path

import pytest
from conftest import T0, Clock

import pbm.games
from pbm import archive, store
from pbm.config import Config
from pbm.record import parse_record, replay
from pbm.service import ADMIN, Service

ACCASTA = pbm.games.get("accasta")


@pytest.fixture
def svc(db: store.Database, config: Config, clock: Clock) -> Service:
    s = Service(db, config, clock)
    s.signup("Alice", "pw", "alice@example.org")
    s.signup("bob", "pw", "bob@example.org")
    return s


@pytest.fixture
def out(tmp_path: Path) -> Path:
    """The archive folder (the SQLite file lives in tmp_path itself)."""
    folder = tmp_path / "records"
    folder.mkdir()
    return folder


def new_board(svc: Service, *, variant: str | None = None, **options: str) -> int:
    board = svc.challenge("accasta", "alice", "bob", admin=True, variant=variant, options=options)[
        0
    ].board
    assert board is not None
    return board


def play(
    svc: Service, board: int, moves: list[str], comments: dict[int, str] | None = None
) -> None:
    for i, mv in enumerate(moves):
        svc.move(board, ("alice", "bob")[i % 2], ADMIN, mv, comment=(comments or {}).get(i, ""))


def random_moves(seed: int, plies: int, variant: str = "standard") -> list[str]:
    rng = random.Random(seed)
    state = ACCASTA.new(variant)
    out = []
    while len(out) < plies:
        state, canonical = state.play(rng.choice(state.legal_moves()))
        assert state.outcome is None
        out.append(canonical)
    return out


def archived_at(db: store.Database, board: int) -> object:
    with db.transaction() as s:
        g = s.get(store.Game, board)
        assert g is not None
        return g.archived_at


def test_text_record_tags_moves_comments_and_result(
    svc: Service, db: store.Database, clock: Clock, out: Path
) -> None:
    board = new_board(svc)
    moves = random_moves(1, 3)
    clock.advance(days=1)
    svc.move(board, "alice", ADMIN, moves[0], comment="Opening (book)\nmove {1}")
    clock.advance(days=2)
    svc.move(board, "bob", ADMIN, moves[1], comment="reply")
    clock.advance(days=3)
    svc.move(board, "alice", ADMIN, moves[2])
    svc.resign(board, "bob", ADMIN)

    [done] = archive.archive(db, out, now=clock.now)
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
        '[Option "castle_win=immediate d4_opening=allowed"]\n'
        "\n"
        f"1. {moves[0]} {{Opening [book] move [1]}} {moves[1]} {{reply}}\n"
        f"2. {moves[2]}\n"
        "1-0\n"
    )
    assert archived_at(db, board) == clock.now

    record = parse_record(done.path.read_text(encoding="utf-8"))
    assert [m.text for m in record.moves] == moves
    assert record.moves[0].comment == "Opening [book] move [1]"
    rep = replay(record)
    assert (rep.result, rep.termination, rep.canonical) == ("1-0", "resign", moves)


def test_a_game_won_on_the_board_replays_to_the_same_end(
    svc: Service, db: store.Database, out: Path
) -> None:
    rng = random.Random(2078)  # a random game that ends with a castle taken in 18 turns
    state = ACCASTA.new()
    moves = []
    while state.outcome is None:
        state, canonical = state.play(rng.choice(state.legal_moves()))
        moves.append(canonical)
    assert state.outcome is not None and state.outcome.termination == "castle"
    board = new_board(svc)
    play(svc, board, moves)
    [done] = archive.archive(db, out)
    record = parse_record(done.path.read_text(encoding="utf-8"))
    expected = "1-0" if state.outcome.winner == 0 else "0-1"
    assert record.tags["Result"] == expected
    assert record.tags["Termination"] == "castle"
    rep = replay(record)
    assert (rep.result, rep.termination) == (expected, "castle")
    assert rep.state.dump() == state.dump()


def test_variant_and_options_travel_with_the_record(
    svc: Service, db: store.Database, out: Path
) -> None:
    board = new_board(svc, variant="pari", castle_win="next_turn")
    moves = random_moves(5, 4, "pari")
    play(svc, board, moves)
    svc.resign(board, "alice", ADMIN)
    [done] = archive.archive(db, out)
    record = parse_record(done.path.read_text(encoding="utf-8"))
    assert record.variant == "pari"
    assert record.options() == {"castle_win": "next_turn", "d4_opening": "allowed"}
    rep = replay(record)
    assert rep.state.variant == "pari"
    assert rep.state.options["castle_win"] == "next_turn"
    assert rep.result == "0-1"


def test_a_game_resigned_before_any_move(svc: Service, db: store.Database, out: Path) -> None:
    board = new_board(svc)
    svc.resign(board, "alice", ADMIN)
    [done] = archive.archive(db, out)
    text = done.path.read_text(encoding="utf-8")
    assert text.endswith(
        '[Termination "resign"]\n[Option "castle_win=immediate d4_opening=allowed"]\n\n0-1\n'
    )
    assert replay(parse_record(text)).result == "0-1"


def test_json_record(svc: Service, db: store.Database, clock: Clock, out: Path) -> None:
    board = new_board(svc)
    moves = random_moves(2, 2)
    play(svc, board, moves, comments={0: "a {braced} (note)"})
    svc.resign(board, "alice", ADMIN)
    [done] = archive.archive(db, out, fmt="json")
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
    svc: Service, db: store.Database, clock: Clock, out: Path
) -> None:
    active = new_board(svc)
    play(svc, active, random_moves(3, 1))
    cancelled = new_board(svc)
    svc.cancel(cancelled, "alice", ADMIN)
    early = new_board(svc)
    play(svc, early, random_moves(4, 1))
    svc.resign(early, "bob", ADMIN)
    clock.advance(days=10)
    late = new_board(svc)
    play(svc, late, random_moves(6, 1))
    svc.resign(late, "bob", ADMIN)

    assert archive.pending_boards(db) == [early, late]
    assert archive.pending_boards(db, since=T0 + timedelta(days=5)) == [late]
    assert archive.pending_boards(db, since=T0 + timedelta(days=11)) == []

    ticks: list[int] = []
    done = archive.archive(db, out, since=T0 + timedelta(days=5), progress=ticks.append)
    assert [d.board for d in done] == [late]
    assert ticks == [1]
    assert archive.pending_boards(db) == [early]
    done = archive.archive(db, out, progress=ticks.append)
    assert [d.board for d in done] == [early]
    assert ticks == [1, 1]
    assert archive.archive(db, out) == []
    assert sorted(p.name for p in out.iterdir()) == sorted(
        f"accasta-board-{b}.txt" for b in (early, late)
    )
    # Archived games are still there to look at.
    assert {b.board for b in svc.list_boards("finished")} == {early, late}
    assert svc.board_view(early).status == "finished"

    with pytest.raises(ValueError, match=f"board {active} is not a finished game"):
        archive.archive_board(db, active, out, "text", clock.now)


def test_a_record_that_cannot_be_written_leaves_the_game_to_the_next_run(
    svc: Service, db: store.Database, out: Path
) -> None:
    board = new_board(svc)
    svc.resign(board, "alice", ADMIN)
    blocker = out / f"accasta-board-{board}.txt"
    blocker.mkdir()
    with pytest.raises(OSError):
        archive.archive(db, out)
    assert archived_at(db, board) is None
    assert [p.name for p in out.iterdir()] == [blocker.name]  # no temporary file left
    blocker.rmdir()
    assert [d.board for d in archive.archive(db, out)] == [board]
    assert archived_at(db, board) is not None


def test_an_existing_record_is_replaced_whole(svc: Service, db: store.Database, out: Path) -> None:
    board = new_board(svc)
    svc.resign(board, "alice", ADMIN)
    path = out / f"accasta-board-{board}.txt"
    path.write_text("an old, longer file " * 100, encoding="utf-8")
    [done] = archive.archive(db, out)
    assert done.path == path
    assert path.read_text(encoding="utf-8").startswith('[Game "Accasta"]')
    assert path.read_text(encoding="utf-8").endswith("\n0-1\n")
    assert [p.name for p in out.iterdir()] == [path.name]


def test_ended_is_when_the_game_ended_not_its_last_move(
    svc: Service, db: store.Database, clock: Clock, out: Path
) -> None:
    """A game resigned days after its last move ends, in the record, on the day it ended."""
    board = new_board(svc)
    svc.move(board, "alice", ADMIN, "a1:C+b2,HS-c1")
    clock.advance(days=5)
    svc.resign(board, "bob", ADMIN)
    # --since counts from the end too: a day before the resignation finds it.
    assert archive.pending_boards(db, since=clock.now - timedelta(days=1)) == [board]
    [done] = archive.archive(db, out, now=clock.now)
    tags = parse_record(done.path.read_text(encoding="utf-8")).tags
    assert tags["Ended"] == f"{clock.now:%Y.%m.%d}" != f"{T0:%Y.%m.%d}"
