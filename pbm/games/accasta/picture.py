"""The Accasta board as a picture (SVG), for mail clients that show HTML and for the web.

The 37 cells are hexagons in seven rows, a (White's side) to g (Black's),
as the ASCII diagram (``diagram.py``) lays them out; from Black's seat the
board is turned round, g below. Each player's castle is tinted in his colour,
the cells the last move touched are outlined, and the rows and diagonals
carry their names on the edge (a to g; 1 to 4 along the bottom and top edges,
5 to 7 where the longer diagonals leave the board), so a cell reads as the
notation writes it.

A stack is drawn as a column of chips from its bottom to its top, each in its
owner's colour with its kind marked: a Shield a square, a Horse a triangle,
a Chariot a circle (Pari: unmarked). Its height is the number of chips, and
is written beside a stack of two or more.

The names and heights are outlines, not text: python-chess's own glyphs for
a to h and 1 to 8 (``chess.svg.COORDS``), so the picture looks the same
wherever it is drawn and its renderer needs no font.

Cell centres fall on whole pixels of the 480-pixel picture (cells 56 pixels
apart in a row, rows 48 apart: the hexagons a hair wider than regular).

Every cell, spot and chip carries ``data-`` attributes (``data-cell``,
``data-last``, ``data-stack``, ``data-piece``), so a test (or a script on a
page) can read the picture back without looking at it. Pure: strings from
values.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from xml.sax.saxutils import quoteattr

from chess.svg import COORDS as GLYPHS

from pbm.games.accasta.board import CASTLES, CELLS, COORDS, ROW_LENGTHS, ROWS

__all__ = ["CELL_RADIUS", "HEIGHT", "WIDTH", "cell_centre", "legend", "svg"]

CELL_RADIUS = 32.0  # centre to corner of a cell's hexagon, the gap to the next included
_STEP_X = 56  # from one cell to the next in a row (a regular hexagon's would be 55.4)
_STEP_Y = 48  # from one row to the next
_MARGIN_X = 44  # room for the names on the edge
_MARGIN_Y = 34
WIDTH = 7 * _STEP_X + 2 * _MARGIN_X  # 480: the width a phone shows, drawn 1:1
HEIGHT = 6 * _STEP_Y + 2 * round(CELL_RADIUS) + 2 * _MARGIN_Y

_COLOURS = {
    "page": "#f6f1e6",
    "board": "#d9c7a0",
    "line": "#7a6a4f",
    "castle": ("#efe4c8", "#b59c72"),  # White's castle light, Black's dark
    "last": "#d2452b",
    "piece": ("#fbfaf5", "#2a2623"),  # White's pieces, Black's
    "mark": ("#2a2623", "#fbfaf5"),  # the kind mark on each
    "label": "#4a3f2e",
}
_KINDS = {"s": "shield", "h": "horse", "c": "chariot", "p": "piece"}


def cell_centre(cell: int, seat: int = 0) -> tuple[int, int]:
    """The centre of ``cell`` (an index into ``CELLS``) in the picture from ``seat``:
    whole pixels."""
    x2, row = COORDS[cell]  # doubled columns: 0..12 across, rows 0 (a) .. 6 (g)
    x = _MARGIN_X + _STEP_X // 2 + x2 * _STEP_X // 2
    y = _MARGIN_Y + round(CELL_RADIUS) + (6 - row) * _STEP_Y
    if seat == 1:  # turned round: g below, and the rows read right to left
        x, y = WIDTH - x, HEIGHT - y
    return x, y


def _hexagon(x: float, y: float, radius: float) -> str:
    corners = (
        (
            x + radius * math.cos(math.radians(90 + 60 * k)),
            y + radius * math.sin(math.radians(90 + 60 * k)),
        )
        for k in range(6)
    )
    return " ".join(f"{cx:.1f},{cy:.1f}" for cx, cy in corners)


def _mark(kind: str, x: float, y: float, size: float, colour: str) -> str:
    """The sign of a piece's kind inside its chip."""
    if kind == "s":
        half = size * 0.42
        return (
            f'<rect x="{x - half:.1f}" y="{y - half:.1f}" width="{2 * half:.1f}" '
            f'height="{2 * half:.1f}" fill="{colour}"/>'
        )
    if kind == "h":
        half = size * 0.5
        return (
            f'<polygon points="{x:.1f},{y - half:.1f} {x + half:.1f},{y + half * 0.8:.1f} '
            f'{x - half:.1f},{y + half * 0.8:.1f}" fill="{colour}"/>'
        )
    if kind == "c":
        return f'<circle cx="{x:.1f}" cy="{y:.1f}" r="{size * 0.45:.1f}" fill="{colour}"/>'
    return ""


