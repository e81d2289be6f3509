"""The counts behind the site's limits: automatic mail per address and hour.

A small indexed table (``answer_counts``), counted in the same transaction
as the mail it counts: the limits never scan the outbox. The answers held for
an address (``HELD``) are counted and let go for the admin (``pbm player show``,
``pbm player unlock``).
"""

from __future__ import annotations

from datetime import datetime, timedelta

import sqlalchemy as sa
from sqlalchemy.dialects import postgresql, sqlite
from sqlmodel import Session

from pbm.model import OPEN, AccountStatus
from pbm.store.outbox import HELD
from pbm.store.tables import (
    AnswerCount,
    AnswerError,
    Game,
    NoticeCount,
    OutboxMessage,
    Player,
    Subscription,
    table,
)

COUNTS = table(AnswerCount)
NOTICES = table(NoticeCount)
ERRORS = table(AnswerError)
PLAYERS = table(Player)
FOLLOWERS = table(Subscription)
GAMES = table(Game)


def count_notice(session: Session, key: str, day: datetime) -> int:
    """Count one more mail sent on someone's behalf under ``key`` on ``day``; the count."""
    dialect = postgresql if session.get_bind().dialect.name == "postgresql" else sqlite
    stmt = (
        dialect.insert(NOTICES)
        .values(key=key, day=day, sent=1)
        .on_conflict_do_update(
            index_elements=[NOTICES.c.key, NOTICES.c.day], set_={"sent": NOTICES.c.sent + 1}
        )
        .returning(NOTICES.c.sent)
    )
    return int(session.execute(stmt).scalar_one())


def notices_on(session: Session, key: str, day: datetime) -> int:
    """How many mails were counted under ``key`` on ``day``."""
    stmt = sa.select(NOTICES.c.sent).where(NOTICES.c.key == key, NOTICES.c.day == day)
    return int(session.execute(stmt).scalar() or 0)


def answers_since(session: Session, address: str, since: datetime) -> int:
    """The answers counted for ``address`` in the clock hours from ``since``'s on."""
    start = since.replace(minute=0, second=0, microsecond=0)
    stmt = sa.select(sa.func.coalesce(sa.func.sum(COUNTS.c.answers), 0)).where(
        COUNTS.c.address == address.lower(), COUNTS.c.hour > start
    )
    return int(session.execute(stmt).scalar_one())


OUTBOX = table(OutboxMessage)


def count_answer(session: Session, address: str, hour: datetime, error: bool) -> tuple[int, int]:
    """Count one more automatic mail to ``address`` in ``hour``: (answers, errors) after it."""
    dialect = postgresql if session.get_bind().dialect.name == "postgresql" else sqlite
    insert = dialect.insert(COUNTS).values(
        address=address.lower(), hour=hour, answers=1, errors=int(error)
    )
    stmt = insert.on_conflict_do_update(
        index_elements=[COUNTS.c.address, COUNTS.c.hour],
        set_={
            "answers": COUNTS.c.answers + 1,
            "errors": COUNTS.c.errors + int(error),
        },
    ).returning(COUNTS.c.answers, COUNTS.c.errors)
    answers, errors = session.execute(stmt).one()
    return int(answers), int(errors)


def uncount_answer(session: Session, address: str, hour: datetime, error: bool) -> None:
    """Take back a ``count_answer``: the mail was not sent after all (over the limit)."""
    stmt = (
        sa.update(COUNTS)
        .where(COUNTS.c.address == address.lower(), COUNTS.c.hour == hour)
        .values(answers=COUNTS.c.answers - 1, errors=COUNTS.c.errors - int(error))
    )
    session.execute(stmt)


def answers_in(session: Session, address: str, hour: datetime) -> tuple[int, int]:
    """The (answers, errors) counted for ``address`` in ``hour``."""
    row = session.execute(
        sa.select(COUNTS.c.answers, COUNTS.c.errors).where(
            COUNTS.c.address == address.lower(), COUNTS.c.hour == hour
        )
    ).one_or_none()
    return (int(row.answers), int(row.errors)) if row is not None else (0, 0)


def first_error(session: Session, address: str, hour: datetime, digest: str) -> bool:
    """Remember that ``address`` was sent the refusal ``digest`` in ``hour``; False if it was
    sent that one already, this hour or the one before (the same mistake again)."""
    seen = sa.select(ERRORS.c.digest).where(
        ERRORS.c.address == address.lower(),
        ERRORS.c.digest == digest,
        ERRORS.c.hour.in_([hour, hour - timedelta(hours=1)]),
    )
    if session.execute(seen).first() is not None:
        return False
    session.execute(sa.insert(ERRORS).values(address=address.lower(), hour=hour, digest=digest))
    return True


def is_player_address(session: Session, address: str) -> bool:
    """Whether ``address`` is a confirmed account's."""
    stmt = sa.select(PLAYERS.c.userid).where(
        sa.func.lower(PLAYERS.c.email) == address.lower(), PLAYERS.c.status == AccountStatus.ACTIVE
    )
    return session.execute(stmt.limit(1)).first() is not None


def held_for(session: Session, address: str, hour: datetime) -> tuple[int, int]:
    """The (answers, errors) counted for ``address`` in clock hour ``hour`` and the one before."""
    stmt = sa.select(
        sa.func.coalesce(sa.func.sum(COUNTS.c.answers), 0),
        sa.func.coalesce(sa.func.sum(COUNTS.c.errors), 0),
    ).where(COUNTS.c.address == address.lower(), COUNTS.c.hour >= hour - timedelta(hours=1))
    answers, errors = session.execute(stmt).one()
    return int(answers), int(errors)


def forget_address(session: Session, address: str) -> int:
    """Forget what was counted for ``address`` (``pbm player unlock``); rows deleted."""
    done = session.execute(sa.delete(COUNTS).where(COUNTS.c.address == address.lower()))
    session.execute(sa.delete(ERRORS).where(ERRORS.c.address == address.lower()))
    session.execute(sa.delete(NOTICES).where(NOTICES.c.key == f"confirm:{address.lower()}"))
    return int(getattr(done, "rowcount", 0) or 0)


def boards_followed(session: Session, userid: str) -> int:
    """How many boards still in play (or waiting) ``userid`` follows."""
    stmt = (
        sa.select(sa.func.count())
        .select_from(FOLLOWERS.join(GAMES, GAMES.c.board == FOLLOWERS.c.board))
        .where(FOLLOWERS.c.userid == userid.lower(), GAMES.c.status.in_(OPEN))
    )
    return int(session.execute(stmt).scalar_one())


def held_answers(session: Session, address: str, now: datetime) -> int:
    """How many answers to ``address`` the limits hold now."""
    stmt = sa.select(sa.func.count()).where(*_held(address, now))
    return int(session.execute(stmt).scalar_one())


def release_held(session: Session, address: str, now: datetime) -> None:
    """Send the answers held for ``address`` now."""
    session.execute(sa.update(OUTBOX).where(*_held(address, now)).values(next_attempt_at=now))


def _held(address: str, now: datetime) -> list[sa.ColumnElement[bool]]:
    return [
        sa.func.lower(OUTBOX.c.to_addr) == address.lower(),
        OUTBOX.c.status == "pending",
        OUTBOX.c.last_error == HELD,
        OUTBOX.c.next_attempt_at > now,
    ]
