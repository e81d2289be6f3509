"""Board pictures as PNG for mail: drawn once a position and seat, small enough for a phone.

A game draws its position as SVG (``pbm.games.picture``); resvg, the Rust
renderer, turns that into pixels, Pillow maps them to a palette of a few
dozen colours, and the PNG is written here (``_indexed_png``) with ISA-L's
deflate. resvg comes through ``svg2png-py``, a wheel with nothing to
download or install beside it, because it hands over the raw pixels: the
PNG that ``resvg-py`` (or CairoSVG) writes itself costs 26-43 ms a board,
against some 2 ms to draw the pixels, and a palette PNG is three times
smaller anyway. The pictures need no font (``picture.py`` of each game), so
none is loaded.

A game that draws in layers (``pbm.games.layers``: Accasta) costs a drawing
only for what is new: its backdrop is drawn once a seat (a ``_Sheet``, made
when the inbox worker starts: ``prepare``), each distinct sprite (a stack,
an outline) once on each spot it stands on, both mapped to the seat's
palette (taken once, from the backdrop and the game's swatch), and a
position is laid together by copying palette indexes through each sprite's
mask: nothing is blended or quantized afresh. About 0.2 ms a picture (once
its parts are drawn; a new stack's tile some 0.05 ms more), against some
8 ms for drawing the whole SVG.
The PNGs of the latest positions are kept too: the copies of one board
mail, for the two players and the followers, cost one picture a seat. The
inbox worker draws the pictures of the replies it hands to the sender
(``draw_all``) in its own process, after its commit (a worker process: after
handing the replies over, a few at a time); the sender is given them
(``keep``), each mail waiting for its own, and only lays them into the mail.
"""

from __future__ import annotations

import functools
import re
import struct
import zlib
from collections.abc import Iterable, Mapping, Sequence

import svg2png_py
from isal import isal_zlib
from PIL import Image

from pbm import games
from pbm.games.layers import Layers, Sprite
from pbm.replies import Picture

WIDTH = 480  # pixels: sharp on a phone (the HTML shows it at most 480 px wide)
COLOURS = 64  # a board has few; fewer would band its edges


# PNGs drawn in another process (the inbox worker's, for the replies it hands
# over): the sender takes them instead of drawing them again on its own loop.
_GIVEN: dict[Picture, bytes] = {}
GIVEN_KEPT = 512  # a few seconds of board mails at the most a server carries


def png(picture: Picture) -> bytes:
    """The PNG of ``picture`` (its position from its seat), ``WIDTH`` pixels wide."""
    given = _GIVEN.get(picture)
    return given if given is not None else drawn(picture)


def prepare() -> None:
    """Draw now what every picture of a game that draws in layers is laid on (each
    seat's sheet: some 20 ms), not for the first board mail after a start."""
    for name in games.names():
        state = games.get(name).new()
        for seat in (0, 1):
            layered = games.layers(state, seat, "", "")
            if layered is not None:
                _sheet(layered)


def draw_all(pictures: Iterable[str]) -> dict[str, bytes]:
    """The PNG of each picture (as a reply stores it, ``Picture.to_json``)."""
    return {stored: png(Picture.from_json(stored)) for stored in set(pictures)}


def keep(pngs: Mapping[str, bytes]) -> None:
    """PNGs drawn elsewhere (``draw_all``), for ``png`` to hand out."""
    if len(_GIVEN) + len(pngs) > GIVEN_KEPT:
        _GIVEN.clear()  # sent long since, nearly all; a mail still waiting draws its own
    _GIVEN.update((Picture.from_json(stored), data) for stored, data in pngs.items())


@functools.lru_cache(maxsize=256)
def drawn(picture: Picture) -> bytes:
    """``picture``'s PNG drawn in this process (the latest ones kept)."""
    state = games.get(picture.game).load(picture.position)
    layered = games.layers(state, picture.seat, picture.alt, picture.last)
    if layered is not None:
        return png_of_layers(layered)
    svg = games.picture(state, picture.seat, picture.alt, picture.last)
    if svg is None:
        raise ValueError(f"{picture.game} draws no picture")
    return png_of_svg(svg)


