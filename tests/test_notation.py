"""Tests for the Accasta notation (pbm.games.accasta.notation) and the ``help accasta`` text.

Long form: origin ``:`` submoves joined by ``,``; a submove is pieces (own
upper case, captured lower case, from the top down; Pari: a count, omitted
when 1), a mark (``-`` empty, ``+`` own stack, ``x`` enemy stack) and the
target. The short form drops all punctuation (help page: ``a1Cd1Hb1b1``,
``c1Ccc4``; Pari ``b42c5``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping

import pytest

from pbm.games import BadNotation, IllegalMove
from pbm.games.accasta import ACCASTA
from pbm.games.accasta.board import CELLS
from pbm.games.accasta.help import HELP
from pbm.games.accasta.notation import normalize, parse_turn, turn_to_text
from pbm.games.accasta.position import Position


def make_pos(stacks: Mapping[str, str], to_move: int = 0, variant: str = "standard") -> Position:
    """A position with the given stacks (bottom to top, White upper case)."""
    assert set(stacks) <= set(CELLS)
    return Position(tuple(stacks.get(c, "") for c in CELLS), to_move, 10, variant)


def canonical(pos: Position, text: str) -> str:
    return turn_to_text(pos, parse_turn(pos, text))


START = Position.initial()
PARI = Position.initial("pari")


@pytest.mark.parametrize(
    "text",
    [
        "a1:C-d1,H-b1,S+b1",
        "a1Cd1Hb1b1",  # help page short form: the last submove without pieces
        "a1Cd1Hb1Sb1",
        "a1:C-d1,H-b1,+b1",  # help page: pieces omitted = the whole remaining stack
        "a1: C-d1, H-b1, S+b1;",
        "A1:C–D1,H—b1,S+B1!?",
        "a1 C d1 H b1 S b1",
    ],
)
def test_help_page_multiple_move_in_every_form(text: str) -> None:
    turn = parse_turn(START, text)
    assert turn == (CELLS.index("a1"), 1, CELLS.index("d1"), 1, CELLS.index("b1"), 1, 4)
    assert turn_to_text(START, turn) == "a1:C-d1,H-b1,S+b1"
    assert turn_to_text(START, turn, short=True) == "a1Cd1Hb1Sb1"


def test_whole_stack_without_pieces() -> None:
    assert canonical(START, "a1:-d1") == "a1:CHS-d1"
    assert canonical(START, "a1d1") == "a1:CHS-d1"
    assert turn_to_text(START, parse_turn(START, "a1:-d1"), short=True) == "a1CHSd1"


def test_help_page_short_form_c1ccc4() -> None:
    # A White Chariot heads c1 over a captured black Chariot; c2 and c3 are empty.
    pos = make_pos({"c1": "cC", "g4": "s"})
    turn = parse_turn(pos, "c1Ccc4")
    assert turn == parse_turn(pos, "c1:Cc-c4") == (CELLS.index("c1"), 2, CELLS.index("c4"))
    assert turn_to_text(pos, turn) == "c1:Cc-c4"
    assert turn_to_text(pos, turn, short=True) == "c1Ccc4"
    # The Chariot alone, releasing the black one (c1 is no castle cell).
    assert canonical(pos, "c1Cc4") == "c1:C-c4"
    assert canonical(pos, "c1:-c4") == "c1:Cc-c4"


def test_help_page_notation_example_game() -> None:
    state = ACCASTA.new()
    played = []
    for text in ("a1Cd1Hb1b1", "g1:CHxd1", "c4:S-d5", "d1:CHc-e1;"):
        state, text_out = state.play(text)
        played.append(text_out)
    assert played == ["a1:C-d1,H-b1,S+b1", "g1:CHxd1", "c4:S-d5", "d1:CHc-e1"]
    assert state.dump()  # the game goes on


def test_black_writes_his_own_pieces_upper_case() -> None:
    pos = START.push(parse_turn(START, "a1:C-d1"))
    assert canonical(pos, "g1:CHxd1") == "g1:CHxd1"
    after = pos.push(parse_turn(pos, "g1:CHxd1"))  # d1: White C under black H, c
    after = after.push(parse_turn(after, "c4:S-d5"))
    assert canonical(after, "d1:CHc-e1") == "d1:CHc-e1"
    assert canonical(after, "d1CHce1") == "d1:CHc-e1"


@pytest.mark.parametrize(
    ("text", "expected", "short"),
    [
        ("b42c5", "b4:2-c5", "b42c5"),
        ("b4:2-c5", "b4:2-c5", "b42c5"),
        ("b4:-c5", "b4:-c5", "b4c5"),
        ("b4:1-c5", "b4:-c5", "b4c5"),
        ("b4c5", "b4:-c5", "b4c5"),
        ("a1:3-d1", "a1:3-d1", "a13d1"),
        ("a1:-d1,-b1,+b1", "a1:-d1,-b1,+b1", "a1d1b1b1"),
    ],
)
def test_pari_counts(text: str, expected: str, short: str) -> None:
    turn = parse_turn(PARI, text)
    assert turn_to_text(PARI, turn) == expected
    assert turn_to_text(PARI, turn, short=True) == short


def test_pari_sample_game_notation() -> None:
    state = ACCASTA.new("pari")
    for text, expected in (
        ("b4:2-c5", "b4:2-c5"),
        ("e4:+e3", "e4:+e3"),
        ("a4:3-b4", "a4:3-b4"),
        ("f2:+f3,+e3", "f2:+f3,+e3"),
        ("b2:2+c3", "b2:2+c3"),
        ("f4:2-e5", "f4:2-e5"),
        ("c4:-d4", "c4:-d4"),
        ("e3:+e5,×d4", "e3:+e5,xd4"),
        ("b4×d42c4", "b4:xd4,2-c4"),
    ):
        state, out = state.play(text)
        assert out == expected


def test_pari_counts_are_checked() -> None:
    assert "b4 holds 2 pieces; you cannot move 3" in str(_refusal(PARI, "b4:3-c5"))
    assert "you cannot move 0" in str(_refusal(PARI, "b4:0-c5"))
    assert "c5 is an empty cell: write - not x" in str(_refusal(PARI, "b4:2xc5"))
    # Standard piece letters mean nothing in Pari.
    with pytest.raises(BadNotation):
        parse_turn(PARI, "b4:HS-c5")


def _refusal(pos: Position, text: str) -> IllegalMove:
    with pytest.raises(IllegalMove) as info:
        parse_turn(pos, text)
    return info.value


def test_marks_are_checked_but_optional() -> None:
    assert canonical(START, "a1:Cb2") == "a1:C+b2"
    assert canonical(START, "a1C+b2") == "a1:C+b2"
    assert str(_refusal(START, "a1:Cxb2")) == "b2 is your own stack: write + not x"
    assert str(_refusal(START, "a1:C-b2")) == "b2 is your own stack: write + not -"
    assert str(_refusal(START, "a1:C+b1")) == "b1 is an empty cell: write - not +"
    pos = START.push(parse_turn(START, "a1:C-d1"))
    msg = str(_refusal(pos, "g1:C+d1"))
    assert msg == "d1 is a stack headed by White: write x not +"


def test_pieces_must_be_the_top_of_the_stack() -> None:
    assert str(_refusal(START, "a1:H-b1")) == "a1 holds C, H, S from the top; you wrote H"
    assert "you wrote C, S" in str(_refusal(START, "a1:CS-b1"))
    assert "you wrote C, H, S, S" in str(_refusal(START, "a1:CHSS-b1"))
    # Black is told his own pieces in upper case.
    pos = START.push(parse_turn(START, "a1:C-d1"))
    assert "g1 holds C, H, S from the top; you wrote S" in str(_refusal(pos, "g1:S-f1"))


def test_cells_must_be_on_a_line_and_not_the_origin() -> None:
    assert "not on a straight line" in str(_refusal(START, "a1:C-c2"))
    assert "cannot move to a1 itself" in str(_refusal(START, "a1:C-a1"))


@pytest.mark.parametrize(
    "text", ["", "   ", "hello", "resign", "a1", "a1:", "a1-", "a1:Q-b1", "1. a1:C-d1"]
)
def test_garbage_is_bad_notation(text: str) -> None:
    with pytest.raises(BadNotation) as info:
        parse_turn(START, text)
    assert "is not an Accasta move" in str(info.value)
    assert isinstance(info.value, IllegalMove)
    assert isinstance(info.value, ValueError)


def test_a_legal_reading_wins_over_a_refused_one() -> None:
    # "c1Cc4" could be C + cell c4 or pieces "Cc" + "4"; only the first is a move.
    pos = make_pos({"c1": "cC", "g4": "s"})
    assert canonical(pos, "c1Cc4") == "c1:C-c4"


def test_normalize() -> None:
    assert normalize(" a1: C×b2 – ! ? ; ") == "a1:Cxb2-"
    assert normalize("b5:Cxe4,HS–d5;") == "b5:Cxe4,HS-d5"


# --------------------------------------------------------------------------
# help accasta
# --------------------------------------------------------------------------


def test_help_text_is_the_game_help() -> None:
    assert ACCASTA.help_text() == HELP
    assert "(being written)" not in HELP
    assert HELP.endswith("\n")
    long_lines = [ln for ln in HELP.splitlines() if len(ln) > 78]
    assert long_lines == []
    assert HELP.isascii()
    low = HELP.lower()
    for topic in (
        "castle",
        "shield",
        "horse",
        "chariot",
        "release",
        "at home",
        "safe stack",
        "cannot make a legal move",
        "pari",
        "castle_win",
        "immediate",
        "next_turn",
        "d4_opening",
        "banned",
        "short form",
    ):
        assert topic in low, topic


def test_help_text_examples_from_the_start_are_legal() -> None:
    """Every move the help writes after "start:" can be played from the starting position."""
    examples = re.findall(r"\((standard|pari) start: ([^)]*)\)", HELP)
    assert len(examples) >= 4
    for variant, moves in examples:
        start = Position.initial(variant)
        for text in moves.split(" = "):
            parse_turn(start, text.strip())
        readings = {canonical(start, text.strip()) for text in moves.split(" = ")}
        assert len(readings) == 1, moves


@pytest.mark.parametrize(
    ("text", "cell"), [("z9:C-a1", "z9"), ("b9:S-b8", "b9"), ("a1:C-h1", "h1")]
)
def test_a_cell_that_is_none_is_named(text: str, cell: str) -> None:
    with pytest.raises(BadNotation, match=f"^{cell} is not a cell of the board"):
        parse_turn(START, text)
