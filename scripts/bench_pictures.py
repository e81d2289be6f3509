"""Board pictures: how long one takes to draw (SVG, then PNG) and how large it is.

Run by hand: ``.venv/bin/python scripts/bench_pictures.py``. Every position of the two
published Accasta sample games (standard and Pari), of a short chess game with checks
and a mate, and of two chess games of random legal moves (seeded: the same every run),
and every tenth of a Hex and a Go game of random stones on 19 by 19,
from both seats, in the order the games reach them; each picture is made anew (the
cache of ``pictures.png`` is not used), as mail makes it: the game's SVG, then the PNG
at ``pictures.SCALE`` times ``pictures.WIDTH``.
"""

from __future__ import annotations

import random
import statistics
import time
from pathlib import Path

from gauge import machine_gauge, speed_line

from pbm import games
from pbm.usecases.pictures.raster import SCALE, WIDTH, png_of_svg
from pbm.usecases.records.replay import parse_record

DATA = Path(__file__).parent.parent / "tests" / "data"
# The Opera game (Morphy, Paris 1858): checks, castling long, a mate.
OPERA = [
    "e4",
    "e5",
    "Nf3",
    "d6",
    "d4",
    "Bg4",
    "dxe5",
    "Bxf3",
    "Qxf3",
    "dxe5",
    "Bc4",
    "Nf6",
    "Qb3",
    "Qe7",
    "Nc3",
    "c6",
    "Bg5",
    "b5",
    "Nxb5",
    "cxb5",
    "Bxb5+",
    "Nbd7",
    "O-O-O",
    "Rd8",
    "Rxd7",
    "Rxd7",
    "Rd1",
    "Qe6",
    "Bxd7+",
    "Nxd7",
    "Qb8+",
    "Nxb8",
    "Rd8#",
]


def positions() -> list[tuple[str, games.GameState, str]]:
    found: list[tuple[str, games.GameState, str]] = []
    for name in ("sample_standard.txt", "sample_pari.txt"):
        record = parse_record((DATA / name).read_text(encoding="utf-8"))
        state = games.get("accasta").new(record.variant)
        for move in record.moves:
            state, last = state.play(move.text)
            found.append(("accasta", state, last))
    state = games.get("chess").new()
    for move in OPERA:
        state, last = state.play(move)
        found.append(("chess", state, last))
    chosen = random.Random(1)
    for _ in range(2):
        state = games.get("chess").new()
        for _ in range(60):
            moves = state.legal_moves()
            if not moves:
                break
            state, last = state.play(chosen.choice(moves))
            found.append(("chess", state, last))
    # Hex and Go: a seeded game of random stones on the largest board, every tenth position.
    for name in ("hex", "go"):
        state = games.get(name).new(None, {"size": "19"})
        for ply in range(200):
            moves = state.legal_moves()
            if not moves:
                break
            state, last = state.play(chosen.choice(moves))
            if ply % 10 == 9:
                found.append((name, state, last))
    return found


def main() -> None:
    print(speed_line(machine_gauge()))
    times: dict[str, list[float]] = {}
    cpu: dict[str, list[float]] = {}
    sizes: dict[str, list[int]] = {}
    for game, state, last in positions():
        for seat in (0, 1):
            start, start_cpu = time.perf_counter(), time.process_time()
            svg = games.picture(state, seat, "board", last)
            assert svg is not None
            drawn = png_of_svg(svg)
            times.setdefault(game, []).append((time.perf_counter() - start) * 1000)
            cpu.setdefault(game, []).append((time.process_time() - start_cpu) * 1000)
            sizes.setdefault(game, []).append(len(drawn))
    for game in times:
        t, s = sorted(times[game]), sizes[game]
        p95 = t[int(len(t) * 0.95) - 1]
        # The CPU time too: on a machine others share, the clock on the wall counts them.
        print(
            f"{game}: {len(t)} pictures {WIDTH * SCALE} px wide; SVG+PNG median "
            f"{statistics.median(t):.1f} ms (CPU {statistics.median(cpu[game]):.1f} ms), "
            f"p95 {p95:.1f} ms; PNG median {statistics.median(s) / 1000:.1f} KB, "
            f"largest {max(s) / 1000:.1f} KB"
        )


if __name__ == "__main__":
    main()
