"""Property tests over seeded random playouts (hypothesis).

Each example plays a game from the start with a seeded random choice among
the legal turns (sometimes preferring turns that bring stacks into the enemy
castle, so that games do end), then checks invariants along the way. The fast
move generator is compared with the naive reference in ``test_position.py``,
on playout positions and on scrambled boards no game would reach.
"""

from __future__ import annotations

import importlib.util
import random
import sys
from collections import Counter
from dataclasses import replace
from pathlib import Path
from types import ModuleType

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from pbm.games import IllegalMove
from pbm.games.accasta import ACCASTA, AccastaState
from pbm.games.accasta.board import CELLS
from pbm.games.accasta.notation import parse_turn, turn_to_text
from pbm.games.accasta.position import (
    Position,
    first_turn,
    generate_turns,
    has_legal_turn,
    turns_from,
)


def _load_reference() -> ModuleType:
    """test_position.py, whatever pytest's import mode."""
    name = "accasta_rules_reference"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(
        name, Path(__file__).with_name("test_position.py")
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


REF = _load_reference()
naive_turns = REF.naive_turns
REF_CASTLES: tuple[set[str], set[str]] = REF.REF_CASTLES

PROPS = settings(
    max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow], derandomize=True
)

variants = st.sampled_from(["standard", "pari"])
castle_wins = st.sampled_from(["immediate", "next_turn"])
seeds = st.integers(min_value=0, max_value=2**32 - 1)


def playout(
    seed: int,
    variant: str,
    plies: int,
    castle_win: str = "immediate",
    d4_opening: str = "allowed",
    greed: float = 0.0,
) -> list[Position]:
    """The positions of a seeded random game, from the start, until it ends or ``plies`` turns.

    With probability ``greed`` a turn that heads most stacks in the enemy castle is chosen.
    """
    rng = random.Random(seed)
    pos = Position.initial(variant, castle_win, d4_opening)
    out = [pos]
    for _ in range(plies):
        if pos.outcome() is not None:
            break
        turns = pos.legal_turns()
        if rng.random() < greed:
            me = pos.to_move
            best = max(pos.push(t).castle_stacks(me) for t in turns)
            turns = [t for t in turns if pos.push(t).castle_stacks(me) == best]
        pos = pos.push(rng.choice(turns))
        out.append(pos)
    return out


def heads_in_enemy_castle(pos: Position, colour: int) -> int:
    """Counted the plain way, from the castle cells' names."""
    n = 0
    for name, stack in zip(CELLS, pos.board, strict=True):
        if name in REF_CASTLES[1 - colour] and stack and stack[-1].isupper() == (colour == 0):
            n += 1
    return n


def scrambled(seed: int, variant: str, *, playable: bool = False) -> Position:
    """A board no game need reach: all 40 pieces dropped on random cells, ≤ 3 a colour a stack.

    ``playable``: draw again until the game is not over on that board.
    """
    rng = random.Random(seed)
    while True:
        pos = _scramble(rng, variant)
        if not playable or pos.outcome() is None:
            return pos


def _scramble(rng: random.Random, variant: str) -> Position:
    if variant == "pari":
        pieces = list("P" * 20 + "p" * 20)
    else:
        pieces = list("S" * 9 + "H" * 7 + "C" * 4 + "s" * 9 + "h" * 7 + "c" * 4)
    rng.shuffle(pieces)
    cells = rng.sample(range(len(CELLS)), rng.randint(14, 30))
    board = [""] * len(CELLS)
    for piece in pieces:
        while True:
            c = rng.choice(cells)
            if sum(1 for p in board[c] if p.isupper() == piece.isupper()) < 3:
                board[c] += piece
                break
    return Position(tuple(board), rng.randint(0, 1), rng.randint(1, 80), variant)


# --------------------------------------------------------------------------
# Notation
# --------------------------------------------------------------------------


@PROPS
@given(seed=seeds, variant=variants, plies=st.integers(min_value=0, max_value=60))
def test_every_legal_turn_prints_and_parses_back(seed: int, variant: str, plies: int) -> None:
    positions = playout(seed, variant, plies, greed=0.3)
    pos = positions[-1] if positions[-1].outcome() is None else positions[-2]
    turns = pos.legal_turns()
    long_texts = set()
    for turn in turns:
        long = turn_to_text(pos, turn)
        short = turn_to_text(pos, turn, short=True)
        assert ":" in long and ":" not in short and "," not in short
        assert parse_turn(pos, long) == turn, long
        assert parse_turn(pos, short) == turn, short
        long_texts.add(long)
    # Different turns never print alike.
    assert len(long_texts) == len(turns)
    assert sorted(long_texts) == AccastaState(pos).legal_moves()


@PROPS
@given(seed=seeds, variant=variants)
def test_scrambled_boards_print_and_parse_back(seed: int, variant: str) -> None:
    pos = scrambled(seed, variant, playable=True)
    rng = random.Random(seed)
    turns = pos.legal_turns()
    for turn in rng.sample(turns, min(len(turns), 150)):
        assert parse_turn(pos, turn_to_text(pos, turn)) == turn
        assert parse_turn(pos, turn_to_text(pos, turn, short=True)) == turn


