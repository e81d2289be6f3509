"""Tests for the Accasta board diagram (pbm.games.accasta.diagram).

The expected diagrams are copied verbatim from the classic PBeM server's
Accasta help page (trailing spaces stripped, blank lines between the
diagram and its paragraphs removed).
"""

from __future__ import annotations

import re
from collections.abc import Mapping

import pytest

from pbm.games.accasta.diagram import N_CELLS, ROW_LENGTHS, ROWS, board_lines, render

CELL_NAMES = [f"{ROWS[r]}{i + 1}" for r, n in enumerate(ROW_LENGTHS) for i in range(n)]


def make_board(stacks: Mapping[str, str]) -> list[str]:
    """A 37-cell board with the given stacks (bottom to top), the rest empty."""
    unknown = set(stacks) - set(CELL_NAMES)
    assert not unknown, unknown
    return [stacks.get(name, "") for name in CELL_NAMES]


def lines_of(text: str) -> list[str]:
    return text.split("\n")


INITIAL_STACKS = {
    **{f"a{i}": "SHC" for i in range(1, 5)},
    **{f"b{i}": "SH" for i in range(2, 5)},
    **{f"c{i}": "S" for i in range(3, 5)},
    **{f"g{i}": "shc" for i in range(1, 5)},
    **{f"f{i}": "sh" for i in range(2, 5)},
    **{f"e{i}": "s" for i in range(3, 5)},
}

# Help page, "Initial Setup", with its Black and White headings.
INITIAL_SETUP = r"""
                Black

             1   2   3   4
           -/- -/- -/- -/-
      g -- shc shc shc shc 5
             --- --- ---  /
    f -- .   sh  sh  sh  .   6
               --- ---      /
  e -- .   .   s   s   .   .   7
                              /
d -- .   .   .   .   .   .   .
                              \
  c -- .   .   S   S   .   .   7
               --- ---      \
    b -- .   SH  SH  SH  .   6
             --- --- ---  \
      a -- SHC SHC SHC SHC 5
           -\- -\- -\- -\-
             1   2   3   4

                White
"""

# Help page, "Moving the Pieces": the stacking-limit diagram (pitch 6).
STACKING_LIMIT = r"""
                 1     2     3     4
              --/-- --/-- --/-- --/--
         g -- .     .     .     .     5
                 ----- ----- -----   /
      f -- .     HHs   .     .     .     6
                    ----- -----         /
   e -- .     .     .     .     SsSHh .     7
                                           /
d -- .     .     .     .     .     .     .
                                           \
   c -- .     .     .     SHC   .     .     7
                    ----- -----         \
      b -- .     .     .     .     .     6
                 ----- ----- -----   \
         a -- .     .     .     .     5
              --\-- --\-- --\-- --\--
                 1     2     3     4
"""

# Help page, "Multiple Moves" (marker characters X and *, pitch 6).
MULTIPLE_MOVES = r"""
                 1     2     3     4
              --/-- --/-- --/-- --/--
         g -- .     .     .     .     5
                 ----- ----- -----   /
      f -- .     X     .     .     .     6
                    ----- -----         /
   e -- .     .     .     .     .     .     7
                                           /
d -- .     .     .     X     .     .     .
                                           \
   c -- .     X     *     SsHC  .     .     7
                    ----- -----         \
      b -- .     .     .     .     .     6
                 ----- ----- -----   \
         a -- .     .     .     .     5
              --\-- --\-- --\-- --\--
                 1     2     3     4
"""

# Help page, "Winning a Game" (pitch 4).
WINNING = r"""
             1   2   3   4
           -/- -/- -/- -/-
      g -- .   .   shS .   5
             --- --- ---  /
    f -- .   SH  .   .   .   6
               --- ---      /
  e -- .   .   S   .   .   .   7
                              /
d -- .   .   .   .   .   .   .
                              \
  c -- .   .   .   .   .   .   7
               --- ---      \
    b -- .   .   .   .   .   6
             --- --- ---  \
      a -- .   .   .   .   5
           -\- -\- -\- -\-
             1   2   3   4
"""


def expected(diagram: str) -> list[str]:
    return diagram.removeprefix("\n").removesuffix("\n").split("\n")


def diagram_only(lines: list[str]) -> list[str]:
    """board_lines() without the Black/White headings and their blank lines."""
    assert lines[0].strip() == "Black" and lines[1] == ""
    assert lines[-1].strip() == "White" and lines[-2] == ""
    return lines[2:-2]


def test_initial_setup_matches_help_page() -> None:
    assert board_lines(make_board(INITIAL_STACKS)) == expected(INITIAL_SETUP)


def test_render_starts_with_the_diagram() -> None:
    text = render(make_board(INITIAL_STACKS), pari=False, to_move=0)
    assert lines_of(text)[:21] == expected(INITIAL_SETUP)
    assert lines_of(text)[21] == ""