def _spot(stack: str, outlined: bool) -> str:
    """What stands on a cell, drawn around its centre (0, 0): the last move's outline,
    then the stack's chips from its bottom to its top."""
    out = []
    if outlined:
        out.append(
            f'<polygon class="last" points="{_hexagon(0, 0, CELL_RADIUS - 1)}" fill="none" '
            f'stroke="{_COLOURS["last"]}" stroke-width="3.5"/>'
        )
    if stack:
        out.append(_stack(stack))
    return "".join(out)


def _stack(stack: str) -> str:
    count = len(stack)
    chip_h = min(11.0, 44.0 / count)
    chip_w = 34.0
    bottom = count * chip_h / 2
    out = [f'<g class="stack" data-stack={quoteattr(stack)}>']
    for level, piece in enumerate(stack):
        owner = 0 if piece.isupper() else 1
        kind = piece.lower()
        top = bottom - (level + 1) * chip_h
        out.append(
            f'<g class="piece" data-piece="{piece}" data-level="{level}" '
            f'data-kind="{_KINDS.get(kind, kind)}">'
            f'<rect x="{-chip_w / 2:.1f}" y="{top:.1f}" width="{chip_w:.1f}" '
            f'height="{chip_h - 1:.1f}" rx="3" fill="{_COLOURS["piece"][owner]}" '
            f'stroke="{_COLOURS["line"]}" stroke-width="1"/>'
            + _mark(kind, 0, top + (chip_h - 1) / 2, chip_h - 3, _COLOURS["mark"][owner])
            + "</g>"
        )
    if 1 < count <= 8:  # legal play never stacks more than six
        out.append(_glyph(str(count), chip_w / 2 + 6, bottom - 5, 0.55, "height"))
    out.append("</g>")
    return "".join(out)


def _glyph(text: str, x: float, y: float, scale: float, kind: str) -> str:
    """The outline of a letter or digit centred on (x, y)."""
    # python-chess draws its files' letters around (22.5, 10.5) of their box, its
    # ranks' digits around (10, 23) of theirs (the margins they stand in).
    cx, cy = (10.0, 23.0) if text.isdigit() else (22.5, 10.5)
    return (
        f'<g class="{kind}" data-label="{text}" fill="{_COLOURS["label"]}" '
        f'transform="translate({x - cx * scale:.1f}, {y - cy * scale:.1f}) '
        f'scale({scale})">{GLYPHS[text]}</g>'
    )


def _labels(seat: int) -> list[str]:
    """The names on the edge: each row's letter at its left end, each diagonal's number
    where it leaves the board (1-4 along the bottom and top, 5-7 on the right)."""
    out = []
    first = 0
    side = -1 if seat == 0 else 1
    for row, length in enumerate(ROW_LENGTHS):
        x, y = cell_centre(first, seat)
        out.append(_glyph(ROWS[row], x + side * (_STEP_X * 0.5 + 12), y, 0.9, "label"))
        first += length
    sx = 1 if seat == 0 else -1
    for cell, number, dx, dy in _number_spots():
        x, y = cell_centre(cell, seat)
        out.append(_glyph(number, x + sx * dx, y + sx * dy, 0.9, "label"))
    return out


