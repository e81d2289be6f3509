"""Tests for the Accasta rules (pbm.games.accasta.position) and the game protocol.

The module also holds a naive reference move generator, written straight from
the rules texts (official rules, the PBeM help page, the German and Italian
Pari rules) with its own board geometry. It is slow and simple on purpose; the
perft tests here and the property tests in ``test_properties.py`` compare the
fast generator against it.

Stacks are written bottom to top, White upper case, as on the help page.
"""

from __future__ import annotations

from collections.abc import Mapping

import pytest

from pbm.games import BadNotation, BadOption, IllegalMove, Outcome
from pbm.games.accasta import ACCASTA, AccastaState
from pbm.games.accasta.board import CELLS
from pbm.games.accasta.notation import parse_turn, turn_to_text
from pbm.games.accasta.position import Position, Turn, generate_turns, perft

# --------------------------------------------------------------------------
# The naive reference: geometry and rules written out from the rules texts.
# --------------------------------------------------------------------------

# Rows a..g from White's side; each row numbered from the left. The board is a
# hexagon of side 4 around d4. In axial coordinates (q, r) with r = row - 3,
# a row holds the q with max(-3, -3 - r) <= q <= min(3, 3 - r).
REF_ROWS = "abcdefg"
REF_NAMES: list[str] = []
REF_AXIAL: dict[str, tuple[int, int]] = {}
for _row in range(7):
    _r = _row - 3
    for _n, _q in enumerate(range(max(-3, -3 - _r), min(3, 3 - _r) + 1)):
        _name = f"{REF_ROWS[_row]}{_n + 1}"
        REF_NAMES.append(_name)
        REF_AXIAL[_name] = (_q, _r)
REF_AT = {qr: name for name, qr in REF_AXIAL.items()}
# The six straight directions of a hex grid.
REF_DIRECTIONS = ((1, 0), (-1, 0), (0, 1), (0, -1), (1, -1), (-1, 1))
REF_CASTLES = (
    {"a1", "a2", "a3", "a4", "b2", "b3", "b4", "c3", "c4"},  # White's
    {"g1", "g2", "g3", "g4", "f2", "f3", "f4", "e3", "e4"},  # Black's
)
REF_STANDARD_REACH = {"S": 1, "H": 2, "C": 3}


def ref_path(origin: str, direction: tuple[int, int], steps: int) -> list[str] | None:
    """The cells passed and landed on, walking ``steps`` cells; None if off the board."""
    q, r = REF_AXIAL[origin]
    out = []
    for i in range(1, steps + 1):
        cell = REF_AT.get((q + i * direction[0], r + i * direction[1]))
        if cell is None:
            return None
        out.append(cell)
    return out


def ref_is_mine(piece: str, player: int) -> bool:
    return piece.isupper() == (player == 0)


def ref_count(stack: str, player: int) -> int:
    return sum(1 for p in stack if ref_is_mine(p, player))


def naive_turns(pos: Position) -> set[Turn]:
    """Every legal turn of ``pos``, found the slow and obvious way."""
    player = pos.to_move
    pari = pos.variant == "pari"
    d4_banned = pari and pos.d4_opening == "banned" and pos.ply == 0 and player == 0
    index = {name: i for i, name in enumerate(REF_NAMES)}
    found: set[Turn] = set()

    def go_on(stacks: dict[str, str], origin: str, turn: tuple[int, ...]) -> None:
        stack = stacks[origin]
        for k in range(1, len(stack) + 1):
            moving, left = stack[-k:], stack[:-k]
            # Pari: as far as the player has pieces in the stack; standard: the leader.
            reach = ref_count(stack, player) if pari else REF_STANDARD_REACH[moving[-1].upper()]
            releases = bool(left) and not ref_is_mine(left[-1], player)
            if releases and origin in REF_CASTLES[player]:
                continue  # no release at home
            for direction in REF_DIRECTIONS:
                for steps in range(1, reach + 1):
                    path = ref_path(origin, direction, steps)
                    if path is None:
                        break
                    if any(stacks[c] for c in path[:-1]):
                        break  # no jumping
                    target = path[-1]
                    new_target = stacks[target] + moving
                    if ref_count(new_target, 0) > 3 or ref_count(new_target, 1) > 3:
                        continue
                    if d4_banned and target == "d4":
                        continue
                    new_turn = (*turn, k, index[target])
                    found.add(new_turn)
                    if left and not releases:  # the player heads the origin again
                        after = dict(stacks)
                        after[origin] = left
                        after[target] = new_target
                        go_on(after, origin, new_turn)

    stacks = dict(zip(REF_NAMES, pos.board, strict=True))
    for origin, stack in stacks.items():
        if stack and ref_is_mine(stack[-1], player):
            go_on(stacks, origin, (index[origin],))
    return found