# Black's view of the initial setup: the same drawing turned round (the module's docstring).
INITIAL_SETUP_TURNED = r"""
           White

      4   3   2   1
      -\- -\- -\- -\-
    5 SHC SHC SHC SHC -- a
     \  --- --- ---
  6 .   SH  SH  SH  .   -- b
   \      --- ---
7 .   .   S   S   .   .   -- c
 \
.   .   .   .   .   .   .   -- d
 /
7 .   .   s   s   .   .   -- e
   /      --- ---
  6 .   sh  sh  sh  .   -- f
     /  --- --- ---
    5 shc shc shc shc -- g
      -/- -/- -/- -/-
      4   3   2   1

           Black
"""


def test_black_sees_the_initial_setup_turned_round() -> None:
    assert board_lines(make_board(INITIAL_STACKS), turned=True) == expected(INITIAL_SETUP_TURNED)
    text = render(make_board(INITIAL_STACKS), pari=False, to_move=1, turned=True)
    assert lines_of(text)[:21] == expected(INITIAL_SETUP_TURNED)
    assert (
        lines_of(text)[22:]
        == lines_of(render(make_board(INITIAL_STACKS), pari=False, to_move=1))[22:]
    )


@pytest.mark.parametrize(
    "stacks",
    [
        INITIAL_STACKS,
        {"f2": "HHs", "e5": "SsSHh", "c4": "SHC"},
        {"d4": "PpPpPp", "a1": "p", "g4": "P", "c2": "Pp"},
    ],
)
def test_the_turned_diagram_is_the_diagram_turned_round(stacks: Mapping[str, str]) -> None:
    """Every line of Black's view is a line of White's read from its end, in the reverse
    order: the marks and lines character by character (about one column for all lines),
    the names, stacks and headings word by word (each stack still bottom to top)."""
    board = make_board(stacks)
    white, black = board_lines(board), board_lines(board, turned=True)
    assert len(white) == len(black)
    pairs = list(zip(white, reversed(black), strict=True))
    marks = [(w, b) for w, b in pairs if w and not re.search("[A-Za-z.]", w)]
    first_white, first_black = marks[0]
    axis = len(first_black) + len(first_white) - len(first_white.lstrip())  # columns mirrored
    for w, b in pairs:
        assert b.split() == w.split()[::-1], (w, b)
        if (w, b) in marks:
            assert b == w.ljust(axis)[::-1].rstrip(), (w, b)
    for name, stack in stacks.items():  # on its row, which is named at its right end
        row = next(line for line in black if line.endswith(f"-- {name[0]}"))
        assert stack in row.split()


def test_stacking_limit_diagram_matches_help_page() -> None:
    board = make_board({"f2": "HHs", "e5": "SsSHh", "c4": "SHC"})
    assert diagram_only(board_lines(board)) == expected(STACKING_LIMIT)
    # render accepts it too (only real pieces) and draws the same geometry
    rendered = lines_of(render(board, pari=False, to_move=1))
    assert rendered[2:19] == expected(STACKING_LIMIT)


def test_multiple_moves_diagram_matches_help_page() -> None:
    # A four-high stack widens the cells to five (odd) as on the help page.
    board = make_board({"f2": "X", "d4": "X", "c2": "X", "c3": "*", "c4": "SsHC"})
    assert diagram_only(board_lines(board)) == expected(MULTIPLE_MOVES)


def test_winning_diagram_matches_help_page() -> None:
    board = make_board({"g3": "shS", "f2": "SH", "e3": "S"})
    assert diagram_only(board_lines(board)) == expected(WINNING)


def test_wide_headings_centred_over_d4() -> None:
    lines = board_lines(make_board({"e5": "SsSHh"}))
    d_row = next(line for line in lines if line.startswith("d -- "))
    d4_centre = 5 + 3 * 6 + 2  # pitch 6, width 5
    assert d_row[5 + 3 * 6] == "."
    for heading in (lines[0], lines[-1]):
        word = heading.strip()
        assert heading.index(word) + len(word) // 2 == d4_centre


@pytest.mark.parametrize(
    ("height", "width"), [(0, 3), (1, 3), (3, 3), (4, 5), (5, 5), (6, 7), (7, 7), (8, 9)]
)
def test_cell_width_is_tallest_stack_rounded_up_to_odd(height: int, width: int) -> None:
    board = make_board({"d1": "P" * height})
    d_row = next(line for line in board_lines(board) if line.startswith("d -- "))
    cells = d_row[5:]
    pitch = width + 1
    for i in range(7):
        cell = cells[i * pitch : (i + 1) * pitch]
        stack = "P" * height if i == 0 else ""
        assert cell.rstrip() == (stack or "."), (i, cell)
        assert cell[len(cell.rstrip()) :].strip() == ""
    assert len(d_row) == 5 + 6 * pitch + 1


