"""Hex's rules through the game protocol: moves and their refusals, the swap rule, the end,
options, the stored state, the diagram, and the winner against a flood of its own."""

from __future__ import annotations

import re
from collections import deque

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pbm.games
from pbm.games import BadNotation, BadOption, IllegalMove, Outcome
from pbm.games.hex import HEX, HexState
from pbm.games.hex.board import LETTERS, neighbours

LETTERS_19 = "abcdefghijklmnopqrs"


def name(row: int, col: int) -> str:
    return f"{LETTERS_19[col]}{row + 1}"


def play(state: HexState, *moves: str) -> HexState:
    for move in moves:
        state, _ = state.play(move)
    return state


def small(size: int = 5, swap: str = "on") -> HexState:
    return HEX.new(options={"size": str(size), "swap": swap})


# -- a winner check of the tests' own: a breadth-first flood from one edge --


def flood_connects(state: HexState, stone: str) -> bool:
    """Whether ``stone``'s stones join its edges: a flood from the first edge, cells
    found by (row, column) steps on the rhombus, written apart from the package."""
    n = state.size
    at = {(r, c): state.cells[r * n + c] for r in range(n) for c in range(n)}
    if stone == "R":
        start = [(0, c) for c in range(n)]
        done = {(n - 1, c) for c in range(n)}
    else:
        start = [(r, 0) for r in range(n)]
        done = {(r, n - 1) for r in range(n)}
    queue = deque(p for p in start if at[p] == stone)
    seen = set(queue)
    while queue:
        r, c = queue.popleft()
        if (r, c) in done:
            return True
        for dr, dc in ((-1, 0), (-1, 1), (0, -1), (0, 1), (1, -1), (1, 0)):
            q = (r + dr, c + dc)
            if q in at and at[q] == stone and q not in seen:
                seen.add(q)
                queue.append(q)
    return False


def flood_winner(state: HexState) -> int | None:
    red, blue = flood_connects(state, "R"), flood_connects(state, "B")
    assert not (red and blue), state.cells
    return 0 if red else 1 if blue else None


@settings(max_examples=150, deadline=None)
@given(size=st.integers(5, 9), data=st.data())
def test_random_games_end_with_one_winner_that_the_flood_agrees_with(
    size: int, data: st.DataObject
) -> None:
    state = small(size)
    order = data.draw(st.permutations(range(size * size)))
    swap = data.draw(st.booleans())
    moves = [name(*divmod(k, size)) for k in order]
    if swap:  # the first cell is emptied by the swap: it comes round again at the end
        moves = [moves[0], "swap", *moves[1:], moves[0]]
    for move in moves:
        if state.outcome is not None:
            break
        if move != "swap" and state.cells[index_of(move, size)] != ".":
            continue  # the cell the swapped stone went to
        state, canonical = state.play(move)
        assert canonical == move
        expected = flood_winner(state)
        assert (state.outcome.winner if state.outcome else None) == expected
    assert state.outcome is not None
    assert state.outcome == Outcome(flood_winner(state), "connection")
    assert state.legal_moves() == [] and state.example_move() is None


def index_of(move: str, size: int) -> int:
    return (int(move[1:]) - 1) * size + LETTERS.index(move[0])


@settings(max_examples=60, deadline=None)
@given(size=st.integers(5, 11), data=st.data())
def test_a_full_board_has_exactly_one_connection(size: int, data: st.DataObject) -> None:
    cells = "".join(data.draw(st.lists(st.sampled_from("RB"), min_size=size**2, max_size=size**2)))
    state = HexState(size, True, cells)
    assert flood_connects(state, "R") != flood_connects(state, "B")


