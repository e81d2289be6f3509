"""Go, on 9x9, 13x13 and 19x19 boards, with area scoring, positional superko and komi.

``board`` holds the stones (sgfmill places them and takes off captures),
``position`` the rules (``GoState``), ``notation`` the moves as written,
``scoring`` the area count and pbm's own guess at dead stones, ``gnugo``
asks GNU Go (the only module with I/O: the dead stones when play ends, the
computer's moves), ``diagram`` and ``picture`` draw the board, ``sgf``
the game records, ``storage`` the text the shell keeps, ``help`` the text
of ``help go``. ``GO`` is the game as the server sees it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

from pbm.games import BadOption, Option, RecordFormat, check_declared_options
from pbm.games.go import gnugo, storage
from pbm.games.go.board import SIZES
from pbm.games.go.help import HELP
from pbm.games.go.notation import looks_like_move, looks_like_phrase
from pbm.games.go.position import GoState, Rules, as_state, start
from pbm.games.go.scoring import komi_text
from pbm.games.go.sgf import SGF

__all__ = ["GO", "Go", "GoState"]

STANDARD = "standard"
# The komi runs from 0 to 9.5 in half points: every rule set's komi (0.5 in a handicap
# game; 5.5 to 7.5, or 7 and 8 where a draw is allowed, in an even one). Every value is
# listed in the server's help, so the list stays one line.
KOMI_LIMIT = 9.5
HANDICAP_KOMI = "0.5"  # the komi of a handicap game unless the challenge sets one

OPTIONS = (
    Option("size", tuple(str(s) for s in SIZES), "19", "the board: 9x9, 13x13 or 19x19 lines"),
    Option(
        "komi",
        tuple(komi_text(h / 2) for h in range(int(2 * KOMI_LIMIT) + 1)),
        "7.5",
        f"the points White gets for moving second, 0 to {KOMI_LIMIT:g} in half points "
        "(a whole number allows a draw; 0.5 in a handicap game unless set)",
    ),
    Option(
        "handicap",
        ("0", *(str(n) for n in range(2, 10))),
        "0",
        "Black's stones on the star points before White's first move (2 to 9)",
    ),
)


def _komi(value: str) -> str:
    """A komi as the option lists it (``7.5``, ``7``); ``BadOption`` in words otherwise."""
    try:
        halves = float(value) * 2
    except ValueError:
        halves = math.nan  # not a number: refused below
    if not (math.isfinite(halves) and halves == int(halves) and 0 <= halves <= 2 * KOMI_LIMIT):
        raise BadOption(
            f"komi cannot be {value!r}: choose a number of points from 0 to {KOMI_LIMIT:g} in "
            "halves, such as 7.5, 6.5 or 0.5 (a whole number allows a draw)"
        )
    return komi_text(halves / 2 + 0.0)  # + 0.0: no "-0"


class Go:
    """The game of Go for the registry. ``program``: the GNU Go to ask for dead stones and
    moves (a name on PATH or in /usr/games; empty: never ask, pbm's estimate only)."""

    name = "go"
    title = "Go"
    variants: tuple[str, ...] = (STANDARD,)
    options: tuple[Option, ...] = OPTIONS
    seat_names: tuple[str, str] = ("Black", "White")
    seat_words: tuple[tuple[str, ...], tuple[str, ...]] = (
        ("black", "schwarz", "noir", "nero", "negro", "kuro"),
        ("white", "weiß", "weiss", "blanc", "bianco", "blanco", "shiro"),
    )
    notation_examples: tuple[str, ...] = ("D4", "Q16", "pass", "dead D4 E5")
    draw_offers = True
    record_formats: tuple[RecordFormat, ...] = (SGF,)
    computer_program = gnugo.PROGRAM
    computer_levels: Mapping[int, str] = {
        n: f"GNU Go at its level {level} of 10" for n, level in gnugo.LEVELS.items()
    }

    def __init__(self, program: str = gnugo.PROGRAM) -> None:
        self.program = program

    def looks_like_move(self, text: str) -> bool:
        return looks_like_move(text)

    def looks_like_phrase(self, text: str) -> bool:
        return looks_like_phrase(text)

    def check_options(self, variant: str, options: Mapping[str, str]) -> dict[str, str]:
        given = {k.lower().replace("-", "_"): v for k, v in options.items()}
        if "komi" in given:
            given["komi"] = _komi(given["komi"])
        checked = check_declared_options(self, variant, given)[1]
        if checked["handicap"] != "0" and "komi" not in given:
            checked["komi"] = HANDICAP_KOMI
        return checked

    def _rules(self, options: Mapping[str, str]) -> Rules:
        return Rules(
            int(options["size"]), float(options["komi"]), int(options["handicap"]), self.program
        )

    def new(self, variant: str | None = None, options: Mapping[str, str] | None = None) -> GoState:
        return start(self._rules(self.check_options(variant or STANDARD, options or {})))

    def load(self, data: str) -> GoState:
        return as_state(storage.load(data, self.program))

    def help_text(self) -> str:
        return HELP


GO = Go()