def naive_push(pos: Position, turn: Turn) -> Position:
    stacks = list(pos.board)
    origin = turn[0]
    for k, target in zip(turn[1::2], turn[2::2], strict=True):
        stacks[target] += stacks[origin][-k:]
        stacks[origin] = stacks[origin][:-k]
    return Position(
        tuple(stacks), 1 - pos.to_move, pos.ply + 1, pos.variant, pos.castle_win, pos.d4_opening
    )


def naive_perft(pos: Position, depth: int) -> int:
    """perft without game ends (none happen in the first three plies)."""
    turns = naive_turns(pos)
    if depth == 1:
        return len(turns)
    return sum(naive_perft(naive_push(pos, t), depth - 1) for t in turns)


# --------------------------------------------------------------------------
# Helpers
# --------------------------------------------------------------------------


def make_pos(
    stacks: Mapping[str, str],
    to_move: int = 0,
    *,
    variant: str = "standard",
    ply: int = 10,
    castle_win: str = "immediate",
    d4_opening: str = "allowed",
) -> Position:
    """A position with the given stacks (bottom to top, White upper case)."""
    unknown = set(stacks) - set(CELLS)
    assert not unknown, unknown
    board = tuple(stacks.get(name, "") for name in CELLS)
    return Position(board, to_move, ply, variant, castle_win, d4_opening)


def play(pos: Position, text: str) -> Position:
    return pos.push(parse_turn(pos, text))


def refusal(pos: Position, text: str) -> str:
    with pytest.raises(IllegalMove) as info:
        parse_turn(pos, text)
    return str(info.value)


def texts(pos: Position) -> set[str]:
    return {turn_to_text(pos, t) for t in pos.legal_turns()}


# --------------------------------------------------------------------------
# The reference itself
# --------------------------------------------------------------------------


def test_reference_geometry_matches_the_help_page() -> None:
    assert list(CELLS) == REF_NAMES
    # Help page: a Shield on c4, a Horse on c4, a Chariot on c4 on an empty board.
    for piece, expected in (
        ("S", "b3 b4 c3 c5 d4 d5"),
        ("H", "a2 a4 b3 b4 c2 c3 c5 c6 d4 d5 e3 e5"),
        ("C", "a2 a4 b3 b4 c1 c2 c3 c5 c6 d4 d5 e3 e5 f2 f5"),
    ):
        pos = make_pos({"c4": piece, "g4": "s"})
        targets = {CELLS[t[2]] for t in naive_turns(pos)}
        assert targets == set(expected.split())
        assert {CELLS[t[2]] for t in generate_turns(pos)} == set(expected.split())


# --------------------------------------------------------------------------
# perft
# --------------------------------------------------------------------------

PERFT_3 = {"standard": 11_821_792, "pari": 13_012_864}


@pytest.mark.parametrize("variant", ["standard", "pari"])
def test_perft_depth_1_and_2(variant: str) -> None:
    start = Position.initial(variant)
    assert perft(start, 1) == 192
    assert perft(start, 2) == 36864
    assert naive_perft(start, 1) == 192
    assert naive_perft(start, 2) == 36864


