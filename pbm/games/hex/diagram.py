r"""The Hex board as plain text for mail: a rhombus, each row one column further right.

A 5x5 board after Red's c2 and Blue's d3::

       a b c d e
        R R R R R
     1 B . . . . . B 1
      2 B . . R . . B 2
       3 B . . .[B]. B 3
        4 B . . . . . B 4
         5 B . . . . . B 5
              R R R R R
               a b c d e

Cells are two columns apart and each row is shifted one column, half a
cell, as on a real board: a cell touches the cells left and right of it,
the two above it (straight up and up-right) and the two below (down-left and
straight down). The column letters and Red's edge markers sit on the lines
the columns run along, above and below the board; Blue's markers and the
row numbers stand at both ends of every row. The last move's cell is in
brackets. At 19x19 the widest line is 66 columns.
"""

from __future__ import annotations

from pbm.games.hex.board import BLUE, LETTERS, RED

__all__ = ["LEGEND", "board_lines", "render"]

LEGEND = "Red (R) connects top and bottom; Blue (B) connects left and right."
_LEFT = 5  # "19 B " before the first cell of the top row


def board_lines(size: int, cells: str, marked: int | None = None) -> list[str]:
    """The rhombus with its names and edge markers; ``marked``: the cell put in brackets."""
    letters = " ".join(LETTERS[:size])
    reds = " ".join(RED * size)
    out = [" " * (_LEFT - 2) + letters, " " * (_LEFT - 1) + reds]
    for row in range(size):
        chars = list(" ".join(cells[row * size : (row + 1) * size]))
        if marked is not None and marked // size == row:
            at = 2 * (marked % size)
            chars = [" ", *chars, " "]  # room for a bracket at either end of the row
            chars[at], chars[at + 2] = "[", "]"
            line = f"{row + 1:>2} {BLUE}" + "".join(chars) + f"{BLUE} {row + 1}"
        else:
            line = f"{row + 1:>2} {BLUE} " + "".join(chars) + f" {BLUE} {row + 1}"
        out.append(" " * row + line)
    out.append(" " * (size + _LEFT) + reds)
    out.append(" " * (size + _LEFT + 1) + letters)
    return out


def render(
    size: int,
    cells: str,
    *,
    marked: int | None,
    last: str | None,
    status: str,
) -> str:
    """The whole diagram: the board, the legend, the last move and ``status`` (whose turn,
    or how the game ended), ending in a newline."""
    lines = board_lines(size, cells, marked)
    lines.append("")
    lines.append(LEGEND)
    if last:
        lines.append(f"Last move: {last}, in brackets.")
    lines.append(status)
    return "\n".join(lines) + "\n"
