"""A stroke font for the picture's cell names: capitals A to S and the digits, as lines.

The mail's renderer loads no font (``pbm.usecases.pictures.raster``), so a name drawn as
SVG text would not show: each character is a few strokes on a grid 4 wide
and 6 high (y down), drawn as one path with round ends. Corners are cut
instead of curved, which reads well at the 8 to 12 pixels the names have.
"""

from __future__ import annotations

__all__ = ["GLYPHS", "text_path"]

Stroke = tuple[tuple[float, float], ...]

_O: Stroke = ((1, 0), (3, 0), (4, 1), (4, 5), (3, 6), (1, 6), (0, 5), (0, 1), (1, 0))
_P: Stroke = ((0, 6), (0, 0), (3, 0), (4, 1), (4, 2), (3, 3), (0, 3))

GLYPHS: dict[str, tuple[Stroke, ...]] = {
    "A": (((0, 6), (2, 0), (4, 6)), ((0.7, 4), (3.3, 4))),
    "B": (
        (
            (0, 3), (3, 3), (4, 4), (4, 5), (3, 6), (0, 6),
            (0, 0), (3, 0), (4, 1), (4, 2), (3, 3),
        ),
    ),
    "C": (((4, 1), (3, 0), (1, 0), (0, 1), (0, 5), (1, 6), (3, 6), (4, 5)),),
    "D": (((0, 0), (0, 6), (2, 6), (4, 4), (4, 2), (2, 0), (0, 0)),),
    "E": (((4, 0), (0, 0), (0, 6), (4, 6)), ((0, 3), (3, 3))),
    "F": (((4, 0), (0, 0), (0, 6)), ((0, 3), (3, 3))),
    "G": (((4, 1), (3, 0), (1, 0), (0, 1), (0, 5), (1, 6), (3, 6), (4, 5), (4, 3), (2, 3)),),
    "H": (((0, 0), (0, 6)), ((4, 0), (4, 6)), ((0, 3), (4, 3))),
    "I": (((1, 0), (3, 0)), ((2, 0), (2, 6)), ((1, 6), (3, 6))),
    "J": (((1.5, 0), (4, 0), (4, 5), (3, 6), (1, 6), (0, 5)),),
    "K": (((0, 0), (0, 6)), ((4, 0), (0, 4)), ((1, 3), (4, 6))),
    "L": (((0, 0), (0, 6), (4, 6)),),
    "M": (((0, 6), (0, 0), (2, 3), (4, 0), (4, 6)),),
    "N": (((0, 6), (0, 0), (4, 6), (4, 0)),),
    "O": (_O,),
    "P": (_P,),
    "Q": (_O, ((2.5, 4.5), (4, 6))),
    "R": (_P, ((2, 3), (4, 6))),
    "S": (
        (
            (4, 1), (3, 0), (1, 0), (0, 1), (0, 2), (1, 3), (3, 3),
            (4, 4), (4, 5), (3, 6), (1, 6), (0, 5),
        ),
    ),
    "0": (_O, ((0.5, 5), (3.5, 1))),  # slashed, unlike the column O beside it
    "1": (((1, 1), (2, 0), (2, 6)), ((1, 6), (3, 6))),
    "2": (((0, 1), (1, 0), (3, 0), (4, 1), (4, 2), (0, 6), (4, 6)),),
    "3": (
        ((0, 1), (1, 0), (3, 0), (4, 1), (4, 2), (3, 3), (1, 3)),
        ((3, 3), (4, 4), (4, 5), (3, 6), (1, 6), (0, 5)),
    ),
    "4": (((3, 6), (3, 0), (0, 4), (4, 4)),),
    "5": (((4, 0), (0, 0), (0, 3), (3, 3), (4, 4), (4, 5), (3, 6), (1, 6), (0, 5)),),
    "6": (((3, 0), (1, 0), (0, 1), (0, 5), (1, 6), (3, 6), (4, 5), (4, 4), (3, 3), (0, 3)),),
    "7": (((0, 0), (4, 0), (1, 6)),),
    "8": (
        (
            (1, 3), (0, 2), (0, 1), (1, 0), (3, 0), (4, 1), (4, 2), (3, 3), (1, 3),
            (0, 4), (0, 5), (1, 6), (3, 6), (4, 5), (4, 4), (3, 3),
        ),
    ),
    "9": (((4, 3), (1, 3), (0, 2), (0, 1), (1, 0), (3, 0), (4, 1), (4, 5), (3, 6), (1, 6)),),
}  # fmt: skip

_ADVANCE = 5.5  # from one character to the next, in grid units


def text_path(text: str, x: float, y: float, height: float) -> str:
    """The path data (``d``) of ``text`` centred on (x, y), ``height`` units tall."""
    scale = height / 6
    left = x - (_ADVANCE * len(text) - 1.5) * scale / 2
    top = y - height / 2
    parts = []
    for k, char in enumerate(text.upper()):
        origin = left + k * _ADVANCE * scale
        for stroke in GLYPHS[char]:
            points = " L".join(
                f"{origin + px * scale:.1f},{top + py * scale:.1f}" for px, py in stroke
            )
            parts.append(f"M{points}")
    return " ".join(parts)
