"""The Hex board as a picture (SVG), for mail clients that show HTML and for the web.

The rhombus is drawn as the ASCII diagram lays it out (``diagram.py``): row 1
at the top, each row half a cell further right, pointy-topped hexagons.
Around it runs a band in the players' colours, red along the top and bottom
(Red's edges) and blue along the left and right (Blue's), split at the
corners; stones are discs in the same colours and the last move's stone
carries a white dot. Column letters stand above and below the board, row
numbers at both ends of every row, drawn as strokes (``font``): the mail's
renderer has no fonts. Every seat sees the board the same way, as the
notation names it.

The picture is ``WIDTH`` pixels wide at every size (a 19x19 board's cells
are then some 17 pixels apart), its height follows from the rhombus. Each
cell carries ``data-cell`` (and ``data-stone``, ``data-last`` where they
apply), so a test can read the picture back. Pure: strings from values.
"""

from __future__ import annotations

import math
from xml.sax.saxutils import escape, quoteattr

from pbm.games.hex.board import EMPTY, LETTERS, cell_name
from pbm.games.hex.font import text_path

__all__ = ["WIDTH", "cell_centre", "svg"]

WIDTH = 540  # pixels: 480 to 560 suit a mail; the mail renderer scales it to its own
_W = 30.0  # a cell's width (flat side to flat side) in the picture's own units
_R = _W / math.sqrt(3)  # centre to corner
_ROW = 1.5 * _R  # from one row to the next
_BAND = 0.45 * _W  # the coloured edge's width, past the cells' corners
_LABEL = 0.55 * _W  # the names' height
_GAP = 0.55 * _W  # from the band to the names' centre line, plus half a name

_COLOURS = {
    "page": "#f7f3ea",
    "cell": "#efe2c4",
    "line": "#9c8a66",
    "label": "#4a3f2e",
    "R": ("#d23c2f", "#8e2118"),  # Red: fill, rim
    "B": ("#2f62c4", "#1b3a7a"),  # Blue
    "dot": "#ffffff",
}

Point = tuple[float, float]


def cell_centre(cell: int, size: int) -> Point:
    """The centre of ``cell`` in the picture's units, a1's at (0, 0)."""
    row, col = divmod(cell, size)
    return (col + row / 2) * _W, row * _ROW


def _hexagon(x: float, y: float) -> str:
    corners = (
        (x + _R * math.cos(math.radians(30 + 60 * k)), y + _R * math.sin(math.radians(30 + 60 * k)))
        for k in range(6)
    )
    return " ".join(f"{cx:.1f},{cy:.1f}" for cx, cy in corners)


def _outline(size: int, away: float) -> list[Point]:
    """The rhombus through the corner cells' centres, each side moved out by ``away``:
    corners a1 (top left), then clockwise."""
    n = size - 1
    corners = [cell_centre(k, size) for k in (0, n, n * size + n, n * size)]
    lines = []
    for k, (px, py) in enumerate(corners):
        qx, qy = corners[(k + 1) % 4]
        length = math.hypot(qx - px, qy - py)
        dx, dy = (qx - px) / length, (qy - py) / length
        # Clockwise on a screen (y down): (dy, -dx) points out of the rhombus.
        lines.append((px + dy * away, py - dx * away, dx, dy))
    out = []
    for k in range(4):
        ax, ay, adx, ady = lines[k - 1]
        bx, by, bdx, bdy = lines[k]
        # Where side k-1, moved out, meets side k, moved out: the new corner k.
        t = ((bx - ax) * bdy - (by - ay) * bdx) / (adx * bdy - ady * bdx)
        out.append((ax + t * adx, ay + t * ady))
    return out


def _band(size: int) -> list[str]:
    """The players' edges: four triangles from the middle out to the enlarged rhombus."""
    outer = _outline(size, _R + _BAND)
    mx = sum(x for x, _ in outer) / 4
    my = sum(y for _, y in outer) / 4
    owners = ("R", "B", "R", "B")  # top, right, bottom, left
    out = []
    for k, owner in enumerate(owners):
        (ax, ay), (bx, by) = outer[k], outer[(k + 1) % 4]
        out.append(
            f'<polygon class="edge" data-edge="{owner}" '
            f'points="{ax:.1f},{ay:.1f} {bx:.1f},{by:.1f} {mx:.1f},{my:.1f}" '
            f'fill="{_COLOURS[owner][0]}"/>'
        )
    return out


