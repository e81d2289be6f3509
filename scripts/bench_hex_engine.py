#!/usr/bin/env python3
"""Hex engine benchmark: its speed, and its strength in seeded matches.

Run by hand: ``.venv/bin/python scripts/bench_hex_engine.py [--size 11] [--games 100]
[--deep-games 10] [--seconds 2] [--only speed|strength]``.

- Speed: playouts a second and CPU time a move of levels 1 to 4 on the empty
  board at 11x11, 13x13 and 19x19, and level 5's playouts in ``--seconds``.
- Strength, at ``--size`` with the swap rule on, colours alternating, every
  game seeded: level 3 against a uniformly random player (target: at least
  98 of 100 won) and level 5, given ``--seconds`` a move, against level 1
  (target: at least 8 of 10).
"""

from __future__ import annotations

import argparse
import random
import time
from collections.abc import Callable

from pbm.games.hex import HEX, HexState
from pbm.games.hex.engine import LEVELS, choose

Player = Callable[[HexState, int], str]


def speed(seconds: float) -> None:
    for size in (11, 13, 19):
        empty = "." * size * size
        for level in (1, 2, 3, 4):
            started = time.process_time()
            found = choose(size, empty, 0, level=level, seed=1, seconds=60.0)
            spent = time.process_time() - started
            print(
                f"{size}x{size} level {level}: {found.playouts:6} playouts in {spent:6.3f} s "
                f"CPU, {found.playouts / spent:7,.0f} a second"
            )
        found = choose(size, empty, 0, level=5, seed=1, seconds=seconds)
        print(f"{size}x{size} level 5: {found.playouts:6} playouts in {seconds} s")


def engine(level: int, seconds: float) -> Player:
    def move(state: HexState, seed: int) -> str:
        return state.computer_move(level, seed, seconds)

    return move


def random_player(state: HexState, seed: int) -> str:
    return random.Random(seed).choice(state.legal_moves())


def match(name: str, first: Player, second: Player, games: int, size: int) -> int:
    """``games`` games of ``first`` against ``second``, ``first`` Red in the even ones;
    prints and returns ``first``'s wins."""
    wins = 0
    started = time.perf_counter()
    for game in range(games):
        players = (first, second) if game % 2 == 0 else (second, first)
        state = HEX.new(options={"size": str(size)})
        while state.outcome is None:
            move = players[state.to_move](state, game * 1000 + state.ply)
            state, _ = state.play(move)
        assert state.outcome.winner is not None
        won = players[state.outcome.winner] is first
        wins += won
        print(
            f"  game {game + 1:3}: {name.split(' against ')[0]} as "
            f"{'Red' if game % 2 == 0 else 'Blue'} {'won' if won else 'lost'} "
            f"in {state.ply} moves",
            flush=True,
        )
    spent = time.perf_counter() - started
    print(f"{name}: {wins} of {games} won ({spent:.0f} s)", flush=True)
    return wins


def strength(size: int, games: int, deep_games: int, seconds: float) -> None:
    match("level 3 against random", engine(3, 60.0), random_player, games, size)
    match(
        f"level 5 ({seconds} s a move) against level 1",
        engine(5, seconds),
        engine(1, 60.0),
        deep_games,
        size,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=11)
    parser.add_argument("--games", type=int, default=100)
    parser.add_argument("--deep-games", type=int, default=10)
    parser.add_argument("--seconds", type=float, default=2.0, help="level 5's CPU time a move")
    parser.add_argument("--only", choices=("speed", "strength"))
    args = parser.parse_args()
    print("levels:", ", ".join(f"{n}: {lv.words}" for n, lv in LEVELS.items()))
    if args.only != "strength":
        speed(args.seconds)
    if args.only != "speed":
        strength(args.size, args.games, args.deep_games, args.seconds)


if __name__ == "__main__":
    main()
