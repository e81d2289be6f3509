"""What a game of Go is made of, as values: its rules (the options), the phases of a game
and the position with all it takes to go on (``GoPosition``). The rules that change it
are ``position.GoState``'s; the drawings and the stored text read these values
(``diagram``, ``picture``, ``storage``), so they need not know the rules.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from pbm.games.go import gnugo
from pbm.games.go.scoring import Score, komi_text, score

PLAY, SCORING, OVER = "play", "scoring", "over"
PASSED = -1  # ``GoState.last`` after a pass


@dataclass(frozen=True, slots=True)
class Rules:
    """What a game's options fix: the board, the komi, the handicap; and where pbm asks
    for the dead stones (``program``: GNU Go's name; empty, never)."""

    size: int
    komi: float
    handicap: int
    program: str = field(default=gnugo.PROGRAM, compare=False)

    @property
    def options(self) -> dict[str, str]:
        return {
            "size": str(self.size),
            "komi": komi_text(self.komi),
            "handicap": str(self.handicap),
        }


@dataclass(frozen=True, slots=True)
class GoPosition:
    """A game of Go: the position, the captures, every earlier position's hash, the phase
    (the rules that change it: ``position.GoState``)."""

    rules: Rules
    grid: str  # ``board``'s string: ".", "b", "w" by point
    ply: int
    captures: tuple[int, int]  # stones taken by Black, by White
    seen: frozenset[int]  # the Zobrist hash of every position so far, this one's too
    passes: int = 0  # passes in a row just played
    last: int | None = None  # the last stone's point, PASSED, or None
    ko: int | None = None  # the point the player to move may not take back on at once
    phase: str = PLAY
    dead: frozenset[int] = frozenset()  # in the scoring phase: the stones marked dead
    accepted: int | None = None  # the seat that made or accepted the current marking
    proposer: str = ""  # who proposed the first marking: "GNU Go" or pbm's estimate

    @property
    def variant(self) -> str:
        return "standard"

    @property
    def options(self) -> Mapping[str, str]:
        return self.rules.options

    @property
    def size(self) -> int:
        return self.rules.size

    @property
    def to_move(self) -> int:
        return self.ply % 2

    @property
    def score(self) -> Score:
        """The area score with the stones marked dead taken off (none during play)."""
        return score(self.grid, self.size, self.dead, self.rules.komi)
