"""The Go board as a value: points, stones, captures, chains and whole-board hashes.

A position is a ``str`` of ``size * size`` characters, ``.`` empty, ``b``
a black stone, ``w`` a white one (sgfmill's colour letters), row by row
from the bottom (row 0 is row 1 of the notation) and left to right in a
row. A point is its index in that string: ``row * size + col``.

Placing a stone and taking off what it captures is sgfmill's
(``sgfmill.boards.Board.play``); what sgfmill leaves to its caller is here:
refusing suicide, and the Zobrist hash of a whole position by which
``position`` refuses a move that repeats one (positional superko).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Iterator
from functools import cache

from sgfmill.boards import Board

__all__ = [
    "BLACK",
    "EMPTY",
    "SIZES",
    "WHITE",
    "Placed",
    "Suicide",
    "chain",
    "empty_grid",
    "handicap_points",
    "neighbours",
    "opponent",
    "place",
    "quiet",
    "star_points",
    "zobrist",
    "zobrist_key",
]

BLACK, WHITE, EMPTY = "b", "w", "."
SIZES = (9, 13, 19)


def opponent(colour: str) -> str:
    return WHITE if colour == BLACK else BLACK


def empty_grid(size: int) -> str:
    return EMPTY * (size * size)


@cache
def neighbours(size: int) -> tuple[tuple[int, ...], ...]:
    """The points next to each point (up, down, left, right where the board goes on)."""
    out: list[tuple[int, ...]] = []
    for p in range(size * size):
        row, col = divmod(p, size)
        near = []
        if row > 0:
            near.append(p - size)
        if row < size - 1:
            near.append(p + size)
        if col > 0:
            near.append(p - 1)
        if col < size - 1:
            near.append(p + 1)
        out.append(tuple(near))
    return tuple(out)


@cache
def star_points(size: int) -> tuple[int, ...]:
    """The marked points (hoshi): the corners' and the centre's on 9x9 (third line) and
    13x13 (fourth line), and the sides' too on 19x19."""
    edge = 2 if size < 13 else 3
    low, mid, high = edge, size // 2, size - 1 - edge
    if size < 19:
        marked = [(low, low), (low, high), (mid, mid), (high, low), (high, high)]
    else:
        marked = [(r, c) for r in (low, mid, high) for c in (low, mid, high)]
    return tuple(sorted(r * size + c for r, c in marked))


def handicap_points(size: int, stones: int) -> tuple[int, ...]:
    """Where ``stones`` fixed handicap stones go, as GTP's ``fixed_handicap`` puts them:
    two on opposite corners, then the other corners, then the sides, the centre when
    the number is odd (from five up)."""
    if stones < 2:
        return ()
    edge = 2 if size < 13 else 3
    low, mid, high = edge, size // 2, size - 1 - edge

    def at(row: int, col: int) -> int:
        return row * size + col

    corners = [at(high, high), at(low, low), at(high, low), at(low, high)]
    sides = [at(mid, low), at(mid, high), at(low, mid), at(high, mid)]
    chosen = corners[: min(stones, 4)]
    if stones >= 6:
        chosen += sides[: 2 if stones < 8 else 4]
    if stones % 2 == 1 and stones >= 5:
        chosen.append(at(mid, mid))
    return tuple(sorted(chosen))


@cache
def _keys(size: int) -> tuple[dict[str, int], ...]:
    """A 64-bit key for each colour on each point, from BLAKE2b of its name: the hashes are
    stored in a dumped game (``GoState.dump``), so they must never change, and a hash of
    the name makes them the same on every machine and Python without a table to keep."""
    keys = []
    for p in range(size * size):
        keys.append(
            {
                colour: int.from_bytes(
                    hashlib.blake2b(f"pbm go {size} {p} {colour}".encode(), digest_size=8).digest()
                )
                for colour in (BLACK, WHITE)
            }
        )
    return tuple(keys)


def zobrist(grid: str, size: int) -> int:
    """The Zobrist hash of a position: equal positions hash alike (the player to move is
    not part of it: superko here is positional)."""
    keys = _keys(size)
    h = 0
    for p, stone in enumerate(grid):
        if stone != EMPTY:
            h ^= keys[p][stone]
    return h


def zobrist_key(size: int, point: int, colour: str) -> int:
    """What a stone of ``colour`` on ``point`` adds to (xors into) a position's hash."""
    return _keys(size)[point][colour]


def quiet(grid: str, size: int, point: int, colour: str) -> bool:
    """Whether a stone on the empty ``point`` surely captures nothing and is no suicide:
    it has an empty neighbour and no enemy one. Its position's hash is then the current
    one with its key added, and no board need be built to judge it."""
    enemy = opponent(colour)
    near = [grid[n] for n in neighbours(size)[point]]
    return EMPTY in near and enemy not in near


def chain(grid: str, size: int, point: int) -> frozenset[int]:
    """The stones connected to the one on ``point`` (empty: no stones)."""
    colour = grid[point]
    if colour == EMPTY:
        return frozenset()
    near = neighbours(size)
    found = {point}
    todo = [point]
    while todo:
        for n in near[todo.pop()]:
            if n not in found and grid[n] == colour:
                found.add(n)
                todo.append(n)
    return frozenset(found)


def chains(grid: str, size: int) -> Iterator[frozenset[int]]:
    """Every chain on the board, each once."""
    seen: set[int] = set()
    for p, stone in enumerate(grid):
        if stone != EMPTY and p not in seen:
            found = chain(grid, size, p)
            seen |= found
            yield found


def liberties(grid: str, size: int, stones: Iterable[int]) -> frozenset[int]:
    near = neighbours(size)
    return frozenset(n for p in stones for n in near[p] if grid[n] == EMPTY)


class Suicide(ValueError):
    """A stone that would leave its own chain without a liberty, capturing nothing."""


class Placed:
    """A stone placed: the position after it, how many stones it took, the ko point."""

    __slots__ = ("captured", "grid", "ko")

    def __init__(self, grid: str, captured: int, ko: int | None) -> None:
        self.grid = grid
        self.captured = captured
        self.ko = ko  # the point the opponent may not take back on at once (simple ko)


def place(grid: str, size: int, point: int, colour: str) -> Placed:
    """``colour``'s stone on the empty ``point``, with its captures (sgfmill's play).

    Raises ``Suicide`` when the stone would be taken off by its own move: sgfmill
    allows that, these rules do not.
    """
    board = Board(size)
    rows = [
        [None if s == EMPTY else s for s in grid[r * size : (r + 1) * size]] for r in range(size)
    ]
    board.board = rows
    board._is_empty = False  # what sgfmill keeps beside its rows: at least this stone
    row, col = divmod(point, size)
    ko = board.play(row, col, colour)
    if rows[row][col] is None:
        raise Suicide(point)
    after = "".join(s or EMPTY for line in rows for s in line)
    enemy = opponent(colour)
    captured = grid.count(enemy) - after.count(enemy)
    return Placed(after, captured, None if ko is None else ko[0] * size + ko[1])
