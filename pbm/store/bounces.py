"""What a bounce report needs of the store: the address the bounced reply went to
(its outbox row, named by the report's VERP address)."""

from __future__ import annotations

import sqlalchemy as sa
from sqlmodel import Session

from pbm.store.tables import OutboxMessage, table

OUTBOX = table(OutboxMessage)


def bounced_address(session: Session, outbox_id: int) -> str | None:
    """The address outbox row ``outbox_id`` was sent to (None: pruned since)."""
    found: str | None = session.execute(
        sa.select(OUTBOX.c.to_addr).where(OUTBOX.c.id == outbox_id)
    ).scalar()
    return found
