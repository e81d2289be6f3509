"""Saving what a decision made: the difference between the values before and after.

A decision never writes: it returns new values (``pbm.model``), and a change
here has the store write the difference between the old value and the new
one, guarded by a compare-and-set (``pbm.store.boards``, ``accounts``,
``stops``). A board's row is updated only if it still has the version the
decision was made on (every change of a board bumps it); an account's columns
only if they still hold what the decision saw. When that fails the value
changed meanwhile: ``Stale`` is raised, the unit of work rolls the command
back and decides it again on fresh values.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime
from typing import Protocol

from pbm.model import Account, Away, Board, Key, Pause, account_key, board_key
from pbm.store import Session
from pbm.store.accounts import add_failure, save_account
from pbm.store.answer_counts import count_notice
from pbm.store.boards import save_board, save_timer
from pbm.store.stops import add_grant, save_pause, save_vacation
from pbm.usecases.clocks import next_timer


class Change(Protocol):
    """One thing a decision writes."""

    @property
    def keys(self) -> frozenset[Key]:
        """What it writes: decisions that read any of these must be made again."""
        ...

    def save(self, session: Session) -> None:
        """Write it; ``Stale`` if what it was decided on changed meanwhile."""
        ...


@dataclass(frozen=True)
class BoardChange:
    """A board as it was (None: new) and as it is to be."""

    before: Board | None
    after: Board

    @property
    def keys(self) -> frozenset[Key]:
        new = {("boards", "new")} if self.before is None else set()
        return frozenset({board_key(self.after.number), *new})

    def save(self, session: Session) -> None:
        # When its clock may next be due: from the board as it is to be, never decided.
        save_board(session, self.before, replace(self.after, timer_at=next_timer(self.after)))


@dataclass(frozen=True)
class AccountChange:
    """An account as it was (None: new) and as it is to be."""

    before: Account | None
    after: Account

    @property
    def keys(self) -> frozenset[Key]:
        return frozenset({account_key(self.after.userid)})

    def save(self, session: Session) -> None:
        save_account(session, self.before, self.after)


@dataclass(frozen=True)
class NoticeSent:
    """One more mail sent on someone's behalf under ``key`` on ``day`` (a password reset:
    ``reset:USERID``), for the limits that count them."""

    key: str
    day: datetime

    @property
    def keys(self) -> frozenset[Key]:
        return frozenset({("notices", self.key)})

    def save(self, session: Session) -> None:
        count_notice(session, self.key, self.day)


@dataclass(frozen=True)
class FailureChange:
    """A wrong password given for an account, remembered for its lockout."""

    userid: str
    failed_at: datetime

    @property
    def keys(self) -> frozenset[Key]:
        return frozenset({("failures", self.userid)})

    def save(self, session: Session) -> None:
        add_failure(session, self.userid, self.failed_at)


@dataclass(frozen=True)
class TimerChange:
    """When a board's clock may next be due, looked at again by the timers (``at``: from
    the stops known now), on a board that has not changed since it was read."""

    board: Board
    at: datetime | None

    @property
    def keys(self) -> frozenset[Key]:
        return frozenset({board_key(self.board.number)})

    def save(self, session: Session) -> None:
        save_timer(session, self.board, self.at)


@dataclass(frozen=True)
class VacationChange:
    """A vacation begun (``before`` None) or cut short."""

    before: Away | None
    after: Away

    @property
    def keys(self) -> frozenset[Key]:
        return frozenset({account_key(self.after.userid)})

    def save(self, session: Session) -> None:
        save_vacation(session, self.before, self.after)


@dataclass(frozen=True)
class PauseChange:
    """A site-wide clock pause begun (``before`` None) or ended."""

    before: Pause | None
    after: Pause

    @property
    def keys(self) -> frozenset[Key]:
        return frozenset({("pauses", "all")})

    def save(self, session: Session) -> None:
        save_pause(session, self.before, self.after)


@dataclass(frozen=True)
class GrantChange:
    """Vacation days given to a player for a year (``pbm player vacation --grant``)."""

    userid: str
    year: int
    days: int
    at: datetime

    @property
    def keys(self) -> frozenset[Key]:
        return frozenset({account_key(self.userid)})

    def save(self, session: Session) -> None:
        add_grant(session, self.userid, self.year, self.days, self.at)
