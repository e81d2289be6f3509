"""The Go board as a picture (SVG), for mail clients that show HTML and for the web.

A wooden board 480 pixels square with its lines, star points and the
coordinates on all four sides (drawn as strokes, not text: resvg is given
no font, and the picture looks the same everywhere); the stones with a
light catching the black ones, a red ring on the last move. In the scoring
phase (and once the score has ended the game) the stones marked dead are
drawn faded with a cross on them, and each side's area is marked with
small squares of its colour. The same from both seats: a Go board is not
turned round.

Every stone carries ``data-point`` and ``data-stone`` (``b``, ``w``), a dead
one ``data-dead``, the last move's ring ``data-last``: a test reads the
picture back without looking at it. Pure: strings from values.
"""

from __future__ import annotations

from xml.sax.saxutils import escape, quoteattr

from pbm.games.go.board import BLACK, EMPTY, star_points
from pbm.games.go.notation import COLUMNS, point_name
from pbm.games.go.scoring import territory
from pbm.games.go.values import OVER, SCORING, GoPosition

__all__ = ["WIDTH", "svg"]

WIDTH = 480
_MARGIN = 1.3  # from the board's edge to its outer lines, in spaces between lines
_WOOD, _GRAIN, _LINE = "#dcb468", "#c99a4e", "#3b2b12"
_BLACK, _WHITE, _LAST, _CROSS = "#161616", "#f6f4ef", "#d42a1e", "#d42a1e"

# A stroke font for the coordinates: polylines on a grid 4 wide and 6 high, y down;
# "x,y x,y ..." a line, "|" between lines.
_STROKES = {
    "A": "0,6 2,0 4,6|0.7,4 3.3,4",
    "B": "0,3 3,3 4,4 4,5 3,6 0,6 0,0 3,0 4,1 4,2 3,3",
    "C": "4,1 3,0 1,0 0,1 0,5 1,6 3,6 4,5",
    "D": "0,0 0,6 2.5,6 4,4.5 4,1.5 2.5,0 0,0",
    "E": "4,0 0,0 0,6 4,6|0,3 3,3",
    "F": "4,0 0,0 0,6|0,3 3,3",
    "G": "4,1 3,0 1,0 0,1 0,5 1,6 3,6 4,5 4,3.5 2.5,3.5",
    "H": "0,0 0,6|4,0 4,6|0,3 4,3",
    "J": "4,0 4,5 3,6 1,6 0,5",
    "K": "0,0 0,6|4,0 0,4|1.4,2.6 4,6",
    "L": "0,0 0,6 4,6",
    "M": "0,6 0,0 2,3.5 4,0 4,6",
    "N": "0,6 0,0 4,6 4,0",
    "O": "1,0 3,0 4,1 4,5 3,6 1,6 0,5 0,1 1,0",
    "P": "0,6 0,0 3,0 4,1 4,2 3,3 0,3",
    "Q": "1,0 3,0 4,1 4,5 3,6 1,6 0,5 0,1 1,0|2.5,4.5 4,6.3",
    "R": "0,6 0,0 3,0 4,1 4,2 3,3 0,3|2,3 4,6",
    "S": "4,1 3,0 1,0 0,1 0,2 1,3 3,3 4,4 4,5 3,6 1,6 0,5",
    "T": "0,0 4,0|2,0 2,6",
    "0": "1,0 3,0 4,1 4,5 3,6 1,6 0,5 0,1 1,0",
    "1": "0.8,1.2 2.2,0 2.2,6|0.8,6 3.6,6",
    "2": "0,1 1,0 3,0 4,1 4,2 0,6 4,6",
    "3": "0,1 1,0 3,0 4,1 4,2 3,3 1.5,3|3,3 4,4 4,5 3,6 1,6 0,5",
    "4": "3,6 3,0 0,4 4,4",
    "5": "4,0 0,0 0,3 3,3 4,4 4,5 3,6 1,6 0,5",
    "6": "3.5,0 1,0 0,1 0,5 1,6 3,6 4,5 4,4 3,3 0,3",
    "7": "0,0 4,0 1.5,6",
    "8": "1,3 0,2 0,1 1,0 3,0 4,1 4,2 3,3 1,3 0,4 0,5 1,6 3,6 4,5 4,4 3,3",
    "9": "4,3 1,3 0,2 0,1 1,0 3,0 4,1 4,5 3,6 0.5,6",
}
_GLYPHS = {
    char: tuple(
        tuple((float(x), float(y)) for x, y in (xy.split(",") for xy in line.split()))
        for line in strokes.split("|")
    )
    for char, strokes in _STROKES.items()
}


def _n(x: float) -> str:
    return f"{x:.2f}".rstrip("0").rstrip(".")


def _label(text: str, cx: float, cy: float, height: float) -> str:
    """``text`` in the stroke font, centred on (cx, cy), ``height`` pixels high."""
    unit = height / 6
    advance = 5.4 * unit
    left = cx - (advance * len(text) - 1.4 * unit) / 2
    top = cy - height / 2
    parts = []
    for i, char in enumerate(text):
        x0 = left + i * advance
        for line in _GLYPHS[char]:
            points = " L ".join(f"{_n(x0 + x * unit)} {_n(top + y * unit)}" for x, y in line)
            parts.append(f"M {points}")
    return (
        f'<path d="{" ".join(parts)}" fill="none" stroke="{_LINE}" '
        f'stroke-width="{_n(max(unit * 0.75, 1.0))}" stroke-linecap="round" '
        'stroke-linejoin="round"/>'
    )


