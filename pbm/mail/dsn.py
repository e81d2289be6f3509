"""Delivery reports to our VERP return paths: which reply bounced for good.

Each reply leaves with its own return path, ``pbm+bounce-ID.TOKEN@domain``
(``addresses.bounce_address``; VERP), so a delivery status notification
(RFC 3464) names the outbox row whatever the reporting server wrote.

Only the mail system writes a report: it comes with the null return path
(RFC 5321 4.5.5) and is a ``multipart/report`` of ``delivery-status``
(RFC 3464 2, RFC 6522) whose per-recipient fields name the address that
failed. Anything else sent to a bounce address (a player who forges a
report to stop his own clock, say) is no report. The body is read with
``flufl.bounce`` to tell a permanent failure from a delay or a success.
"""

from __future__ import annotations

import email
import email.policy
from dataclasses import dataclass

from flufl.bounce import all_failures

from pbm.mail.addresses import parse_bounce_address


@dataclass(frozen=True, slots=True)
class Report:
    """A delivery report for outbox row ``outbox_id``; ``permanent``: it failed for good;
    ``recipients``: the addresses it says failed (lower case); ``genuine``: it came from
    the mail system (null return path, RFC 3464 form)."""

    outbox_id: int
    permanent: bool
    recipients: frozenset[str] = frozenset()
    genuine: bool = True


def _failed_recipients(msg: email.message.Message) -> frozenset[str] | None:
    """The Final-Recipient (and Original-Recipient) addresses of a report's failed
    per-recipient groups (RFC 3464 2.3); None when it is no RFC 3464 report."""
    if msg.get_content_type() != "multipart/report":
        return None
    if str(msg.get_param("report-type") or "").lower() != "delivery-status":
        return None
    found: set[str] = set()
    for part in msg.walk():
        if part.get_content_type() != "message/delivery-status":
            continue
        payload = part.get_payload()
        # The email package parses the status fields into one message per group.
        groups = payload if isinstance(payload, list) else []
        for group in groups:
            if not isinstance(group, email.message.Message):
                continue
            if (group.get("Action") or "").strip().lower() != "failed":
                continue
            for name in ("Final-Recipient", "Original-Recipient"):
                value = group.get(name) or ""
                _, _, address = str(value).partition(";")
                if "@" in address:
                    found.add(address.strip().strip("<>").lower())
    return frozenset(found)


def report_for(
    raw: bytes, rcpt: tuple[str, ...], server_address: str, secret: str, return_path: str = ""
) -> Report | None:
    """The report this mail is, if one of ``rcpt`` is a bounce address of ours (else None).

    A mail to a bounce address whose token is not ours is no report: ``None``.
    One that does not come from the mail system is one, but not ``genuine``.
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
        recipients = _failed_recipients(msg)
    except Exception:  # an unreadable report tells us nothing
        permanent, recipients = frozenset(), None
    genuine = return_path.strip().strip("<>") == "" and recipients is not None
    return Report(row, bool(permanent), recipients or frozenset(), genuine)
