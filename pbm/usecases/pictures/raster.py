"""Board pictures as PNG for mail: the game's SVG drawn by resvg, the PNG made by Pillow.

A game draws its position as an SVG document (``pbm.games.picture``); here it
is drawn at twice the width the HTML shows it at (``SCALE``: sharp on a phone,
whose screen has two or three pixels to a CSS pixel), mapped to a palette of
``COLOURS`` and saved as a PNG by Pillow.

The renderer is resvg, through the ``svg2png-py`` wheel. Chosen by what it
costs to keep, with the 50 ms a picture the mail may take as the one bound:

- CairoSVG is the most used SVG renderer on PyPI (rank 1241 of the 15,000 most
  downloaded, against 4202 for ``resvg-py``; ``svg2png-py`` is not among them)
  and well kept, but needs the system's libcairo2 on every machine (the
  container's image has none), and its SVG tree walk is Python: 46 ms for a
  chess board at 2x before any PNG is made, 60 to 100 ms a picture.
- ``resvg-py`` (the same renderer; 21 releases) hands over only a PNG of its
  own: 76 to 88 ms at 2x, which Pillow would then decode to map it to a palette.
- ``svg2png-py`` hands over resvg's pixels: 5 to 8 ms at 2x, a wheel with
  nothing beside it, and Pillow alone writes the PNG. Its weakness is its
  youth (one release); what pbm asks of it is ``svg_to_rgba`` alone, so
  ``resvg-py`` or CairoSVG can take its place in a few lines.

A palette PNG is less than half the size of a full-colour one (a board has few
colours): at 2x, Accasta some 16 KB, chess some 27 KB (``scripts/bench_pictures.py``).
The pictures need no font (the games draw their letters as outlines), so none
is loaded.

One small cache: the copies of one board mail (both players, the followers)
show one picture a seat, so the latest few are kept rather than drawn again.
"""

from __future__ import annotations

import functools
import io
import re

import svg2png_py
from PIL import Image

from pbm import games
from pbm.replies import Picture

WIDTH = 480  # CSS pixels: what the HTML part shows (``pbm.mail.html``)
SCALE = 2  # pixels drawn to a CSS pixel: a phone shows two or three
# Colours of the palette: a board has a dozen, and its edges their blends. With 24, Hex's
# cells took the background's colour; 32 keep every game's colours apart.
COLOURS = 32
# zlib's level: 9 (what ``optimize`` sets) takes half as long again for 2 % less.
LEVEL = 8

_NO_FONTS = svg2png_py.FontDatabase()  # empty: nothing is looked up on the machine
_SIZE = re.compile(r'<svg\b[^>]*?\swidth="([\d.]+)"[^>]*?\sheight="([\d.]+)"')


@functools.lru_cache(maxsize=16)
def png(picture: Picture) -> bytes:
    """The PNG of ``picture`` (its position from its seat), ``WIDTH * SCALE`` pixels wide."""
    state = games.get(picture.game).load(picture.position)
    svg = games.picture(state, picture.seat, picture.alt, picture.last)
    if svg is None:
        raise ValueError(f"{picture.game} draws no picture")
    return png_of_svg(svg)


def png_of_svg(svg: str, width: int = WIDTH * SCALE) -> bytes:
    """An SVG document (with ``width``, ``height`` and a ``viewBox``) as a palette PNG
    ``width`` pixels wide."""
    rgba, w, h = svg2png_py.svg_to_rgba(_sized(svg, width), _NO_FONTS)
    pixels = Image.frombuffer("RGBa", (w, h), rgba).convert("RGB")
    # The palette is chosen on the picture at half size, where the edges' blends weigh
    # less against the board's own colours: chess's largest PNG 29 KB rather than 30.
    palette = pixels.reduce(2).quantize(
        COLOURS, method=Image.Quantize.FASTOCTREE, dither=Image.Dither.NONE
    )
    indexed = pixels.quantize(palette=palette, dither=Image.Dither.NONE)
    out = io.BytesIO()
    indexed.save(out, format="PNG", compress_level=LEVEL)
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
