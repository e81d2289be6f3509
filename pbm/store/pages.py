"""What the read-only web site reads (``pbm.usecases.queries.pages``): public boards, players,
ratings and feeds, each list one indexed query a page, as rows.

Only what anyone may see: boards in play or played (``pbm.model.SHOWN``; a
board cancelled after play began too, never a challenge that was not
accepted) and confirmed accounts. Nothing here writes.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

import sqlalchemy as sa
from sqlmodel import Session

from pbm.model import SHOWN, AccountStatus, BoardStatus
from pbm.store.statements import Row
from pbm.store.tables import ClockPause, Move, Player, Vacation, table
from pbm.store.tables import Game as GameRow

GAMES = table(GameRow)
MOVES = table(Move)
PLAYERS = table(Player)
VACATIONS = table(Vacation)
PAUSES = table(ClockPause)


def _shown() -> sa.ColumnElement[bool]:
    """``pbm.usecases.weblinks.shown`` as SQL."""
    return sa.or_(
        GAMES.c.status.in_(SHOWN),
        # Cancelled after a move (a board's last move time is its first move's and later).
        sa.and_(GAMES.c.status == BoardStatus.CANCELLED, GAMES.c.last_move_at.is_not(None)),
    )


def _newest_first() -> list[sa.ColumnElement[object]]:
    return [GAMES.c.last_move_at.desc().nulls_last(), GAMES.c.board.desc()]


def _of(uid: str) -> sa.ColumnElement[bool]:
    return sa.or_(GAMES.c.white == uid, GAMES.c.black == uid)


# The columns of a board's row that say what moves the dates its clocks show without a
# move: its players' latest vacation ends and ids, the site's pauses (``_clocks_stamp``).
STAMP = ("white_away", "black_away", "away", "paused", "resumed")


def _clocks_stamp() -> list[sa.Label[Any]]:
    """Its players' vacations (each his latest end: one replaces the last, or ends early)
    and the site's clock pauses, as columns of a board's row (``STAMP``): a vacation or
    a pause moves the dates on its page, and a page cached before must be made anew."""

    def latest(column: sa.ColumnElement[Any], *where: sa.ColumnElement[bool]) -> Any:
        return sa.select(sa.func.max(column)).where(*where).scalar_subquery()

    white, black, away, paused, resumed = STAMP
    return [
        latest(VACATIONS.c.ends_at, VACATIONS.c.userid == GAMES.c.white).label(white),
        latest(VACATIONS.c.ends_at, VACATIONS.c.userid == GAMES.c.black).label(black),
        latest(VACATIONS.c.id, VACATIONS.c.userid.in_([GAMES.c.white, GAMES.c.black])).label(away),
        latest(PAUSES.c.id).label(paused),
        sa.select(sa.func.count(PAUSES.c.ended_at)).scalar_subquery().label(resumed),
    ]


# Built once, the board's number bound at each read: building and keying this
# statement afresh cost more than reading the row.
_BOARD_ROW = sa.select(GAMES, *_clocks_stamp()).where(
    GAMES.c.board == sa.bindparam("number"), _shown()
)


def board_row(session: Session, number: int) -> Mapping[Any, Any] | None:
    """A shown board's ``games`` row and its ``STAMP`` columns, None if there is none."""
    row = session.execute(_BOARD_ROW, {"number": number}).first()
    return None if row is None else row._mapping


def site_stamp(session: Session) -> tuple[Any, ...]:
    """What the lists are made from: the newest board, move and end (each the end of an
    index: cheap on any number of games)."""
    ends = [
        sa.select(sa.func.max(GAMES.c.ended_at)).where(GAMES.c.status == status).scalar_subquery()
        for status in (BoardStatus.FINISHED, BoardStatus.CANCELLED)
    ]
    newest = sa.select(
        sa.select(sa.func.max(GAMES.c.board)).scalar_subquery(),
        sa.select(sa.func.max(MOVES.c.id)).scalar_subquery(),
        *ends,
    )
    return tuple(session.execute(newest).one())


# ---------------------------------------------------------------- the front page

_ACTIVE = sa.select(GAMES).where(GAMES.c.status == BoardStatus.ACTIVE)
# Two index walks, not one sort of every board in play: SQLite and PostgreSQL put
# NULLs at opposite ends, and an index gives "newest first" only without them.
_MOVED = _ACTIVE.where(GAMES.c.last_move_at.is_not(None)).order_by(
    GAMES.c.last_move_at.desc(), GAMES.c.board.desc()
)
_UNMOVED = _ACTIVE.where(GAMES.c.last_move_at.is_(None)).order_by(GAMES.c.board.desc())


def moved_rows(session: Session, offset: int, limit: int) -> list[Row]:
    """Active boards that have a move, newest move first."""
    return list(session.execute(_MOVED.offset(offset).limit(limit)))


def moved_count(session: Session) -> int:
    """How many active boards have a move."""
    count = sa.select(sa.func.count()).select_from(_MOVED.subquery())
    return int(session.execute(count).scalar_one())


