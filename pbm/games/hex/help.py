"""The text of ``help hex``: the rules, the notation, the swap rule and a few hints.

Plain ASCII, lines of at most 72 characters, so that it travels in any mail.
The two small boards are drawn by ``diagram`` itself, so they look as the
board mails do; the tests play the examples.
"""

from __future__ import annotations

from pbm.games.hex.board import BLUE, EMPTY, RED
from pbm.games.hex.diagram import LEGEND, board_lines


def _board(stone: str, cell: int) -> str:
    cells = [EMPTY] * 25
    cells[cell] = stone
    return "\n".join("    " + line for line in board_lines(5, "".join(cells), cell))


_C2 = 1 * 5 + 2  # row 2, column c
_B3 = 2 * 5 + 1  # row 3, column b

HELP = f"""HEX - connect your two edges
============================

Hex is played on a rhombus of hexagonal cells, 13 by 13 unless the
challenge sets another size: --size=11 or --size=19, or any size from
5 to 19. Red and Blue take turns putting one stone of their colour on
any empty cell. Stones never move and are never taken.

Red moves first and owns the top and bottom edges (rows 1 and 13 on
the usual board); Blue owns the left and right edges (columns a and
m). A corner cell belongs to both edges it touches. Whoever joins his
own two edges with an unbroken chain of his stones wins.

There are no draws in Hex: once the board is full, exactly one player
has such a chain, because a chain from top to bottom blocks every way
from left to right. Draw offers and claims are refused.


THE BOARD
---------

A 5x5 board after Red's first stone, on c2:

{_board(RED, _C2)}

{LEGEND}

Each row lies half a cell further right than the one above, so a cell
touches six others: two in its own row, two above it (straight up and
up-right in the diagram) and two below it (down-left and straight
down). c2 touches b2 and d2, c1 and d1, b3 and c3. The R and B
markers show whose edge is where; brackets mark the last move.


WRITING MOVES
-------------

A move is the cell for your stone: its column letter, then its row
number, as in g7, a1 or m13. Columns run a, b, c ... from the left,
rows 1, 2, 3 ... from the top, as on Little Golem and in HexGui.
Capitals and a space are forgiven (G7, g 7); the server answers in
lower case. The moves command lists the empty cells row by row.


THE SWAP RULE
-------------

Moving first is a great advantage. To even it out, Blue may answer
Red's first stone with the word swap instead of a stone of his own:
Red's stone is replaced by a Blue one mirrored across the long
diagonal (the line from a1 to the far corner), that is with column and
row exchanged, and Red moves next.

Example: 1. c2 2. swap. The red stone on c2 goes, a blue stone stands
on b3, and Red plays move 3:

{_board(BLUE, _B3)}

So Red had better open with a stone neither too strong (Blue would
swap) nor too weak (Blue would not). Swap is allowed only as Blue's
first move, move 2. A challenge with --swap=off plays without the rule.


HOW A GAME ENDS
---------------

When a player's chain joins his two edges, he wins (a connection).
Otherwise by resignation, or by forfeit when a player does not move
in time.


A FEW HINTS FOR NEWCOMERS
-------------------------

Bridges. Two of your stones with two empty cells between them, each
touching both, are as good as joined: if your opponent takes one of
the two, take the other. d5 and e6 form a bridge over e5 and d6, and
so do e5 and d7 over d6 and e6. A chain of bridges is fast and safe;
a line of touching stones is safe but slow.

Edge templates. A stone on the second row from your edge is joined to
it already: the two cells between it and the edge form a bridge. A
stone on the third row is joined too when enough cells in front of it
are empty (a wedge of eight cells, "the ziggurat"). Playing one of
these is often stronger than going all the way to the edge.

Ladders. When your chain runs along the second row next to the
opponent's stones, he answers each of your moves by blocking on the
first row, and you are pushed along without ever reaching the edge: a
ladder. It helps you only if one of your stones waits further along
(a ladder escape); otherwise leave it early.

Blocking. A stone right in front of a chain is easily gone around:
block from a distance. And the centre is strong: stones there reach
both of your edges and cut across your opponent's way.
"""
