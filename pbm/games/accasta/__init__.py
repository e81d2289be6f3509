"""Dieter Stein's Accasta, standard (Shields, Horses, Chariots) and Pari (unmarked pieces).

``Position`` holds the rules; ``notation`` reads and writes moves;
``diagram`` draws the board. ``ACCASTA`` is the game as the server sees it
(the ``pbm.games.Game`` protocol).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass

from pbm.games import BadOption, IllegalMove, Outcome
from pbm.games.accasta.board import CELLS, N_CELLS
from pbm.games.accasta.notation import parse_turn, turn_to_text
from pbm.games.accasta.position import (
    CASTLE_WIN_VALUES,
    D4_OPENING_VALUES,
    DEFAULT_OPTIONS,
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

_OPTION_VALUES = {"castle_win": CASTLE_WIN_VALUES, "d4_opening": D4_OPENING_VALUES}


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

    def diagram(self) -> str:
        return str(self.position)

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
    seat_names: tuple[str, str] = ("White", "Black")

    def check_options(self, variant: str, options: Mapping[str, str]) -> dict[str, str]:
        v = (variant or VARIANTS[0]).lower()
        if v not in VARIANTS:
            raise BadOption(f"unknown variant {variant!r}: choose {' or '.join(VARIANTS)}")
        checked = dict(DEFAULT_OPTIONS)
        for key, value in options.items():
            k = key.lower().replace("-", "_")
            if k not in _OPTION_VALUES:
                raise BadOption(
                    f"unknown option {key!r}: Accasta knows {', '.join(sorted(_OPTION_VALUES))}"
                )
            val = value.lower()
            if val not in _OPTION_VALUES[k]:
                raise BadOption(f"{k} cannot be {value!r}: choose {' or '.join(_OPTION_VALUES[k])}")
            checked[k] = val
        if checked["d4_opening"] == "banned" and v != "pari":
            raise BadOption("d4_opening=banned is a rule of the Pari variant only")
        return checked

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
        from pbm.games.accasta.help import HELP

        return HELP


ACCASTA = Accasta()