@settings(max_examples=100, deadline=None)
@given(size=st.integers(5, 19), data=st.data())
def test_swap_mirrors_any_first_stone_across_the_long_diagonal(
    size: int, data: st.DataObject
) -> None:
    row = data.draw(st.integers(0, size - 1))
    col = data.draw(st.integers(0, size - 1))
    state = play(small(size), name(row, col))
    swapped, canonical = state.play("swap")
    assert canonical == "swap"
    assert swapped.cells.count("R") == 0 and swapped.cells.count("B") == 1
    assert swapped.cells[col * size + row] == "B"  # column and row exchanged
    assert swapped.to_move == 0 and swapped.ply == 2 and swapped.outcome is None
    assert swapped.marked() == col * size + row


def test_the_swap_example_of_the_help_c2_becomes_b3() -> None:
    state = play(HEX.new(), "c2", "swap")
    assert state.cells[2 * 13 + 1] == "B" and "R" not in state.cells
    assert "swap (Red's c2 became Blue's b3)" in state.diagram()
    assert "1. c2 2. swap" in HEX.help_text() and "on b3" in HEX.help_text()


def test_swap_is_refused_but_as_move_2() -> None:
    with pytest.raises(IllegalMove, match=r"only allowed as Blue's first move \(move 2\)"):
        HEX.new().play("swap")
    with pytest.raises(IllegalMove, match=r"only allowed as Blue's first move \(move 2\)"):
        play(HEX.new(), "c2", "d4").play("swap")
    with pytest.raises(IllegalMove, match=r"only allowed as Blue's first move"):
        play(HEX.new(), "c2", "swap").play("swap")


def test_without_the_swap_rule_swap_is_refused_saying_so() -> None:
    state = play(small(swap="off"), "c2")
    assert "swap" not in state.legal_moves()
    with pytest.raises(IllegalMove, match="plays without the swap rule"):
        state.play("swap")


def test_swap_is_a_legal_move_only_on_move_2() -> None:
    state = HEX.new()
    assert "swap" not in state.legal_moves()
    state = play(state, "g7")
    assert "swap" in state.legal_moves() and len(state.legal_moves()) == 169
    assert "swap" not in play(state, "swap").legal_moves()


@pytest.mark.parametrize("text", ["G7", "g 7", " g7 ", "g7!", "G 7"])
def test_capitals_and_a_space_are_forgiven(text: str) -> None:
    state, canonical = HEX.new().play(text)
    assert canonical == "g7" and state.cells[6 * 13 + 6] == "R"


def test_swap_in_capitals_is_read() -> None:
    assert play(HEX.new(), "a1").play("Swap")[1] == "swap"


@pytest.mark.parametrize(
    ("text", "cell"), [("z99", "z99"), ("n14", "n14"), ("a14", "a14"), ("N1", "n1"), ("a0", "a0")]
)
def test_a_cell_off_the_board_is_refused_naming_it(text: str, cell: str) -> None:
    with pytest.raises(IllegalMove, match=rf"^{cell} is not on the board: this 13x13 board"):
        HEX.new().play(text)


def test_an_occupied_cell_is_refused_naming_it_and_its_owner() -> None:
    with pytest.raises(IllegalMove, match=r"^g7 is taken: Red has a stone there"):
        play(HEX.new(), "g7").play("g7")
    with pytest.raises(IllegalMove, match=r"^b3 is taken: Blue has a stone there"):
        play(HEX.new(), "c2", "swap").play("B3")


@pytest.mark.parametrize("text", ["hello", "g", "7", "gg7", "g77x", "", "swap it"])
def test_text_that_is_no_move_is_bad_notation(text: str) -> None:
    with pytest.raises(BadNotation, match="is not a move: write a cell"):
        HEX.new().play(text)


def won_by_red(size: int = 5) -> HexState:
    # Red goes straight down column a, Blue along column b (not joining left and right).
    moves = []
    for row in range(size):
        moves.append(name(row, 0))
        if row < size - 1:
            moves.append(name(row, 1 if row else 2))
    return play(small(size, swap="off"), *moves)