@pytest.mark.parametrize("variant", ["standard", "pari"])
def test_perft_depth_3(variant: str) -> None:
    """The full depth-3 count (fast generator); the naive one agreed when recorded."""
    assert perft(Position.initial(variant), 3) == PERFT_3[variant]


@pytest.mark.parametrize("variant", ["standard", "pari"])
def test_perft_depth_3_against_the_reference(variant: str) -> None:
    """Per first move, the fast and the naive depth-2 counts agree (a sample of first moves).

    The whole naive depth-3 count takes about a minute; it was run once and
    gave ``PERFT_3``. Here every 48th first move is checked in full.
    """
    start = Position.initial(variant)
    first = sorted(start.legal_turns())
    assert set(first) == naive_turns(start)
    for turn in first[::48]:
        after = start.push(turn)
        assert perft(after, 2) == naive_perft(after, 2), turn_to_text(start, turn)


def test_perft_stops_at_a_finished_game() -> None:
    won = make_pos({"g1": "S", "g2": "S", "e3": "S", "d7": "s"}, to_move=1)
    assert won.outcome() == Outcome(0, "castle")
    assert perft(won, 1) == 0
    assert perft(won, 0) == 1


def test_pari_d4_ban_removes_the_two_first_moves_onto_d4() -> None:
    start = Position.initial("pari", d4_opening="banned")
    assert perft(start, 1) == 190
    assert len(naive_turns(start)) == 190
    assert texts(Position.initial("pari")) - texts(start) == {"c3:-d4", "c4:-d4"}


# --------------------------------------------------------------------------
# Moving: reach, jumping, splitting, multiple moves, release
# --------------------------------------------------------------------------


def test_standard_reach_is_the_leading_piece() -> None:
    # A Shield on top of a Chariot leads it one cell only.
    pos = make_pos({"d4": "CS", "g4": "s"})
    assert "d4:SC-d5" in texts(pos)
    assert "too far" in refusal(pos, "d4:SC-d6")
    assert "Shield moves up to 1 cell" in refusal(pos, "d4:SC-d6")
    # The same Chariot on top goes three cells, carrying the Shield.
    pos = make_pos({"d4": "SC", "g4": "s"})
    assert {"d4:CS-d7", "d4:C-d7,S-d5", "d4:C-a4"} <= texts(pos)
    assert "d4:C-d7,S-d6" not in texts(pos)


def test_a_horse_goes_two_cells() -> None:
    start = Position.initial()
    msg = refusal(start, "b2:H-e1")
    assert "too far" in msg and "Horse" in msg and "2 cells" in msg
    assert "b2:HS-d2" in texts(start)


def test_pari_reach_counts_own_pieces_at_each_submove() -> None:
    pos = make_pos({"d4": "PPP", "g4": "p"}, variant="pari")
    # Three own pieces: three cells; then two are left: two cells; then one.
    assert "d4:-d7,-d2,-c3" in texts(pos)
    assert "d4:-d7,-d1" not in texts(pos)
    msg = refusal(pos, "d4:-d7,-d1")
    assert "too far" in msg and "holds 2 of your pieces" in msg
    # Enemy pieces in the stack do not count: a head on two enemy pieces moves one cell.
    pos = make_pos({"d4": "ppP", "g4": "p"}, variant="pari")
    assert "d4:3-d5" in texts(pos)
    assert "d4:-d5" in texts(pos)
    assert "too far" in refusal(pos, "d4:3-d6")
    pos = make_pos({"d4": "PpP", "g4": "p"}, variant="pari")
    assert {"d4:3-d6", "d4:2-d6"} <= texts(pos)
    assert "d4:3-d7" not in texts(pos)
    # The reach is the whole stack's, however few pieces move.
    assert "d4:-d6" in texts(pos)


