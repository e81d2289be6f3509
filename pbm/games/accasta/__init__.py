"""Dieter Stein's Accasta, standard (Shields, Horses, Chariots) and Pari (unmarked pieces).

``Position`` holds the rules; ``notation`` reads and writes moves;
``diagram`` draws the board. ``ACCASTA`` is the game as the server sees it
(the ``pbm.games.Game`` protocol).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass

from pbm.games import IllegalMove, Option, Outcome, check_declared_options
from pbm.games.accasta import engine
from pbm.games.accasta.board import CELLS, N_CELLS
from pbm.games.accasta.diagram import render
from pbm.games.accasta.help import HELP
from pbm.games.accasta.notation import parse_turn, turn_to_text
from pbm.games.accasta.picture import legend, svg
from pbm.games.accasta.position import (
    CASTLE_WIN_VALUES,
    D4_OPENING_VALUES,
    PARI,
    VARIANTS,
    Position,
    Turn,
    first_turn,
    perft,
)

__all__ = [
    "ACCASTA",
    "CELLS",
    "Accasta",
    "AccastaState",
    "IllegalMove",
    "Position",
    "Turn",
    "parse_turn",
    "perft",
    "turn_to_text",
]

OPTIONS = (
    Option(
        "castle_win",
        CASTLE_WIN_VALUES,
        "immediate",
        "next_turn: three stacks in the enemy castle win only if they still stand "
        "when your next turn begins",
    ),
    Option(
        "d4_opening",
        D4_OPENING_VALUES,
        "allowed",
        "banned: White may not move onto d4 in the first turn (Italian Pari rules)",
        variants=(PARI,),
    ),
)

# A move starts on a cell, a1 to g7 (``a1:C-d1``, ``b42c5``).
_MOVE_START = re.compile(r"[a-gA-G][0-9]")  # b9 too: the rules say it is no cell
_CELL_NAMES = re.compile(r"[a-g][1-7]")


@dataclass(frozen=True, slots=True)
class AccastaState:
    """A game of Accasta as the service layer stores and plays it."""

    position: Position

    @property
    def variant(self) -> str:
        return self.position.variant

    @property
    def options(self) -> Mapping[str, str]:
        return {"castle_win": self.position.castle_win, "d4_opening": self.position.d4_opening}

    @property
    def ply(self) -> int:
        return self.position.ply

    @property
    def to_move(self) -> int:
        return self.position.to_move

    @property
    def outcome(self) -> Outcome | None:
        return self.position.outcome()

    def play(self, text: str) -> tuple[AccastaState, str]:
        turn = parse_turn(self.position, text)
        canonical = turn_to_text(self.position, turn)
        return AccastaState(self.position.push(turn)), canonical

    def legal_moves(self) -> list[str]:
        if self.position.outcome() is not None:
            return []
        pos = self.position
        return sorted(turn_to_text(pos, t) for t in pos.legal_turns())

    def example_move(self) -> str | None:
        pos = self.position
        if pos.outcome() is not None:
            return None
        turn = first_turn(pos)
        return turn_to_text(pos, turn) if turn is not None else None

    def diagram(self, seat: int | None = None, ended: str | None = None) -> str:
        # As the classic help page draws it, White below; Black's seat sees it turned
        # round, his side below, as his picture does.
        pos, turned = self.position, seat == 1
        if ended is None or pos.outcome() is not None:
            return pos.diagram(turned=turned)
        return render(pos.board, pari=pos.pari, to_move=None, status=ended, turned=turned)

    def picture(self, seat: int = 0, alt: str = "", last: str = "") -> str:
        """The board as an SVG picture from ``seat``, the cells of the ``last`` move (its
        notation) outlined (``Game``'s optional picture)."""
        touched = tuple(dict.fromkeys(_CELL_NAMES.findall(last.lower())))
        return svg(self.position.board, seat=seat, last=touched, alt=alt)

    def legend(self, seat: int = 0) -> str:
        """The picture's legend from ``seat`` (``Game``'s optional legend)."""
        return legend(seat, pari=self.position.pari)

    def claim_draw(self) -> Outcome:
        raise IllegalMove("Accasta has no draws: a game ends only when one side wins")

    def perft(self, depth: int) -> int:
        """The turn sequences of length ``depth`` (the optional perft of the protocol),
        counted with the position's own turns: no notation written or read."""
        return perft(self.position, depth)

    def computer_move(self, level: int, seed: int, seconds: float) -> str:
        """The turn the engine plays here at ``level`` within ``seconds`` (``Game``'s
        optional computer player; ``engine.choose``), in long notation."""
        found = engine.choose(self.position, level, seed=seed, seconds=seconds)
        return turn_to_text(self.position, found.turn)

    def dump(self) -> str:
        p = self.position
        return json.dumps(
            {
                "variant": p.variant,
                "options": dict(self.options),
                "ply": p.ply,
                "to_move": p.to_move,
                "board": "/".join(p.board),
            },
            separators=(",", ":"),
        )


class Accasta:
    """The Accasta game for the registry."""

    name = "accasta"
    title = "Accasta"
    variants: tuple[str, ...] = VARIANTS
    options: tuple[Option, ...] = OPTIONS
    seat_names: tuple[str, str] = ("White", "Black")
    seat_words: tuple[tuple[str, ...], tuple[str, ...]] = (
        ("white", "weiß", "weiss", "bianco"),
        ("black", "schwarz", "nero"),
    )
    notation_examples: tuple[str, ...] = ("a1:C-d1,H-b1", "a1Cd1Hb1", "b4:2-c5 (Pari)")
    # The computer player's levels and what each means (``engine.LEVELS``).
    computer_levels: Mapping[int, str] = {n: lv.words for n, lv in engine.LEVELS.items()}
    draw_offers = False

    def looks_like_move(self, text: str) -> bool:
        return _MOVE_START.match(text) is not None

    def check_options(self, variant: str, options: Mapping[str, str]) -> dict[str, str]:
        return check_declared_options(self, variant, options)[1]

    def new(
        self, variant: str | None = None, options: Mapping[str, str] | None = None
    ) -> AccastaState:
        v = (variant or VARIANTS[0]).lower()
        opts = self.check_options(v, options or {})
        return AccastaState(Position.initial(v, opts["castle_win"], opts["d4_opening"]))

    def load(self, data: str) -> AccastaState:
        d = json.loads(data)
        board = tuple(d["board"].split("/"))
        if len(board) != N_CELLS:
            raise ValueError(f"a stored Accasta board has {N_CELLS} cells, not {len(board)}")
        opts = self.check_options(d["variant"], d["options"])
        return AccastaState(
            Position(
                board,
                int(d["to_move"]),
                int(d["ply"]),
                d["variant"],
                opts["castle_win"],
                opts["d4_opening"],
            )
        )

    def help_text(self) -> str:
        return HELP


ACCASTA = Accasta()
