"""Pictures of the board (the first part of issue 22): every position of the two published
Accasta sample games, standard and Pari, drawn as SVG from both seats, with each stack read
back from the SVG where the position says it is; chess through python-chess's own board."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import chess
import pytest

import pbm.games
from pbm.games.accasta import AccastaState
from pbm.games.accasta.board import CASTLES, CELLS, INDEX
from pbm.games.accasta.picture import CELL_RADIUS, cell_centre
from pbm.usecases.records.replay import parse_record

DATA = Path(__file__).parent / "data"
NS = {"svg": "http://www.w3.org/2000/svg"}
ACCASTA, CHESS = pbm.games.get("accasta"), pbm.games.get("chess")


def positions(name: str) -> list[tuple[AccastaState, str]]:
    """Every position of a sample game, with the move that led to it."""
    record = parse_record((DATA / name).read_text(encoding="utf-8"))
    state = ACCASTA.new(record.variant)
    assert isinstance(state, AccastaState)
    out = [(state, "")]
    for move in record.moves:
        state, canonical = state.play(move.text)
        assert isinstance(state, AccastaState)
        out.append((state, canonical))
    return out


def translation(group: ET.Element) -> tuple[int, int]:
    x, y = group.attrib["transform"].removeprefix("translate(").rstrip(")").split()
    return int(x), int(y)


def centre_of(polygon: ET.Element) -> tuple[float, float]:
    points = [tuple(map(float, p.split(","))) for p in polygon.attrib["points"].split()]
    return sum(x for x, _ in points) / 6, sum(y for _, y in points) / 6


@pytest.mark.parametrize("name", ["sample_standard.txt", "sample_pari.txt"])
@pytest.mark.parametrize("seat", [0, 1])
def test_every_sample_position_is_drawn_where_the_position_says(name: str, seat: int) -> None:
    for state, last in positions(name):
        doc = pbm.games.picture(state, seat, "Accasta board", last)
        assert doc is not None
        root = ET.fromstring(doc)  # well formed
        cells = root.findall("svg:polygon[@class='cell']", NS)
        assert sorted(c.attrib["data-cell"] for c in cells) == sorted(CELLS)
        for cell in cells:
            name_ = cell.attrib["data-cell"]
            x, y = centre_of(cell)
            ex, ey = cell_centre(INDEX[name_], seat)
            assert abs(x - ex) < 0.5 and abs(y - ey) < 0.5
            owner = next((o for o in (0, 1) if INDEX[name_] in CASTLES[o]), None)
            assert cell.attrib["data-castle"] == {0: "white", 1: "black", None: ""}[owner]
        # What stands on a cell: put at the cell's centre, outlined if the last move
        # touched it, its stack as the position says.
        spots = {g.attrib["data-cell"]: g for g in root.findall("svg:g[@class='spot']", NS)}
        for cell_name, spot in spots.items():
            assert translation(spot) == cell_centre(INDEX[cell_name], seat)
            outlined = spot.find("svg:polygon[@class='last']", NS) is not None
            assert outlined == (spot.attrib["data-last"] == "yes") == (cell_name in last)
        assert {c for c in spots if spots[c].attrib["data-last"] == "yes"} == {
            c for c in CELLS if c in last
        }
        board = state.position.board
        drawn = {c: g.find("svg:g[@class='stack']", NS) for c, g in spots.items()}
        stacks = {c: g for c, g in drawn.items() if g is not None}
        assert {CELLS[k]: s for k, s in enumerate(board) if s} == {
            c: g.attrib["data-stack"] for c, g in stacks.items()
        }
        for cell_name, group in stacks.items():
            pieces = group.findall("svg:g[@class='piece']", NS)
            assert "".join(p.attrib["data-piece"] for p in pieces) == board[INDEX[cell_name]]
            # Bottom to top: each chip above the one before, all inside the cell (the
            # chips are drawn around the cell's centre, where their group is put).
            tops = [float(p.find("svg:rect", NS).attrib["y"]) for p in pieces]  # type: ignore[union-attr]
            assert tops == sorted(tops, reverse=True)
            assert all(abs(t) < CELL_RADIUS for t in tops)
            if state.position.pari:
                assert {p.attrib["data-kind"] for p in pieces} == {"piece"}


def test_white_sees_row_a_below_and_black_sees_it_above() -> None:
    assert cell_centre(INDEX["a1"], 0)[1] > cell_centre(INDEX["g1"], 0)[1]
    assert cell_centre(INDEX["a1"], 1)[1] < cell_centre(INDEX["g1"], 1)[1]


def test_a_hostile_alt_text_is_text() -> None:
    doc = pbm.games.picture(ACCASTA.new(), 0, '<script>alert(1)</script>"><img src=x>')
    assert doc is not None
    root = ET.fromstring(doc)
    assert root.find("svg:script", NS) is None and root.find(".//svg:img", NS) is None


@pytest.mark.parametrize(
    ("moves", "seat"),
    [
        ([], 0),
        (["e4", "e5", "Nf3", "Nc6", "Bc4", "Bc5", "O-O"], 0),  # castling
        (["e4", "e5", "Qh5", "Nc6", "Bc4", "Nf6", "Qxf7"], 1),  # mate, from Black's seat
        (["e4", "d5", "exd5", "c6", "dxc6", "Qb6", "cxb7", "Nf6", "bxa8=Q"], 0),  # promotion
        (["e4", "e5", "Bc4", "d6", "Bxf7"], 1),  # check
    ],
)
def test_chess_positions_are_python_chess_boards(moves: list[str], seat: int) -> None:
    state = CHESS.new()
    for move in moves:
        state, _ = state.play(move)
    doc = pbm.games.picture(state, seat, "Chess board")
    assert doc is not None
    root = ET.fromstring(doc)
    assert root.attrib.get("aria-label") == "Chess board"
    board = chess.Board()
    for move in moves:
        board.push_san(move)
    pieces = [u for u in root.iter("{http://www.w3.org/2000/svg}use")]
    assert len(pieces) == len(board.piece_map())
    if board.is_check():
        assert "check" in doc
    # Flipped for Black: White's king (e1) stands below from White's seat, above from Black's.
    king = next(u for u in pieces if u.attrib["href"] == "#white-king")
    y = float(king.attrib["transform"].split(",")[1].rstrip(")"))
    assert (y > 240) == (seat == 0)


@pytest.mark.parametrize("seat", [0, 1])
def test_each_game_says_what_its_picture_shows(seat: int) -> None:
    """The legend under a picture (``GameState.legend``, optional): which mark is which
    piece, which end of a stack is its top, what the tinted cells are, which side is below."""
    side = ("White's side", "Black's side")[seat]
    standard = pbm.games.legend(ACCASTA.new(), seat)
    assert "\u25a0 Shield, \u25b2 Horse, \u25cf Chariot" in standard
    assert "bottom to top" in standard and "top piece" in standard
    assert "White's castle" in standard and "outlined in red" in standard
    assert side in standard.splitlines()[-1]
    pari = pbm.games.legend(ACCASTA.new("pari"), seat)
    assert "Shield" not in pari and "plain chip" in pari and side in pari
    chess_words = pbm.games.legend(CHESS.new(), seat)
    assert "last move" in chess_words and "check" in chess_words and side in chess_words
    assert pbm.games.legend(object(), seat) == ""  # type: ignore[arg-type]  # none of its own