# --------------------------------------------------------------------------
# The generator against the reference
# --------------------------------------------------------------------------


@PROPS
@given(seed=seeds, variant=variants, plies=st.integers(min_value=0, max_value=60))
def test_generator_equals_the_reference_on_playouts(seed: int, variant: str, plies: int) -> None:
    positions = playout(seed, variant, plies)
    rng = random.Random(seed)
    for pos in [positions[-1], rng.choice(positions)]:
        fast = generate_turns(pos)
        assert len(fast) == len(set(fast)), "a turn generated twice"
        assert set(fast) == naive_turns(pos)


@PROPS
@given(seed=seeds, variant=variants, plies=st.integers(min_value=0, max_value=60))
def test_first_turn_is_the_first_generated(seed: int, variant: str, plies: int) -> None:
    """The early-stopping search finds exactly ``legal_turns()[0]``, or that there is none."""
    for pos in [*playout(seed, variant, plies)[-2:], scrambled(seed, variant)]:
        for d4 in ("allowed", "banned"):
            p = replace(pos, d4_opening=d4)
            turns = generate_turns(p)
            assert first_turn(p) == (turns[0] if turns else None)
            assert has_legal_turn(p) == bool(turns)


@PROPS
@given(seed=seeds, variant=variants, plies=st.integers(min_value=0, max_value=60))
def test_the_turns_of_each_cell_are_the_generators_from_that_cell(
    seed: int, variant: str, plies: int
) -> None:
    """``turns_from`` (what a written move is checked against) is the generator, cell by cell."""
    for pos in [playout(seed, variant, plies)[-1], scrambled(seed, variant)]:
        for d4 in ("allowed", "banned"):
            p = replace(pos, d4_opening=d4)
            by_cell = [t for origin in range(len(CELLS)) for t in turns_from(p, origin)]
            assert by_cell == generate_turns(p)


@PROPS
@given(seed=seeds, variant=variants)
def test_generator_equals_the_reference_on_scrambled_boards(seed: int, variant: str) -> None:
    pos = scrambled(seed, variant)
    fast = generate_turns(pos)
    assert len(fast) == len(set(fast)), "a turn generated twice"
    assert set(fast) == naive_turns(pos)


@settings(max_examples=20, deadline=None, derandomize=True)
@given(seed=seeds)
def test_generator_equals_the_reference_with_d4_banned(seed: int) -> None:
    positions = playout(seed, "pari", 3, d4_opening="banned")
    for pos in positions:
        fast = generate_turns(pos)
        assert set(fast) == naive_turns(pos)
        d4 = CELLS.index("d4")
        if pos.ply == 0:
            assert all(d4 not in t[2::2] for t in fast)


# --------------------------------------------------------------------------
# Invariants of a game
# --------------------------------------------------------------------------

STANDARD_ARMY = Counter({"S": 9, "H": 7, "C": 4, "s": 9, "h": 7, "c": 4})
PARI_ARMY = Counter({"P": 20, "p": 20})


@PROPS
@given(
    seed=seeds,
    variant=variants,
    castle_win=castle_wins,
    greed=st.sampled_from([0.0, 0.5, 0.9]),
)
def test_playout_invariants(seed: int, variant: str, castle_win: str, greed: float) -> None:
    positions = playout(seed, variant, 60, castle_win, greed=greed)
    army = PARI_ARMY if variant == "pari" else STANDARD_ARMY
    for i, pos in enumerate(positions):
        assert pos.ply == i and pos.to_move == i % 2
        # Pieces are conserved; no stack ever holds 4 of a colour.
        assert Counter("".join(pos.board)) == army
        for stack in pos.board:
            white = sum(1 for p in stack if p.isupper())
            assert white <= 3 and len(stack) - white <= 3, stack
        state = AccastaState(pos)
        assert ACCASTA.load(state.dump()) == state
        # The rules' verdict, judged independently.
        mover, last = pos.to_move, 1 - pos.to_move
        if castle_win == "next_turn" and heads_in_enemy_castle(pos, mover) >= 3:
            expected = (mover, "castle")
        elif castle_win == "immediate" and i > 0 and heads_in_enemy_castle(pos, last) >= 3:
            expected = (last, "castle")
        elif not generate_turns(pos):
            expected = (last, "no moves")
        else:
            expected = None
        outcome = pos.outcome()
        assert (None if outcome is None else (outcome.winner, outcome.termination)) == expected
        if outcome is not None:
            event(f"ended: {outcome.termination}")
            assert i == len(positions) - 1
            assert state.outcome == outcome
            assert state.legal_moves() == []
            with pytest.raises(IllegalMove, match="the game is over"):
                state.play("a1:C-b1")
        else:
            assert state.legal_moves()


def test_greedy_playouts_do_end() -> None:
    """The invariants above see finished games: some seeded greedy games end within 60 plies."""
    ends: Counter[str] = Counter()
    for seed in range(12):
        for variant in ("standard", "pari"):
            last = playout(seed, variant, 60, greed=0.9)[-1]
            outcome = last.outcome()
            if outcome is not None:
                ends[outcome.termination] += 1
    assert ends["castle"] >= 6
