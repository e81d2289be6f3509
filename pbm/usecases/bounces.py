"""Addresses that bounce: their owners' clocks stop until they write again.

A reply that comes back as a permanent delivery failure (a DSN to the VERP
return path of its outbox row, ``pbm.mail.addresses.bounce_address``) marks
every account of that address as bouncing: a stop of kind ``bounce``
(``pbm.model.Away``), which stands their clocks still (as a vacation does) and
which their boards' mails show. The first command the player sends
afterwards (with his password or a reply address) proves the address
works again and ends the stop (``pbm.usecases.unit``, as it decides).

The report must name that address as the one that failed, and the stop
never lasts longer than the vacation days the player has left this year
(it counts against them as far as it goes): a forged bounce buys no time
that a vacation would not.
"""

from __future__ import annotations

from dataclasses import dataclass

from pbm.model import OPEN_END, Away
from pbm.store.accounts import userids_at
from pbm.store.bounces import bounced_address
from pbm.usecases.auth import Actor
from pbm.usecases.changes import Change, VacationChange
from pbm.usecases.unit import Decision
from pbm.usecases.vacations import time_left
from pbm.usecases.world import World


@dataclass(frozen=True)
class Bounced:
    """Outbox row ``outbox_id`` bounced for good: its address's accounts are marked.

    ``recipients``: the addresses the report says failed; the row's must be one.
    """

    outbox_id: int
    recipients: frozenset[str] = frozenset()
    board = None

    def decide(self, world: World, actor: Actor | None) -> Decision:
        address = bounced_address(world.session, self.outbox_id)
        if address is None:
            return Decision()  # pruned since: too old to matter
        if address.lower() not in self.recipients:
            return Decision()  # a report about another address: not this reply's
        userids = userids_at(world.session, address)
        changes: list[Change] = []
        for userid in userids:
            left = time_left(world, userid, world.now.year)
            if world.account(userid).bouncing or not left:
                continue
            until = min(OPEN_END, world.now + left)
            changes.append(VacationChange(None, Away(userid, world.now, until, kind="bounce")))
        return Decision((), tuple(changes))
