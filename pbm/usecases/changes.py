"""Saving what a decision made: the difference between the values before and after.

A decision never writes: it returns new values (``pbm.usecases.world``), and
a change here writes the difference between the old value and the new one,
guarded by a compare-and-set. A board's row is updated only if it still has
the version the decision was made on (every change of a board bumps it); an
account's columns only if they still hold what the decision saw. When that
fails the value changed meanwhile: ``Stale`` is raised, the unit of work
rolls the command back and decides it again on fresh values.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any, Protocol

import sqlalchemy as sa
from sqlmodel import Session

from pbm.usecases.clocks import next_timer
from pbm.usecases.world import (
    FAILURES,
    FOLLOWERS,
    GAMES,
    GRANTS,
    MOVES,
    PAUSES,
    PLAYERS,
    QUEUE,
    RATINGS,
    ROW_FIELDS,
    VACATIONS,
    Account,
    Away,
    Board,
    Key,
    Pause,
    account_key,
    board_key,
)


class Stale(Exception):
    """What a decision was made on has changed since; decide again."""


class Change(Protocol):
    """One thing a decision writes."""

    @property
    def keys(self) -> frozenset[Key]:
        """What it writes: decisions that read any of these must be made again."""
        ...

    def save(self, session: Session) -> None:
        """Write it; ``Stale`` if what it was decided on changed meanwhile."""
        ...


def _column(name: str) -> str:
    return "board" if name == "number" else name


def _execute(session: Session, stmt: sa.Executable) -> int:
    """Run a statement; its row count.

    A unique key taken meanwhile (a board number, a userid) raises the
    database's ``IntegrityError``, which the unit of work takes as ``Stale``.
    """
    return int(session.execute(stmt).rowcount)  # type: ignore[attr-defined]


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
        before, after = self.before, self.after
        # When its clock may next be due: from the board as it is to be, never decided.
        after = replace(after, timer_at=next_timer(after))
        row = {_column(f): getattr(after, f) for f in ROW_FIELDS}
        if before is None:
            row["version"] = 0
            _execute(session, sa.insert(GAMES).values(row))
        else:
            changed = {
                _column(f): getattr(after, f)
                for f in ROW_FIELDS
                if f != "version" and getattr(before, f) != getattr(after, f)
            }
            if not changed and self._same_around(before, after):
                return
            stmt = (
                sa.update(GAMES)
                .where(GAMES.c.board == before.number, GAMES.c.version == before.version)
                .values(**changed, version=before.version + 1)
            )
            if _execute(session, stmt) != 1:
                raise Stale
        self._save_moves(session)
        self._save_followers(session)
        self._save_queue(session)
        self._save_standings(session)

    @staticmethod
    def _same_around(before: Board, after: Board) -> bool:
        return (before.moves, before.followers, before.queue, before.standings) == (
            after.moves,
            after.followers,
            after.queue,
            after.standings,
        )

    def _save_moves(self, session: Session) -> None:
        old = set(self.before.moves) if self.before is not None else set()
        new = set(self.after.moves)
        number = self.after.number
        gone = sorted(m.ply for m in old - new)
        if gone:
            session.execute(sa.delete(MOVES).where(MOVES.c.board == number, MOVES.c.ply.in_(gone)))
        added = sorted(new - old, key=lambda m: m.ply)
        if added:
            _execute(
                session,
                sa.insert(MOVES).values([{"board": number, **_fields(m)} for m in added]),
            )

    def _save_followers(self, session: Session) -> None:
        old = set(self.before.followers) if self.before is not None else set()
        new = set(self.after.followers)
        gone = [f.id for f in old - new if f.id is not None]
        if gone:
            session.execute(sa.delete(FOLLOWERS).where(FOLLOWERS.c.id.in_(gone)))
        added = [f for f in self.after.followers if f in new - old]
        if added:
            rows = [{"board": self.after.number, **_fields(f, without="id")} for f in added]
            session.execute(sa.insert(FOLLOWERS), rows)

    def _save_queue(self, session: Session) -> None:
        old = set(self.before.queue) if self.before is not None else set()
        new = set(self.after.queue)
        gone = [q.id for q in old - new if q.id is not None]
        if gone:
            session.execute(sa.delete(QUEUE).where(QUEUE.c.id.in_(gone)))
        added = [q for q in self.after.queue if q in new - old]
        if added:
            rows = [{"board": self.after.number, **_fields(q, without="id")} for q in added]
            session.execute(sa.insert(QUEUE), rows)

    def _save_standings(self, session: Session) -> None:
        before = self.before.standings if self.before is not None else {}
        after = self.after
        for userid, standing in after.standings.items():
            old = before.get(userid)
            if old == standing:
                continue
            values = {"rating": standing.rating, "games_played": standing.games_played}
            if old is None:
                key = {"game": after.game, "variant": after.variant, "userid": userid}
                _execute(session, sa.insert(RATINGS).values(**key, **values))
                continue
            stmt = (
                sa.update(RATINGS)
                .where(
                    RATINGS.c.game == after.game,
                    RATINGS.c.variant == after.variant,
                    RATINGS.c.userid == userid,
                    RATINGS.c.games_played == old.games_played,
                )
                .values(**values)
            )
            if _execute(session, stmt) != 1:
                raise Stale  # a game of his ended meanwhile: rate this one afresh


def _insert_unless(
    session: Session, table: sa.Table, row: dict[str, Any], exists: sa.Exists
) -> None:
    """INSERT ``row`` unless ``exists`` holds, in one statement; ``Stale`` if it held.

    RETURNING, not the row count: drivers do not all count an INSERT ... SELECT.
    """
    select = sa.select(*(sa.literal(v, type_=table.c[k].type) for k, v in row.items()))
    stmt = sa.insert(table).from_select(list(row), select.where(~exists))
    if session.execute(stmt.returning(*table.primary_key.columns)).first() is None:
        raise Stale


def _fields(value: Any, without: str = "") -> dict[str, Any]:
    return {k: getattr(value, k) for k in value.__slots__ if k != without}


@dataclass(frozen=True)
class AccountChange:
    """An account as it was (None: new) and as it is to be."""

    before: Account | None
    after: Account

    @property
    def keys(self) -> frozenset[Key]:
        return frozenset({account_key(self.after.userid)})

    def save(self, session: Session) -> None:
        row = _fields(self.after, without="bouncing")  # not a column: read from its stops
        if self.before is None:
            _execute(session, sa.insert(PLAYERS).values(row))
            return
        before = _fields(self.before, without="bouncing")
        changed = {k: v for k, v in row.items() if before[k] != v}
        if not changed:
            return
        # Compare-and-set on what changes: it must still be as the decision saw it.
        stmt = (
            sa.update(PLAYERS)
            .where(
                PLAYERS.c.userid == self.before.userid,
                *(PLAYERS.c[k] == before[k] for k in changed),
            )
            .values(**changed)
        )
        if _execute(session, stmt) != 1:
            raise Stale


@dataclass(frozen=True)
class FailureChange:
    """A wrong password given for an account, remembered for its lockout."""

    userid: str
    failed_at: datetime

    @property
    def keys(self) -> frozenset[Key]:
        return frozenset({("failures", self.userid)})

    def save(self, session: Session) -> None:
        session.execute(sa.insert(FAILURES).values(userid=self.userid, failed_at=self.failed_at))


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
        stmt = (
            sa.update(GAMES)
            .where(GAMES.c.board == self.board.number, GAMES.c.version == self.board.version)
            .values(timer_at=self.at)
        )
        if _execute(session, stmt) != 1:
            raise Stale


@dataclass(frozen=True)
class VacationChange:
    """A vacation begun (``before`` None) or cut short."""

    before: Away | None
    after: Away

    @property
    def keys(self) -> frozenset[Key]:
        return frozenset({account_key(self.after.userid)})

    def save(self, session: Session) -> None:
        if self.before is None:
            # Compare-and-set for a new row: only if no vacation of his runs or is to come
            # (one decided meanwhile would be overlapped).
            new = self.after
            running = sa.exists().where(
                VACATIONS.c.userid == new.userid,
                VACATIONS.c.kind == new.kind,
                VACATIONS.c.ends_at > new.starts_at,
            )
            _insert_unless(session, VACATIONS, _fields(new, without="id"), running)
            return
        stmt = (
            sa.update(VACATIONS)
            .where(VACATIONS.c.id == self.before.id, VACATIONS.c.ends_at == self.before.ends_at)
            .values(ends_at=self.after.ends_at)
        )
        if _execute(session, stmt) != 1:
            raise Stale
        if self.after.ends_at < self.before.ends_at:
            # Cut short, his clocks may run out sooner: no sooner than it now ends, though,
            # so that is early enough for the timers to look (``clocks.next_timer``).
            ends = self.after.ends_at
            session.execute(
                sa.update(GAMES)
                .where(
                    GAMES.c.status == "active",
                    sa.or_(GAMES.c.white == self.after.userid, GAMES.c.black == self.after.userid),
                    sa.or_(GAMES.c.timer_at.is_(None), GAMES.c.timer_at > ends),
                )
                .values(timer_at=ends)
            )


@dataclass(frozen=True)
class PauseChange:
    """A site-wide clock pause begun (``before`` None) or ended."""

    before: Pause | None
    after: Pause

    @property
    def keys(self) -> frozenset[Key]:
        return frozenset({("pauses", "all")})

    def save(self, session: Session) -> None:
        if self.before is None:
            # Compare-and-set for a new row: only while no pause is open.
            open_ = sa.exists().where(PAUSES.c.ended_at.is_(None))
            _insert_unless(session, PAUSES, _fields(self.after, without="id"), open_)
            return
        stmt = (
            sa.update(PAUSES)
            .where(PAUSES.c.id == self.before.id, PAUSES.c.ended_at.is_(None))
            .values(ended_at=self.after.ended_at)
        )
        if _execute(session, stmt) != 1:
            raise Stale


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
        row = {"userid": self.userid, "year": self.year, "days": self.days, "granted_at": self.at}
        session.execute(sa.insert(GRANTS).values(row))
