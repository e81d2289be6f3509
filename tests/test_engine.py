"""The Accasta engine alone (issue 25): it finds a win in one and avoids a loss in one in
hand-made positions of both variants, keeps to its budget, replays under a seed, and never
returns a turn the rules do not allow (a property test against the generator)."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pbm.games.accasta.board import INDEX, N_CELLS
from pbm.games.accasta.engine import LEVELS, choose, evaluate
from pbm.games.accasta.position import Position


def position(
    stacks: dict[str, str], to_move: int, variant: str = "standard", **rules: str
) -> Position:
    board = [""] * N_CELLS
    for cell, stack in stacks.items():
        board[INDEX[cell]] = stack
    return Position(tuple(board), to_move, 10, variant, **rules)


def wins_at_once(pos: Position, turn: tuple[int, ...]) -> bool:
    out = pos.push(turn).outcome()
    return out is not None and out.winner == pos.to_move


def can_win_next(pos: Position) -> bool:
    """Whether the player to move has a turn that wins at once."""
    return any(wins_at_once(pos, t) for t in pos.legal_turns())


# White heads g1 and g2 in Black's castle; his Shield on e2 steps onto f2 for the third.
THREAT = {"g1": "S", "g2": "S", "e2": "S", "e4": "c", "d1": "s"}
THREAT_PARI = {"g1": "P", "g2": "P", "e2": "P", "e4": "ppp", "d1": "p"}


@pytest.mark.parametrize("level", sorted(LEVELS))
@pytest.mark.parametrize(("stacks", "variant"), [(THREAT, "standard"), (THREAT_PARI, "pari")])
def test_it_finds_a_win_in_one(level: int, stacks: dict[str, str], variant: str) -> None:
    pos = position(stacks, 0, variant)
    assert can_win_next(pos)
    found = choose(pos, level, seed=7, nodes=50_000)
    assert wins_at_once(pos, found.turn)


@pytest.mark.parametrize("level", [3, 4, 5])
@pytest.mark.parametrize(("stacks", "variant"), [(THREAT, "standard"), (THREAT_PARI, "pari")])
def test_it_avoids_a_loss_in_one(level: int, stacks: dict[str, str], variant: str) -> None:
    """Black to move: only taking the Shield on e2 (his stack on e4 reaches it) stops
    White's win; every other turn loses at once. (Level 2 looks at its own turn only,
    not at the answer: it misses this, as a beginner would.)"""
    pos = position(stacks, 1, variant)
    turns = pos.legal_turns()
    assert any(can_win_next(pos.push(t)) for t in turns)
    assert not all(can_win_next(pos.push(t)) for t in turns)
    found = choose(pos, level, seed=3, nodes=200_000)
    assert not can_win_next(pos.push(found.turn))


def test_the_next_turn_castle_rule_is_the_positions_own() -> None:
    """With ``castle_win=next_turn`` White's three castle stacks win only if they are still
    his when his next turn begins: Black takes one back (his Chariot reaches g2), and the
    game goes on."""
    pos = position(
        {"g1": "S", "g2": "S", "f2": "S", "e4": "c", "d1": "s"}, 1, castle_win="next_turn"
    )
    assert not pos.is_over()
    assert any(pos.push(t).outcome() is not None for t in pos.legal_turns())
    for level in (3, 4, 5):
        found = choose(pos, level, seed=1, nodes=100_000)
        assert pos.push(found.turn).outcome() is None


def test_it_keeps_to_its_budget_of_time_and_of_nodes() -> None:
    pos = Position.initial()
    rng = random.Random(5)
    for _ in range(12):
        pos = pos.push(rng.choice(pos.legal_turns()))
    timed = choose(pos, 5, seed=1, seconds=0.3, nodes=10**9)
    assert timed.seconds < 1.0
    counted = choose(pos, 5, seed=1, nodes=3_000, seconds=60)
    assert counted.nodes <= 3_000


def test_under_a_seed_it_plays_the_same_turn_again() -> None:
    pos = Position.initial("pari")
    first = [choose(pos, level, seed=11, nodes=20_000).turn for level in LEVELS]
    again = [choose(pos, level, seed=11, nodes=20_000).turn for level in LEVELS]
    assert first == again


def test_level_one_plays_different_turns_under_different_seeds() -> None:
    pos = Position.initial()
    assert len({choose(pos, 1, seed=s).turn for s in range(10)}) > 1


def test_the_evaluation_is_symmetric() -> None:
    """The start is even, and a position seen from the other side scores the opposite."""
    assert evaluate(Position.initial()) == 0
    pos = position(THREAT, 0)
    assert evaluate(pos) == -evaluate(Position(pos.board, 1, pos.ply))


def test_a_finished_game_has_no_turn_to_choose() -> None:
    pos = position({"g1": "S", "g2": "S", "f2": "S", "d1": "s"}, 1)
    assert pos.is_over()
    with pytest.raises(ValueError, match="the game is over"):
        choose(pos, 3)


@settings(max_examples=40, deadline=None)
@given(
    st.sampled_from(["standard", "pari"]),
    st.sampled_from(["immediate", "next_turn"]),
    st.sampled_from(["allowed", "banned"]),
    st.integers(0, 60),
    st.integers(1, 5),
    st.integers(0, 2**16),
)
def test_it_never_returns_a_turn_the_rules_do_not_allow(
    variant: str, castle_win: str, d4_opening: str, plies: int, level: int, seed: int
) -> None:
    rng = random.Random(seed)
    pos = Position.initial(variant, castle_win, d4_opening)
    for _ in range(plies):
        if pos.is_over():
            break
        pos = pos.push(rng.choice(pos.legal_turns()))
    if pos.is_over():
        return
    found = choose(pos, level, seed=seed, nodes=2_000)
    assert found.turn in pos.legal_turns()
