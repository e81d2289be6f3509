"""How chess things are named for players: colours, lists, move numbers, pieces on squares."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import chess

COLOURS = {chess.WHITE: "White", chess.BLACK: "Black"}


def colour(side: chess.Color) -> str:
    """``White`` or ``Black``."""
    return COLOURS[side]


def either(words: Sequence[str], conjunction: str = "or") -> str:
    """``a``, ``a or b``, ``a, b or c``."""
    if len(words) <= 1:
        return "".join(words)
    return f"{', '.join(words[:-1])} {conjunction} {words[-1]}"


def move_number(board: chess.Board) -> str:
    """The number of the move about to be played: ``12.`` for White, ``12...`` for Black."""
    dots = "." if board.turn == chess.WHITE else "..."
    return f"{board.fullmove_number}{dots}"


def pieces(board: chess.Board, squares: Iterable[chess.Square]) -> str:
    """``the bishop on c4 and the queen on h5``."""
    named = []
    for sq in squares:
        piece = board.piece_at(sq)
        name = chess.piece_name(piece.piece_type) if piece else "piece"
        named.append(f"the {name} on {chess.square_name(sq)}")
    return either(named, "and")
