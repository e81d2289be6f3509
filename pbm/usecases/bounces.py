"""Addresses that bounce: their owners' clocks stop until they write again.

A reply that comes back as a permanent delivery failure (a DSN to the VERP
return path of its outbox row, ``pbm.mail.addresses.bounce_address``) marks
every account of that address as bouncing: an open stop of kind ``bounce``
(``world.Away``), which stands their clocks still (as a vacation does) and
which their boards' mails show. The first command the player sends
afterwards (with his password or a reply address) proves the address
works again and ends the stop (``pbm.usecases.unit``, as it decides).
"""

from __future__ import annotations

from dataclasses import dataclass

import sqlalchemy as sa

from pbm.store.tables import OutboxMessage, table
from pbm.usecases.auth import Actor
from pbm.usecases.changes import Change, VacationChange
from pbm.usecases.unit import Decision
from pbm.usecases.world import OPEN_END, PLAYERS, Away, World

OUTBOX = table(OutboxMessage)


@dataclass(frozen=True)
class Bounced:
    """Outbox row ``outbox_id`` bounced for good: its address's accounts are marked."""

    outbox_id: int
    board = None

    def decide(self, world: World, actor: Actor | None) -> Decision:
        address = world.session.execute(
            sa.select(OUTBOX.c.to_addr).where(OUTBOX.c.id == self.outbox_id)
        ).scalar()
        if address is None:
            return Decision()  # pruned since: too old to matter
        userids = world.session.execute(
            sa.select(PLAYERS.c.userid).where(sa.func.lower(PLAYERS.c.email) == address.lower())
        ).scalars()
        changes: list[Change] = []
        for userid in userids:
            if world.account(userid).bouncing:
                continue
            changes.append(VacationChange(None, Away(userid, world.now, OPEN_END, kind="bounce")))
        return Decision((), tuple(changes))
