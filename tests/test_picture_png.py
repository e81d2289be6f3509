"""Board pictures as PNG (issue 22): a picture laid together from drawn parts (the backdrop,
a sprite per stack and outline) is the picture its whole SVG draws, for every position of
the two published Accasta sample games from both seats, and each is small enough to mail."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from PIL import Image, ImageChops

import pbm.games
from pbm.mail import pictures
from pbm.record import parse_record

DATA = Path(__file__).parent / "data"
ACCASTA = pbm.games.get("accasta")


def states(name: str) -> list[tuple[pbm.games.GameState, str]]:
    record = parse_record((DATA / name).read_text(encoding="utf-8"))
    state = ACCASTA.new(record.variant)
    out = [(state, "")]
    for move in record.moves:
        state, canonical = state.play(move.text)
        out.append((state, canonical))
    return out


def pixels(png: bytes) -> Image.Image:
    return Image.open(io.BytesIO(png)).convert("RGB")


@pytest.mark.parametrize("name", ["sample_standard.txt", "sample_pari.txt"])
def test_a_picture_laid_from_parts_is_the_picture_of_its_whole_svg(name: str) -> None:
    for state, last in states(name):
        for seat in (0, 1):
            layers = pbm.games.layers(state, seat, "board", last)
            assert layers is not None
            laid = pixels(pictures.png_of_layers(layers))
            whole = pixels(pictures.png_of_svg(layers.document(), layers.width))
            assert laid.size == whole.size == (480, 420)
            # The two differ only where a colour between two maps to a neighbouring
            # one of the palette: a few edge pixels, never a chip or a cell.
            off = ImageChops.difference(laid, whole).convert("L").point(lambda v: v > 40)
            assert off.histogram()[1] < 0.001 * 480 * 420, (last, seat)


def test_a_new_stack_is_drawn_in_the_colours_of_its_pieces() -> None:
    """The palette holds every piece and the outline, whatever the first picture showed."""
    state = ACCASTA.new()
    layers = pbm.games.layers(state, 0, "board", "")
    assert layers is not None
    image = pixels(pictures.png_of_layers(layers))
    colours = {colour for _, colour in image.getcolors(4096) or []}
    for wanted in ((0xFB, 0xFA, 0xF5), (0x2A, 0x26, 0x23)):  # White's chips, Black's
        assert min(sum(abs(a - b) for a, b in zip(c, wanted, strict=True)) for c in colours) < 12
    state, last = state.play(state.example_move() or "")
    outlined = pbm.games.layers(state, 0, "board", last)
    assert outlined is not None
    red = (0xD2, 0x45, 0x2B)
    colours = {c for _, c in pixels(pictures.png_of_layers(outlined)).getcolors(4096) or []}
    assert min(sum(abs(a - b) for a, b in zip(c, red, strict=True)) for c in colours) < 12


@pytest.mark.parametrize("seat", [0, 1])
def test_every_sample_picture_is_small_enough_to_mail(seat: int) -> None:
    for name in ("sample_standard.txt", "sample_pari.txt"):
        for state, last in states(name):
            layers = pbm.games.layers(state, seat, "board", last)
            assert layers is not None
            assert len(pictures.png_of_layers(layers)) <= 30_000


@pytest.mark.parametrize("size", [(1, 1), (3, 7), (480, 420)])
def test_a_png_we_write_reads_back_as_the_pixels_it_was_made_of(size: tuple[int, int]) -> None:
    """pbm writes its PNGs itself (``pictures._indexed_png``): every chunk's CRC holds and
    a reader gets the same palette indexes and colours back."""
    width, height = size
    image = Image.frombytes(
        "P", size, bytes((x * 7 + y * 3) % 64 for y in range(height) for x in range(width))
    )
    image.putpalette([(i * 37 + c * 91) % 256 for i in range(64) for c in range(3)])
    png = pictures._png(image)
    Image.open(io.BytesIO(png)).verify()  # signature, chunk order, every CRC
    back = Image.open(io.BytesIO(png))
    assert back.mode == "P" and back.size == size
    assert back.tobytes() == image.tobytes()
    assert back.convert("RGB").tobytes() == image.convert("RGB").tobytes()
    with pytest.raises(ValueError):
        pictures._indexed_png(width + 1, height, [0, 0, 0], image.tobytes())