def png_of_layers(layers: Layers) -> bytes:
    """A picture drawn in layers as a small PNG, at its own size (``layers.width``)."""
    sheet = _sheet(layers)
    canvas = sheet.canvas.copy()
    for sprite in layers.sprites:
        tile, mask, corner = sheet.tile(sprite)
        canvas.paste(tile, corner, mask)
    # The canvas's rows are the PNG's scanlines as they are (``_Sheet``).
    return _indexed_png(layers.width, layers.height, sheet.palette, canvas.tobytes())


class _Sheet:
    """What every picture on one backdrop (one seat's empty board) is laid from: the
    backdrop's pixels, the palette of its pictures, the canvas they start from, and the
    tiles of the sprites laid on it so far (the latest ``TILES_KEPT``)."""

    TILES_KEPT = 4096

    def __init__(self, backdrop: str, swatch: tuple[Sprite, ...]) -> None:
        self.pixels = _pixels(backdrop).convert("RGB")  # opaque: drawn once for all
        sample = self.pixels.copy()
        for sprite in swatch:
            _lay(sample, sprite)
        # The colours of every picture on it: the backdrop with the swatch laid on it.
        self.map = _quantized(sample)
        self.palette = self.map.getpalette() or []
        # One column wider than the picture: a column of 0 at the left, which is each
        # row's PNG filter byte (0, none: a palette's indexes gain nothing by one), so
        # the canvas's bytes are the PNG's scanlines.
        board = self.pixels.quantize(palette=self.map, dither=Image.Dither.NONE)
        self.canvas = Image.new("P", (board.width + 1, board.height), 0)
        self.canvas.putpalette(self.palette)
        self.canvas.paste(board, (1, 0))
        self.tile = functools.lru_cache(maxsize=self.TILES_KEPT)(self._tile)

    def _tile(self, sprite: Sprite) -> tuple[Image.Image, Image.Image, tuple[int, int]]:
        """``sprite`` laid on the backdrop in the palette, over the box of the pixels it
        touches (laying costs by the pixel), those pixels (a mask) and where the box goes
        on the canvas. A position is then laid together by copying palette indexes, with
        nothing to blend or map afresh.

        Where two sprites' drawings meet (an outline's edge on its neighbour's), the
        later one's edge pixels are those laid on the bare board: a shade off, a pixel
        wide. A tile serves one spot: squares that look alike to the eye differ in a
        few pixels of the backdrop's edges."""
        mask, (right, down) = _mask(sprite.alone())
        left, top = sprite.x - sprite.size // 2 + right, sprite.y - sprite.size // 2 + down
        piece = self.pixels.crop((left, top, left + mask.width, top + mask.height))
        _lay(piece, sprite, (-right, -down))
        tile = piece.quantize(palette=self.map, dither=Image.Dither.NONE)
        return tile, mask, (left + 1, top)


# The sheets of the latest backdrops, by the strings the game keeps for them: a
# picture finds its own with no document to build and hash.
_SHEETS: dict[tuple[str, str, tuple[Sprite, ...]], _Sheet] = {}
SHEETS_KEPT = 8  # a few games' seats


def _sheet(layers: Layers) -> _Sheet:
    """The sheet of ``layers``' backdrop, made once."""
    key = (layers.opening, layers.backdrop, layers.swatch)
    sheet = _SHEETS.get(key)
    if sheet is None:
        if len(_SHEETS) >= SHEETS_KEPT:
            _SHEETS.clear()
        sheet = _SHEETS[key] = _Sheet(layers.backdrop_alone(), layers.swatch)
    return sheet


