"""A game of Hex as a value: the board, the swap rule, the moves played, the last one.

``HexState`` is the ``pbm.games.GameState`` of Hex. The cells and the ply are
all the rules need: Red (seat 0) moves on even plies, Blue on odd ones, and
the swap (Blue's move 2, when the board plays with the swap rule) is the one
move that places no stone of its own. The last move is kept for the
diagram's brackets and the picture's dot. Who has won is worked out once, as
the state is made (``board.winner``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass

from pbm.games import IllegalMove, Outcome
from pbm.games.hex import diagram, engine, picture
from pbm.games.hex.board import EMPTY, STONES, cell_name, connects, mirror
from pbm.games.hex.notation import SWAP, parse_move

__all__ = ["CONNECTION", "SEAT_NAMES", "STANDARD", "HexState"]

STANDARD = "standard"
CONNECTION = "connection"  # the Outcome's termination: the only way Hex ends by itself
SEAT_NAMES = ("Red", "Blue")
_EDGES = ("top and bottom", "left and right")


@dataclass(frozen=True, slots=True)
class HexState:
    """One position: ``cells`` row by row from a1 (``board``), ``ply`` moves played,
    ``last`` the last one's notation ("" before the first), ``winner`` the seat that
    has connected, if one has."""

    size: int
    swap_rule: bool
    cells: str
    ply: int = 0
    last: str = ""
    winner: int | None = None

    @property
    def variant(self) -> str:
        return STANDARD

    @property
    def options(self) -> Mapping[str, str]:
        return {"size": str(self.size), "swap": "on" if self.swap_rule else "off"}

    @property
    def to_move(self) -> int:
        return self.ply % 2

    @property
    def outcome(self) -> Outcome | None:
        return None if self.winner is None else Outcome(self.winner, CONNECTION)

    @property
    def may_swap(self) -> bool:
        """Whether ``swap`` is legal now: Blue's first move, on a board with the rule."""
        return self.swap_rule and self.ply == 1 and self.winner is None

    def play(self, text: str) -> tuple[HexState, str]:
        move = parse_move(text, self.size)
        named = SWAP if move == SWAP else cell_name(move, self.size)
        if self.winner is not None:
            raise IllegalMove(f"{named}: the game is over: {self._won()}")
        if move == SWAP:
            return self._swapped(), SWAP
        if self.cells[move] != EMPTY:
            owner = SEAT_NAMES[STONES.index(self.cells[move])]
            raise IllegalMove(f"{named} is taken: {owner} has a stone there")
        return self._placed(move, named), named

    def _placed(self, move: int, named: str) -> HexState:
        """The state after a stone of the player to move on the empty cell ``move``."""
        stone = STONES[self.to_move]
        cells = self.cells[:move] + stone + self.cells[move + 1 :]
        won = self.to_move if connects(cells, self.size, stone) else None
        return HexState(self.size, self.swap_rule, cells, self.ply + 1, named, won)

    def perft(self, depth: int) -> int:
        """The move sequences of length ``depth`` (the optional perft of the protocol),
        counted on the cells: no notation written or read. A sequence stops where a
        player connects."""
        if depth <= 0:
            return 1
        if self.winner is not None:
            return 0
        free = self.empty_cells()
        if depth == 1:
            return len(free) + (1 if self.may_swap else 0)
        count = sum(self._placed(k, "").perft(depth - 1) for k in free)
        return count + (self._swapped().perft(depth - 1) if self.may_swap else 0)

    def _swapped(self) -> HexState:
        if not self.swap_rule:
            raise IllegalMove(
                "swap: this board plays without the swap rule (it was set up with "
                "--swap=off): place a stone on an empty cell"
            )
        if self.ply != 1:
            raise IllegalMove("swap is only allowed as Blue's first move (move 2)")
        first = self.cells.index(STONES[0])
        moved = mirror(first, self.size)
        cells = [EMPTY] * len(self.cells)
        cells[moved] = STONES[1]
        return HexState(self.size, self.swap_rule, "".join(cells), self.ply + 1, SWAP)

    def _won(self) -> str:
        assert self.winner is not None
        name = SEAT_NAMES[self.winner]
        return f"{name} has connected {_EDGES[self.winner]}"

    def empty_cells(self) -> list[int]:
        return [k for k, c in enumerate(self.cells) if c == EMPTY]

    def legal_moves(self) -> list[str]:
        if self.winner is not None:
            return []
        moves = [cell_name(k, self.size) for k in self.empty_cells()]
        return sorted([*moves, SWAP] if self.may_swap else moves)

    def example_move(self) -> str | None:
        if self.winner is not None:
            return None
        centre = (self.size // 2) * (self.size + 1)
        if self.cells[centre] == EMPTY:
            return cell_name(centre, self.size)
        empty = self.cells.find(EMPTY)
        return cell_name(empty, self.size) if empty >= 0 else None

    def legal_moves_text(self) -> str:
        """The ``moves`` command's answer: how many cells are free, then each row's free
        cells (``c7-f7``: every cell from c7 to f7), and the swap when it is legal."""
        if self.winner is not None:
            return f"None: the game is over ({self._won()}).\n"
        free = self.empty_cells()
        lines = [f"{len(free)} empty cells, any of them a legal move (c7-f7: c7 to f7):"]
        for row in range(self.size):
            runs: list[list[int]] = []
            for k in range(row * self.size, (row + 1) * self.size):
                if self.cells[k] != EMPTY:
                    continue
                if runs and runs[-1][-1] == k - 1:
                    runs[-1].append(k)
                else:
                    runs.append([k])
            words = [self._run(run) for run in runs] or ["none"]
            lines.append(f"{row + 1:>2}: {' '.join(words)}")
        if self.may_swap:
            first = self.cells.index(STONES[0])
            lines.append(
                f"Or swap: Red's stone on {cell_name(first, self.size)} becomes Blue's "
                f"on {cell_name(mirror(first, self.size), self.size)}, and Red moves."
            )
        return "\n".join(lines) + "\n"

    def _run(self, run: list[int]) -> str:
        names = [cell_name(k, self.size) for k in run]
        return f"{names[0]}-{names[-1]}" if len(names) > 2 else " ".join(names)

    def marked(self) -> int | None:
        """The cell the last move put a stone on (after a swap: the swapped stone)."""
        if self.last == SWAP:
            return self.cells.index(STONES[1])
        if self.last:
            move = parse_move(self.last, self.size)
            return None if move == SWAP else move
        return None

    def diagram(self, seat: int | None = None, ended: str | None = None) -> str:
        # Every reader sees the board the same way, as the notation names it.
        last = None
        if self.last == SWAP:
            now = self.cells.index(STONES[1])
            was = cell_name(mirror(now, self.size), self.size)
            last = f"{self.ply}. swap (Red's {was} became Blue's {cell_name(now, self.size)})"
        elif self.last:
            last = f"{self.ply}. {self.last}"
        if self.winner is not None:
            status = f"{SEAT_NAMES[self.winner]} wins: {self._won()}."
        elif ended is not None:
            status = ended
        else:
            status = f"{SEAT_NAMES[self.to_move]} to move (move {self.ply + 1})"
            if self.may_swap:
                status += ": a stone on an empty cell, or swap"
        return diagram.render(self.size, self.cells, marked=self.marked(), last=last, status=status)

    def picture(self, seat: int = 0, alt: str = "", last: str = "") -> str:
        """The board as an SVG picture, the same from both seats; the last move is the
        state's own (``last`` is not needed)."""
        return picture.svg(self.size, self.cells, marked=self.marked(), alt=alt)

    def claim_draw(self) -> Outcome:
        raise IllegalMove(
            "Hex cannot be drawn: once the board is full one player's stones always "
            "connect that player's edges, so there is no draw to claim"
        )

    def computer_move(self, level: int, seed: int, seconds: float) -> str:
        """The engine's move at ``level`` within ``seconds`` of CPU (``engine.choose``)."""
        if self.winner is not None:
            raise IllegalMove(f"the game is over: {self._won()}")
        move = engine.choose(
            self.size,
            self.cells,
            self.to_move,
            level=level,
            seed=seed,
            seconds=seconds,
            swap_rule=self.swap_rule,
            ply=self.ply,
        ).move
        return SWAP if move == SWAP else cell_name(move, self.size)

    def dump(self) -> str:
        rows = [self.cells[r * self.size : (r + 1) * self.size] for r in range(self.size)]
        return json.dumps(
            {
                "variant": STANDARD,
                "size": self.size,
                "swap": "on" if self.swap_rule else "off",
                "ply": self.ply,
                "last": self.last,
                "cells": "/".join(rows),
            },
            separators=(",", ":"),
        )
