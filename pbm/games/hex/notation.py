"""Reading moves: a cell as its column letter and row number (``g7``), or ``swap``.

Columns run a, b, c... from the left and rows 1, 2, 3... from the top, as
Little Golem and HexGui write them. Capitals and a space between letter
and number are forgiven (``G7``, ``g 7``), as are the marks a player adds
after a move (``g7!``); the canonical form is lower case without a space.
"""

from __future__ import annotations

import re
from typing import Final, Literal

from pbm.games import BadNotation, IllegalMove
from pbm.games.hex.board import LETTERS

__all__ = ["SWAP", "Move", "looks_like_move", "looks_like_phrase", "parse_move"]

SWAP: Final = "swap"
Move = int | Literal["swap"]  # a cell's number (``board``), or the swap

# Any letter, not just a to s: z99 is meant as a move, and is refused as off the board.
_CELL = re.compile(r"^([a-z])\s*([0-9]{1,2})$")
_WORD = re.compile(r"^(?:[a-zA-Z][0-9]{1,2}|swap)[!?.,;]*$", re.IGNORECASE)
_PHRASE = re.compile(r"^[a-zA-Z]\s+[0-9]{1,2}[!?.,;]*$")  # "g 7": a cell in two words
_MARKS = "!?.,;"  # annotation and punctuation after a move


def looks_like_move(word: str) -> bool:
    """Whether ``word`` is written like a move (a letter and a number, or swap): no rules.

    A lone letter is not: ``g 7`` is read as a move from its two words together."""
    return _WORD.match(word.strip()) is not None


def looks_like_phrase(text: str) -> bool:
    """Whether a text of several words is written as one move: a cell with a space between
    its letter and number (``g 7``), as a reply may split it."""
    return _PHRASE.match(text.strip()) is not None


def parse_move(text: str, size: int) -> Move:
    """The move ``text`` writes on a board of ``size``: a cell's number, or ``SWAP``.

    ``BadNotation`` for text that is no move at all, ``IllegalMove`` for a
    cell off the board, each saying what to write instead."""
    written = " ".join(text.split())
    word = written.lower().rstrip(_MARKS).strip()
    if word == SWAP:
        return SWAP
    found = _CELL.match(word)
    if found is None:
        raise BadNotation(
            f"{written!r} is not a move: write a cell as its column letter and row "
            f"number, such as g7, or swap"
        )
    letter, number = found.group(1), int(found.group(2))
    col, row = LETTERS.find(letter), number - 1
    if not (0 <= col < size and 0 <= row < size):
        raise IllegalMove(
            f"{letter}{number} is not on the board: this {size}x{size} board has columns "
            f"a to {LETTERS[size - 1]} and rows 1 to {size}"
        )
    return row * size + col
