"""The Hex computer player: a legal move at every level, the same one for a seed, within its
time; the swap rule's choices. Fast: no matches here (``scripts/bench_hex_engine.py``)."""

from __future__ import annotations

import time

import pytest

from pbm.games.hex import HEX, HexState
from pbm.games.hex.engine import LEVELS, choose


def opened(size: int = 11, *moves: str, swap: str = "on") -> HexState:
    state = HEX.new(options={"size": str(size), "swap": swap})
    for move in moves:
        state, _ = state.play(move)
    return state


def test_the_levels_are_declared_for_help() -> None:
    assert sorted(HEX.computer_levels) == [1, 2, 3, 4, 5]
    assert all(HEX.computer_levels[n] == LEVELS[n].words for n in LEVELS)
    assert HEX.computer_program is None


@pytest.mark.parametrize("level", [1, 2])
def test_the_computer_plays_a_legal_move_the_same_for_a_seed(level: int) -> None:
    state = opened(9, "e5", "d6", "f3", swap="off")
    first = state.computer_move(level, 7, 5.0)
    assert first in state.legal_moves()
    assert state.computer_move(level, 7, 5.0) == first


def test_the_computer_plays_whole_games_to_the_end() -> None:
    state = opened(5)
    seed = 0
    while state.outcome is None:
        move = state.computer_move(1, seed, 1.0)
        assert move in state.legal_moves()
        state, _ = state.play(move)
        seed += 1
    assert state.outcome.termination == "connection"


def test_the_computer_takes_a_winning_cell() -> None:
    # Red has a1-a4 in column a on 5x5 and needs a5; Blue has stones elsewhere.
    state = opened(5, "a1", "c1", "a2", "c2", "a3", "c3", "a4", "d4", swap="off")
    assert state.computer_move(2, 1, 5.0) == "a5"


def test_the_computer_blocks_a_connection_it_would_lose_to() -> None:
    # Blue has a1 to d1 and needs e1 (or waits); Red to move must take e1 or lose at once.
    state = opened(5, "b3", "a1", "b4", "b1", "c4", "c1", "c3", "d1", swap="off")
    assert state.computer_move(3, 1, 5.0) == "e1"


def test_level_5_stays_within_a_small_budget() -> None:
    state = opened(11, "f6")
    started = time.process_time()
    move = state.computer_move(5, 3, 0.3)
    spent = time.process_time() - started
    assert move in state.legal_moves()
    assert spent < 0.3


def test_level_3_is_quick_at_11x11() -> None:
    state = opened(11, "f6", "e7", swap="off")
    started = time.perf_counter()
    state.computer_move(3, 1, 10.0)
    assert time.perf_counter() - started < 2.0  # about 0.3 s alone on one core


def test_blue_swaps_a_centre_opening_and_keeps_a_corner_one() -> None:
    assert opened(7, "d4").computer_move(3, 1, 10.0) == "swap"
    assert opened(7, "a1").computer_move(3, 1, 10.0) != "swap"


def test_red_opens_away_from_the_centre_with_the_swap_rule() -> None:
    move = opened(7).computer_move(3, 1, 10.0)
    assert move in HEX.new(options={"size": "7"}).legal_moves() and move != "d4"


def test_no_move_is_asked_of_a_finished_game_or_an_unknown_level() -> None:
    with pytest.raises(ValueError, match="no level 9"):
        choose(5, "." * 25, 0, level=9, seed=1, seconds=1.0)
    state = opened(5, "a1", "b1", "a2", "b2", "a3", "b3", "a4", "b4", "a5", swap="off")
    assert state.outcome is not None
    with pytest.raises(ValueError, match="the game is over"):
        state.computer_move(1, 1, 1.0)
