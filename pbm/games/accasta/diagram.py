r"""Plain-text board diagrams for Accasta and Accasta Pari, as sent in mail.

The layout reproduces the classic PBeM server's Accasta help page exactly:
rows g (Black's side, top) to a (White's side, bottom) bent over row d, the
numbered diagonals above row g and below row a, the row-end labels 5/6/7,
the castle cells underlined and the diagonals' bend marks between rows::

                 Black

              1   2   3   4
            -/- -/- -/- -/-
       g -- shc shc shc shc 5
              --- --- ---  /
     f -- .   sh  sh  sh  .   6
                --- ---      /
   e -- .   .   s   s   .   .   7
                               /
 d -- .   .   .   .   .   .   .
                               \
   c -- .   .   S   S   .   .   7
                --- ---      \
     b -- .   SH  SH  SH  .   6
              --- --- ---  \
       a -- SHC SHC SHC SHC 5
            -\- -\- -\- -\-
              1   2   3   4

                 White

(shown indented by one space here). Black's view (``turned``) is the same
drawing turned round, as the board lies before him: row a at the top, each row
read from its right end, the row names on the right and 5/6/7 on the left::

                 White

              4   3   2   1
            -\- -\- -\- -\-
     5 SHC SHC SHC SHC -- a
      \  --- --- ---
   6 .   SH  SH  SH  .   -- b
    \      --- ---
 7 .   .   S   S   .   .   -- c
  \
 .   .   .   .   .   .   .   -- d
  /
 7 .   .   s   s   .   .   -- e
    /      --- ---
   6 .   sh  sh  sh  .   -- f
      /  --- --- ---
     5 shc shc shc shc -- g
            -/- -/- -/- -/-
              4   3   2   1

                 Black

Cells are ``w`` characters wide, ``w``
being the tallest stack (at least 3) rounded up to an odd number, so the
half-pitch that each row is shifted by is a whole number of columns. With
legal play a stack never exceeds six pieces, so ``w`` is at most 7 and every
line stays well within 78 characters (taller stacks up to nine pieces still
fit; beyond that the lines grow, since the geometry is never distorted).

Pure functions of values: no I/O, no dependency on the rules engine.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

__all__ = ["N_CELLS", "ROWS", "ROW_LENGTHS", "board_lines", "render"]

ROWS = "abcdefg"
ROW_LENGTHS = (4, 5, 6, 7, 6, 5, 4)
N_CELLS = sum(ROW_LENGTHS)  # 37

_MIDDLE = 3  # row d, the row the diagonals bend over
_PREFIX = 5  # "d -- " before the first cell of a row
_MIN_WIDTH = 3

# Row-end labels (the diagonals 5, 6, 7 leaving the board), by row index a..g.
_LABELS: dict[int, str] = {0: "5", 1: "6", 2: "7", 4: "7", 5: "6", 6: "5"}

# Cells (0-based positions) underlined between two rows: the castle cells of
# rows b, c (White's castle) and e, f (Black's castle).
_UNDERLINED: dict[int, tuple[int, ...]] = {1: (1, 2, 3), 2: (2, 3), 4: (2, 3), 5: (1, 2, 3)}

_STANDARD_PIECES = frozenset("SHCshc")
_PARI_PIECES = frozenset("Pp")

_STANDARD_LEGEND = (
    "White: S Shield, H Horse, C Chariot (upper case); Black: s h c (lower case).",
    "Stacks are written bottom to top; castle cells are underlined.",
)
_PARI_LEGEND = (
    "P white piece, p black piece.",
    "Stacks are written bottom to top; castle cells are underlined.",
)

_TURN = ("White to move", "Black to move")


def render(
    board: Sequence[str],
    *,
    pari: bool,
    to_move: int | None,
    status: str | None = None,
    turned: bool = False,
) -> str:
    """The diagram of ``board`` with headings, legend and turn line.

    ``board`` holds the 37 stacks in the order a1..a4, b1..b5, ..., g1..g4,
    each written bottom to top ('' for an empty cell). ``to_move`` is 0 for
    White, 1 for Black, None once the game is over; ``status`` (a line such
    as "White wins: 3 stacks in Black's castle") follows the turn line, or
    stands in for it when the game is over ("Game over" if neither is given).
    ``turned``: the board as Black sees it, row a at the top.

    Returns the text lines joined by newlines, ending in a newline, with no
    trailing spaces. ValueError for a malformed board or ``to_move``.
    """
    _check(board, pari=pari, to_move=to_move, status=status)
    lines = board_lines(board, turned=turned)
    lines.append("")
    lines.extend(_PARI_LEGEND if pari else _STANDARD_LEGEND)
    if to_move is not None:
        lines.append(_TURN[to_move])
    if status is not None:
        lines.append(status)
    elif to_move is None:
        lines.append("Game over")
    return "\n".join(lines) + "\n"


def board_lines(board: Sequence[str], *, turned: bool = False) -> list[str]:
    """The diagram proper, from the "Black" heading to the "White" heading (``turned``:
    from "White" to "Black", the board turned round as Black sees it).

    No validation beyond what the layout needs: the help page's marker
    characters (``X``, ``*``) are drawn like any other piece.
    """
    if len(board) != N_CELLS:
        raise ValueError(f"a board has {N_CELLS} cells, not {len(board)}")
    tallest = max((len(stack) for stack in board), default=0)
    width = max(_MIN_WIDTH, tallest)
    width += 1 - width % 2  # odd, so that the pitch is even
    geo = _geometry(width)

    rows: list[list[str]] = []
    start = 0
    for length in ROW_LENGTHS:
        rows.append([stack or "." for stack in board[start : start + length]])
        start += length

    if turned:
        return geo.turned(rows)
    top, between, bottom = geo.fixed
    out = list(top)
    for r in range(len(ROWS) - 1, -1, -1):
        out.append(geo.row(r, rows[r]))
        if r > 0:
            out.append(between[r])
    out += bottom
    return out


@functools.lru_cache(maxsize=8)
def _geometry(width: int) -> _Geometry:
    """One geometry per cell width: its lines that show no stacks are drawn once."""
    return _Geometry(width)


class _Geometry:
    """Column arithmetic for one cell width."""

    def __init__(self, width: int) -> None:
        self.width = width
        self.pitch = width + 1
        self.half = self.pitch // 2
        # The lines above, between and below the rows of cells: no stacks in them.
        self.fixed = (
            (self.heading("Black"), "", self.numbers(), self.marks("/")),
            {r: self.between(upper=r, lower=r - 1) for r in range(1, len(ROWS))},
            (self.marks("\\"), self.numbers(), "", self.heading("White")),
        )

    def heading(self, side: str) -> str:
        """``Black`` (``White``), centred over (under) d4."""
        return " " * (self.cell_col(_MIDDLE, 3) + (self.width - 1) // 2 - 2) + side

    def indent(self, r: int) -> int:
        return abs(r - _MIDDLE) * self.half

    def cell_col(self, r: int, i: int) -> int:
        return self.indent(r) + _PREFIX + i * self.pitch

    def label_col(self, r: int) -> int:
        return self.cell_col(r, ROW_LENGTHS[r] - 1) + self.pitch

    def numbers(self) -> str:
        """The diagonal numbers 1..4 over (under) the cells of row g (a)."""
        buf = _Line()
        for i in range(ROW_LENGTHS[-1]):
            buf.put(self.cell_col(len(ROWS) - 1, i) + self.half, str(i + 1))
        return buf.text()

    def marks(self, slash: str) -> str:
        """The ``-/-`` (``-\\-``) line between the numbers and row g (a)."""
        dash = "-" * (self.half - 1)
        buf = _Line()
        buf.put(self.cell_col(len(ROWS) - 1, 0), (dash + slash + dash + " ") * ROW_LENGTHS[-1])
        return buf.text()

    def row(self, r: int, cells: Sequence[str]) -> str:
        # Cells are never wider than ``width``: each fills its pitch, and the
        # row's label follows the last one (``label_col``).
        line = f"{' ' * self.indent(r)}{ROWS[r] + ' --':<{_PREFIX}}"
        line += "".join([cell.ljust(self.pitch) for cell in cells]) + _LABELS.get(r, "")
        return line.rstrip()

    def turned(self, rows: Sequence[Sequence[str]]) -> list[str]:
        """The diagram turned round (Black's view): each line of White's view, read from
        its end, in the reverse order; the stacks, still bottom to top, at the left of
        their cells, and the headings read as words."""
        full = _PREFIX + (ROW_LENGTHS[_MIDDLE] - 1) * self.pitch + self.width  # widest line
        top, between, bottom = self.fixed

        def mirrored(line: str) -> str:
            return line.ljust(full)[::-1].rstrip()

        def heading(side: str) -> str:
            centre = full - 1 - (self.cell_col(_MIDDLE, 3) + (self.width - 1) // 2)
            return " " * (centre - 2) + side

        out = [heading("White"), *(mirrored(line) for line in bottom[-2::-1])]
        for r in range(len(ROWS)):
            row = _Line()
            if r in _LABELS:
                row.put(full - 1 - self.label_col(r), _LABELS[r])
            for i, cell in enumerate(rows[r]):
                row.put(full - self.cell_col(r, i) - self.width, cell)
            row.put(full - self.indent(r) - _PREFIX, f" -- {ROWS[r]}")
            out.append(row.text())
            if r < len(ROWS) - 1:
                out.append(mirrored(between[r + 1]))
        out += [*(mirrored(line) for line in top[-1:0:-1]), heading("Black")]
        return out

    def between(self, *, upper: int, lower: int) -> str:
        """Castle underlines and the diagonals' bend mark between two rows."""
        buf = _Line()
        # Upper half: lines sit over the lower row's castle cells, with '/'
        # just before the upper row's label; lower half mirrored.
        near = lower if upper > _MIDDLE else upper
        for i in _UNDERLINED.get(near, ()):
            buf.put(self.cell_col(near, i), "-" * self.width)
        if upper > _MIDDLE:
            buf.put(self.label_col(upper) - 1, "/")
        else:
            buf.put(self.label_col(lower) - 1, "\\")
        return buf.text()


class _Line:
    """A line of text assembled by column."""

    def __init__(self) -> None:
        self._chars: list[str] = []

    def put(self, col: int, text: str) -> None:
        end = col + len(text)
        if end > len(self._chars):
            self._chars.extend(" " * (end - len(self._chars)))
        self._chars[col:end] = text

    def text(self) -> str:
        return "".join(self._chars).rstrip()


def _check(board: Sequence[str], *, pari: bool, to_move: int | None, status: str | None) -> None:
    if isinstance(board, str):
        raise ValueError("a board is a sequence of 37 stacks, not one string")
    if len(board) != N_CELLS:
        raise ValueError(f"a board has {N_CELLS} cells, not {len(board)}")
    allowed = _PARI_PIECES if pari else _STANDARD_PIECES
    for k, stack in enumerate(board):
        bad = set(stack) - allowed
        if bad:
            raise ValueError(f"cell {k}: unknown piece(s) {''.join(sorted(bad))!r}")
    if to_move not in (0, 1, None):
        raise ValueError(f"to_move must be 0, 1 or None, not {to_move!r}")
    if status is not None and ("\n" in status or "\r" in status):
        raise ValueError("status must be a single line")