def _lay(canvas: Image.Image, sprite: Sprite, corner: tuple[int, int] | None = None) -> None:
    half = sprite.size // 2
    drawn = _sprite(sprite.alone())
    # Over an opaque canvas, pasting through the sprite's own alpha is compositing.
    canvas.paste(drawn, corner or (sprite.x - half, sprite.y - half), drawn)


@functools.lru_cache(maxsize=256)
def _sprite(svg: str) -> Image.Image:
    """A sprite's pixels (RGBA, straight alpha, as ``paste`` blends them): for its tiles."""
    return _pixels(svg).convert("RGBA")


@functools.lru_cache(maxsize=256)
def _mask(svg: str) -> tuple[Image.Image, tuple[int, int]]:
    """The pixels a sprite touches (its alpha not 0), cut to their box, and the box's
    corner in the sprite's square."""
    touched = _sprite(svg).getchannel("A").point(_TOUCHED, mode="1")
    box = touched.getbbox() or (0, 0, 1, 1)
    return touched.crop(box), (box[0], box[1])


_TOUCHED = [0] + [255] * 255


_NO_FONTS = svg2png_py.FontDatabase()  # empty: nothing is looked up on the machine
_SIZE = re.compile(r'<svg\b[^>]*?\swidth="([\d.]+)"[^>]*?\sheight="([\d.]+)"')


def png_of_svg(svg: str, width: int = WIDTH) -> bytes:
    """An SVG document (with ``width``, ``height`` and a ``viewBox``) as a small PNG
    ``width`` pixels wide."""
    return _png(_quantized(_pixels(_sized(svg, width)).convert("RGB")))


def _pixels(svg: str) -> Image.Image:
    """An SVG document drawn at its own size (premultiplied RGBa, as resvg gives it)."""
    rgba, w, h = svg2png_py.svg_to_rgba(svg, _NO_FONTS)
    return Image.frombuffer("RGBa", (w, h), rgba)


def _quantized(image: Image.Image) -> Image.Image:
    # Octree: a fifth of median cut's time for the same look at a board's few colours.
    return image.quantize(COLOURS, method=Image.Quantize.FASTOCTREE, dither=Image.Dither.NONE)


def _png(image: Image.Image) -> bytes:
    """A palette image as a PNG."""
    rows, width = image.tobytes(), image.width
    scanlines = b"".join(b"\0" + rows[i : i + width] for i in range(0, len(rows), width))
    return _indexed_png(width, image.height, image.getpalette() or [], scanlines)


_PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def _indexed_png(width: int, height: int, palette: Sequence[int], scanlines: bytes) -> bytes:
    """A PNG of 8-bit palette indexes: ``scanlines`` are its rows, each after its filter
    byte; ``palette`` is R, G, B of each colour.

    Written here rather than by Pillow, whose encoder feeds zlib a row at a time:
    0.55 ms a board against 0.1 ms for the same rows in one go through ISA-L's
    deflate (as small, level 1). PNG (ISO/IEC 15948, W3C PNG 2nd edition):
    the signature (5.2), then chunks of length, type, data and the CRC of type and
    data (5.3): IHDR (11.2.2; bit depth 8, colour type 3: indexed, deflate, no
    interlace), PLTE (11.2.3), one IDAT (11.2.4: a zlib stream), IEND (11.2.5)."""
    if len(scanlines) != (width + 1) * height or not 0 < len(palette) <= 768:
        raise ValueError("scanlines or palette do not fit a PNG of that size")
    header = struct.pack(">IIBBBBB", width, height, 8, 3, 0, 0, 0)
    return b"".join(
        (
            _PNG_SIGNATURE,
            _chunk(b"IHDR", header),
            _chunk(b"PLTE", bytes(palette[: len(palette) // 3 * 3])),
            _chunk(b"IDAT", isal_zlib.compress(scanlines, 1)),
            _chunk(b"IEND", b""),
        )
    )


def _chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


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