def _number_spots() -> list[tuple[int, str, float, float]]:
    """Where each diagonal's number stands: next to the cell it starts at."""
    spots = []
    off = CELL_RADIUS + 10
    # A cell's number counts along its row from the left; the diagonals carry it on
    # through the rows, as the ASCII diagram's marks show: 1-4 below row a and above
    # row g, 5-7 right of rows a, b, c and of g, f, e.
    for i in range(ROW_LENGTHS[0]):
        spots.append((CELLS.index(f"a{i + 1}"), str(i + 1), -_STEP_X * 0.25, off))
        spots.append((CELLS.index(f"g{i + 1}"), str(i + 1), -_STEP_X * 0.25, -off))
    for low, high, number in ((0, 6, "5"), (1, 5, "6"), (2, 4, "7")):
        for row in (low, high):
            last = CELLS.index(f"{ROWS[row]}{ROW_LENGTHS[row]}")
            spots.append((last, number, _STEP_X * 0.5 + 12, 0.0))
    return spots


def _backdrop(seat: int) -> str:
    """The empty board from ``seat``: the page, the 37 cells (castles tinted), the names."""
    parts = [f'<rect width="{WIDTH}" height="{HEIGHT}" fill="{_COLOURS["page"]}"/>']
    for cell, name in enumerate(CELLS):
        x, y = cell_centre(cell, seat)
        fill, castle = _COLOURS["board"], ""
        for owner in (0, 1):
            if cell in CASTLES[owner]:
                fill, castle = _COLOURS["castle"][owner], ("white" if owner == 0 else "black")
        parts.append(
            f'<polygon class="cell" data-cell="{name}" data-castle="{castle}" '
            f'points="{_hexagon(x, y, CELL_RADIUS - 1)}" fill="{fill}" '
            f'stroke="{_COLOURS["line"]}" stroke-width="1.2"/>'
        )
    parts.extend(_labels(seat))
    return "\n".join(parts)


def svg(board: Sequence[str], *, seat: int = 0, last: Sequence[str] = (), alt: str = "") -> str:
    """The board seen from ``seat`` (0 White, 1 Black) as an SVG document.

    ``board``: the stacks by cell, bottom to top (``SHC`` White's, ``shc``
    Black's, ``P``/``p`` Pari's); ``last``: the cells the last move touched;
    ``alt``: the title a screen reader says.
    """
    touched = set(last)
    spots = [
        _placed(cell, seat, stack, name in touched)
        for cell, (name, stack) in enumerate(zip(CELLS, board, strict=True))
        if stack or name in touched
    ]
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{HEIGHT}" '
        f'viewBox="0 0 {WIDTH} {HEIGHT}" role="img" data-seat="{seat}">\n'
        f"<title>{_escape(alt or 'Accasta board')}</title>\n{_backdrop(seat)}\n"
        + "\n".join(spots)
        + "\n</svg>\n"
    )


def _placed(cell: int, seat: int, stack: str, outlined: bool) -> str:
    """What stands on ``cell`` seen from ``seat``, put at its centre."""
    x, y = cell_centre(cell, seat)
    return (
        f'<g class="spot" data-cell="{CELLS[cell]}" data-last="{"yes" if outlined else "no"}" '
        f'transform="translate({x} {y})">{_spot(stack, outlined)}</g>'
    )


def legend(seat: int = 0, *, pari: bool = False) -> str:
    """The picture in words, for under it: the marks of the pieces, how a stack reads,
    the castles and the last move, and which side is below (from ``seat``)."""
    pieces = (
        "Every piece is a plain chip: White's light, Black's dark."
        if pari
        else "\u25a0 Shield, \u25b2 Horse, \u25cf Chariot: White's light, Black's dark."
    )
    side = (
        "Seen from White's side: row a below, g above."
        if seat == 0
        else "Seen from Black's side: row g below, a above."
    )
    return "\n".join(
        (
            pieces,
            "A stack is drawn bottom to top: its top piece, which heads it, is the highest; "
            "the number beside it is its height.",
            "The light cells by row a are White's castle, the dark ones by row g Black's; "
            "the last move's cells are outlined in red.",
            side,
        )
    )


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