def unmoved_rows(session: Session, offset: int, limit: int) -> list[Row]:
    """Active boards without a move yet, newest first."""
    return list(session.execute(_UNMOVED.offset(offset).limit(limit)))


def finished_rows(session: Session, limit: int) -> list[Row]:
    """The latest finished boards, latest ended first."""
    stmt = (
        sa.select(GAMES)
        .where(GAMES.c.status == BoardStatus.FINISHED)
        .order_by(GAMES.c.ended_at.desc(), GAMES.c.board.desc())
        .limit(limit)
    )
    return list(session.execute(stmt))


# ---------------------------------------------------------------- players


def confirmed_account(session: Session, uid: str) -> tuple[str, str] | None:
    """(userid, display) of the confirmed account ``uid``, None for anyone else."""
    row = session.execute(
        sa.select(PLAYERS.c.userid, PLAYERS.c.display).where(
            PLAYERS.c.userid == uid, PLAYERS.c.status == AccountStatus.ACTIVE
        )
    ).first()
    return None if row is None else (str(row.userid), str(row.display))


def shown_rows_of(session: Session, uid: str) -> list[Row]:
    """The shown boards of player ``uid``, newest move first."""
    stmt = sa.select(GAMES).where(_of(uid), _shown()).order_by(*_newest_first())
    return list(session.execute(stmt))


def rated_rows_of(session: Session, uid: str) -> Sequence[Row]:
    """The rated games of player ``uid``, latest ended first."""
    return session.execute(
        sa.select(GAMES)
        .where(_of(uid), GAMES.c.white_rating_after.is_not(None))
        .order_by(GAMES.c.ended_at.desc().nulls_last(), GAMES.c.board.desc())
    ).all()


# ---------------------------------------------------------------- the archive, feeds


def archive_rows(
    session: Session,
    offset: int,
    limit: int,
    game: str | None = None,
    variant: str | None = None,
    uid: str | None = None,
    since: datetime | None = None,
    until: datetime | None = None,
) -> list[Row]:
    """Finished games, the latest first, filtered (``game``, ``variant`` lower-case)."""
    stmt = sa.select(GAMES).where(GAMES.c.status == BoardStatus.FINISHED)
    if game:
        stmt = stmt.where(GAMES.c.game == game)
    if variant:
        stmt = stmt.where(GAMES.c.variant == variant)
    if uid:
        stmt = stmt.where(_of(uid))
    if since is not None:
        stmt = stmt.where(GAMES.c.ended_at >= since)
    if until is not None:
        stmt = stmt.where(GAMES.c.ended_at < until)
    stmt = (
        # A finished game always has its end (migration 0003 filled in the old ones):
        # no NULLs to place, so the index gives the order.
        stmt.order_by(GAMES.c.ended_at.desc(), GAMES.c.board.desc()).offset(offset).limit(limit)
    )
    return list(session.execute(stmt))


def feed_rows(session: Session, limit: int, number: int | None, uid: str | None) -> Sequence[Row]:
    """(board, game, ply, userid, notation, created_at) of the latest turns of the shown
    boards (of board ``number``, of player ``uid``), newest first."""
    stmt = (
        sa.select(MOVES.c.board, GAMES.c.game, MOVES.c.ply, MOVES.c.userid, MOVES.c.notation)
        .add_columns(MOVES.c.created_at)
        .join(GAMES, GAMES.c.board == MOVES.c.board)
        .where(_shown())
        .order_by(MOVES.c.created_at.desc(), MOVES.c.id.desc())
        .limit(limit)
    )
    if number is not None:
        stmt = stmt.where(MOVES.c.board == number)
    if uid is not None:
        stmt = stmt.where(_of(uid))
    return session.execute(stmt).all()


def ended_rows(
    session: Session, limit: int, number: int | None = None, uid: str | None = None
) -> list[Row]:
    """The ``games`` rows of the latest games that ended, latest first: finished ones (of
    player ``uid``); for board ``number``, its own end (finished, or cancelled once play
    began)."""
    if number is not None:
        stmt = sa.select(GAMES).where(
            GAMES.c.board == number, _shown(), GAMES.c.status != BoardStatus.ACTIVE
        )
    else:
        stmt = sa.select(GAMES).where(GAMES.c.status == BoardStatus.FINISHED)
    if uid is not None:
        stmt = stmt.where(_of(uid))
    stmt = stmt.order_by(GAMES.c.ended_at.desc().nulls_last(), GAMES.c.board.desc())
    return list(session.execute(stmt.limit(limit)))


def display_names(session: Session, userids: set[str]) -> dict[str, str]:
    """The display names of the accounts of ``userids`` that exist."""
    return dict(
        session.execute(
            sa.select(PLAYERS.c.userid, PLAYERS.c.display).where(PLAYERS.c.userid.in_(userids))
        ).all()
    )
