"""Hex, the connection game of Piet Hein and John Nash, on boards of 5x5 to 19x19.

``board`` holds the geometry and who has connected; ``notation`` reads
moves; ``position`` is the game state (``HexState``); ``diagram`` and
``picture`` draw it as text and as SVG (with the strokes of ``font``);
``sgf`` writes and reads game records in SGF;
``engine`` is the computer player; ``help`` the text of ``help hex``.
``HEX`` is the game as the server sees it (the ``pbm.games.Game`` protocol).
"""

from __future__ import annotations

import json
from collections.abc import Mapping

from pbm.games import BadOption, Option, RecordFormat, check_declared_options
from pbm.games.hex import engine
from pbm.games.hex.board import DEFAULT_SIZE, MAX_SIZE, MIN_SIZE, STONES, winner
from pbm.games.hex.help import HELP
from pbm.games.hex.notation import looks_like_move, looks_like_phrase, parse_move
from pbm.games.hex.position import SEAT_NAMES, STANDARD, HexState
from pbm.games.hex.sgf import SGF

__all__ = ["HEX", "Hex", "HexState"]

SIZES = tuple(str(n) for n in range(MIN_SIZE, MAX_SIZE + 1))
OPTIONS = (
    Option(
        "size",
        SIZES,
        str(DEFAULT_SIZE),
        f"the board's side in cells: {DEFAULT_SIZE} (the usual), 11 or 19, "
        f"or any from {MIN_SIZE} to {MAX_SIZE}",
    ),
    Option(
        "swap",
        ("on", "off"),
        "on",
        "off: no swap rule; on: Blue may answer Red's first stone with swap",
    ),
)


class Hex:
    """The game of Hex for the registry."""

    name = "hex"
    title = "Hex"
    variants: tuple[str, ...] = (STANDARD,)
    options: tuple[Option, ...] = OPTIONS
    seat_names: tuple[str, str] = SEAT_NAMES
    seat_words: tuple[tuple[str, ...], tuple[str, ...]] = (
        ("red", "rot", "rouge", "rosso", "rojo"),
        ("blue", "blau", "bleu", "blu", "azul"),
    )
    notation_examples: tuple[str, ...] = ("g7", "a1", "m13", "swap")
    draw_offers = False
    record_formats: tuple[RecordFormat, ...] = (SGF,)
    computer_program: str | None = None  # the engine is pure Python, here
    computer_levels: Mapping[int, str] = {n: lv.words for n, lv in engine.LEVELS.items()}

    def looks_like_move(self, text: str) -> bool:
        return looks_like_move(text)

    def looks_like_phrase(self, text: str) -> bool:
        return looks_like_phrase(text)

    def check_options(self, variant: str, options: Mapping[str, str]) -> dict[str, str]:
        for key, value in options.items():
            if key.lower() == "size" and value.strip() not in SIZES:
                raise BadOption(
                    f"size cannot be {value!r}: a Hex board is 5 to 19 cells a side "
                    f"(13 is usual, 11 and 19 are common), as in --size=11"
                )
        return check_declared_options(self, variant, options)[1]

    def new(self, variant: str | None = None, options: Mapping[str, str] | None = None) -> HexState:
        opts = self.check_options(variant or STANDARD, options or {})
        size = int(opts["size"])
        return HexState(size, opts["swap"] == "on", "." * size * size)

    def load(self, data: str) -> HexState:
        d = json.loads(data)
        opts = self.check_options(d["variant"], {"size": str(d["size"]), "swap": d["swap"]})
        size = int(opts["size"])
        cells = "".join(d["cells"].split("/"))
        if len(cells) != size * size or set(cells) - {".", *STONES}:
            raise ValueError(f"a stored {size}x{size} Hex board has {size * size} cells of . R B")
        ply = int(d["ply"])
        if ply < cells.count(STONES[0]) + cells.count(STONES[1]):
            raise ValueError(f"a stored Hex board at ply {ply} has more stones than moves")
        last = str(d["last"])
        if last:
            parse_move(last, size)  # IllegalMove, a ValueError, for a last move off the board
        return HexState(size, opts["swap"] == "on", cells, ply, last, winner(cells, size))

    def help_text(self) -> str:
        return HELP


HEX = Hex()
