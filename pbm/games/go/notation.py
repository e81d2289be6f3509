"""Moves as players write them: ``D4``, ``Q16``, ``pass``, SGF's ``dd``; the scoring words.

Points are named as Go programs name them: a column letter, A to T
without I (so that it is not taken for J or 1), and the row's number
from the bottom, 1 to 19: ``D4`` is the fourth line from the left and the
bottom. Letters may be written in either case; the canonical form is upper
case. SGF's points are read too: two letters, column then row, the row
counted from the top (``dd`` is D16 on 19x19, D6 on 9x9).

The scoring phase's moves are ``accept``, ``resume`` and ``dead`` or
``alive`` followed by points (``dead D4 E5``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from pbm.games import BadNotation, IllegalMove

__all__ = [
    "ACCEPT",
    "ALIVE",
    "COLUMNS",
    "DEAD",
    "PASS",
    "RESUME",
    "Marking",
    "looks_like_move",
    "looks_like_phrase",
    "parse_point",
    "point_name",
    "sgf_point",
]

COLUMNS = "ABCDEFGHJKLMNOPQRST"
PASS, ACCEPT, RESUME, DEAD, ALIVE = "pass", "accept", "resume", "dead", "alive"
SCORING_WORDS = (ACCEPT, RESUME, DEAD, ALIVE)

_GO_POINT = re.compile(r"^([a-z])(\d{1,2})$", re.IGNORECASE)
_SGF_POINT = re.compile(r"^[a-z]{2}$", re.IGNORECASE)
_WRITE = "write a point such as D4 or Q16 (a column A to T, no I; a row from the bottom)"


def point_name(point: int, size: int) -> str:
    """``D4`` for the point at row 3, column 3."""
    row, col = divmod(point, size)
    return f"{COLUMNS[col]}{row + 1}"


def sgf_point(point: int, size: int) -> str:
    """The point as SGF writes it (``dd``): column, then row from the top."""
    row, col = divmod(point, size)
    return "abcdefghijklmnopqrs"[col] + "abcdefghijklmnopqrs"[size - 1 - row]


def _edge(size: int) -> str:
    return f"columns A to {COLUMNS[size - 1]} (no I), rows 1 to {size}"


def parse_point(text: str, size: int) -> int:
    """The point ``text`` names on a board of ``size`` lines.

    ``BadNotation`` for text that names no point on any board; ``IllegalMove``
    for a point off this board (``T20`` on 19x19).
    """
    word = text.strip()
    go = _GO_POINT.match(word)
    if go is not None:
        letter, number = go.group(1).upper(), int(go.group(2))
        if letter == "I":
            raise BadNotation(f"{word} is no point: Go columns skip I (H is followed by J)")
        if letter not in COLUMNS:
            raise BadNotation(f"{word} is no point: the columns are A to T without I")
        col, row = COLUMNS.index(letter), number - 1
        if not (0 <= row < size and col < size):
            raise IllegalMove(f"{word} is off the {size}x{size} board: {_edge(size)}")
        return row * size + col
    if _SGF_POINT.match(word):
        col, row_from_top = (ord(c) - ord("a") for c in word.lower())
        if not (col < size and row_from_top < size):
            raise IllegalMove(
                f"{word} is off the {size}x{size} board: SGF points run from aa to "
                f"{'abcdefghijklmnopqrs'[size - 1] * 2}"
            )
        return (size - 1 - row_from_top) * size + col
    raise BadNotation(f"{word!r} is not a move: {_WRITE}, an SGF point such as dd, or pass")


@dataclass(frozen=True, slots=True)
class Marking:
    """A change to the dead stones in the scoring phase: ``dead`` or ``alive`` and points."""

    word: str  # DEAD or ALIVE
    points: tuple[int, ...]


def parse_marking(words: list[str], size: int) -> Marking:
    """``dead D4 E5`` or ``alive Q16``: the word and the points named (commas allowed)."""
    word = words[0].lower()
    named = [w for part in words[1:] for w in part.split(",") if w]
    if not named:
        raise BadNotation(
            f"{word} what? Name a stone of each group: {word} D4, or {word} D4 E5 for two"
        )
    points: list[int] = []
    for w in named:
        p = parse_point(w, size)
        if p not in points:
            points.append(p)
    return Marking(word, tuple(points))


def looks_like_move(text: str) -> bool:
    """Whether a word is meant as a Go move: a point (``D4``), ``pass``, or a word of the
    scoring phase (``dead``, ``alive``, ``resume``). ``accept`` is the shell's command
    word (it plays it as a move in the scoring phase); SGF's two letters (``dd``) are
    read by ``play`` but not guessed at in a reply, where they would be words like "ok"."""
    word = text.strip().lower()
    if word in (PASS, RESUME, DEAD, ALIVE):
        return True
    # Any letter and number: ``I9`` and ``Z1`` reach ``play``, which says why they are no point.
    return _GO_POINT.match(word) is not None


def looks_like_phrase(text: str) -> bool:
    """Whether a text of several words is meant as one Go move: a marking of the scoring
    phase (``dead D4 E5``, ``alive Q16``, commas allowed) or a point split in two
    (``D 4``, as a reply may write it)."""
    words = text.replace(",", " ").split()
    if len(words) < 2:
        return False
    if words[0].lower() in (DEAD, ALIVE):
        return all(_GO_POINT.match(w) for w in words[1:])
    return _GO_POINT.match("".join(words)) is not None
