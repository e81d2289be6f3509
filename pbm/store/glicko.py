"""Glicko-2 ratings (``pbm.glicko``) as rows: a player's in a game and variant, how far
the daily rating periods are worked out, and the games that ended in them."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import NamedTuple

import sqlalchemy as sa
from sqlmodel import Session

from pbm.glicko import Glicko
from pbm.model import BoardStatus
from pbm.store.statements import ANY, Row, Stale, any_of, rowcount
from pbm.store.tables import Game as GameRow
from pbm.store.tables import GlickoRating, RatingPeriod, table

GLICKO = table(GlickoRating)
PERIODS = table(RatingPeriod)
GAMES = table(GameRow)
NAME = "glicko-2"


class GlickoStanding(NamedTuple):
    """A player's Glicko-2 rating as it stood at the end of ``rated_until``'s period."""

    userid: str
    glicko: Glicko
    games_played: int
    rated_until: datetime


def rated_until(session: Session) -> datetime | None:
    """Every game that ended before this is rated (None: no period worked out yet)."""
    found: datetime | None = session.execute(
        sa.select(PERIODS.c.rated_until).where(PERIODS.c.name == NAME)
    ).scalar()
    return found


def save_rated_until(session: Session, before: datetime | None, after: datetime) -> None:
    """Write how far the periods are worked out, if nobody wrote it meanwhile (``Stale``)."""
    if before is None:
        rowcount(session, sa.insert(PERIODS).values(name=NAME, rated_until=after))
        return
    stmt = (
        sa.update(PERIODS)
        .where(PERIODS.c.name == NAME, PERIODS.c.rated_until == before)
        .values(rated_until=after)
    )
    if rowcount(session, stmt) != 1:
        raise Stale


def first_ending(session: Session) -> datetime | None:
    """When the first finished game ended."""
    found: datetime | None = session.execute(
        sa.select(sa.func.min(GAMES.c.ended_at)).where(GAMES.c.status == BoardStatus.FINISHED)
    ).scalar()
    return found


def ended_between(session: Session, start: datetime, end: datetime) -> list[Row]:
    """(board, game, variant, white, black, result, ended_at) of the finished games that
    ended in ``[start, end)``, in the order they ended."""
    stmt = (
        sa.select(
            GAMES.c.board,
            GAMES.c.game,
            GAMES.c.variant,
            GAMES.c.white,
            GAMES.c.black,
            GAMES.c.result,
            GAMES.c.ended_at,
        )
        .where(
            GAMES.c.status == BoardStatus.FINISHED,
            GAMES.c.result.is_not(None),
            GAMES.c.ended_at >= start,
            GAMES.c.ended_at < end,
        )
        .order_by(GAMES.c.ended_at, GAMES.c.board)
    )
    return list(session.execute(stmt))


_STANDINGS = sa.select(
    GLICKO.c.userid,
    GLICKO.c.rating,
    GLICKO.c.deviation,
    GLICKO.c.volatility,
    GLICKO.c.games_played,
    GLICKO.c.rated_until,
)


def standings(
    session: Session, game: str | None, variant: str | None, userids: Iterable[str] | None = None
) -> dict[tuple[str, str, str], GlickoStanding]:
    """The Glicko-2 standings by (game, variant, userid): of a game and variant (None:
    any), of some players (None: all)."""
    stmt = sa.select(GLICKO.c.game, GLICKO.c.variant, *_STANDINGS.selected_columns)
    params: dict[str, list[object]] = {}
    if game is not None:
        stmt = stmt.where(GLICKO.c.game == game)
    if variant is not None:
        stmt = stmt.where(GLICKO.c.variant == variant)
    if userids is not None:
        stmt = stmt.where(GLICKO.c.userid.in_(ANY))
        params = any_of(u.lower() for u in userids)
    return {
        (row.game, row.variant, row.userid): GlickoStanding(
            row.userid,
            Glicko(row.rating, row.deviation, row.volatility),
            row.games_played,
            row.rated_until,
        )
        for row in session.execute(stmt, params)
    }


def save_standing(
    session: Session,
    game: str,
    variant: str,
    before: GlickoStanding | None,
    after: GlickoStanding,
) -> None:
    """Write a player's new standing, if it still is ``before`` (``Stale`` if not)."""
    values = {
        "rating": after.glicko.rating,
        "deviation": after.glicko.deviation,
        "volatility": after.glicko.volatility,
        "games_played": after.games_played,
        "rated_until": after.rated_until,
    }
    if before is None:
        key = {"game": game, "variant": variant, "userid": after.userid}
        rowcount(session, sa.insert(GLICKO).values(**key, **values))
        return
    stmt = (
        sa.update(GLICKO)
        .where(
            GLICKO.c.game == game,
            GLICKO.c.variant == variant,
            GLICKO.c.userid == after.userid,
            GLICKO.c.rated_until == before.rated_until,
        )
        .values(**values)
    )
    if rowcount(session, stmt) != 1:
        raise Stale