def test_six_high_pari_stack_widens_every_cell() -> None:
    board = make_board({"d4": "PpPpPp", "a1": "p", "g4": "P"})
    lines = lines_of(render(board, pari=True, to_move=1))
    # w = 7, pitch 8, half-pitch 4: every row shifted by 4 per step from d.
    assert lines[2] == " " * 21 + "1       2       3       4"
    assert lines[3] == " " * 17 + "---/--- " * 3 + "---/---"
    assert lines[4] == " " * 12 + "g -- .       .       .       P       5"
    assert lines[5] == " " * 21 + "------- ------- -------" + " " * 4 + "/"
    assert lines[6] == " " * 8 + "f -- .       .       .       .       .       6"
    assert lines[7] == " " * 25 + "------- -------" + " " * 12 + "/"
    assert lines[8] == " " * 4 + "e -- " + ".       " * 6 + "7"
    assert lines[9] == " " * 56 + "/"
    assert lines[10] == "d -- " + ".       " * 3 + "PpPpPp  " + ".       " * 2 + "."
    assert lines[11] == " " * 56 + "\\"
    assert lines[12] == " " * 4 + "c -- " + ".       " * 6 + "7"
    assert lines[13] == " " * 25 + "------- -------" + " " * 12 + "\\"
    assert lines[16] == " " * 12 + "a -- p       .       .       .       5"
    assert lines[17] == " " * 17 + "---\\--- " * 3 + "---\\---"
    assert lines[18] == lines[2]


@pytest.mark.parametrize("height", range(10))
def test_lines_fit_in_78_columns(height: int) -> None:
    # Worst case: every cell holds the tallest stack; legal play stops at six.
    board = ["Pp" * (height // 2) + "P" * (height % 2)] * N_CELLS
    text = render(board, pari=True, to_move=0, status="White wins: 3 stacks in Black's castle")
    for line in lines_of(text):
        assert len(line) <= 78, (height, line)


@pytest.mark.parametrize("pari", [False, True])
def test_no_trailing_spaces_and_final_newline(pari: bool) -> None:
    board = make_board({"d4": "PPPPPp" if pari else "SSShhh"})
    text = render(board, pari=pari, to_move=0)
    assert text.endswith("\n") and not text.endswith("\n\n")
    for line in lines_of(text):
        assert line == line.rstrip()


def test_standard_legend_and_turn_line() -> None:
    lines = lines_of(render(make_board(INITIAL_STACKS), pari=False, to_move=0))
    legend = "\n".join(lines[22:-2])
    for word in ("S Shield", "H Horse", "C Chariot", "s h c", "bottom to top", "castle"):
        assert word in legend
    assert "P white" not in legend
    assert lines[-2:] == ["White to move", ""]


def test_pari_legend_and_turn_line() -> None:
    board = make_board({"a1": "PPp", "g1": "p"})
    lines = lines_of(render(board, pari=True, to_move=1))
    legend = "\n".join(lines[22:-2])
    assert "P white piece, p black piece" in legend
    assert "bottom to top" in legend
    assert "Shield" not in legend
    assert lines[-2:] == ["Black to move", ""]


def test_status_replaces_turn_line_when_game_over() -> None:
    status = "White wins: 3 stacks in Black's castle"
    lines = lines_of(render(make_board(INITIAL_STACKS), pari=False, to_move=None, status=status))
    assert lines[-2:] == [status, ""]
    assert "White to move" not in lines and "Black to move" not in lines


def test_status_follows_turn_line() -> None:
    status = "Black offers a draw"
    lines = lines_of(render(make_board(INITIAL_STACKS), pari=False, to_move=1, status=status))
    assert lines[-3:] == ["Black to move", status, ""]


def test_game_over_without_status() -> None:
    lines = lines_of(render(make_board({}), pari=True, to_move=None))
    assert lines[-2:] == ["Game over", ""]


def test_render_is_pure() -> None:
    board = tuple(make_board(INITIAL_STACKS))
    first = render(board, pari=False, to_move=0)
    assert render(board, pari=False, to_move=0) == first
    assert board == tuple(make_board(INITIAL_STACKS))


@pytest.mark.parametrize(
    ("board", "pari", "to_move", "status"),
    [
        ([""] * 36, False, 0, None),
        ([""] * 38, False, 0, None),
        ("." * 37, False, 0, None),
        (make_board({"d4": "P"}), False, 0, None),
        (make_board({"d4": "S"}), True, 0, None),
        (make_board({"d4": "X"}), False, 0, None),
        (make_board({"d4": "S S"}), False, 0, None),
        (make_board({}), False, 2, None),
        (make_board({}), False, -1, None),
        (make_board({}), False, None, "two\nlines"),
    ],
)
def test_rejects_malformed_input(
    board: list[str] | str, pari: bool, to_move: int | None, status: str | None
) -> None:
    with pytest.raises(ValueError):
        render(board, pari=pari, to_move=to_move, status=status)
