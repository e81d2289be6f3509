"""Tic-tac-toe: a game that lives outside pbm and is installed through an entry point.

It exists to prove that a new game is a package and an entry point, nothing
else (``docs/adding-a-game.md``): ``tests/test_adding_a_game.py`` registers it
for a test only and plays it by mail. It has what Accasta lacks: draws.
Cells are written ``a1`` .. ``c3`` (column, row); X moves first.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass

from pbm.games import BadNotation, IllegalMove, Option, Outcome, check_declared_options

CELLS = tuple(f"{c}{r}" for r in "123" for c in "abc")
LINES = (
    (0, 1, 2), (3, 4, 5), (6, 7, 8),  # rows
    (0, 3, 6), (1, 4, 7), (2, 5, 8),  # columns
    (0, 4, 8), (2, 4, 6),  # diagonals
)  # fmt: skip
MARKS = ("X", "O")
_CELL = re.compile(r"^[a-cA-C][1-3]$")


@dataclass(frozen=True, slots=True)
class TicTacToeState:
    cells: str  # nine of "X", "O", "." in the order of CELLS
    ply: int = 0

    @property
    def variant(self) -> str:
        return "standard"

    @property
    def options(self) -> Mapping[str, str]:
        return {}

    @property
    def to_move(self) -> int:
        return self.ply % 2

    @property
    def outcome(self) -> Outcome | None:
        for a, b, c in LINES:
            if self.cells[a] != "." and self.cells[a] == self.cells[b] == self.cells[c]:
                return Outcome(MARKS.index(self.cells[a]), "three in a row")
        if "." not in self.cells:
            return Outcome(None, "full board")
        return None

    def play(self, text: str) -> tuple[TicTacToeState, str]:
        cell = text.strip().lower()
        if not _CELL.match(cell):
            raise BadNotation(f"{text.strip()!r} is not a cell: write a1 to c3")
        if self.outcome is not None:
            raise IllegalMove("the game is over")
        k = CELLS.index(cell)
        if self.cells[k] != ".":
            raise IllegalMove(f"{cell} is taken")
        mark = MARKS[self.to_move]
        return TicTacToeState(self.cells[:k] + mark + self.cells[k + 1 :], self.ply + 1), cell

    def legal_moves(self) -> list[str]:
        if self.outcome is not None:
            return []
        return sorted(c for c, m in zip(CELLS, self.cells, strict=True) if m == ".")

    def example_move(self) -> str | None:
        legal = self.legal_moves()
        return legal[0] if legal else None

    def diagram(self, seat: int | None = None) -> str:
        rows = [f"{r}  " + " ".join(self.cells[(r - 1) * 3 : r * 3]) for r in (3, 2, 1)]
        out = self.outcome
        if out is None:
            status = f"{MARKS[self.to_move]} to move"
        elif out.winner is None:
            status = f"Draw: {out.termination}"
        else:
            status = f"{MARKS[out.winner]} wins: {out.termination}"
        return "\n".join([*rows, "   a b c", "", status]) + "\n"

    def claim_draw(self) -> Outcome:
        raise IllegalMove("tic-tac-toe has no draws to claim: a full board is a draw by itself")

    def dump(self) -> str:
        return json.dumps({"cells": self.cells, "ply": self.ply})


class TicTacToe:
    name = "tictactoe"
    title = "Tic-tac-toe"
    variants: tuple[str, ...] = ("standard",)
    options: tuple[Option, ...] = ()
    seat_names: tuple[str, str] = ("X", "O")
    seat_words: tuple[tuple[str, ...], tuple[str, ...]] = (("x",), ("o",))
    notation_examples: tuple[str, ...] = ("b2", "a1")
    draw_offers = False

    def looks_like_move(self, text: str) -> bool:
        return _CELL.match(text.strip()) is not None

    def check_options(self, variant: str, options: Mapping[str, str]) -> dict[str, str]:
        return check_declared_options(self, variant, options)[1]

    def new(
        self, variant: str | None = None, options: Mapping[str, str] | None = None
    ) -> TicTacToeState:
        self.check_options(variant or "standard", options or {})
        return TicTacToeState("." * 9)

    def load(self, data: str) -> TicTacToeState:
        d = json.loads(data)
        return TicTacToeState(str(d["cells"]), int(d["ply"]))

    def help_text(self) -> str:
        return (
            "TIC-TAC-TOE\n\nX and O take turns marking a free cell, a1 to c3 (column, row);\n"
            "three marks in a row, column or diagonal win; a full board is a draw.\n"
        )


TICTACTOE = TicTacToe()
