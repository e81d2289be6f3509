"""Board pictures: how long one takes to draw (SVG, then PNG) and how large it is.

Run by hand: ``.venv/bin/python scripts/bench_pictures.py``. Every position of the two
published Accasta sample games (standard and Pari) and of a short chess game, from
both seats, in the order the games reach them; the cache of whole PNGs is bypassed,
so each picture is made anew. Accasta is measured twice: laid from its drawn parts,
as mail makes it (a stack or outline seen before is not drawn again), and drawn
whole from its SVG, as a game that draws no layers is.
"""

from __future__ import annotations

import statistics
import time
from pathlib import Path

from pbm import games
from pbm.mail.pictures import png_of_layers, png_of_svg
from pbm.record import parse_record

DATA = Path(__file__).parent.parent / "tests" / "data"
GAME_TEXT = "e4 e5 Nf3 Nc6 Bb5 a6 Ba4 Nf6 O-O Be7 Re1 b5 Bb3 d6 c3 O-O h3 Nb8 d4 Nbd7"
CHESS_GAME = GAME_TEXT.split()


def positions() -> list[tuple[str, games.GameState, str]]:
    found: list[tuple[str, games.GameState, str]] = []
    for name in ("sample_standard.txt", "sample_pari.txt"):
        record = parse_record((DATA / name).read_text(encoding="utf-8"))
        state = games.get("accasta").new(record.variant)
        for move in record.moves:
            state, last = state.play(move.text)
            found.append(("accasta", state, last))
    state = games.get("chess").new()
    for move in CHESS_GAME:
        state, last = state.play(move)
        found.append(("chess", state, last))
    return found


def main() -> None:
    times: dict[str, list[float]] = {}
    sizes: dict[str, list[int]] = {}
    for game, state, last in positions():
        for seat in (0, 1):
            layered = games.layers(state, seat, "board", last) is not None
            for whole in (False, True) if layered else (True,):
                start = time.perf_counter()
                layers = None if whole else games.layers(state, seat, "board", last)
                if layers is not None:
                    drawn, how = png_of_layers(layers), f"{game} laid from parts"
                else:
                    svg = games.picture(state, seat, "board", last)
                    assert svg is not None
                    drawn, how = png_of_svg(svg), f"{game} drawn whole"
                times.setdefault(how, []).append((time.perf_counter() - start) * 1000)
                sizes.setdefault(how, []).append(len(drawn))
    for how in times:
        t, s = sorted(times[how]), sizes[how]
        p95 = t[int(len(t) * 0.95) - 1]
        print(
            f"{how}: {len(t)} pictures; SVG+PNG median {statistics.median(t):.1f} ms, "
            f"p95 {p95:.1f} ms; PNG median {statistics.median(s) / 1000:.1f} KB, "
            f"largest {max(s) / 1000:.1f} KB"
        )


if __name__ == "__main__":
    main()
