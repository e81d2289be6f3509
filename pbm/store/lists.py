"""Boards found by what they are, as rows: the command line's and the mail commands'
board and rating lists, and what the computer player, the timers, the challenges and
the archive look for. Nothing here writes.
"""

from __future__ import annotations

from datetime import datetime

import sqlalchemy as sa
from sqlmodel import Session

from pbm.model import OPEN, AccountStatus, BoardStatus
from pbm.store.statements import Row
from pbm.store.tables import Game as GameRow
from pbm.store.tables import Player, Rating, table

GAMES = table(GameRow)
PLAYERS = table(Player)
RATINGS = table(Rating)


def board_rows(
    session: Session, status: str | None, userid: str | None, game: str | None
) -> list[Row]:
    """The ``games`` rows by number: of ``status`` (None or ``all``: any; ``open``:
    waiting or active), of a player, of a game (its name)."""
    stmt = sa.select(GAMES).order_by(GAMES.c.board)
    if status == "open":
        stmt = stmt.where(GAMES.c.status.in_(OPEN))
    elif status not in (None, "all"):
        stmt = stmt.where(GAMES.c.status == status)
    if game is not None:
        stmt = stmt.where(GAMES.c.game == game)
    if userid is not None:
        uid = userid.lower()
        stmt = stmt.where(sa.or_(GAMES.c.white == uid, GAMES.c.black == uid))
    return list(session.execute(stmt))


def rating_rows(session: Session, game: str | None, variant: str | None) -> list[Row]:
    """The ``ratings`` rows of a game and variant (None: any)."""
    stmt = sa.select(RATINGS)
    if game is not None:
        stmt = stmt.where(RATINGS.c.game == game)
    if variant is not None:
        stmt = stmt.where(RATINGS.c.variant == variant.lower())
    return list(session.execute(stmt))


def open_boards_of(session: Session, address: str) -> list[tuple[str, int]]:
    """(userid, board) of the waiting and active boards of the confirmed accounts whose
    address is ``address``, oldest board first."""
    accounts = (
        sa.select(PLAYERS.c.userid)
        .where(
            sa.func.lower(PLAYERS.c.email) == address.lower(),
            PLAYERS.c.status == AccountStatus.ACTIVE,
        )
        .scalar_subquery()
    )
    found: list[tuple[str, int]] = []
    for seat in (GAMES.c.white, GAMES.c.black):
        stmt = sa.select(seat, GAMES.c.board).where(GAMES.c.status.in_(OPEN), seat.in_(accounts))
        found += [(str(u), int(b)) for u, b in session.execute(stmt)]
    return sorted(found, key=lambda pair: pair[1])[:20]


def game_of(session: Session, board: int) -> str | None:
    """The game a board is of (None: there is no such board)."""
    found: str | None = session.execute(
        sa.select(GAMES.c.game).where(GAMES.c.board == board)
    ).scalar()
    return found


def due_boards(session: Session, now: datetime) -> list[int]:
    """Boards in play whose ``timer_at`` has come, the earliest first (an index)."""
    due = (
        sa.select(GAMES.c.board)
        .where(GAMES.c.status == BoardStatus.ACTIVE, GAMES.c.timer_at <= now)
        .order_by(GAMES.c.timer_at)
    )
    return [int(n) for n in session.execute(due).scalars()]


def challenges_made_before(session: Session, before: datetime) -> list[int]:
    """The waiting boards (challenges) made before ``before``, by number."""
    stmt = sa.select(GAMES.c.board).where(
        GAMES.c.status == BoardStatus.WAITING, GAMES.c.created_at < before
    )
    return [int(b) for b in session.execute(stmt.order_by(GAMES.c.board)).scalars()]


def finished_rows(
    session: Session, since: datetime | None, unarchived: bool
) -> list[tuple[int, str, datetime | None]]:
    """(board, game, archived_at) of the finished games (ended on or after ``since``;
    ``unarchived``: only those not archived yet), by number."""
    stmt = sa.select(GAMES.c.board, GAMES.c.game, GAMES.c.archived_at).where(
        GAMES.c.status == BoardStatus.FINISHED
    )
    if unarchived:
        stmt = stmt.where(GAMES.c.archived_at.is_(None))
    if since is not None:
        ended = sa.func.coalesce(GAMES.c.ended_at, GAMES.c.last_move_at, GAMES.c.created_at)
        stmt = stmt.where(ended >= since)
    rows = session.execute(stmt.order_by(GAMES.c.board)).all()
    return [(int(board), str(game), archived_at) for board, game, archived_at in rows]


# ---------------------------------------------------------------- the computer player


def open_games_between(session: Session, one: str, other: str) -> int:
    """How many waiting and active boards ``one`` and ``other`` play against each other."""
    pair = sa.or_(
        sa.and_(GAMES.c.white == one, GAMES.c.black == other),
        sa.and_(GAMES.c.white == other, GAMES.c.black == one),
    )
    stmt = sa.select(sa.func.count()).where(pair, GAMES.c.status.in_(OPEN))
    return int(session.execute(stmt).scalar_one())


def requests_to(session: Session, uid: str) -> list[int]:
    """The boards where ``uid`` is asked something: a challenge another made, an undo
    of the opponent's; by number."""
    mine = sa.or_(GAMES.c.white == uid, GAMES.c.black == uid)
    asked = sa.select(GAMES.c.board).where(
        mine,
        sa.or_(
            sa.and_(GAMES.c.status == BoardStatus.WAITING, GAMES.c.challenger != uid),
            sa.and_(GAMES.c.status == BoardStatus.ACTIVE, GAMES.c.undo_request_by.is_not(None)),
        ),
    )
    return [int(n) for n in session.execute(asked.order_by(GAMES.c.board)).scalars()]


def turns_of(session: Session, uid: str) -> list[Row]:
    """(board, game, position, computer_level, ply, white, black) of the active boards
    where ``uid`` is to move and no undo waits, the board that has waited longest first."""
    mine = sa.or_(GAMES.c.white == uid, GAMES.c.black == uid)
    # Its turn: the games start from their first position, White (the first seat) to move.
    turn = sa.or_(
        sa.and_(GAMES.c.white == uid, GAMES.c.ply % 2 == 0),
        sa.and_(GAMES.c.black == uid, GAMES.c.ply % 2 == 1),
    )
    moving = sa.select(
        GAMES.c.board,
        GAMES.c.game,
        GAMES.c.position,
        GAMES.c.computer_level,
        GAMES.c.ply,
        GAMES.c.white,
        GAMES.c.black,
    ).where(mine, turn, GAMES.c.status == BoardStatus.ACTIVE, GAMES.c.undo_request_by.is_(None))
    waited = sa.func.coalesce(GAMES.c.last_move_at, GAMES.c.created_at)
    return list(session.execute(moving.order_by(waited, GAMES.c.board)))