def test_no_jumping() -> None:
    start = Position.initial()
    # a1's Chariot cannot go over b2 to c3 or beyond.
    msg = refusal(start, "a1:C-d5")
    assert "not on a straight line" in msg or "in the way" in msg
    msg = refusal(start, "a1:C-d4")
    assert "b2 is in the way" in msg
    assert all(CELLS[t[2]] != "d4" for t in start.legal_turns() if CELLS[t[0]] == "a1")


def test_emptied_origin_ends_the_turn() -> None:
    start = Position.initial()
    msg = refusal(start, "c3:S-d3,S-d4")
    assert "nothing is left on c3" in msg and "turn is over" in msg
    assert all(len(t) == 3 for t in start.legal_turns() if CELLS[t[0]] in ("c3", "c4"))


def test_a_release_ends_the_turn() -> None:
    pos = make_pos({"d4": "HsC", "g4": "s"})
    assert "d4:C-d6" in texts(pos)  # releases the black Shield
    assert not any(t.startswith("d4:C-d6,") for t in texts(pos))
    msg = refusal(pos, "d4:C-d6,s-d5")
    assert "releases" in msg and "ends the turn" in msg
    msg = refusal(pos, "d4:C-d6,H-d5")
    assert "releases" in msg
    # Leading the Shield along is no release, so the Horse may go on.
    assert "d4:Cs-d6,H-d5" in texts(pos)


def test_no_release_at_home() -> None:
    pos = make_pos({"c3": "sC", "b3": "hS", "g4": "s"})
    msg = refusal(pos, "c3:C-d3")
    assert "release" in msg and "own castle" in msg
    assert "c3:Cs-d3" in texts(pos)
    assert not any(t.startswith("b3:S") and not t.startswith("b3:Sh") for t in texts(pos))
    # Outside the castle the same release is allowed.
    pos = make_pos({"d3": "sC", "g4": "s"})
    assert "d3:C-d4" in texts(pos)
    # Black may not release at home either.
    pos = make_pos({"f3": "Ss", "a1": "S"}, to_move=1)
    assert texts(pos) == {f"f3:Ss-{c}" for c in ("e3", "e4", "f2", "f4", "g2", "g3")}
    assert "release" in refusal(pos, "f3:S-e3")


def test_multiple_move_example_from_the_help_page() -> None:
    # c4 holds (bottom to top) a White Shield, a black shield, a White Horse, a White Chariot.
    pos = make_pos({"c4": "SsHC"})
    turn = parse_turn(pos, "c4:C-f2,Hs-c2,S-d4")
    assert turn_to_text(pos, turn) == "c4:C-f2,Hs-c2,S-d4"
    after = pos.push(turn)
    assert after.board[CELLS.index("f2")] == "C"
    assert after.board[CELLS.index("c2")] == "sH"
    assert after.board[CELLS.index("d4")] == "S"
    assert after.board[CELLS.index("c4")] == ""
    # With the Chariot on c3 the Horse cannot reach c2 any more.
    msg = refusal(pos, "c4:C-c3,Hs-c2")
    assert "c3 is in the way" in msg
    assert "c4:C-c3,Hs-c5" in texts(pos)
    assert "c4:C-c3,Hs-c2" not in texts(pos)


def test_stacking_limit_example_from_the_help_page() -> None:
    # f2: two White Horses under a black shield; e5: three White pieces under a
    # black head; c4: a White stack of Shield, Horse, Chariot. White to move.
    pos = make_pos({"f2": "HHs", "e5": "SsSHh", "c4": "SHC"})
    assert "c4:Cxf2" in texts(pos)
    assert "would hold 4 white pieces" in refusal(pos, "c4:CHxf2")
    assert "would hold 5 white pieces" in refusal(pos, "c4:CHSxf2")
    # Every turn landing on f2 is the Chariot alone; nothing lands on e5.
    f2, e5 = CELLS.index("f2"), CELLS.index("e5")
    landing_f2 = [t for t in pos.legal_turns() if f2 in t[2::2]]
    assert landing_f2 and all(t[1] == 1 and t[2] == f2 for t in landing_f2)
    assert not any(e5 in t[2::2] for t in pos.legal_turns())
    assert "would hold 4 white pieces" in refusal(pos, "c4:Cxe5")
    # Black's side of the limit: black may not bring a fourth black piece either.
    pos = make_pos({"d4": "sss", "d5": "hs", "a1": "S"}, to_move=1)
    msg = refusal(pos, "d5:S+d4")
    assert "would hold 4 black pieces" in msg
    assert not any(CELLS.index("d4") in t[2::2] for t in pos.legal_turns())


