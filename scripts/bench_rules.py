#!/usr/bin/env python3
"""Benchmark Accasta legal-turn enumeration on midgame positions, and perft.

The positions come from seeded random playouts (a fixed seed, so every run
measures the same positions): for each one a game is played from the start
to a random ply between ``--min-ply`` and ``--max-ply``, choosing uniformly
among the legal turns. Then ``pbm.games.accasta.position.generate_turns`` (the
uncached generator) is run over all of them again and again until the time
budget is spent, and one line per variant reports turns per second (total
turns generated / total time), the number of positions and the mean number
of turns per position.

    .venv/bin/python scripts/bench_rules.py
    .venv/bin/python scripts/bench_rules.py --seconds 10 --variant pari
    .venv/bin/python scripts/bench_rules.py --profile   # cProfile, top functions

With ``--perft`` it measures instead what ``pbm rules perft --depth N`` does
on a midgame position of every game (a seeded random game, ``--perft-ply``
turns in): the game's own perft (``GameState.perft``, its move generator)
against the naive count through the text protocol (``pbm.games.count_turns``:
every move written by ``legal_moves`` and read again by ``play``), each
repeated until the time budget is spent, from cold caches each time. One
line per game: the count, the turns per second of each (turns counted /
seconds), and the ratio.

    .venv/bin/python scripts/bench_rules.py --perft
    .venv/bin/python scripts/bench_rules.py --perft --perft-depth 3 --seconds 10
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import random
import sys
import time
from collections.abc import Callable, Sequence

from pbm import games
from pbm.games import GameState, count_turns, perft
from pbm.games.accasta import position as accasta_position
from pbm.games.accasta.position import VARIANTS, Position, generate_turns

TARGET = 1_000_000  # turns per second, as the issue sets it


def midgame_positions(
    variant: str, count: int, seed: int, min_ply: int, max_ply: int
) -> list[Position]:
    """``count`` unfinished positions at plies min_ply..max_ply of seeded random games."""
    rng = random.Random(f"{seed}:{variant}")
    out: list[Position] = []
    while len(out) < count:
        target = rng.randint(min_ply, max_ply)
        pos = Position.initial(variant)
        while pos.ply < target and pos.outcome() is None:
            pos = pos.push(rng.choice(pos.legal_turns()))
        if pos.outcome() is None:
            out.append(pos)
    return out


def measure(positions: Sequence[Position], seconds: float) -> tuple[int, float, int]:
    """Enumerate every position's turns in rounds until ``seconds`` pass.

    Returns (turns generated, seconds spent generating, rounds).
    """
    total_turns = 0
    elapsed = 0.0
    rounds = 0
    gen = generate_turns
    perf = time.perf_counter
    while rounds == 0 or elapsed < seconds:
        turns = 0
        start = perf()
        for pos in positions:
            turns += len(gen(pos))
        elapsed += perf() - start
        total_turns += turns
        rounds += 1
    return total_turns, elapsed, rounds


# A board of a size that perft at depth 2 or 3 counts in well under a second.
PERFT_OPTIONS = {"go": {"size": "9"}, "hex": {"size": "9"}}


def midgame(game: str, ply: int, seed: int) -> GameState:
    """The position ``ply`` turns into a seeded random game of ``game`` that has not ended
    (a new seed for each game that ends before)."""
    rng = random.Random(f"{seed}:{game}")
    while True:
        state = games.get(game).new(None, PERFT_OPTIONS.get(game, {}))
        while state.ply < ply and state.outcome is None:
            legal = [m for m in state.legal_moves() if m != "pass"]  # Go: no early end
            state = state.play(rng.choice(legal))[0]
        if state.outcome is None:
            return state


def cold() -> None:
    """Forget what Accasta's position keeps of positions seen (its legal turns and ends),
    so that every count starts as ``pbm rules perft`` does, in a fresh process."""
    accasta_position._TURNS_CACHE.clear()
    accasta_position._OUTCOME_CACHE.clear()


def timed(
    count: Callable[[GameState, int], int], state: GameState, depth: int, seconds: float
) -> tuple[int, float]:
    """(the count, seconds a count took): ``count`` run again and again for ``seconds``."""
    runs, elapsed, found = 0, 0.0, 0
    while runs == 0 or elapsed < seconds:
        cold()
        start = time.perf_counter()
        found = count(state, depth)
        elapsed += time.perf_counter() - start
        runs += 1
    return found, elapsed / runs


def bench_perft(depth: int, ply: int, seed: int, seconds: float) -> None:
    for name in games.names():
        state = midgame(name, ply, seed)
        if getattr(state, "perft", None) is None:
            print(f"{name:8} has no perft of its own")
            continue
        engine, fast = timed(perft, state, depth, seconds / 2)
        naive, slow = timed(count_turns, state, depth, seconds / 2)
        assert engine == naive, (name, engine, naive)
        print(
            f"{name:8} perft {depth} at ply {state.ply}: {engine:>9,} turns; engine "
            f"{engine / fast:12,.0f} turns/s, text protocol {naive / slow:12,.0f} turns/s: "
            f"{slow / fast:5.1f} times as fast"
        )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--variant", choices=(*VARIANTS, "both"), default="both")
    parser.add_argument("--positions", type=int, default=200, help="positions per variant")
    parser.add_argument("--seed", type=int, default=20240501, help="playout seed")
    parser.add_argument("--min-ply", type=int, default=10)
    parser.add_argument("--max-ply", type=int, default=40)
    parser.add_argument(
        "--seconds", type=float, default=3.0, help="time budget per variant (default 3)"
    )
    parser.add_argument(
        "--profile", action="store_true", help="run under cProfile and print the top functions"
    )
    parser.add_argument(
        "--perft", action="store_true", help="perft of every game: its engine against the text"
    )
    parser.add_argument("--perft-depth", type=int, default=2, help="perft's depth (default 2)")
    parser.add_argument(
        "--perft-ply", type=int, default=20, help="the midgame position's ply (default 20)"
    )
    args = parser.parse_args(argv)
    if args.perft:
        bench_perft(args.perft_depth, args.perft_ply, args.seed, args.seconds)
        return 0
    if args.min_ply > args.max_ply or args.positions < 1 or args.seconds <= 0:
        parser.error("need --min-ply <= --max-ply, --positions >= 1 and --seconds > 0")

    variants = VARIANTS if args.variant == "both" else (args.variant,)
    slowest = float("inf")
    for variant in variants:
        positions = midgame_positions(
            variant, args.positions, args.seed, args.min_ply, args.max_ply
        )
        if args.profile:
            profiler = cProfile.Profile()
            profiler.enable()
            turns, elapsed, rounds = measure(positions, args.seconds)
            profiler.disable()
        else:
            turns, elapsed, rounds = measure(positions, args.seconds)
        rate = turns / elapsed
        slowest = min(slowest, rate)
        print(
            f"{variant:8} {rate:12,.0f} turns/s  {len(positions)} positions "
            f"(plies {args.min_ply}-{args.max_ply}, seed {args.seed})  "
            f"mean {turns / rounds / len(positions):.1f} turns/position  "
            f"{rounds} rounds in {elapsed:.2f} s"
        )
        if args.profile:
            stats = pstats.Stats(profiler, stream=sys.stdout)
            stats.sort_stats("tottime").print_stats(12)
    verdict = "meets" if slowest >= TARGET else "is below"
    print(f"slowest variant {slowest:,.0f} turns/s {verdict} the target of {TARGET:,} turns/s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
