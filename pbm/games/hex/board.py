"""The Hex board: a rhombus of N x N hexagonal cells, its names and who has connected.

Cells are numbered row by row from the top left: cell ``row * size + col``,
row 0 at the top (row 1 in the notation) and column 0 at the left (column
``a``), as Little Golem and HexGui name them. Each row lies half a cell
further right than the row above it, so a cell touches two cells of its own
row, the cell above it and the one above and right, the cell below it and
the one below and left.

Red (seat 0) joins the top and bottom rows; Blue (seat 1) the left and right
columns. The cells of a position are a string of ``.`` (empty), ``R`` (Red's
stone) and ``B`` (Blue's), in cell order. Pure functions of values.
"""

from __future__ import annotations

import functools

__all__ = [
    "BLUE",
    "DEFAULT_SIZE",
    "EMPTY",
    "LETTERS",
    "MAX_SIZE",
    "MIN_SIZE",
    "RED",
    "STONES",
    "cell_name",
    "connects",
    "mirror",
    "neighbours",
    "winner",
]

MIN_SIZE = 5
MAX_SIZE = 19  # HexGui's largest, and the widest that a mail's 78 columns hold
DEFAULT_SIZE = 13
LETTERS = "abcdefghijklmnopqrs"  # column names, as many as the largest board has columns

EMPTY = "."
RED = "R"
BLUE = "B"
STONES = (RED, BLUE)  # by seat: Red moves first


def cell_name(cell: int, size: int) -> str:
    """``g7`` for the cell in column g, row 7."""
    row, col = divmod(cell, size)
    return f"{LETTERS[col]}{row + 1}"


def mirror(cell: int, size: int) -> int:
    """The cell across the long diagonal (a1 to the far corner): column and row exchanged.

    The swap rule moves the first stone there: c2 becomes b3."""
    row, col = divmod(cell, size)
    return col * size + row


@functools.cache
def neighbours(size: int) -> tuple[tuple[int, ...], ...]:
    """Each cell's neighbours on a board of ``size``: up to six, fewer on the edges."""
    steps = ((-1, 0), (-1, 1), (0, -1), (0, 1), (1, -1), (1, 0))  # (row, column)
    out = []
    for row in range(size):
        for col in range(size):
            out.append(
                tuple(
                    (row + dr) * size + col + dc
                    for dr, dc in steps
                    if 0 <= row + dr < size and 0 <= col + dc < size
                )
            )
    return tuple(out)


def _find(parent: list[int], k: int) -> int:
    while parent[k] != k:
        parent[k] = parent[parent[k]]  # path halving keeps the trees flat
        k = parent[k]
    return k


def connects(cells: str, size: int, stone: str) -> bool:
    """Whether ``stone``'s stones join that player's two edges (union-find).

    Two extra nodes stand for the player's edges, so one lookup at the end
    answers: Red's are the top and bottom rows, Blue's the left and right
    columns."""
    n = size * size
    first, second = n, n + 1
    parent = list(range(n + 2))
    nbrs = neighbours(size)
    for k, here in enumerate(cells):
        if here != stone:
            continue
        row, col = divmod(k, size)
        along = row if stone == RED else col
        if along == 0:
            parent[_find(parent, k)] = _find(parent, first)
        if along == size - 1:
            parent[_find(parent, k)] = _find(parent, second)
        for j in nbrs[k]:
            if j < k and cells[j] == stone:  # each pair once: the earlier cell is placed
                parent[_find(parent, k)] = _find(parent, j)
    return _find(parent, first) == _find(parent, second)


def winner(cells: str, size: int) -> int | None:
    """The seat whose stones connect its edges, or None while neither does.

    Both cannot: a chain from top to bottom cuts every path from left to
    right (the Hex theorem), so the first found is the only one."""
    for seat, stone in enumerate(STONES):
        if connects(cells, size, stone):
            return seat
    return None
