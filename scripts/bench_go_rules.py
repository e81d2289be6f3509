#!/usr/bin/env python3
"""Go rules benchmark: one 19x19 move late in a game, as the shell makes it.

Run by hand: ``.venv/bin/python scripts/bench_go_rules.py [--plies 300] [--repeat 200]``.

A seeded game of random legal stones (captures and kos come in it) is
played to ``--plies``; then, ``--repeat`` times, the time of what the shell
does for one move: ``Game.load`` of the stored text (``dump``, with every
earlier position's hash for superko) and ``play`` of a legal move (its
checks, captures and superko), and ``dump`` of the result. Reported: the
dump's size, and the median and 95th percentile of load + play and of
load + play + dump, in milliseconds (target: under 5 ms at move 300), and
of ``legal_moves`` (the ``moves`` command) for comparison.
"""

from __future__ import annotations

import argparse
import random
import statistics
import time
from collections.abc import Callable

from pbm.games.go import Go, GoState

GO = Go(program="")  # never GNU Go: the rules alone are measured


def game(plies: int, seed: int = 1) -> GoState:
    rng = random.Random(seed)
    state = GO.new(None, {"size": "19"})
    while state.ply < plies:
        points = [m for m in state.legal_moves() if m != "pass"]
        state = state.play(rng.choice(points))[0]
    return state


def timed(work: list[float], run: Callable[[], object]) -> None:
    began = time.perf_counter()
    run()
    work.append((time.perf_counter() - began) * 1000)


def report(name: str, times: list[float]) -> None:
    ordered = sorted(times)
    p95 = ordered[int(len(ordered) * 0.95) - 1]
    print(f"{name:<28} median {statistics.median(ordered):6.2f} ms   p95 {p95:6.2f} ms")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--plies", type=int, default=300)
    parser.add_argument("--repeat", type=int, default=200)
    args = parser.parse_args()
    state = game(args.plies)
    stored = state.dump()
    moves = [m for m in state.legal_moves() if m != "pass"]
    rng = random.Random(2)
    print(
        f"19x19 after {state.ply} moves: {state.grid.count('.')} empty points, "
        f"captures {state.captures}, {len(state.seen)} positions remembered, "
        f"dump {len(stored)} bytes"
    )
    load_play: list[float] = []
    whole: list[float] = []
    listing: list[float] = []
    for _ in range(args.repeat):
        move = rng.choice(moves)

        def play(move: str = move) -> object:
            return GO.load(stored).play(move)

        def play_and_store(move: str = move) -> object:
            return GO.load(stored).play(move)[0].dump()

        timed(load_play, play)
        timed(whole, play_and_store)
    for _ in range(max(args.repeat // 10, 5)):
        timed(listing, lambda: GO.load(stored).legal_moves())
    report("load + play", load_play)
    report("load + play + dump", whole)
    report("load + legal_moves", listing)


if __name__ == "__main__":
    main()