def test_a_connection_ends_the_game_and_moves_after_it_are_refused_naming_the_cell() -> None:
    state = won_by_red()
    assert state.outcome == Outcome(0, "connection")
    assert state.legal_moves() == [] and state.example_move() is None
    over = r"^e5: the game is over: Red has connected top and bottom"
    with pytest.raises(IllegalMove, match=over):
        state.play("e5")
    assert "Red wins: Red has connected top and bottom." in state.diagram()
    assert state.legal_moves_text().startswith("None: the game is over")


def test_blue_wins_by_joining_left_and_right() -> None:
    moves = []
    for col in range(5):
        moves.append(name(4 if col else 3, col))  # Red: a4, b5, c5, d5, e5 (not a chain)
        moves.append(name(0, col))  # Blue: row 1
    state = play(small(swap="off"), *moves[:-1])
    assert state.outcome is None
    state, _ = state.play(moves[-1])
    assert state.outcome == Outcome(1, "connection") and state.outcome.result() == "0-1"


def test_no_draw_can_be_claimed_or_offered() -> None:
    assert HEX.draw_offers is False
    with pytest.raises(IllegalMove, match=r"^Hex cannot be drawn: "):
        HEX.new().claim_draw()


def test_the_options_declare_sizes_5_to_19_and_swap_on_or_off() -> None:
    size, swap = HEX.options
    assert size.name == "size" and size.default == "13"
    assert size.values == tuple(str(n) for n in range(5, 20))
    assert swap.name == "swap" and swap.values == ("on", "off") and swap.default == "on"
    assert HEX.check_options("standard", {}) == {"size": "13", "swap": "on"}
    assert HEX.check_options("standard", {"size": "11", "swap": "OFF"}) == {
        "size": "11",
        "swap": "off",
    }
    assert HEX.new(options={"size": "19"}).options == {"size": "19", "swap": "on"}


@pytest.mark.parametrize("size", ["40", "x", "4", "20", ""])
def test_a_bad_size_is_refused_with_what_works(size: str) -> None:
    with pytest.raises(BadOption, match=r"^size cannot be .*: a Hex board is 5 to 19 cells a side"):
        HEX.new(options={"size": size})


def test_a_bad_swap_or_option_is_refused() -> None:
    with pytest.raises(BadOption, match="swap cannot be 'maybe': choose on or off"):
        HEX.new(options={"swap": "maybe"})
    with pytest.raises(BadOption, match="unknown option 'komi'"):
        HEX.new(options={"komi": "6"})


def test_the_game_is_registered_and_plays_red_first() -> None:
    assert pbm.games.get("hex") is HEX
    assert HEX.seat_names == ("Red", "Blue")
    state = HEX.new()
    assert state.to_move == 0 and state.ply == 0 and state.variant == "standard"
    assert state.example_move() == "g7"
    assert play(state, "g7").to_move == 1


def test_legal_moves_are_every_empty_cell_sorted() -> None:
    state = play(small(), "c3", "d4")
    legal = state.legal_moves()
    assert legal == sorted(legal) and len(legal) == 23
    assert "c3" not in legal and "d4" not in legal


@pytest.mark.parametrize("word", ["g7", "G7", "a1", "s19", "z99", "swap", "SWAP", "m13;"])
def test_moves_look_like_moves(word: str) -> None:
    assert HEX.looks_like_move(word)


@pytest.mark.parametrize("word", ["g", "7", "resign", "draw", "hello", "1-0", "a100", "g7g8"])
def test_other_words_do_not(word: str) -> None:
    assert not HEX.looks_like_move(word)


@given(st.lists(st.integers(0, 48), min_size=0, max_size=20, unique=True), st.booleans())
@settings(max_examples=80, deadline=None)
def test_dump_and_load_round_trip(cells: list[int], swap: bool) -> None:
    state = small(7, "on" if swap else "off")
    for k in cells:
        if state.outcome is not None:
            break
        state, _ = state.play(name(*divmod(k, 7)))
    if swap and state.ply == 1:
        state, _ = state.play("swap")
    loaded = HEX.load(state.dump())
    assert loaded == state and loaded.dump() == state.dump()
    assert loaded.outcome == state.outcome and loaded.diagram() == state.diagram()


