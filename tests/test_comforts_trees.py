"""Conditional move trees (issue 41), the pure core: lines read as players write them,
merged into one tree, checked by the rules when given, and played as the opponent
moves. A property test: any set of lines that do not conflict, replayed move by move by
the opponent, gets exactly the tree's answers; a set that conflicts is refused."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pbm import games
from pbm.usecases.trees import (
    ANY,
    MAX_LINES,
    MAX_PLIES,
    Conflict,
    Line,
    Names,
    Tree,
    Written,
    checked_line,
    merge_all,
    read_line,
)

ACCASTA, CHESS = games.get("accasta"), games.get("chess")
BOB = Names("bob", CHESS.move_number)


@pytest.mark.parametrize(
    ("text", "moves"),
    [
        (
            "if g2:C+f2 then a3:S-b3 if g1:H-f1 then b2:C-c3",
            ("g2:C+f2", "a3:S-b3", "g1:H-f1", "b2:C-c3"),
        ),
        ("IF g4:C-f4 THEN a2:H+b3", ("g4:C-f4", "a2:H+b3")),
        ("a1:C+b2 if g1:C-d1", ("g1:C-d1", "a1:C+b2")),  # today's form: one step
        ("a1:C+b2", (ANY, "a1:C+b2")),  # whatever the opponent plays
    ],
)
def test_the_ways_a_line_is_written(text: str, moves: tuple[str, ...]) -> None:
    assert read_line(ACCASTA, text) == Written(moves)


def test_chess_reads_a_line_the_pgn_way_too() -> None:
    assert read_line(CHESS, "if 12...Nf6 13.e5 Nd5 14.c4") == Written(("Nf6", "e5", "Nd5", "c4"))
    assert read_line(CHESS, "if 1. e4 e5 2. Nf3 1-0") == Written(("e4", "e5", "Nf3"))
    assert read_line(CHESS, "if 1.e4 then 1...c5") == Written(("e4", "c5"))


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("if a then", "A move is missing after 'then'"),
        ("if a then b if c", "A line ends with your answer, after 'then'"),
        ("if then b", "A move is missing after 'if'"),
        ("if a then if b then c", "A move is missing after 'then'"),
        ("a then b", "A line with 'then' begins with 'if'"),
        ("if a then then b", "'then' comes where a move should"),
        ("a if", "Write MOVE if THEIR-MOVE"),
    ],
)
def test_a_line_that_is_none_says_why(text: str, says: str) -> None:
    with pytest.raises(Conflict) as info:
        read_line(ACCASTA, text)
    assert str(info.value).startswith(says)


def test_every_move_is_checked_when_given_and_a_bad_one_named_by_its_ply() -> None:
    start = CHESS.new()
    line = checked_line(start, read_line(CHESS, "if 1.e4 e5 2.Nf3 Nc6 3.Bb5 a6"), BOB)
    assert line == ("e4", "e5", "Nf3", "Nc6", "Bb5", "a6")
    with pytest.raises(Conflict) as info:  # deep in the line: the 6th move
        checked_line(start, read_line(CHESS, "if 1.e4 e5 2.Nf3 Nc6 3.Bb5 Ke6"), BOB, 2)
    assert str(info.value).startswith("Line 2, ply 6 (your move 3, Ke6):")
    with pytest.raises(Conflict) as info:  # the opponent's move that cannot be
        checked_line(start, read_line(CHESS, "if 1.e4 e5 2.Ng5 Nc6"), BOB)
    assert str(info.value).startswith("Line 1, ply 3 (bob's move 2, Ng5):")
    with pytest.raises(Conflict, match="ends with bob's move Nf3: end it with your answer"):
        checked_line(start, read_line(CHESS, "if 1.e4 e5 2.Nf3"), BOB)
    long = " ".join(["Nf3 Nf6 Ng1 Ng8"] * 8)  # 32 moves
    with pytest.raises(Conflict, match=f"a line holds at most {MAX_PLIES}"):
        checked_line(start, read_line(CHESS, f"if {long}"), BOB)
    # Moves in any spelling the game reads, kept in its own.
    assert checked_line(start, read_line(CHESS, "if e2e4 then e7-e5"), BOB) == ("e4", "e5")


def test_a_line_past_the_games_end_is_refused() -> None:
    mate = "if 1.f3 e5 2.g4 Qh4# 3.a3 a6"
    with pytest.raises(Conflict, match=r"ply 5 .*the game is over before it"):
        checked_line(CHESS.new(), read_line(CHESS, mate), BOB)


def test_lines_merge_and_a_conflict_is_refused_with_the_reason() -> None:
    tree = merge_all(Tree(), [("e4", "e5", "Nf3", "Nc6"), ("d4", "d5"), ("e4", "e5")])
    assert tree.lines == (("e4", "e5", "Nf3", "Nc6"), ("d4", "d5"))
    tree = tree.merged(("e4", "e5", "Bc4", "Nf6"))  # another reply deeper down
    assert tree.render("bob") == [
        "  if e4 then e5",
        "    if Nf3 then Nc6",
        "    if Bc4 then Nf6",
        "  if d4 then d5",
    ]
    assert Tree(((ANY, "e5"),)).render("bob") == ["  if bob plays anything else then e5"]
    with pytest.raises(Conflict) as info:
        merge_all(tree, [("c4", "c5"), ("e4", "e5", "Nf3", "Nf6")])
    assert str(info.value) == (
        "Line 2: Your tree answers Nf3 after e4 e5 with Nc6 already; a line cannot answer "
        "it with Nf6 as well. Clear the tree to change it."
    )


def test_a_tree_holds_at_most_thirty_lines() -> None:
    lines = [(f"m{i}", "x") for i in range(MAX_LINES)]
    full = merge_all(Tree(), lines)
    assert len(full.lines) == MAX_LINES
    assert full.merged(("m0", "x")) is full  # a line it holds already
    with pytest.raises(Conflict) as info:
        merge_all(full, [("m99", "x")])
    assert str(info.value).startswith(
        "Line 1: A tree holds at most 30 lines; this one would be line 31."
    )


def test_the_answer_and_what_follows_it() -> None:
    tree = Tree((("e4", "e5", "Nf3", "Nc6"), ("e4", "e5", "Bc4", "Nf6"), (ANY, "d5")))
    assert tree.answer("e4") == ("e5", Tree((("Nf3", "Nc6"), ("Bc4", "Nf6"))))
    assert tree.answer("c4") == ("d5", Tree())  # any other reply
    assert Tree((("e4", "e5"),)).answer("d4") is None  # off the tree
    assert Tree.from_json(tree.to_json()) == tree


# ---------------------------------------------------------------- the property


def conflicts(lines: list[Line]) -> bool:
    """Whether two of ``lines`` answer one reply (after the same moves) differently."""
    for one, other in itertools.combinations(lines, 2):
        for i in range(0, min(len(one), len(other)), 2):
            if one[i] != other[i]:
                break
            if one[i + 1] != other[i + 1]:
                return True
    return False


# Small alphabets, so that lines share their beginnings and conflicts are common.
pair = st.tuples(st.sampled_from("abc"), st.sampled_from("xy"))
line = st.lists(pair, min_size=1, max_size=4).map(lambda ps: tuple(m for p in ps for m in p))


@given(st.lists(line, min_size=1, max_size=8))
def test_non_conflicting_lines_are_played_exactly_and_conflicting_ones_refused(
    lines: list[Line],
) -> None:
    if conflicts(lines):
        with pytest.raises(Conflict):
            merge_all(Tree(), lines)
        return
    tree = merge_all(Tree(), lines)
    for played in lines:
        current = tree
        for i in range(0, len(played), 2):
            found = current.answer(played[i])
            assert found is not None
            answer, current = found
            assert answer == played[i + 1]
    # A reply no line begins with is off the tree.
    assert tree.answer("q") is None
    assert len(tree.lines) <= len(set(lines))


@settings(max_examples=30, deadline=None)
@given(st.lists(st.lists(st.integers(0, 10**6), min_size=2, max_size=8), min_size=1, max_size=6))
def test_chess_lines_walked_by_the_rules_answer_as_given(picks: list[list[int]]) -> None:
    """Lines of legal chess moves (the opponent White, from the start), each move picked
    among the legal ones: the tree answers each of White's moves as the line does."""
    start = CHESS.new()
    lines = []
    for chosen in picks:
        state, moves = start, []
        for n in chosen[: len(chosen) // 2 * 2]:
            legal = state.legal_moves()
            if not legal or state.outcome is not None:
                break
            state, canonical = state.play(legal[n % len(legal)])
            moves.append(canonical)
        if len(moves) % 2:
            moves.pop()
        if moves:
            lines.append(checked_line(start, Written(tuple(moves)), BOB))
    if not lines:
        return
    if conflicts(lines):
        with pytest.raises(Conflict):
            merge_all(Tree(), lines)
        return
    tree = merge_all(Tree(), lines)
    for played in lines:
        state, current = start, tree
        for i in range(0, len(played), 2):
            state, theirs = state.play(played[i])
            found = current.answer(theirs)
            assert found is not None
            answer, current = found
            state, mine = state.play(answer)
            assert mine == played[i + 1]
