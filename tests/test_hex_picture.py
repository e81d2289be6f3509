"""The Hex board as a picture: an SVG that resvg draws (as the mail does) at 11x11, 13x13 and
19x19 into a PNG that decodes, shows both players' colours and names the cells it draws."""

from __future__ import annotations

import io
import re

import pytest
from PIL import Image

import pbm.games
from pbm.games.hex import HEX, HexState
from pbm.usecases.pictures import raster


def position(size: int) -> HexState:
    state = HEX.new(options={"size": str(size)})
    for move in ("c2", "swap", "e5", "f5", "g6"):
        state, _ = state.play(move)
    return state


@pytest.mark.parametrize("size", [11, 13, 19])
def test_the_picture_is_drawn_by_resvg_into_a_png_with_both_colours(size: int) -> None:
    svg = pbm.games.picture(position(size), 0, f"Hex board {size}", "g6")
    assert svg is not None and svg.startswith("<svg ")
    width = int(re.search(r'width="(\d+)"', svg).group(1))  # type: ignore[union-attr]
    assert 480 <= width <= 560
    png = raster.png_of_svg(svg)
    image = Image.open(io.BytesIO(png)).convert("RGB")
    assert image.width == raster.WIDTH * raster.SCALE and 400 < image.height < 960
    colours = [(n, rgb) for n, rgb in image.getcolors(256 * 256) or [] if isinstance(rgb, tuple)]
    assert len(colours) > 8  # more than a blank page
    reds = sum(n for n, (r, g, b) in colours if r > 150 and g < 100 and b < 100)
    blues = sum(n for n, (r, g, b) in colours if b > 150 and r < 100)
    assert reds > 1000 and blues > 1000  # the edges in the players' colours, and the stones


def test_the_picture_names_its_cells_stones_and_last_move() -> None:
    svg = position(13).picture(1, "board", "")
    assert svg.count('class="cell"') == 169
    assert len(re.findall(r'data-stone="R"', svg)) == 2
    assert len(re.findall(r'data-stone="B"', svg)) == 2
    assert re.search(r'data-cell="g6" data-stone="R" data-last="yes"', svg)
    assert svg.count('data-last="yes"') == 1
    assert svg.count('data-edge="R"') == 2 and svg.count('data-edge="B"') == 2
    assert "<title>board</title>" in svg
    assert "<text" not in svg  # the mail's renderer has no fonts: the names are strokes


def test_both_seats_see_the_same_board_and_a_swap_marks_the_swapped_stone() -> None:
    state = HEX.new()
    state, _ = state.play("c2")
    state, _ = state.play("swap")
    assert state.picture(0, "x", "") == state.picture(1, "x", "")
    assert 'data-cell="b3" data-stone="B" data-last="yes"' in state.picture(0, "x", "")


def test_the_13x13_picture_is_small_enough_to_mail() -> None:
    png = raster.png_of_svg(position(13).picture(0, "Hex", ""))
    assert png.startswith(b"\x89PNG") and len(png) < 60_000
