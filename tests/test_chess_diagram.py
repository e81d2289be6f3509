"""Tests for the chess board diagram (pbm.games.chess.diagram) and the ``help chess`` text."""

from __future__ import annotations

import re

import chess
import pytest

from pbm.games.chess import CHESS, ChessState
from pbm.games.chess.help import HELP

START_WHITE = """\
            Black
     a  b  c  d  e  f  g  h
  8  r  n  b  q  k  b  n  r  8
  7  p  p  p  p  p  p  p  p  7
  6  .  .  .  .  .  .  .  .  6
  5  .  .  .  .  .  .  .  .  5
  4  .  .  .  .  .  .  .  .  4
  3  .  .  .  .  .  .  .  .  3
  2  P  P  P  P  P  P  P  P  2
  1  R  N  B  Q  K  B  N  R  1
     a  b  c  d  e  f  g  h
            White

White to move (move 1)
Pieces: K king, Q queen, R rook, B bishop, N knight, P pawn
White in capitals, Black in small letters, . empty, [ ] the last move
FEN: rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1
"""

AFTER_NF3_BLACK = """\
            White
     h  g  f  e  d  c  b  a
  1  R [.] B  K  Q  B  N  R  1
  2  P  P  P  P  P  P  P  P  2
  3  .  . [N] .  .  .  .  .  3
  4  .  .  .  .  .  .  .  .  4
  5  .  .  .  .  .  .  .  .  5
  6  .  .  .  .  .  .  .  .  6
  7  p  p  p  p  p  p  p  p  7
  8  r  n  b  k  q  b  n  r  8
     h  g  f  e  d  c  b  a
            Black

Last move: 1. Nf3 (g1-f3)
Black to move (move 1)
Pieces: K king, Q queen, R rook, B bishop, N knight, P pawn
White in capitals, Black in small letters, . empty, [ ] the last move
FEN: rnbqkbnr/pppppppp/8/8/8/5N2/PPPPPPPP/RNBQKB1R b KQkq - 1 1
"""


def play(*moves: str) -> ChessState:
    state = CHESS.new()
    for move in moves:
        state, _ = state.play(move)
    return state


def reference_board(*moves: str) -> chess.Board:
    board = chess.Board()
    for move in moves:
        board.push_san(move)
    return board


def assert_mail_text(text: str) -> None:
    assert text.endswith("\n") and not text.endswith("\n\n")
    for line in text.splitlines():
        assert line == line.rstrip(), repr(line)
        assert len(line) <= 78, line
        assert line.isascii(), line


def test_start_from_whites_side() -> None:
    assert CHESS.new().diagram() == START_WHITE
    assert CHESS.new().diagram(0) == START_WHITE
    assert_mail_text(START_WHITE)


def test_black_reads_with_rank_1_at_the_top_and_file_h_on_the_left() -> None:
    text = play("Nf3").diagram(1)
    assert text == AFTER_NF3_BLACK
    assert_mail_text(text)


def test_last_move_marked_from_whites_side_too() -> None:
    lines = play("e4", "e5").diagram().splitlines()
    assert lines[3] == "  7  p  p  p  p [.] p  p  p  7"
    assert lines[4] == "  6  .  .  .  .  .  .  .  .  6"
    assert lines[5] == "  5  .  .  .  . [p] .  .  .  5"
    assert lines[6] == "  4  .  .  .  .  P  .  .  .  4"
    assert "Last move: 1... e5 (e7-e5)" in lines
    assert "White to move (move 2)" in lines


def test_check_is_announced() -> None:
    text = play("e4", "f5", "Qh5+").diagram(1)
    assert "Check!\nBlack to move (move 2)\n" in text
    assert "Last move: 2. Qh5+ (d1-h5)" in text
    assert "Check!" not in play("e4", "f5").diagram()


@pytest.mark.parametrize(
    "moves",
    [
        (),
        ("e4",),
        ("e4", "d5", "e5", "f5"),  # en passant possible: python-chess names e.g. f6
        ("e4", "e5", "Nf3", "Nc6", "Bc4", "Bc5", "O-O"),
    ],
)
def test_fen_line_is_python_chess_fen(moves: tuple[str, ...]) -> None:
    for seat in (None, 0, 1):
        fen = play(*moves).diagram(seat).splitlines()[-1]
        assert fen == f"FEN: {reference_board(*moves).fen()}"


def test_results_instead_of_the_turn() -> None:
    mate = play("e4", "e5", "Bc4", "Nc6", "Qh5", "Nf6", "Qxf7#").diagram(1)
    assert "White wins: checkmate\n" in mate
    assert "to move" not in mate and "Check!" not in mate
    stalemate = play(
        *("e3", "a5", "Qh5", "Ra6", "Qxa5", "h5", "h4", "Rah6", "Qxc7", "f6"),
        *("Qxd7+", "Kf7", "Qxb7", "Qd3", "Qxb8", "Qh7", "Qxc8", "Kg6", "Qe6"),
    ).diagram()
    assert "Draw: stalemate\n" in stalemate
    assert "Last move: 10. Qe6 (c8-e6)" in stalemate
    assert_mail_text(stalemate)
    fools = play("f3", "e5", "g4", "Qh4#").diagram()
    assert "Black wins: checkmate" in fools


def test_a_claimable_draw_is_mentioned() -> None:
    text = play(*("Nf3", "Nf6", "Ng1", "Ng8") * 2).diagram()
    assert "White to move (move 5)\nA draw may be claimed: threefold repetition\n" in text
    assert "claimed" not in play("Nf3", "Nf6", "Ng1", "Ng8").diagram()


# --- help chess -----------------------------------------------------------------------


def test_help_is_plain_ascii_of_mail_width() -> None:
    assert CHESS.help_text() == HELP
    assert_mail_text(HELP)


def test_help_names_the_commands_and_rules() -> None:
    for words in (
        "chess challenge UID1 UID2",
        "UID1 plays White",
        "chess move B UID PW MOVE",
        "chess draw B UID PW",
        "chess accept B UID PW",
        "chess reject B UID PW",
        "chess claim B UID PW",
        "resign",
        "undo",
        "show",
        "history",
        "moves",
        "followed by claim",
        "threefold repetition",
        "fifty-move rule",
        "fivefold repetition",
        "75-move rule",
        "insufficient material",
        "stalemate",
        "agreement",
    ):
        assert words in HELP, words


def test_help_examples_from_the_start_are_legal_and_equal() -> None:
    examples = re.findall(r"\(start: ([^)]*)\)", HELP)
    assert examples
    for example in examples:
        forms = [form.strip() for form in example.split("=")]
        played = {CHESS.new().play(form)[1] for form in forms}
        assert len(played) == 1, example


def test_help_notation_examples_are_read() -> None:
    for name in ("e4", "Nf3", "exd5", "O-O", "O-O-O", "e8=Q", "Ng1-f3", "e2e4", "e7e8q"):
        assert name in HELP
        assert CHESS.looks_like_move(name)
