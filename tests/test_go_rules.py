"""Go's rules on positions written out: captures, ko, superko, suicide, passes, handicap,
the notation and its refusals, the options. ``position`` is the other Go tests' helper."""

from __future__ import annotations

import pytest

from pbm.games import BadNotation, BadOption, IllegalMove
from pbm.games.go import GO, Go
from pbm.games.go.board import handicap_points, star_points, zobrist
from pbm.games.go.notation import looks_like_move, point_name
from pbm.games.go.position import PLAY, SCORING, GoState, Rules

NO_GNUGO = Go(program="")  # pbm's own estimate of dead stones, never GNU Go


def position(diagram: str, to_move: int = 0, komi: float = 7.5) -> GoState:
    """The position a diagram shows (rows from the top, ``X`` Black, ``O`` White, ``.``
    empty; spaces ignored), ``to_move`` to move, GNU Go never asked."""
    rows = ["".join(line.split()) for line in diagram.strip().splitlines()]
    size = len(rows)
    assert all(len(r) == size for r in rows), "a square board"
    grid = "".join(r.replace("X", "b").replace("O", "w") for r in reversed(rows))
    rules = Rules(size, komi, 0, "")
    return GoState(rules, grid, to_move, (0, 0), frozenset({zobrist(grid, size)}))


def played(state: GoState, *moves: str) -> GoState:
    for move in moves:
        state = state.play(move)[0]
    return state


def stone(state: GoState, name: str) -> str:
    """``X``, ``O`` or ``.`` on the point ``name``."""
    from pbm.games.go.notation import parse_point

    return {"b": "X", "w": "O", ".": "."}[state.grid[parse_point(name, state.size)]]


CAPTURE = """
. . . . . . . . .
. . . . . . . . .
. . . . . . . . .
. . . . . . . . .
. . . . X . . . .
. . . X O . . . .
. . . . X . . . .
. . . . . . . . .
. . . . . . . . .
"""


def test_a_stone_that_takes_the_last_liberty_captures() -> None:
    state, canonical = position(CAPTURE).play("f4")
    assert canonical == "F4"
    assert stone(state, "E4") == "."
    assert state.captures == (1, 0)
    assert state.to_move == 1


def test_a_chain_is_captured_whole_and_counted() -> None:
    state = position(
        """
        . . . . .
        . X X . .
        X O O X .
        . X . . .
        . . . . .
        """
    )
    after = state.play("C2")[0]  # the last liberty of the two white stones
    assert stone(after, "B3") == stone(after, "C3") == "."
    assert after.captures == (2, 0)


def test_suicide_is_refused() -> None:
    state = position(
        """
        . X . . .
        X . X . .
        . X . . .
        . . . . .
        . . . . .
        """,
        to_move=1,
    )
    with pytest.raises(IllegalMove, match=r"^suicide: a stone on B4 would have no liberty"):
        state.play("B4")


def test_a_move_that_captures_is_no_suicide() -> None:
    state = position(
        """
        . X O . .
        X O . O .
        . X O . .
        . . . . .
        . . . . .
        """
    )
    after = state.play("C4")[0]
    assert stone(after, "B4") == "." and stone(after, "C4") == "X"


KO = """
. . . . . . . . .
. . . . . . . . .
. . . . . . . . .
. . . . . . . . .
. . X O . . . . .
. X O . O . . . .
. . X O . . . . .
. . . . . . . . .
. . . . . . . . .
"""


def test_a_ko_may_not_be_retaken_at_once() -> None:
    taken = position(KO).play("D4")[0]  # Black takes the white stone on C4
    assert stone(taken, "C4") == "."
    with pytest.raises(IllegalMove, match=r"^ko: you cannot retake at once"):
        taken.play("C4")


def test_a_ko_may_be_retaken_after_a_move_elsewhere() -> None:
    taken = played(position(KO), "D4", "H8", "J9")  # White's threat, Black answers elsewhere
    after = taken.play("C4")[0]
    assert stone(after, "D4") == "." and stone(after, "C4") == "O"


