"""Board pictures as PNG for mail: drawn once a position and seat, small enough for a phone.

A game draws its position as SVG (``pbm.games.picture``); resvg, the Rust
renderer, turns that into pixels and Pillow stores them as a PNG of a few
dozen colours. resvg comes through ``svg2png-py``, a wheel with nothing to
download or install beside it, because it hands over the raw pixels: the
PNG that ``resvg-py`` (or CairoSVG) writes itself costs 26-43 ms a board,
against some 2 ms to draw the pixels, and Pillow makes it three times
smaller anyway. The pictures need no font (``picture.py`` of each game), so
none is loaded. The PNGs of the latest positions are kept: the copies of one
board mail, for the two players and the followers, cost one drawing a seat.
"""

from __future__ import annotations

import functools
import io
import re

import svg2png_py
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


_NO_FONTS = svg2png_py.FontDatabase()  # empty: nothing is looked up on the machine
_SIZE = re.compile(r'<svg\b[^>]*?\swidth="([\d.]+)"[^>]*?\sheight="([\d.]+)"')


def png_of_svg(svg: str, width: int = WIDTH) -> bytes:
    """An SVG document (with ``width``, ``height`` and a ``viewBox``) as a small PNG
    ``width`` pixels wide."""
    rgba, w, h = svg2png_py.svg_to_rgba(_sized(svg, width), _NO_FONTS)
    image = Image.frombuffer("RGBa", (w, h), rgba).convert("RGB")
    # Octree: a fifth of median cut's time for the same look at a board's few colours.
    few = image.quantize(COLOURS, method=Image.Quantize.FASTOCTREE, dither=Image.Dither.NONE)
    out = io.BytesIO()
    few.save(out, format="PNG", compress_level=6)
    return out.getvalue()


def _sized(svg: str, width: int) -> str:
    """``svg`` drawn ``width`` wide: its root's size changed, its viewBox scales the rest."""
    found = _SIZE.search(svg)
    if found is None:
        raise ValueError("the picture's SVG has no width and height")
    height = round(float(found.group(2)) * width / float(found.group(1)))
    root = found.group(0)
    sized = re.sub(r'(\swidth=")[\d.]+"', rf'\g<1>{width}"', root, count=1)
    sized = re.sub(r'(\sheight=")[\d.]+"', rf'\g<1>{height}"', sized, count=1)
    return svg.replace(root, sized, 1)