def test_a_stored_board_that_does_not_fit_is_refused() -> None:
    data = HEX.new().dump().replace("/.............", "", 1)
    with pytest.raises(ValueError, match="169 cells"):
        HEX.load(data)


def test_the_19x19_diagram_fits_78_columns_and_marks_the_last_move() -> None:
    state = play(HEX.new(options={"size": "19"}), "s19", "a1", "j10")
    text = state.diagram()
    assert max(len(line) for line in text.splitlines()) <= 78
    assert "[R]" in text and "Last move: 3. j10, in brackets." in text
    assert "Red (R) connects top and bottom; Blue (B) connects left and right." in text
    assert text.endswith("Blue to move (move 4)\n")
    assert all(line == line.rstrip() for line in text.splitlines())


def test_the_diagram_shows_both_edges_and_whose_turn() -> None:
    state = play(small(), "c2")
    lines = state.diagram().splitlines()
    assert lines[0].split() == list("abcde") and lines[1].split() == list("RRRRR")
    assert lines[2].split()[:2] == ["1", "B"] and lines[2].split()[-2:] == ["B", "1"]
    assert lines[3] == "  2 B . .[R]. . B 2"
    assert lines[-1] == "Blue to move (move 2): a stone on an empty cell, or swap"
    assert HEX.new().diagram(ended="Cancelled").endswith("Cancelled\n")


def test_legal_moves_text_groups_the_empty_cells_by_row() -> None:
    text = play(HEX.new(), "g7").legal_moves_text()
    lines = text.splitlines()
    assert lines[0].startswith("168 empty cells")
    assert " 7: a7-f7 h7-m7" in lines
    assert "13: a13-m13" in lines
    assert lines[-1] == "Or swap: Red's stone on g7 becomes Blue's on g7, and Red moves."
    assert len(lines) == 15 and max(map(len, lines)) <= 78


def test_legal_moves_text_writes_short_runs_cell_by_cell() -> None:
    text = play(small(swap="off"), "c2", "a2", "e2").legal_moves_text()
    assert " 2: b2 d2" in text.splitlines()


def test_play_reads_a_move_of_two_words() -> None:
    state, canonical = HEX.new().play("m 13")
    assert canonical == "m13" and state.last == "m13"


def test_the_help_text_is_plain_and_narrow() -> None:
    text = HEX.help_text()
    assert all(len(line) <= 72 for line in text.splitlines())
    assert text.isascii()
    for words in ("swap", "bridge", "ladder", "template", "--size=11", "--swap=off"):
        assert words.lower() in text.lower()
    assert re.search(r"Red .*top and bottom", text)


def cell(text: str, size: int = 13) -> int:
    return (int(text[1:]) - 1) * size + LETTERS.index(text[0])


@pytest.mark.parametrize(
    ("first", "second", "between"),
    [("d5", "e6", ("e5", "d6")), ("e5", "d7", ("d6", "e6"))],
)
def test_the_bridges_of_the_help_share_two_cells(
    first: str, second: str, between: tuple[str, str]
) -> None:
    nbrs = neighbours(13)
    shared = set(nbrs[cell(first)]) & set(nbrs[cell(second)])
    assert shared == {cell(c) for c in between}
    assert cell(second) not in nbrs[cell(first)]
    text = " ".join(HEX.help_text().split())
    assert f"{first} and {second}" in text and f"over {between[0]} and {between[1]}" in text


def test_the_neighbours_of_c2_are_those_the_help_names() -> None:
    assert {cell(c, 5) for c in ("b2", "d2", "c1", "d1", "b3", "c3")} == set(neighbours(5)[7])
    assert "c2 touches b2 and d2, c1 and d1, b3 and c3" in " ".join(HEX.help_text().split())


def test_a_stored_last_move_off_the_board_is_refused() -> None:
    data = HEX.new(options={"size": "5"}).dump().replace('"last":""', '"last":"z9"')
    with pytest.raises(ValueError, match="z9 is not on the board"):
        HEX.load(data)