def test_three_of_a_colour_bars_only_that_colour() -> None:
    pos = make_pos({"d4": "SSS", "d5": "S", "e5": "sss", "e4": "s"})
    assert not any(CELLS.index("d4") in t[2::2] for t in pos.legal_turns())
    assert "d5:Sxe5" in texts(pos)  # three black pieces do not stop a White capture
    black = make_pos({"d4": "SSS", "d5": "S", "e5": "sss", "e4": "s"}, to_move=1)
    assert "e4:Sxd4" in texts(black)
    assert "would hold 4 black pieces" in refusal(black, "e4:S+e5")


def test_capture_liberates_and_the_head_rules() -> None:
    pos = make_pos({"d4": "Hs", "d5": "S", "g4": "s"})  # black s heads d4
    after = play(pos, "d5:Sxd4")
    assert after.board[CELLS.index("d4")] == "HsS"
    # White heads it now and leads the captured piece and his own Horse along.
    after = make_pos({"d4": "HsS", "g4": "s"})
    assert "d4:SsH-d5" in texts(after)
    assert "d4:S-d5,s-d3" not in texts(after)


# --------------------------------------------------------------------------
# Winning and losing
# --------------------------------------------------------------------------

CASTLE_SETUP = {"g1": "S", "g2": "S", "d3": "S", "e4": "s", "a4": "shc"}


def test_castle_win_immediate() -> None:
    pos = make_pos(CASTLE_SETUP)
    assert pos.outcome() is None
    after = play(pos, "d3:S-e3")
    assert after.outcome() == Outcome(0, "castle")
    state = AccastaState(after)
    assert state.legal_moves() == []
    with pytest.raises(IllegalMove, match="the game is over"):
        state.play("e4:Sxe3")
    assert "White wins" in str(after)


def test_castle_win_next_turn_can_be_broken() -> None:
    pos = make_pos(CASTLE_SETUP, castle_win="next_turn")
    after = play(pos, "d3:S-e3")
    assert after.outcome() is None  # Black may still answer
    broken = play(after, "e4:Sxe3")
    assert broken.outcome() is None
    kept = play(after, "a4:C-b5")
    assert kept.outcome() == Outcome(0, "castle")
    assert AccastaState(kept).legal_moves() == []


def test_castle_win_counts_stacks_headed_in_the_enemy_castle() -> None:
    # Two heads plus one White piece captured under Black: not yet a win.
    pos = make_pos({"g1": "S", "g2": "S", "g3": "Ss", "d3": "S", "a4": "shc"}, to_move=1)
    assert pos.outcome() is None
    # Heads outside the castle do not count.
    pos = make_pos({"g1": "S", "g2": "S", "f1": "S", "f5": "S", "a4": "shc"}, to_move=1)
    assert pos.outcome() is None
    # Black wins the same way in White's castle.
    pos = make_pos({"a1": "s", "b3": "hs", "c4": "s", "g4": "S"}, to_move=0)
    assert pos.outcome() == Outcome(1, "castle")


def test_a_player_without_stacks_loses() -> None:
    pos = make_pos({"d4": "sshC", "d5": "S"}, to_move=1)
    assert pos.legal_turns() == []
    assert pos.outcome() == Outcome(0, "no moves")
    assert AccastaState(pos).legal_moves() == []
    assert "the game is over" in refusal(pos, "d4:C-d5")