def _names(size: int) -> list[tuple[str, float, float]]:
    """Each name and its centre: column letters above and below, row numbers left and
    right of the band."""
    away = _R + _BAND + _GAP
    slope = (_W / 2) / _ROW  # a column runs half a cell right for each row down
    out = []
    for col in range(size):
        for y in (-away, (size - 1) * _ROW + away):
            out.append((LETTERS[col], col * _W + y * slope, y))
    sideways = away / math.sin(math.radians(60))  # the side edges lean: farther across
    for row in range(size):
        x0, y = cell_centre(row * size, size)
        x1, _ = cell_centre(row * size + size - 1, size)
        number = str(row + 1)
        shift = 0.25 * _LABEL * (len(number) - 1)  # two digits stand a little farther out
        out.append((number, x0 - sideways - shift, y))
        out.append((number, x1 + sideways + shift, y))
    return out


def _labels(names: list[tuple[str, float, float]]) -> str:
    """The names as one path of strokes."""
    paths = " ".join(text_path(text, x, y, _LABEL) for text, x, y in names)
    return (
        f'<path class="labels" d="{paths}" fill="none" stroke="{_COLOURS["label"]}" '
        f'stroke-width="{0.085 * _W:.2f}" stroke-linecap="round" stroke-linejoin="round"/>'
    )


def _cell(cell: int, size: int, stone: str, last: bool) -> str:
    x, y = cell_centre(cell, size)
    name = cell_name(cell, size)
    attributes = f'class="cell" data-cell="{name}"'
    if stone != EMPTY:
        attributes += f' data-stone="{stone}"'
    if last:
        attributes += ' data-last="yes"'
    parts = [
        f"<g {attributes}>",
        f'<polygon points="{_hexagon(x, y)}" fill="{_COLOURS["cell"]}" '
        f'stroke="{_COLOURS["line"]}" stroke-width="1.2"/>',
    ]
    if stone != EMPTY:
        fill, rim = _COLOURS[stone]
        parts.append(
            f'<circle cx="{x:.1f}" cy="{y:.1f}" r="{0.37 * _W:.1f}" fill="{fill}" '
            f'stroke="{rim}" stroke-width="1.5"/>'
        )
    if last:
        parts.append(
            f'<circle class="last" cx="{x:.1f}" cy="{y:.1f}" r="{0.13 * _W:.1f}" '
            f'fill="{_COLOURS["dot"]}"/>'
        )
    parts.append("</g>")
    return "".join(parts)


def svg(size: int, cells: str, *, marked: int | None = None, alt: str = "") -> str:
    """The board of ``size`` with ``cells`` (``board``'s string), ``marked`` the last
    move's cell, as one SVG document; ``alt`` is its title for a screen reader."""
    names = _names(size)
    # The frame: the band's corners and every name with room around it.
    xs = [x for x, _ in _outline(size, _R + _BAND)]
    ys = [y for _, y in _outline(size, _R + _BAND)]
    for text, x, y in names:
        half = 0.5 * _LABEL * len(text) + 0.4 * _LABEL
        xs += [x - half, x + half]
        ys += [y - _LABEL, y + _LABEL]
    pad = 0.25 * _W
    left, right, top, bottom = min(xs) - pad, max(xs) + pad, min(ys) - pad, max(ys) + pad
    width, height = right - left, bottom - top
    pixels_high = round(WIDTH * height / width)
    named = alt or f"Hex board, {size}x{size}"
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{pixels_high}" '
        f'viewBox="{left:.1f} {top:.1f} {width:.1f} {height:.1f}" role="img" '
        f"aria-label={quoteattr(named)}>",
        f"<title>{escape(named)}</title>",
        "<desc>Red connects top and bottom (the red edges); "
        "Blue connects left and right (the blue edges).</desc>",
        f'<rect x="{left:.1f}" y="{top:.1f}" width="{width:.1f}" height="{height:.1f}" '
        f'fill="{_COLOURS["page"]}"/>',
        *_band(size),
        *(_cell(k, size, stone, k == marked) for k, stone in enumerate(cells)),
        _labels(names),
        "</svg>",
    ]
    return "\n".join(parts) + "\n"
