#!/usr/bin/env python3
"""Accasta engine benchmark: its speed and depth, and its strength in seeded matches.

Run by hand: ``.venv/bin/python scripts/bench_engine.py [--games 100] [--deep-games N]
[--seconds 5] [--only speed|strength] [--variant standard|pari]``.

- Speed: from the middlegame positions of the two published sample games (the
  position after their 20th turn, standard and Pari), nodes per second and the
  depth the search completes in 1 s and in 10 s.
- Strength: GAMES games a match, colours alternating, seeded: level 3 against
  a random mover (target: at least 98 of 100 won) and against a one-ply greedy
  player that takes the biggest capture first (at least 90), and each level
  against the one below it (at least 65%). A game longer than 300 turns is
  counted as not won. Levels 4 and 5 take seconds a turn in Python:
  ``--deep-games`` plays fewer games in their matches, and ``--seconds`` is
  level 5's budget a turn (a site gives it up to a minute).
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pbm.games
from pbm.games.accasta.board import CASTLES
from pbm.games.accasta.engine import choose
from pbm.games.accasta.position import Position, Turn
from pbm.usecases.records.replay import parse_record

DATA = Path(__file__).parent.parent / "tests" / "data"
Player = Callable[[Position, random.Random], Turn]
MAX_TURNS = 300


def middlegame(name: str, ply: int = 20) -> Position:
    record = parse_record((DATA / name).read_text(encoding="utf-8"))
    state = pbm.games.get("accasta").new(record.variant)
    for move in record.moves[:ply]:
        state, _ = state.play(move.text)
    return state.position  # type: ignore[attr-defined,no-any-return]


def speed() -> None:
    for name in ("sample_standard.txt", "sample_pari.txt"):
        pos = middlegame(name)
        for seconds in (1.0, 10.0):
            found = choose(pos, 5, seed=1, seconds=seconds, nodes=10**9)
            print(
                f"{name}: after turn {pos.ply}, {seconds:4.0f} s: depth {found.depth}, "
                f"{found.nodes} nodes, {found.nodes / found.seconds:,.0f} nodes/s"
            )


def random_mover(pos: Position, rng: random.Random) -> Turn:
    return rng.choice(pos.legal_turns())


def greedy(pos: Position, rng: random.Random) -> Turn:
    """One ply: the biggest capture (or castle entry) first, else any turn."""
    board, mover = pos.board, pos.to_move
    castle = CASTLES[1 - mover]

    def gain(turn: Turn) -> int:
        g = 0
        for t in turn[2::2]:
            stack = board[t]
            if stack and stack[-1].isupper() != (mover == 0):
                g += 10 * len(stack)
            g += 3 if t in castle else 0
        return g

    turns = list(pos.legal_turns())
    rng.shuffle(turns)
    return max(turns, key=gain)


def level(n: int, seconds: float = 60.0) -> Player:
    def play(pos: Position, rng: random.Random) -> Turn:
        return choose(pos, n, seed=rng.randrange(1 << 30), seconds=seconds).turn

    return play


def game(white: Player, black: Player, variant: str, seed: int) -> int | None:
    """The winner's seat, or None after MAX_TURNS."""
    rng = random.Random(seed)
    pos = Position.initial(variant)
    for _ in range(MAX_TURNS):
        out = pos.outcome()
        if out is not None:
            return out.winner
        player = white if pos.to_move == 0 else black
        pos = pos.push(player(pos, rng))
    return None


def match(name: str, a: Player, b: Player, games: int, variant: str, target: float) -> None:
    won = 0
    start = time.perf_counter()
    for g in range(games):
        a_white = g % 2 == 0
        winner = game(a if a_white else b, b if a_white else a, variant, 1000 + g)
        won += winner == (0 if a_white else 1)
    share = won / games
    verdict = "ok" if share >= target else "BELOW TARGET"
    print(
        f"{name:28} {won:3}/{games} won ({share:.0%}; target {target:.0%}: {verdict}) "
        f"in {time.perf_counter() - start:.0f} s"
    )


def strength(games: int, deep: int, seconds: float, variant: str) -> None:
    match("level 3 vs random mover", level(3), random_mover, games, variant, 0.98)
    match("level 3 vs greedy", level(3), greedy, games, variant, 0.90)
    for n in (2, 3, 4, 5):
        count = games if n < 4 else deep
        a, b = level(n, seconds), level(n - 1, seconds)
        match(f"level {n} vs level {n - 1}", a, b, count, variant, 0.65)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--games", type=int, default=100)
    ap.add_argument("--deep-games", type=int, default=None, help="games of levels 4 and 5")
    ap.add_argument("--seconds", type=float, default=5.0, help="level 5's budget a turn")
    ap.add_argument("--only", choices=("speed", "strength"))
    ap.add_argument("--variant", choices=("standard", "pari"), default="standard")
    args = ap.parse_args()
    if args.only != "strength":
        speed()
    if args.only != "speed":
        deep = args.games if args.deep_games is None else args.deep_games
        strength(args.games, deep, args.seconds, args.variant)
    return 0


if __name__ == "__main__":
    sys.exit(main())