@pytest.mark.parametrize("castle_win", ["immediate", "next_turn"])
def test_a_player_whose_stacks_cannot_move_loses(castle_win: str) -> None:
    # Black's only head is on g1, over a White Shield, in Black's castle: the
    # Shield alone would be a release at home, and with the White Shield the
    # stack cannot land anywhere without a fourth White piece.
    pos = make_pos(
        {"g1": "Ss", "f1": "SSS", "f2": "SSS", "g2": "SSS"}, to_move=1, castle_win=castle_win
    )
    assert naive_turns(pos) == set()
    assert pos.legal_turns() == []
    assert pos.outcome() == Outcome(0, "no moves")
    # With one cell opened up, Black can move and the game goes on.
    pos = make_pos({"g1": "Ss", "f1": "SSS", "f2": "SS", "g2": "SSS"}, to_move=1)
    assert texts(pos) == {"g1:Ssxf2"}
    assert pos.outcome() is None


# --------------------------------------------------------------------------
# Options
# --------------------------------------------------------------------------


def test_d4_banned_in_the_first_pari_turn_only() -> None:
    state = ACCASTA.new("pari", {"d4_opening": "banned"})
    with pytest.raises(IllegalMove, match="d4"):
        state.play("c4:-d4")
    assert "c4:-d4" not in state.legal_moves()
    assert "c4:-d4" in ACCASTA.new("pari").legal_moves()
    state, _ = state.play("c4:-d5")
    state, _ = state.play("e4:-d4")  # Black may go there
    state, canonical = state.play("c3:xd4")  # and White later too
    assert canonical == "c3:xd4"
    with pytest.raises(BadOption, match="Pari"):
        ACCASTA.new("standard", {"d4_opening": "banned"})


def test_options_and_variants_are_checked() -> None:
    assert ACCASTA.check_options("pari", {}) == {"castle_win": "immediate", "d4_opening": "allowed"}
    assert ACCASTA.check_options("standard", {"castle-win": "next_turn"})["castle_win"] == (
        "next_turn"
    )
    with pytest.raises(BadOption, match="unknown variant"):
        ACCASTA.new("triple")
    with pytest.raises(BadOption, match="castle_win"):
        ACCASTA.new("standard", {"castle_win": "never"})
    with pytest.raises(BadOption, match="unknown option"):
        ACCASTA.new("standard", {"speed": "fast"})


# --------------------------------------------------------------------------
# The game protocol
# --------------------------------------------------------------------------


def test_new_game_state() -> None:
    state = ACCASTA.new()
    assert state.variant == "standard"
    assert (state.ply, state.to_move, state.outcome) == (0, 0, None)
    assert len(state.legal_moves()) == 192
    assert state.legal_moves() == sorted(state.legal_moves())
    after, canonical = state.play("a1Cd1Hb1b1")
    assert canonical == "a1:C-d1,H-b1,S+b1"
    assert (after.ply, after.to_move) == (1, 1)
    assert ACCASTA.load(after.dump()) == after


def test_refusals_name_the_fault() -> None:
    start = Position.initial()
    assert refusal(start, "a1:H-b1") == "a1 holds C, H, S from the top; you wrote H"
    assert refusal(start, "a1:Cxb2") == "b2 is your own stack: write + not x"
    assert "c1 is an empty cell: write - not +" in refusal(start, "a1:C+c1")
    msg = refusal(start, "g1:C-d1")
    assert "g1 is headed by Black" in msg and "White's turn" in msg
    assert "d4 is empty" in refusal(start, "d4:-d5")
    after = play(start, "a1:C-d1")
    assert "a2 is headed by White" in refusal(after, "a2:C-b1")
    assert "d1 is a stack headed by White: write x not -" in refusal(after, "g1:C-d1")
    for garbage in ("hello", "", "a1:", "a1:Q-b1", "1-0"):
        with pytest.raises(BadNotation) as info:
            parse_turn(start, garbage)
        assert "not an Accasta move" in str(info.value)
    assert issubclass(BadNotation, IllegalMove)
    assert issubclass(IllegalMove, ValueError)
