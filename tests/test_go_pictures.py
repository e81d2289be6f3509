"""Go's ASCII diagram and SVG picture: coordinates on all sides, the last move, the dead
stones and the score in the scoring phase; the SVG drawn by resvg as the mail does."""

from __future__ import annotations

import io
import re

import pytest
from PIL import Image
from test_go_records import random_state
from test_go_rules import NO_GNUGO, played, position
from test_go_scoring import WALLS

from pbm.games import picture
from pbm.games.go import GO
from pbm.usecases.pictures import raster
from pbm.usecases.pictures.raster import png_of_svg


def test_a_19x19_diagram_fits_in_78_columns() -> None:
    state = random_state(1, "19", plies=150)
    text = state.diagram()
    assert max(len(line) for line in text.splitlines()) <= 78
    lines = text.splitlines()
    assert lines[0].split() == list("ABCDEFGHJKLMNOPQRST") == lines[20].split()
    assert lines[1].startswith("19 ") and lines[1].endswith(" 19")
    assert lines[19].startswith(" 1 ") and lines[19].endswith(" 1")


def test_the_diagram_marks_star_points_the_last_move_and_says_who_is_to_move() -> None:
    state = played(GO.new(None, {"size": "9"}), "E5", "C3")
    text = state.diagram()
    assert " 5  . . . . X . . . .  5" in text
    assert " 3  . .[O]. . . + . .  3" in text  # G3 a star point
    assert "X Black, O White, + a star point; komi 7.5." in text
    assert "Captured so far: by Black 0, by White 0." in text
    assert "Last move: White C3, in [ ]." in text
    assert text.endswith("Black to move.\n")
    assert "White to move: a second pass in a row ends play." in state.play("pass")[0].diagram()


def test_the_diagram_says_how_a_game_ended_that_the_position_did_not_end() -> None:
    text = GO.new(None, {"size": "9"}).diagram(ended="White wins (resign)")
    assert text.endswith("White wins (resign)\n")


def test_the_diagram_in_the_scoring_phase() -> None:
    state = played(position(WALLS), "pass", "pass")
    text = state.diagram()
    assert " 5  . . O X + . o . .  5" in text
    assert "Play has ended. The stones marked dead are written x and o (as first" in text
    assert "Score: Black 54, White 27 + komi 7.5 = 34.5: Black wins by 19.5." in text
    assert max(len(line) for line in text.splitlines()) <= 78


def rasterised(svg: str) -> Image.Image:
    image = Image.open(io.BytesIO(png_of_svg(svg)))
    image.load()
    return image


@pytest.mark.parametrize("size", ["9", "13", "19"])
def test_the_picture_is_drawn_by_resvg(size: str) -> None:
    state = random_state(int(size), size, plies=int(size) * 5)
    svg = picture(state, 0, f"Go board, {size}x{size}")
    assert svg is not None and svg.startswith("<svg ") and "<title>Go board" in svg
    image = rasterised(svg)
    assert image.size == (raster.WIDTH * raster.SCALE,) * 2  # drawn at twice its shown size
    stones = re.findall(r'data-point="([A-T]\d+)" data-stone="([bw])"', svg)
    assert len(stones) == state.grid.count("b") + state.grid.count("w")
    if size == "19":
        image.save("/tmp/go-19.png")


def test_the_picture_marks_the_last_move_and_the_dead_stones() -> None:
    state = played(NO_GNUGO.new(None, {"size": "9"}), "E5", "G5")
    svg = state.picture(0, "x", "G5")
    assert 'data-last="G5"' in svg
    scoring = played(position(WALLS), "E5", "pass", "pass")
    svg = scoring.picture(1, "scoring", "pass")
    assert re.findall(r'data-point="(\w+)" data-stone="w" data-dead="1"', svg) == ["G5"]
    assert 'data-last="' not in svg  # the last move was a pass
    image = rasterised(svg).convert("RGB")
    image.save("/tmp/go-9-scoring.png")
    # The board is wood-coloured where nothing stands: the top left corner.
    r, g, b = image.getpixel((4, 4))  # type: ignore[misc]
    assert r > g > b


def test_the_picture_is_the_same_from_both_seats() -> None:
    state = random_state(5, "13", plies=30)
    assert state.picture(0, "a", "") == state.picture(1, "a", "")
