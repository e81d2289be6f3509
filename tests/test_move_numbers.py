"""Move numbers are one system per game: Accasta numbers every turn, chess pairs of them;
the board mail's header, ``#N``, the move list, the history and the record count alike."""

from __future__ import annotations

import re

from conftest import accepted

from pbm.usecases import queries, unit
from pbm.usecases.auth import Password, Who
from pbm.usecases.challenges import Challenge
from pbm.usecases.moves import Move, Resign
from pbm.usecases.queries.reading import History
from pbm.usecases.records import formats
from pbm.usecases.site import Site

ALICE = "alice@example.org"


def play(site: Site, board: int, moves: list[str]) -> tuple[str, ...]:
    bodies: tuple[str, ...] = ()
    for n, move in enumerate(moves):
        uid = "alice" if n % 2 == 0 else "bob"
        bodies = tuple(r.body for r in unit.run(site, Move(board, move), Who(uid, Password("pw"))))
    return bodies


def test_accasta_counts_every_turn_everywhere(site: Site) -> None:
    board = accepted(site, Challenge("accasta", "alice", "bob", sender=ALICE))
    moves = []
    for _ in range(3):
        move = str(queries.board(site, board).state.legal_moves()[0])
        moves.append(queries.board(site, board).state.play(move)[1])
        play_one(site, board, move, "alice" if len(moves) % 2 else "bob")
    body = unit.run(site, History(board, ALICE))[0].body
    assert re.search(rf"^\s+3\. alice\s+{re.escape(moves[2])}", body, re.M)
    mail = queries.view(site, board)
    assert mail.move_number(3) == 3
    text = formats.record_text(queries.board(site, board))
    assert f"1. {moves[0]} 2. {moves[1]}\n3. {moves[2]}\n" in text


def play_one(site: Site, board: int, move: str, uid: str) -> tuple[str, ...]:
    replies = unit.run(site, Move(board, move), Who(uid, Password("pw")))
    return tuple(r.body for r in replies)


def test_chess_counts_pairs_and_its_history_shows_the_result(site: Site) -> None:
    board = accepted(site, Challenge("chess", "alice", "bob", sender=ALICE))
    bodies = play(site, board, ["e4", "e5", "Nf3"])
    assert any(re.search(r"^  1\. e4 +e5\n  2\. Nf3$", b, re.M) for b in bodies)
    unit.run(site, Resign(board), Who("bob", Password("pw")))
    body = unit.run(site, History(board, ALICE))[0].body
    assert re.search(r"^\s+1\. alice\s+e4\b", body, re.M)
    assert re.search(r"^\s+1\.\.\. bob\s+e5\b", body, re.M)
    assert re.search(r"^\s+2\. alice\s+Nf3\b", body, re.M)
    assert "Result: 1-0 (resign)" in body
