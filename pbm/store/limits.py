"""The counts behind the site's limits: automatic mail per address and hour.

A small indexed table (``answer_counts``), counted in the same transaction
as the mail it counts: the limits never scan the outbox.
"""

from __future__ import annotations

from datetime import datetime

import sqlalchemy as sa
from sqlalchemy.dialects import postgresql, sqlite
from sqlmodel import Session

from pbm.store.tables import AnswerCount, table

COUNTS = table(AnswerCount)


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
