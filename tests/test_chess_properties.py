"""Property tests over seeded random chess games (hypothesis), python-chess as the reference.

Each example is a game chosen move by move from a list of numbers; captures
are preferred now and then so that games reach their ends (mate, stalemate,
insufficient material) within the plies a test can afford.
"""

from __future__ import annotations

import io
import random
from datetime import UTC, datetime

import chess
import chess.pgn
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from pbm.games import GameRecord, RecordedMove
from pbm.games.chess import CHESS, ChessState
from pbm.games.chess.ending import outcome_of
from pbm.games.chess.notation import parse_move
from pbm.games.chess.pgn import read_pgn, write_pgn

PROPS = settings(
    max_examples=40,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
# A game: a seed for its choices and its length in plies (long enough to end, often).
GAMES = st.tuples(
    st.integers(min_value=0, max_value=2**32), st.integers(min_value=1, max_value=400)
)


def choose(board: chess.Board, choice: int) -> chess.Move:
    """A legal move: a capture when there is one and ``choice`` says so."""
    moves = list(board.legal_moves)
    captures = [m for m in moves if board.is_capture(m)]
    if captures and choice % 3 == 0:
        return captures[(choice // 3) % len(captures)]
    return moves[choice % len(moves)]


def playout(seed: int, length: int) -> tuple[ChessState, chess.Board, list[str]]:
    """A game of up to ``length`` plies chosen by ``seed``, checked ply by ply."""
    rng = random.Random(seed)
    state = CHESS.new()
    reference = chess.Board()
    sans: list[str] = []
    for _ in range(length):
        choice = rng.randrange(2**16)
        if state.outcome is not None:
            break
        legal = state.legal_moves()
        assert legal == sorted(reference.san(m) for m in reference.legal_moves)
        if state.ply % 3 == 0:  # every canonical SAN reads back as itself (every third ply: time)
            for san in legal:
                assert state.board.san(parse_move(state.board, san)) == san
        move = choose(reference, choice)
        san = reference.san(move)
        for text in (reference.lan(move), move.uci()):  # long algebraic and coordinates
            assert parse_move(state.board, text) == move
        state, played = state.play(san)
        assert played == san
        reference.push(move)
        sans.append(san)
        assert state.fen == reference.fen()
        assert state.ply == len(sans) and state.to_move == len(sans) % 2
    return state, reference, sans


def as_record(sans: list[str], result: str) -> GameRecord:
    return GameRecord(
        game="chess",
        variant="standard",
        options={},
        board=1,
        players=("white", "black"),
        started=datetime(2025, 1, 1, tzinfo=UTC),
        ended=None,
        result=result,
        termination=None,
        moves=tuple(RecordedMove(n, san, f"{{move {n}}}") for n, san in enumerate(sans, 1)),
        site="pbm@example.org",
        nag_days=7,
        forfeit_days=21,
    )


@PROPS
@given(GAMES)
def test_random_games_against_python_chess(game: tuple[int, int]) -> None:
    state, reference, sans = playout(*game)
    outcome = state.outcome
    event(outcome.termination if outcome else "going on")
    assert outcome == outcome_of(reference.copy())

    loaded = CHESS.load(state.dump())
    assert loaded == state
    assert loaded.fen == state.fen
    assert loaded.legal_moves() == state.legal_moves()
    assert loaded.outcome == state.outcome
    assert loaded.claimable == state.claimable
    assert loaded.diagram(1) == state.diagram(1)

    text = write_pgn(as_record(sans, outcome.result() if outcome else "*"))
    written = chess.pgn.read_game(io.StringIO(text))
    assert written is not None and not written.errors
    assert written.end().board().fen() == state.fen
    read = read_pgn(text)
    assert [m.notation for m in read.moves] == sans
    assert read.tags["PlyCount"] == str(len(sans))
    assert read.result == (outcome.result() if outcome else None)

    for seat in (None, 0, 1):
        lines = state.diagram(seat).splitlines()
        assert lines[-1] == f"FEN: {reference.fen()}"
        assert all(len(line) <= 78 and line == line.rstrip() for line in lines[:-1])