TRIPLE_KO = """
. . . . . . . . .
. X O . . . . . .
X O . O . . . . .
. X O . . . . . .
. . . . . . . . .
. X O . . . X O .
X O . O . X . X O
. X O . . . X O .
. . . . . . . . .
"""


def test_positional_superko_refuses_a_triple_ko_cycle() -> None:
    """Three kos taken in turn: the sixth capture would bring the first position back."""
    state = played(position(TRIPLE_KO), "C3", "G3", "C7", "B3", "H3")
    with pytest.raises(IllegalMove, match=r"^positional superko: B7 would bring back"):
        state.play("B7")
    assert "B7" not in state.legal_moves()
    assert "B7 (ko, superko or suicide)" in state.legal_moves_text()


def test_an_occupied_point_is_refused() -> None:
    state = GO.new(None, {"size": "9"}).play("D4")[0]
    with pytest.raises(IllegalMove, match=r"^D4 is taken: a black stone stands there$"):
        state.play("d4")


@pytest.mark.parametrize(
    ("text", "error", "words"),
    [
        ("I9", BadNotation, "I9 is no point: Go columns skip I (H is followed by J)"),
        ("Z1", BadNotation, "Z1 is no point: the columns are A to T without I"),
        ("T20", IllegalMove, "T20 is off the 19x19 board: columns A to T (no I), rows 1 to 19"),
        ("K1", IllegalMove, "K1 is off the 9x9 board: columns A to J (no I), rows 1 to 9"),
        ("zz", IllegalMove, "zz is off the 19x19 board: SGF points run from aa to ss"),
        ("castle", BadNotation, "'castle' is not a move: write a point such as D4 or Q16"),
        ("", BadNotation, "an empty move: write a point such as D4, or pass"),
        ("accept", IllegalMove, "accept: the game is not being scored; that comes when"),
        ("dead D4", IllegalMove, "dead: the game is not being scored"),
        ("resume", IllegalMove, "resume: the game is not being scored"),
    ],
)
def test_bad_input_is_refused_in_words(text: str, error: type[Exception], words: str) -> None:
    size = "9" if text == "K1" else "19"
    with pytest.raises(error) as refused:
        GO.new(None, {"size": size}).play(text)
    assert str(refused.value).startswith(words)
    assert type(refused.value) is error


@pytest.mark.parametrize(
    ("written", "canonical"),
    [("d4", "D4"), ("Q16", "Q16"), ("dd", "D16"), ("DD", "D16"), ("PASS", "pass"), ("d 4", "D4")],
)
def test_moves_are_read_in_go_and_sgf_coordinates(written: str, canonical: str) -> None:
    assert GO.new().play(written)[1] == canonical


def test_sgf_points_count_rows_from_the_top() -> None:
    assert GO.new(None, {"size": "9"}).play("dd")[1] == "D6"
    assert GO.new(None, {"size": "9"}).play("ai")[1] == "A1"


def test_looks_like_move() -> None:
    assert all(looks_like_move(w) for w in ("D4", "q16", "pass", "dead", "alive", "resume", "I9"))
    assert not any(looks_like_move(w) for w in ("accept", "ok", "dd", "g", "hello", "D"))
    assert GO.looks_like_move("Q16")


def test_two_passes_in_a_row_end_play_and_a_move_between_does_not() -> None:
    state = played(NO_GNUGO.new(None, {"size": "9"}), "pass", "E5", "pass")
    assert state.phase == PLAY and state.passes == 1
    state = state.play("pass")[0]
    assert state.phase == SCORING
    assert state.legal_moves() == ["accept", "resume"]


def test_legal_moves_are_every_empty_point_and_pass() -> None:
    state = GO.new(None, {"size": "9"})
    legal = state.legal_moves()
    assert len(legal) == 82 and "pass" in legal and legal == sorted(legal)
    assert state.example_move() in legal
    assert state.legal_moves_text() == "pass, or a stone on any of the 81 empty points.\n"


def test_black_moves_first_and_the_seats_alternate() -> None:
    state = GO.new()
    assert (state.ply, state.to_move) == (0, 0)
    state = state.play("Q16")[0]
    assert (state.ply, state.to_move) == (1, 1)


