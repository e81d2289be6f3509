"""The chess board as plain text for a mail, seen from the reader's side.

White's view (seat 0 or None), after 1.e4::

                Black
       a  b  c  d  e  f  g  h
    8  r  n  b  q  k  b  n  r  8
    7  p  p  p  p  p  p  p  p  7
    6  .  .  .  .  .  .  .  .  6
    5  .  .  .  .  .  .  .  .  5
    4  .  .  .  . [P] .  .  .  4
    3  .  .  .  .  .  .  .  .  3
    2  P  P  P  P [.] P  P  P  2
    1  R  N  B  Q  K  B  N  R  1
       a  b  c  d  e  f  g  h
                White

    Last move: 1. e4 (e2-e4)
    Black to move (move 1)
    Pieces: K king, Q queen, R rook, B bishop, N knight, P pawn
    White in capitals, Black in small letters, . empty, [ ] the last move
    FEN: rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1

(shown indented here). Black's view turns the board round: rank 1 at the
top, file h on the left. Below the board: the last move, "Check!", whose
turn it is or the result, a draw that may be claimed, the legend, and the
FEN on one line for analysis programs (python-chess's, which names an en
passant square only when the capture is legal). Letters and dots only, so
that any mail font shows it; no line ends in a space, and none is longer
than 78 columns but the FEN line, which a crowded position can stretch to
about 90 (it stays whole so that it can be pasted).
"""

from __future__ import annotations

import chess

from pbm.games import Outcome
from pbm.games.chess.ending import verdict
from pbm.games.chess.words import colour, move_number

LEGEND = (
    "Pieces: K king, Q queen, R rook, B bishop, N knight, P pawn",
    "White in capitals, Black in small letters, . empty, [ ] the last move",
)


def _cell(board: chess.Board, square: chess.Square, marked: set[chess.Square]) -> str:
    piece = board.piece_at(square)
    symbol = piece.symbol() if piece else "."
    return f"[{symbol}]" if square in marked else f" {symbol} "


def board_lines(board: chess.Board, seat: int | None = None) -> list[str]:
    """The board with its file letters and rank numbers, the reader's side below."""
    black_view = seat == 1
    files = range(7, -1, -1) if black_view else range(8)
    ranks = range(8) if black_view else range(7, -1, -1)
    last = board.move_stack[-1] if board.move_stack else None
    marked = {last.from_square, last.to_square} if last else set()
    letters = "    " + "".join(f" {chess.FILE_NAMES[f]} " for f in files)
    top, bottom = ("White", "Black") if black_view else ("Black", "White")
    lines = [f"{'':12}{top}", letters.rstrip()]
    for r in ranks:
        cells = "".join(_cell(board, chess.square(f, r), marked) for f in files)
        lines.append(f"  {r + 1} {cells} {r + 1}")
    lines += [letters.rstrip(), f"{'':12}{bottom}"]
    return lines


def last_move(board: chess.Board) -> str | None:
    """``Last move: 12... Nf6 (g8-f6)``, or None before the first move."""
    if not board.move_stack:
        return None
    move = board.move_stack[-1]
    before = board.copy()
    before.pop()
    squares = f"{chess.square_name(move.from_square)}-{chess.square_name(move.to_square)}"
    return f"Last move: {move_number(before)} {before.san(move)} ({squares})"


def render(
    board: chess.Board,
    seat: int | None = None,
    outcome: Outcome | None = None,
    claimable: str | None = None,
    ended: str | None = None,
) -> str:
    """The whole diagram: board, last move, check, whose turn or the result, legend, FEN.

    ``ended``: how a game the position does not end ended (resignation...), in
    place of whose turn it is.
    """
    lines = [*board_lines(board, seat), ""]
    last = last_move(board)
    if last is not None:
        lines.append(last)
    if outcome is not None:
        lines.append(verdict(outcome))
    elif ended is not None:
        lines.append(ended)
    else:
        if board.is_check():
            lines.append("Check!")
        lines.append(f"{colour(board.turn)} to move (move {board.fullmove_number})")
        if claimable is not None:
            lines.append(f"A draw may be claimed: {claimable}")
    lines += [*LEGEND, f"FEN: {board.fen()}"]
    return "\n".join(line.rstrip() for line in lines) + "\n"
