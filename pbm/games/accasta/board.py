"""The Accasta board: 37 cells in rows a–g, six straight directions, two castles.

Cells are numbered 0..36 in the order a1..a4, b1..b5, ..., g1..g4. Geometry
uses "doubled" coordinates: a cell in row ``r`` (0 = a) at position ``i``
(0-based) sits at ``x = 2*i + |r - 3|``, so the six neighbours of ``(x, r)``
are ``(x±2, r)`` and ``(x±1, r±1)`` — the rows bend over row d exactly as the
help page's diagrams show.
"""

from __future__ import annotations

ROWS = "abcdefg"
ROW_LENGTHS = (4, 5, 6, 7, 6, 5, 4)

CELLS: tuple[str, ...] = tuple(
    f"{ROWS[r]}{i + 1}" for r, n in enumerate(ROW_LENGTHS) for i in range(n)
)
INDEX: dict[str, int] = {name: k for k, name in enumerate(CELLS)}
N_CELLS = len(CELLS)

COORDS: tuple[tuple[int, int], ...] = tuple(
    (2 * i + abs(r - 3), r) for r, n in enumerate(ROW_LENGTHS) for i in range(n)
)
_AT: dict[tuple[int, int], int] = {xy: k for k, xy in enumerate(COORDS)}

# The six directions, as steps in doubled coordinates.
DIRECTIONS: tuple[tuple[int, int], ...] = ((2, 0), (1, 1), (-1, 1), (-2, 0), (-1, -1), (1, -1))

MAX_REACH = 3


def _ray(cell: int, step: tuple[int, int]) -> tuple[int, ...]:
    x, y = COORDS[cell]
    out: list[int] = []
    while True:
        x, y = x + step[0], y + step[1]
        k = _AT.get((x, y))
        if k is None:
            return tuple(out)
        out.append(k)


# FULL_RAYS[cell][d]: every cell from ``cell`` outward in direction d, nearest first.
FULL_RAYS: tuple[tuple[tuple[int, ...], ...], ...] = tuple(
    tuple(_ray(c, d) for d in DIRECTIONS) for c in range(N_CELLS)
)

# RAYS[cell][reach]: the non-empty rays cut to ``reach`` cells (reach 0..3), for
# the move generator's inner loop.
RAYS: tuple[tuple[tuple[tuple[int, ...], ...], ...], ...] = tuple(
    tuple(tuple(r[:reach] for r in FULL_RAYS[c] if r[:reach]) for reach in range(MAX_REACH + 1))
    for c in range(N_CELLS)
)

WHITE = 0
BLACK = 1
COLOUR_NAMES = ("White", "Black")

# CASTLES[colour]: the cells of that player's own castle.
CASTLES: tuple[frozenset[int], frozenset[int]] = (
    frozenset(INDEX[c] for c in ("a1", "a2", "a3", "a4", "b2", "b3", "b4", "c3", "c4")),
    frozenset(INDEX[c] for c in ("g1", "g2", "g3", "g4", "f2", "f3", "f4", "e3", "e4")),
)

D4 = INDEX["d4"]


def parse_cell(name: str) -> int:
    """The index of a cell written like ``a1`` or ``A1``; KeyError if no such cell."""
    return INDEX[name.lower()]


def line(origin: int, target: int) -> tuple[int, ...] | None:
    """The cells from ``origin`` (excluded) to ``target`` (included) on a straight line.

    None when the two cells are not on one of the six lines through ``origin``.
    """
    for ray in FULL_RAYS[origin]:
        if target in ray:
            return ray[: ray.index(target) + 1]
    return None