def _wood() -> list[str]:
    """The board and a few lines of grain across it (the same on every board)."""
    out = [f'<rect width="{WIDTH}" height="{WIDTH}" fill="{_WOOD}"/>']
    for k in range(9):
        y = 26 + k * 53.0
        bend = 9 if k % 2 else -7
        out.append(
            f'<path d="M 0 {_n(y)} C 160 {_n(y + bend)} 320 {_n(y - bend)} {WIDTH} {_n(y + 3)}" '
            f'fill="none" stroke="{_GRAIN}" stroke-width="{1.2 + (k % 3) * 0.6}" '
            'stroke-opacity="0.45"/>'
        )
    return out


def svg(state: GoPosition, alt: str = "") -> str:
    """The position as one SVG document, ``WIDTH`` pixels square."""
    size = state.size
    # Lines on half units, which are whole pixels in the mail's picture (drawn twice this
    # size): every line and stone then comes out the same, pixel for pixel, which makes
    # the PNG a third smaller and quicker to write than lines that fall between pixels.
    step = int(2 * WIDTH / (size - 1 + 2 * _MARGIN)) / 2
    first = round(WIDTH - step * (size - 1)) / 2
    last = first + step * (size - 1)

    def at(p: int) -> tuple[float, float]:
        row, col = divmod(p, size)
        return first + step * col, first + step * (size - 1 - row)

    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{WIDTH}" '
        f'viewBox="0 0 {WIDTH} {WIDTH}" role="img" aria-label={quoteattr(alt)}>',
        f"<title>{escape(alt)}</title>",
        *_wood(),
    ]
    width = _n(max(step / 26, 0.9))
    for i in range(size):
        at_line = _n(first + step * i)
        out.append(
            f'<path d="M {_n(first)} {at_line} H {_n(last)} M {at_line} {_n(first)} '
            f'V {_n(last)}" stroke="{_LINE}" stroke-width="{width}"/>'
        )
    for p in star_points(size):
        x, y = at(p)
        out.append(f'<circle cx="{_n(x)}" cy="{_n(y)}" r="{_n(step * 0.1)}" fill="{_LINE}"/>')
    glyph = min(step * 0.42, 15.0)
    for i in range(size):
        c = first + step * i
        for edge in (step * 0.55, WIDTH - step * 0.55):
            out.append(_label(COLUMNS[i], c, edge, glyph))
            out.append(_label(str(size - i), edge, c, glyph))
    scored = state.phase in (SCORING, OVER)
    dead = state.dead if scored else frozenset()
    radius = step * 0.48
    for p, stone in enumerate(state.grid):
        if stone == EMPTY:
            continue
        x, y = at(p)
        black = stone == BLACK
        faded = ' data-dead="1" opacity="0.45"' if p in dead else ""
        out.append(
            f'<g data-point="{point_name(p, size)}" data-stone="{stone}"{faded}>'
            f'<circle cx="{_n(x)}" cy="{_n(y)}" r="{_n(radius)}" '
            f'fill="{_BLACK if black else _WHITE}" stroke="{_BLACK}" '
            f'stroke-width="{_n(step / 30)}"/>'
            + (
                f'<circle cx="{_n(x - radius * 0.3)}" cy="{_n(y - radius * 0.32)}" '
                f'r="{_n(radius * 0.32)}" fill="#ffffff" fill-opacity="0.16"/>'
                if black
                else ""
            )
            + "</g>"
        )
        if p in dead:
            d = radius * 0.45
            out.append(
                f'<path d="M {_n(x - d)} {_n(y - d)} L {_n(x + d)} {_n(y + d)} '
                f'M {_n(x - d)} {_n(y + d)} L {_n(x + d)} {_n(y - d)}" '
                f'stroke="{_CROSS}" stroke-width="{_n(step / 10)}" stroke-linecap="round"/>'
            )
    if scored:
        half = step * 0.16
        for p, owner in sorted(territory(state.grid, size, dead).items()):
            x, y = at(p)
            out.append(
                f'<rect x="{_n(x - half)}" y="{_n(y - half)}" width="{_n(2 * half)}" '
                f'height="{_n(2 * half)}" fill="{_BLACK if owner == BLACK else _WHITE}" '
                f'stroke="{_BLACK}" stroke-width="{_n(step / 40)}"/>'
            )
    if state.last is not None and state.last >= 0 and state.grid[state.last] != EMPTY:
        x, y = at(state.last)
        out.append(
            f'<circle data-last="{point_name(state.last, size)}" cx="{_n(x)}" cy="{_n(y)}" '
            f'r="{_n(radius * 0.5)}" fill="none" stroke="{_LAST}" '
            f'stroke-width="{_n(max(step / 11, 1.5))}"/>'
        )
    out.append("</svg>")
    return "\n".join(out) + "\n"
