"""Delivery reports to our VERP return paths: which reply bounced for good.

Each reply leaves with its own return path, ``pbm+bounce-ID.TOKEN@domain``
(``addresses.bounce_address``; VERP), so a delivery status notification
(RFC 3464) names the outbox row whatever the reporting server wrote. Its
body is read with ``flufl.bounce`` only to tell a permanent failure from a
delay or a success report.
"""

from __future__ import annotations

import email
import email.policy
from dataclasses import dataclass

from flufl.bounce import all_failures

from pbm.mail.addresses import parse_bounce_address


@dataclass(frozen=True, slots=True)
class Report:
    """A delivery report for outbox row ``outbox_id``; ``permanent``: it failed for good."""

    outbox_id: int
    permanent: bool


def report_for(
    raw: bytes, rcpt: tuple[str, ...], server_address: str, secret: str
) -> Report | None:
    """The report this mail is, if one of ``rcpt`` is a bounce address of ours (else None).

    A mail to a bounce address whose token is not ours is no report: ``None``.
    """
    row = next(
        (
            found
            for address in rcpt
            if (found := parse_bounce_address(address, server_address, secret)) is not None
        ),
        None,
    )
    if row is None:
        return None
    try:
        msg = email.message_from_bytes(raw, policy=email.policy.compat32)
        _, permanent = all_failures(msg)
    except Exception:  # an unreadable report tells us nothing
        permanent = frozenset()
    return Report(row, bool(permanent))
