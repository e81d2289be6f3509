"""The players who chose a digest (one mail at set times), and the boards a player's
comforts look at: his boards in play, his challenges that lapsed lately.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime

import sqlalchemy as sa
from sqlmodel import Session

from pbm.model import BoardStatus, Digest
from pbm.store.statements import ANY, Stale, any_of, rowcount
from pbm.store.tables import DigestPlan, table
from pbm.store.tables import Game as GameRow

DIGESTS = table(DigestPlan)
GAMES = table(GameRow)
LAPSED = "lapsed"  # the termination of a challenge nobody answered in time

_PLAN = sa.select(DIGESTS.c.userid, DIGESTS.c.times, DIGESTS.c.zone, DIGESTS.c.next_at)


def load_digest(session: Session, userid: str) -> Digest | None:
    """``userid``'s digest plan, or None: he gets a mail for every move."""
    row = session.execute(_PLAN.where(DIGESTS.c.userid == userid.lower())).first()
    return None if row is None else Digest(*row)


def digest_readers(session: Session, userids: Iterable[str]) -> set[str]:
    """Which of ``userids`` chose a digest."""
    wanted = {u.lower() for u in userids}
    if not wanted:
        return set()
    stmt = sa.select(DIGESTS.c.userid).where(DIGESTS.c.userid.in_(ANY))
    return {str(u) for u in session.execute(stmt, any_of(wanted)).scalars()}


def due_digests(session: Session, now: datetime) -> list[str]:
    """The players whose digest is due at ``now``, the earliest first (an index)."""
    stmt = sa.select(DIGESTS.c.userid).where(DIGESTS.c.next_at <= now)
    return [str(u) for u in session.execute(stmt.order_by(DIGESTS.c.next_at)).scalars()]


def save_digest(session: Session, before: Digest | None, after: Digest | None) -> None:
    """Write a digest plan (``after`` None: gone), only if the row still holds ``before``
    (``Stale`` if not: a digest sent or a plan changed meanwhile)."""
    found = before or after
    key = found.userid if found is not None else ""
    if before is not None:
        same = sa.and_(DIGESTS.c.userid == key, DIGESTS.c.next_at == before.next_at)
        if after is None:
            stmt: sa.Executable = sa.delete(DIGESTS).where(same)
        else:
            stmt = (
                sa.update(DIGESTS)
                .where(same)
                .values(times=after.times, zone=after.zone, next_at=after.next_at)
            )
        if rowcount(session, stmt) != 1:
            raise Stale
    elif after is not None:
        values = {"userid": key, "times": after.times, "zone": after.zone}
        rowcount(session, sa.insert(DIGESTS).values(**values, next_at=after.next_at))


def boards_in_play_of(session: Session, userid: str) -> list[int]:
    """The numbers of the boards ``userid`` plays on that are in play."""
    uid = userid.lower()
    stmt = sa.select(GAMES.c.board).where(
        GAMES.c.status == BoardStatus.ACTIVE, sa.or_(GAMES.c.white == uid, GAMES.c.black == uid)
    )
    return [int(n) for n in session.execute(stmt.order_by(GAMES.c.board)).scalars()]


def lapsed_of(session: Session, userid: str, since: datetime) -> list[tuple[int, str, datetime]]:
    """(board, the other player, when) of ``userid``'s challenges, sent or received, that
    lapsed unanswered since ``since``, the latest first."""
    uid = userid.lower()
    stmt = (
        sa.select(GAMES.c.board, GAMES.c.white, GAMES.c.black, GAMES.c.ended_at)
        .where(
            GAMES.c.status == BoardStatus.CANCELLED,
            GAMES.c.termination == LAPSED,
            GAMES.c.ended_at >= since,
            sa.or_(GAMES.c.white == uid, GAMES.c.black == uid),
        )
        .order_by(GAMES.c.ended_at.desc(), GAMES.c.board)
    )
    return [
        (int(board), str(black if white == uid else white), ended)
        for board, white, black, ended in session.execute(stmt)
    ]
