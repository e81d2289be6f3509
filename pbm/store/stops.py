"""What stops the clocks: players' vacations (and bounces, and spent days), the vacation
days an admin grants, and the site-wide pauses; loaded as values (``pbm.model.Away``,
``Pause``) and saved.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime

import sqlalchemy as sa
from sqlmodel import Session

from pbm.model import Away, BoardStatus, Pause
from pbm.store.statements import ANY, Stale, any_of, fields_of, insert_unless, rowcount
from pbm.store.tables import ClockPause, Vacation, VacationGrant, table
from pbm.store.tables import Game as GameRow

GAMES = table(GameRow)
VACATIONS = table(Vacation)
GRANTS = table(VacationGrant)
PAUSES = table(ClockPause)

_PAUSES = sa.select(PAUSES.c.started_at, PAUSES.c.ended_at, PAUSES.c.id).order_by(PAUSES.c.id)


def load_pauses(session: Session) -> tuple[Pause, ...]:
    """Every site-wide clock pause (a handful over a site's life)."""
    return tuple(Pause(*row) for row in session.execute(_PAUSES))


_VACATIONS = (
    sa.select(
        VACATIONS.c.userid,
        VACATIONS.c.starts_at,
        VACATIONS.c.ends_at,
        VACATIONS.c.id,
        VACATIONS.c.kind,
    )
    .where(VACATIONS.c.userid.in_(ANY))
    .order_by(VACATIONS.c.id)
)
_VACATIONS_ENDING = _VACATIONS.where(VACATIONS.c.ends_at > sa.bindparam("after"))


def load_vacations(
    session: Session, userids: Iterable[str], ending_after: datetime | None = None
) -> tuple[Away, ...]:
    """The vacations of ``userids`` (those ending after ``ending_after``, if given)."""
    wanted = set(userids)
    if not wanted:
        return ()
    if ending_after is None:
        rows = session.execute(_VACATIONS, any_of(wanted))
    else:
        rows = session.execute(_VACATIONS_ENDING, {**any_of(wanted), "after": ending_after})
    return tuple(Away(*row) for row in rows)


def granted_days(session: Session, userid: str, year: int) -> int:
    """The vacation days an admin gave ``userid`` for ``year``."""
    stmt = sa.select(sa.func.coalesce(sa.func.sum(GRANTS.c.days), 0)).where(
        GRANTS.c.userid == userid.lower(), GRANTS.c.year == year
    )
    return int(session.execute(stmt).scalar_one())


def save_vacation(session: Session, before: Away | None, after: Away) -> None:
    """A vacation begun (``before`` None) or cut short; ``Stale`` if it changed meanwhile."""
    if before is None:
        # Compare-and-set for a new row: only if no vacation of his runs or is to come
        # (one decided meanwhile would be overlapped).
        running = sa.exists().where(
            VACATIONS.c.userid == after.userid,
            VACATIONS.c.kind == after.kind,
            VACATIONS.c.ends_at > after.starts_at,
        )
        insert_unless(session, VACATIONS, fields_of(after, without="id"), running)
        return
    stmt = (
        sa.update(VACATIONS)
        .where(VACATIONS.c.id == before.id, VACATIONS.c.ends_at == before.ends_at)
        .values(ends_at=after.ends_at)
    )
    if rowcount(session, stmt) != 1:
        raise Stale
    if after.ends_at < before.ends_at:
        # Cut short, his clocks may run out sooner: no sooner than it now ends, though,
        # so that is early enough for the timers to look (``clocks.next_timer``).
        ends = after.ends_at
        session.execute(
            sa.update(GAMES)
            .where(
                GAMES.c.status == BoardStatus.ACTIVE,
                sa.or_(GAMES.c.white == after.userid, GAMES.c.black == after.userid),
                sa.or_(GAMES.c.timer_at.is_(None), GAMES.c.timer_at > ends),
            )
            .values(timer_at=ends)
        )


def save_pause(session: Session, before: Pause | None, after: Pause) -> None:
    """A site-wide clock pause begun (``before`` None) or ended; ``Stale`` if another
    began or it ended meanwhile."""
    if before is None:
        # Compare-and-set for a new row: only while no pause is open.
        open_ = sa.exists().where(PAUSES.c.ended_at.is_(None))
        insert_unless(session, PAUSES, fields_of(after, without="id"), open_)
        return
    stmt = (
        sa.update(PAUSES)
        .where(PAUSES.c.id == before.id, PAUSES.c.ended_at.is_(None))
        .values(ended_at=after.ended_at)
    )
    if rowcount(session, stmt) != 1:
        raise Stale


def add_grant(session: Session, userid: str, year: int, days: int, at: datetime) -> None:
    """Vacation days given to ``userid`` for ``year``."""
    row = {"userid": userid, "year": year, "days": days, "granted_at": at}
    session.execute(sa.insert(GRANTS).values(row))
