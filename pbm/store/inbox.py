"""The inbox queue: received mail, acted on by inbox runners, marked when done.

A mail is stored before the listener answers 250 (``add``). An inbox runner
claims the oldest waiting mail under a lease (``claim_next``: on PostgreSQL
a row another runner is claiming is skipped, ``FOR UPDATE SKIP LOCKED``),
works it out on a snapshot, then, in one write transaction, writes what it
caused and marks it (``finish``). A runner that dies before its commit leaves
the mail claimed until the lease ends; then it is claimed again. The
Message-IDs of command mails acted on are remembered (``remember``), so a
mail delivered twice acts once.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime, timedelta
from typing import NamedTuple

import sqlalchemy as sa
from sqlalchemy.dialects import postgresql, sqlite
from sqlmodel import Session

from pbm.store.tables import InboxMessage, ProcessedMessage, UTCDateTime, table

INBOX = table(InboxMessage)
_SEEN = table(ProcessedMessage)
STATUSES = ("new", "done", "ignored", "failed")


class Received(NamedTuple):
    """A mail as the listener got it: the bytes and the SMTP envelope."""

    raw: bytes
    mail_from: str
    rcpt_to: Sequence[str]


class WaitingMail(NamedTuple):
    """An inbox row to be processed."""

    id: int
    raw: bytes
    mail_from: str
    rcpt_to: str  # the envelope recipients, one per line
    attempts: int = 0  # how often working it out failed before


class Finished(NamedTuple):
    """How an inbox row ended: its status and note, the Message-ID read from it and the
    mail as it is kept from now on (``raw``; None: as it came)."""

    inbox_id: int
    status: str  # done | ignored | failed
    note: str | None = None
    message_id: str | None = None  # None: leave the row's as it is
    processed_by: str | None = None  # the runner
    raw: bytes | None = None


def add(session: Session, mails: Sequence[Received], now: datetime) -> list[int]:
    """Store received mails as ``new`` rows in one INSERT; their ids, in the order given."""
    if not mails:
        return []
    rows = [
        {
            "received_at": now,
            "mail_from": mail.mail_from,
            "rcpt_to": "\n".join(mail.rcpt_to),
            "raw": mail.raw,
            "status": "new",
        }
        for mail in mails
    ]
    stmt = sa.insert(INBOX).returning(INBOX.c.id, sort_by_parameter_order=True)
    return [int(i) for i in session.execute(stmt, rows).scalars()]


def claim_next(
    session: Session, worker: str, now: datetime, lease: timedelta
) -> WaitingMail | None:
    """The oldest waiting mail that no other runner's live lease holds, claimed for
    ``worker`` until ``now + lease``; None when none waits. A mail ``worker`` claimed
    already (its last try met a database fault) is its own to take again."""
    free = sa.or_(
        INBOX.c.claimed_until.is_(None),
        INBOX.c.claimed_until < now,
        INBOX.c.claimed_by == worker,
    )
    found = session.execute(
        sa.select(INBOX.c.id)
        .where(INBOX.c.status == "new", free)
        .order_by(INBOX.c.id)
        .limit(1)
        .with_for_update(skip_locked=True)
    ).scalar()
    if found is None:
        return None
    row = session.execute(
        sa.update(INBOX)
        .where(INBOX.c.id == found)
        .values(claimed_by=worker, claimed_until=now + lease)
        .returning(INBOX.c.id, INBOX.c.raw, INBOX.c.mail_from, INBOX.c.rcpt_to, INBOX.c.attempts)
    ).one()
    return WaitingMail(int(row.id), row.raw, row.mail_from, row.rcpt_to, int(row.attempts))


def still_mine(session: Session, inbox_id: int, worker: str) -> bool:
    """Whether the mail still waits under ``worker``'s claim, locked for the caller's
    transaction: false when another runner took it over (the lease ran out)."""
    stmt = (
        sa.select(INBOX.c.id)
        .where(INBOX.c.id == inbox_id, INBOX.c.status == "new", INBOX.c.claimed_by == worker)
        .with_for_update()
    )
    return session.execute(stmt).first() is not None


def count_attempt(session: Session, inbox_id: int) -> None:
    """One more failed attempt at working out a mail: it waits again, for any runner."""
    stmt = (
        sa.update(INBOX)
        .where(INBOX.c.id == inbox_id)
        .values(attempts=INBOX.c.attempts + 1, claimed_by=None, claimed_until=None)
    )
    session.execute(stmt)


def release_dead(session: Session, dead: Callable[[str], bool]) -> int:
    """Give back waiting mails whose claimer (``claimed_by``) ``dead`` says has died."""
    stmt = sa.select(INBOX.c.id, INBOX.c.claimed_by).where(
        INBOX.c.status == "new", INBOX.c.claimed_by.is_not(None)
    )
    gone = [int(i) for i, by in session.execute(stmt) if dead(str(by))]
    if gone:
        session.execute(
            sa.update(INBOX).where(INBOX.c.id.in_(gone)).values(claimed_by=None, claimed_until=None)
        )
    return len(gone)


def finish(
    session: Session, finished: Sequence[Finished], now: datetime, *, erase: bool = False
) -> int:
    """Mark rows ``done``, ``ignored`` or ``failed`` with one statement; how many were marked.

    ``erase``: forget their raw mail at once (``server.keep_raw_days = 0``).
    """
    for row in finished:
        if row.status not in STATUSES[1:]:
            raise ValueError(f"bad inbox status {row.status!r}")
    if not finished:
        return 0
    stmt = (
        sa.update(INBOX)
        .where(INBOX.c.id == sa.bindparam("inbox_id"))
        .values(
            status=sa.bindparam("status"),
            note=sa.bindparam("note"),
            processed_at=sa.bindparam("processed_at", type_=UTCDateTime),
            message_id=sa.func.coalesce(
                sa.bindparam("message_id", type_=sa.String), INBOX.c.message_id
            ),
            processed_by=sa.bindparam("processed_by"),
            raw=(
                sa.literal(b"")
                if erase
                else sa.func.coalesce(sa.bindparam("raw", type_=sa.LargeBinary), INBOX.c.raw)
            ),
        )
    )
    params = [{**row._asdict(), "processed_at": now} for row in finished]
    return int(session.connection().execute(stmt, params).rowcount)


def remember(session: Session, message_id: str, now: datetime) -> bool:
    """Record that the command mail ``message_id`` is acted on; False if it already was.

    ``ON CONFLICT DO NOTHING``: the caller's transaction goes on either way.
    """
    dialect = postgresql if session.get_bind().dialect.name == "postgresql" else sqlite
    stmt = (
        dialect.insert(_SEEN)
        .values(message_id=message_id, processed_at=now)
        .on_conflict_do_nothing()
        .returning(_SEEN.c.message_id)
    )
    return session.execute(stmt).first() is not None


def seen(session: Session, message_id: str) -> bool:
    """Whether the command mail ``message_id`` was acted on."""
    stmt = sa.select(_SEEN.c.message_id).where(_SEEN.c.message_id == message_id)
    return session.execute(stmt).first() is not None


def counts(session: Session) -> dict[str, int]:
    """How many rows have each status."""
    stmt = sa.select(INBOX.c.status, sa.func.count()).group_by(INBOX.c.status)
    return {str(status): int(n) for status, n in session.execute(stmt)}


def oldest_waiting(session: Session) -> datetime | None:
    """When the oldest mail still waiting was received."""
    stmt = sa.select(sa.func.min(INBOX.c.received_at)).where(INBOX.c.status == "new")
    found: datetime | None = session.execute(stmt).scalar()  # min() keeps the column's type
    return found


class Listed(NamedTuple):
    """An inbox row as ``pbm inbox list`` shows it."""

    id: int
    received_at: datetime
    mail_from: str
    status: str
    attempts: int
    note: str | None


def listed(session: Session, status: str | None, limit: int = 100) -> list[Listed]:
    """The newest rows (of ``status``; None: all), newest first."""
    stmt = sa.select(
        INBOX.c.id,
        INBOX.c.received_at,
        INBOX.c.mail_from,
        INBOX.c.status,
        INBOX.c.attempts,
        INBOX.c.note,
    ).order_by(INBOX.c.id.desc())
    if status is not None:
        stmt = stmt.where(INBOX.c.status == status)
    return [Listed(*row) for row in session.execute(stmt.limit(limit))]


def retry(session: Session, inbox_ids: Sequence[int]) -> int:
    """Set failed mails waiting again, their attempts forgotten; how many."""
    stmt = (
        sa.update(INBOX)
        .where(
            INBOX.c.id.in_(inbox_ids), INBOX.c.status == "failed", sa.func.length(INBOX.c.raw) > 0
        )
        .values(status="new", attempts=0, note=None, processed_at=None)
    )
    return int(session.connection().execute(stmt).rowcount)


def failed_since(session: Session, since: datetime) -> int:
    """How many received mails were set aside (``failed``) since ``since``."""
    stmt = sa.select(sa.func.count()).where(
        INBOX.c.status == "failed", INBOX.c.processed_at >= since
    )
    return int(session.execute(stmt).scalar_one())
