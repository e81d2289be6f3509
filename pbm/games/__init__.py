"""The game registry and the protocol every game package implements.

Nothing here (nor in any game package) does I/O: a game is a set of pure
functions over small immutable values. The service layer stores a game's
state as the text ``GameState.dump()`` returns and loads it back with
``Game.load``; it never replays a history to find the current position.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Protocol


class IllegalMove(ValueError):
    """A move that the rules refuse; ``str()`` says why in words for a player."""


class BadNotation(IllegalMove):
    """Text that is not a move at all in the game's notation."""


class BadOption(ValueError):
    """An unknown variant or game option, or an option value out of range."""


@dataclass(frozen=True, slots=True)
class Outcome:
    """How a game ended: the winning seat (0 moves first) and the termination.

    ``termination`` is one word of the record's Termination tag: ``castle``,
    ``no moves`` (decided by the rules) or ``resign``, ``forfeit`` (decided by
    the service layer).
    """

    winner: int
    termination: str


class GameState(Protocol):
    """One position of a game, with everything needed to go on from it."""

    @property
    def variant(self) -> str: ...

    @property
    def options(self) -> Mapping[str, str]: ...

    @property
    def ply(self) -> int:
        """Turns played so far; the next turn is move number ``ply + 1``."""
        ...

    @property
    def to_move(self) -> int:
        """The seat to move: 0 (White) or 1 (Black)."""
        ...

    @property
    def outcome(self) -> Outcome | None:
        """The rules' verdict, or None while the game goes on."""
        ...

    def play(self, text: str) -> tuple[GameState, str]:
        """Play a move written by the player to move.

        Returns the new state and the move's canonical notation; raises
        ``IllegalMove`` (``BadNotation`` for text that is no move) otherwise.
        """
        ...

    def legal_moves(self) -> list[str]:
        """Every legal move in canonical notation, sorted."""
        ...

    def example_move(self) -> str | None:
        """One legal move in canonical notation (cheap: no full list), or None."""
        ...

    def diagram(self) -> str:
        """The ASCII board diagram with a legend and whose turn it is."""
        ...

    def dump(self) -> str:
        """A compact text from which ``Game.load`` rebuilds this state."""
        ...


class Game(Protocol):
    """A game the server can run."""

    name: str  # the word in mail commands and on the CLI: "accasta"
    title: str  # for people: "Accasta"
    variants: tuple[str, ...]  # the first is the default
    seat_names: tuple[str, str]  # ("White", "Black")

    def check_options(self, variant: str, options: Mapping[str, str]) -> dict[str, str]:
        """Validate a variant and its options; return them with defaults filled in.

        Raises ``BadOption`` with a message that lists what would work.
        """
        ...

    def new(
        self, variant: str | None = None, options: Mapping[str, str] | None = None
    ) -> GameState:
        """The starting position."""
        ...

    def load(self, data: str) -> GameState:
        """The inverse of ``GameState.dump``."""
        ...

    def help_text(self) -> str:
        """The rules and the notation, for the ``help G`` mail command."""
        ...


def get(name: str) -> Game:
    """The game called ``name`` (case-insensitive); KeyError if there is none."""
    key = name.lower()
    if key == "accasta":
        from pbm.games.accasta import ACCASTA

        return ACCASTA
    raise KeyError(name)


def names() -> tuple[str, ...]:
    """The names of every game this server runs."""
    return ("accasta",)