@pytest.mark.parametrize("size", [9, 13, 19])
def test_handicap_stones_are_black_s_first_turn(size: int) -> None:
    state = GO.new(None, {"size": str(size), "handicap": "4"})
    assert (state.ply, state.to_move) == (1, 1)  # White moves first, at ply 1
    assert state.options["komi"] == "0.5"
    assert state.grid.count("b") == 4
    assert set(handicap_points(size, 4)) <= set(star_points(size))


@pytest.mark.parametrize(
    ("stones", "points"),
    [
        (2, "D4 Q16"),
        (3, "D4 Q16 D16"),
        (5, "D4 Q4 D16 Q16 K10"),
        (7, "D4 Q4 D10 K10 Q10 D16 Q16"),
        (9, "D4 K4 Q4 D10 K10 Q10 D16 K16 Q16"),
    ],
)
def test_handicap_points_are_gtp_s(stones: int, points: str) -> None:
    placed = {point_name(p, 19) for p in handicap_points(19, stones)}
    assert placed == set(points.split())


def test_a_handicap_game_keeps_a_komi_it_is_given() -> None:
    assert GO.new(None, {"handicap": "2", "komi": "5"}).options["komi"] == "5"


@pytest.mark.parametrize(
    ("options", "words"),
    [
        ({"size": "20"}, "size cannot be '20': choose 9 or 13 or 19"),
        ({"komi": "abc"}, "komi cannot be 'abc': choose a number of points from 0 to 9.5"),
        ({"komi": "7.25"}, "komi cannot be '7.25'"),
        ({"komi": "10"}, "komi cannot be '10'"),
        ({"komi": "-0.5"}, "komi cannot be '-0.5'"),
        ({"komi": "nan"}, "komi cannot be 'nan'"),
        ({"komi": "inf"}, "komi cannot be 'inf'"),
        ({"handicap": "12"}, "handicap cannot be '12': choose 0 or 2 or 3"),
        ({"handicap": "1"}, "handicap cannot be '1'"),
        ({"colour": "red"}, "unknown option 'colour': Go knows handicap, komi, size"),
    ],
)
def test_bad_options_are_refused_in_words(options: dict[str, str], words: str) -> None:
    with pytest.raises(BadOption) as refused:
        GO.check_options("standard", options)
    assert str(refused.value).startswith(words)


def test_options_are_filled_in_and_komi_written_plainly() -> None:
    assert GO.check_options("standard", {}) == {"size": "19", "komi": "7.5", "handicap": "0"}
    assert GO.check_options("standard", {"komi": "+6.50"})["komi"] == "6.5"
    assert GO.check_options("standard", {"KOMI": "7"})["komi"] == "7"
    assert GO.check_options("standard", {"komi": "-0"})["komi"] == "0"


def test_no_draw_to_claim() -> None:
    with pytest.raises(IllegalMove, match=r"^Go has no draw to claim"):
        GO.new().claim_draw()
    assert GO.draw_offers


def test_a_game_over_takes_no_move() -> None:
    state = played(NO_GNUGO.new(None, {"size": "9"}), "pass", "pass", "accept", "accept")
    assert state.outcome is not None
    with pytest.raises(IllegalMove, match=r"^the game is over"):
        state.play("E5")
    assert state.legal_moves() == [] and state.example_move() is None


def test_go_is_a_game_of_the_registry() -> None:
    from pbm import games
    from pbm.games import Game, GameState

    game: Game = GO  # the protocol, checked where mypy reads it
    state: GameState = GO.new()
    assert games.get("go") is GO and state.variant == "standard"
    assert (game.name, game.title, game.variants) == ("go", "Go", ("standard",))
    assert game.seat_names == ("Black", "White")
    assert [o.name for o in game.options] == ["size", "komi", "handicap"]
    assert all(game.looks_like_move(e.split()[0]) for e in game.notation_examples)
    assert games.record_formats(game) == GO.record_formats


def test_the_help_fits_a_mail() -> None:
    text = GO.help_text()
    assert max(len(line) for line in text.splitlines()) <= 78
    assert text.isascii()
    for words in ("positional superko", "ko: you cannot retake at once", "jigo", "resume"):
        assert words in text
