"""Refusals: a command that is not carried out, and why, in words for a player.

Every use case either decides (and changes exactly what it decided) or
raises one of these; nothing is changed then. ``str()`` of a refusal is one
sentence or two, from the layer that knows why, ready to be mailed. Plain values
below the store, as ``pbm.replies`` is: a board value refuses a game that is not
installed (``pbm.model.rules_of``).
"""

from __future__ import annotations

from typing import Any, NoReturn


class Refused(ValueError):
    """A refused command; ``message`` says why, in words for a player.

    A refusal changes nothing the command asked for, but may have to be
    remembered: ``changes`` are written with its answer (a wrong password is
    counted), ``notices`` are mails to others (the owner of an account under
    attack), and ``silent`` holds the answer back (said once an hour is enough).
    ``mistake``: the sender's own (counted against his error allowance); False
    where the server could have done better (a board changed by another at the
    same moment, a reply it could not read).
    """

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message
        self.changes: tuple[Any, ...] = ()
        self.notices: tuple[Any, ...] = ()
        self.silent = False
        self.mistake = True


class WrongPassword(Refused):
    """Bad password, or a reply address that does not allow this."""


class ForeignSender(WrongPassword):
    """A reply address used from an address that is not its account's (a forwarded mail)."""


class LockedOut(WrongPassword):
    """Too many wrong passwords lately: password commands are refused unchecked."""


class NotConfirmed(Refused):
    """An account whose signup its address has not confirmed yet can do nothing."""


class UnknownPlayer(Refused):
    """No account with that userid (``userid``, as given): the message says how a player
    signs up; the command line tells its admin how to add one."""

    def __init__(self, message: str, userid: str = "") -> None:
        super().__init__(message)
        self.userid = userid


class UnknownBoard(Refused):
    """No board with that number."""


class NotYourTurn(Refused):
    """The other player is to move."""


class NotAPlayer(Refused):
    """The acting player does not play on that board (or may not do this)."""


class GameOver(Refused):
    """The board is finished or cancelled."""


class IllegalMoveRefused(Refused):
    """The rules refuse the move: the game's own words."""


class BoardChanged(Refused):
    """A stale ``#N``: the board is not at the move the player meant."""


class UserExists(Refused):
    """The userid is taken."""


class BadRequest(Refused):
    """A command that cannot work as given (a bad userid, option, vacation...)."""


class NoVacationLeft(Refused):
    """A vacation longer than what is left of the player's yearly allowance."""


class AlreadyProcessed(Exception):
    """The mail was already acted on: answer nothing (not a refusal)."""


class Refuse:
    """An action refused before it starts: a line that is no command, a bad reply address.

    It goes the way of every command (its answer written with the mail's
    Message-ID, so a second copy is not answered again).
    """

    def __init__(self, error: Refused, board: int | None = None) -> None:
        self.error = error
        self.board = board

    def decide(self, world: object, actor: object) -> NoReturn:
        raise self.error
