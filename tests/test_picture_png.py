"""Board pictures as PNG (issues 22 and 36): the game's SVG drawn at twice the width the
mail shows it at, as a palette PNG small enough to mail, for every position of the two
published Accasta sample games from both seats and of a chess game; the colours that
tell the pieces and the last move apart survive the palette."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from PIL import Image

import pbm.games
from pbm.replies import Picture
from pbm.usecases.pictures import raster
from pbm.usecases.records.replay import parse_record

DATA = Path(__file__).parent / "data"
ACCASTA, CHESS = pbm.games.get("accasta"), pbm.games.get("chess")
LIMIT = 30_000  # bytes a picture: a board mail stays small on a phone's data plan


def states(name: str) -> list[tuple[pbm.games.GameState, str]]:
    record = parse_record((DATA / name).read_text(encoding="utf-8"))
    state = ACCASTA.new(record.variant)
    out = [(state, "")]
    for move in record.moves:
        state, canonical = state.play(move.text)
        out.append((state, canonical))
    return out


def drawn(state: pbm.games.GameState, seat: int, last: str) -> bytes:
    svg = pbm.games.picture(state, seat, "board", last)
    assert svg is not None
    return raster.png_of_svg(svg)


def colours(png: bytes) -> set[tuple[int, int, int]]:
    image = Image.open(io.BytesIO(png)).convert("RGB")
    return {colour for _, colour in image.getcolors(4096) or []}


def near(found: set[tuple[int, int, int]], wanted: tuple[int, int, int]) -> bool:
    return min(sum(abs(a - b) for a, b in zip(c, wanted, strict=True)) for c in found) < 16


@pytest.mark.parametrize("seat", [0, 1])
def test_every_sample_picture_is_twice_as_wide_as_shown_and_small_enough_to_mail(
    seat: int,
) -> None:
    for name in ("sample_standard.txt", "sample_pari.txt"):
        for state, last in states(name):
            png = drawn(state, seat, last)
            assert len(png) <= LIMIT, (name, last)
            image = Image.open(io.BytesIO(png))
            assert image.format == "PNG" and image.mode == "P"  # a palette: few colours
            assert image.size == (raster.WIDTH * 2, 840)


def test_a_chess_game_s_pictures_are_small_enough_to_mail() -> None:
    state = CHESS.new()
    for move in [
        "e4",
        "e5",
        "Qh5",
        "Nc6",
        "Bc4",
        "Nf6",
        "Qxf7#",
    ]:  # the last one gives check (mate)
        state, last = state.play(move)
        for seat in (0, 1):
            png = drawn(state, seat, last)
            assert len(png) <= LIMIT
            assert Image.open(io.BytesIO(png)).size == (960, 960)


def test_the_pieces_and_the_last_move_keep_their_colours() -> None:
    state = ACCASTA.new()
    found = colours(drawn(state, 0, ""))
    assert near(found, (0xFB, 0xFA, 0xF5)) and near(found, (0x2A, 0x26, 0x23))  # the chips
    state, last = state.play(state.example_move() or "")
    assert near(colours(drawn(state, 0, last)), (0xD2, 0x45, 0x2B))  # the outline


def test_a_picture_is_drawn_from_its_stored_position_and_seat() -> None:
    state, last = ACCASTA.new().play("a1:C+b2,HS-c1")
    picture = Picture("accasta", state.dump(), 1, last, "board")
    assert raster.png(picture) == drawn(state, 1, last)
    assert raster.png(picture) != drawn(state, 0, last)
    with pytest.raises(ValueError, match="width and height"):
        raster.png_of_svg('<svg xmlns="http://www.w3.org/2000/svg"/>')
