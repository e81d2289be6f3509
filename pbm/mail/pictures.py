"""Board pictures as PNG for mail: drawn once a position and seat, small enough for a phone.

A game draws its position as SVG (``pbm.games.picture``); resvg (``resvg-py``,
the Rust renderer, in a wheel with nothing to download or install beside it)
turns that into pixels, and Pillow stores them as a PNG of a few dozen
colours, a third of resvg's own. The pictures need no font (``picture.py``
of each game), so none is loaded. The PNGs of the latest positions are kept:
the copies of one board mail, for the two players and the followers, cost
one drawing a seat.
"""

from __future__ import annotations

import functools
import io

import resvg_py
from PIL import Image

from pbm import games
from pbm.replies import Picture

WIDTH = 480  # pixels: sharp on a phone (the HTML shows it at most 480 px wide)
COLOURS = 48  # a board has few; fewer would band its edges


@functools.lru_cache(maxsize=256)
def png(picture: Picture) -> bytes:
    """The PNG of ``picture`` (its position from its seat), ``WIDTH`` pixels wide."""
    state = games.get(picture.game).load(picture.position)
    svg = games.picture(state, picture.seat, picture.alt, picture.last)
    if svg is None:
        raise ValueError(f"{picture.game} draws no picture")
    return png_of_svg(svg)


def png_of_svg(svg: str, width: int = WIDTH) -> bytes:
    """An SVG document as a small PNG."""
    drawn = bytes(resvg_py.svg_to_bytes(svg_string=svg, width=width, skip_system_fonts=True))
    image = Image.open(io.BytesIO(drawn)).convert("RGB")
    # Octree: a fifth of median cut's time for the same look at a board's few colours.
    few = image.quantize(COLOURS, method=Image.Quantize.FASTOCTREE, dither=Image.Dither.NONE)
    out = io.BytesIO()
    few.save(out, format="PNG", compress_level=6)
    return out.getvalue()
