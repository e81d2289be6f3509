"""The outbox queue: replies written with the change that caused them, until sent.

Rows are written in the use case's own transaction (``enqueue``). A sender
claims due rows with a lease (``claim_due``; on PostgreSQL ``FOR UPDATE SKIP
LOCKED``), or the rows its own inbox worker just wrote (``claim_written``),
delivers them and records each outcome: sent (``mark_sent``), tried again
later or failed for good (``record_failure``). A lease that runs out (its
sender died) lets any sender take the row again; a row marked sent is never
sent again.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Sequence
from datetime import datetime, timedelta
from typing import NamedTuple

import sqlalchemy as sa
from sqlmodel import Session

from pbm.replies import Reply, attachments_json
from pbm.store.tables import OutboxMessage, table

OUTBOX = table(OutboxMessage)
STATUSES = ("pending", "sent", "failed")
# The note of a counted answer held back by the answer limits (``Reply.not_before``).
HELD = "held by the answer limits until answers to this address resume"


class ClaimedMail(NamedTuple):
    """An outbox row claimed for sending: what a message is made of, and the lease."""

    id: int
    to_addr: str
    subject: str
    body: str
    board: int | None
    reply_as: str | None
    reply_key: str | None
    in_reply_to: str | None
    message_id: str
    created_at: datetime
    attempts: int
    claimed_until: datetime | None
    attachment: str | None = None  # JSON (``pbm.replies.attachments_json``)
    thread: str | None = None  # the subject of its board's thread
    picture: str | None = None  # JSON (``pbm.replies.Picture``)


_CLAIMED = tuple(OUTBOX.c[name] for name in ClaimedMail._fields)


def new_message_id(domain: str) -> str:
    """A Message-ID of our own (RFC 5322 3.6.4), made when the reply is written."""
    return f"<pbm.{uuid.uuid4()}@{domain}>"


def enqueue(
    session: Session, replies: Sequence[Reply], domain: str, now: datetime, due: datetime
) -> list[int]:
    """Write replies in the caller's transaction, to be sent from ``due``; their row ids.

    A reply with no address (an answer to a CLI caller) is not written.
    """
    rows = [
        {
            "created_at": now,
            "to_addr": reply.to,
            "subject": reply.subject,
            "body": reply.body,
            "board": reply.board,
            "reply_as": reply.reply_as,
            "reply_key": reply.reply_key,
            "in_reply_to": reply.in_reply_to,
            "message_id": new_message_id(domain),
            "is_error": reply.is_error,
            "status": "pending",
            "attempts": 0,
            "next_attempt_at": max(due, reply.not_before) if reply.not_before else due,
            "attachment": attachments_json(reply.attachments),
            "last_error": HELD if reply.not_before else None,
            "thread": reply.thread,
            "picture": reply.picture.to_json() if reply.picture is not None else None,
        }
        for reply in replies
        if reply.to
    ]
    if not rows:
        return []
    stmt = sa.insert(OUTBOX).returning(OUTBOX.c.id, sort_by_parameter_order=True)
    return [int(i) for i in session.execute(stmt, rows).scalars()]


def _due(now: datetime) -> sa.ColumnElement[bool]:
    """Pending rows whose time has come, that no live lease holds and that were not
    handed to the transport already."""
    return sa.and_(
        OUTBOX.c.status == "pending",
        OUTBOX.c.handed_at.is_(None),
        sa.or_(OUTBOX.c.next_attempt_at.is_(None), OUTBOX.c.next_attempt_at <= now),
        sa.or_(OUTBOX.c.claimed_until.is_(None), OUTBOX.c.claimed_until < now),
    )


def _claim(
    session: Session,
    which: sa.ColumnElement[bool],
    worker: str,
    now: datetime,
    lease: timedelta,
    limit: int | None = None,
) -> list[ClaimedMail]:
    """Lease the due rows of ``which`` (oldest first, up to ``limit``) that nobody holds.

    The due test sits in the locking SELECT itself: under READ COMMITTED,
    PostgreSQL re-tests that scan's conditions on the newest version of a
    row it locks, so a row another sender claimed and committed after this
    statement's snapshot is dropped, not claimed twice; under REPEATABLE
    READ the claim fails with a serialization error instead. (A due test in
    an unlocked subquery is judged on the old snapshot only.) The limit
    applies after SKIP LOCKED, so rows others hold do not use it up.
    """
    free = sa.select(OUTBOX.c.id).where(which, _due(now)).order_by(OUTBOX.c.id)
    if limit is not None:
        free = free.limit(limit)
    # MATERIALIZED: run once. As an IN subquery the planner may rescan it per
    # row (a nested loop semi join), and each rescan, skipping the rows this
    # statement has just updated, locks further ones: far past the limit.
    held = (
        free.with_for_update(skip_locked=True)
        .cte("held")
        .prefix_with("MATERIALIZED", dialect="postgresql")
    )
    stmt = (
        sa.update(OUTBOX)
        # The due test again, on the row version the UPDATE writes.
        .where(OUTBOX.c.id == held.c.id, _due(now))
        .values(claimed_by=worker, claimed_until=now + lease)
        .returning(*_CLAIMED)
    )
    return sorted(ClaimedMail(*row) for row in session.execute(stmt))


def claim_due(
    session: Session, worker: str, now: datetime, limit: int, lease: timedelta
) -> list[ClaimedMail]:
    """Take up to ``limit`` due rows, oldest first, for ``lease``.

    Rows handed to the transport whose outcome was never written (the sender's
    database write failed, or it died just then) are taken as sent first: they
    most likely were, and a reply sent twice is what must not happen.
    """
    unrecorded = sa.and_(
        OUTBOX.c.status == "pending",
        OUTBOX.c.handed_at.is_not(None),
        sa.or_(OUTBOX.c.claimed_until.is_(None), OUTBOX.c.claimed_until < now),
    )
    session.execute(
        sa.update(OUTBOX)
        .where(unrecorded)
        .values(
            status="sent",
            sent_at=OUTBOX.c.handed_at,
            attempts=OUTBOX.c.attempts + 1,
            claimed_by=None,
            claimed_until=None,
            last_error="handed to the transport; its outcome was never written: taken as sent",
        )
    )
    return _claim(session, sa.true(), worker, now, lease, limit)


def mark_handed(session: Session, ids: Sequence[int], worker: str, now: datetime) -> set[int]:
    """Mark claimed rows as given to the transport, before they are; the ids marked.

    Written before the hand-over, so that a retry finds it done even when its
    outcome cannot be written after (a full disk): at most once, not twice.
    """
    if not ids:
        return set()
    stmt = (
        sa.update(OUTBOX)
        .where(OUTBOX.c.id.in_(ids), OUTBOX.c.claimed_by == worker, OUTBOX.c.status == "pending")
        .values(handed_at=now)
        .returning(OUTBOX.c.id)
    )
    return {int(i) for i in session.execute(stmt).scalars()}


def claim_written(
    session: Session, ids: Sequence[int], worker: str, now: datetime, lease: timedelta
) -> list[ClaimedMail]:
    """Take the rows of ``ids`` that are due: replies the caller's transaction just wrote."""
    if not ids:
        return []
    return _claim(session, OUTBOX.c.id.in_(ids), worker, now, lease)


def release(session: Session, ids: Sequence[int], worker: str) -> None:
    """Give back rows ``worker`` claimed but did not try, to be claimed again at once."""
    if ids:
        session.execute(
            sa.update(OUTBOX)
            .where(OUTBOX.c.id.in_(ids), OUTBOX.c.claimed_by == worker)
            .values(claimed_by=None, claimed_until=None, handed_at=None)
        )


def defer(session: Session, ids: Sequence[int], worker: str, until: datetime) -> None:
    """Give back rows ``worker`` claimed but could not try now, due again at ``until``.

    No attempt is charged: the relay was down, the messages were not at fault.
    """
    if ids:
        session.execute(
            sa.update(OUTBOX)
            .where(OUTBOX.c.id.in_(ids), OUTBOX.c.claimed_by == worker)
            .values(claimed_by=None, claimed_until=None, next_attempt_at=until, handed_at=None)
        )


def mark_sent(session: Session, ids: Sequence[int], now: datetime) -> set[int]:
    """Mark delivered rows sent; the ids that were still pending (others were left alone)."""
    if not ids:
        return set()
    stmt = (
        sa.update(OUTBOX)
        .where(OUTBOX.c.id.in_(ids), OUTBOX.c.status == "pending")
        .values(
            status="sent",
            sent_at=now,
            attempts=OUTBOX.c.attempts + 1,
            claimed_by=None,
            claimed_until=None,
        )
        .returning(OUTBOX.c.id)
    )
    return {int(i) for i in session.execute(stmt).scalars()}


def record_failure(
    session: Session, row_id: int, error: str, retry_at: datetime | None
) -> str | None:
    """Record a failed attempt of a pending row: try again at ``retry_at``, or (None) give up.

    Returns the row's new status, or None when it was not pending any more.
    """
    status = "pending" if retry_at is not None else "failed"
    values: dict[str, object] = {
        "attempts": OUTBOX.c.attempts + 1,
        "last_error": error,
        "claimed_by": None,
        "claimed_until": None,
        "handed_at": None,
        "status": status,
    }
    if retry_at is not None:
        values["next_attempt_at"] = retry_at
    stmt = (
        sa.update(OUTBOX)
        .where(OUTBOX.c.id == row_id, OUTBOX.c.status == "pending")
        .values(**values)
        .returning(OUTBOX.c.id)
    )
    return status if session.execute(stmt).first() is not None else None


def release_dead(session: Session, dead: Callable[[str], bool]) -> int:
    """Give back pending rows whose claimer (``claimed_by``) ``dead`` says has died."""
    stmt = sa.select(OUTBOX.c.id, OUTBOX.c.claimed_by).where(
        OUTBOX.c.status == "pending", OUTBOX.c.claimed_by.is_not(None)
    )
    gone = [int(i) for i, by in session.execute(stmt) if dead(str(by))]
    if gone:
        session.execute(
            sa.update(OUTBOX)
            .where(OUTBOX.c.id.in_(gone))
            .values(claimed_by=None, claimed_until=None)
        )
    return len(gone)


def next_due(session: Session, now: datetime) -> datetime | None:
    """When the earliest pending row that no live lease holds is due."""
    due_at = sa.func.coalesce(OUTBOX.c.next_attempt_at, OUTBOX.c.created_at)
    stmt = sa.select(sa.func.min(due_at)).where(
        OUTBOX.c.status == "pending",
        OUTBOX.c.handed_at.is_(None),
        sa.or_(OUTBOX.c.claimed_until.is_(None), OUTBOX.c.claimed_until < now),
    )
    found: datetime | None = session.execute(stmt).scalar()
    return found


def listing(session: Session, status: str | None = None) -> list[OutboxMessage]:
    """Rows with ``status`` (None or ``all``: every row), oldest first."""
    if status not in (None, "all", *STATUSES):
        raise ValueError(f"status must be one of {', '.join(STATUSES)} or all, not {status!r}")
    stmt = sa.select(OutboxMessage).order_by(OUTBOX.c.id)
    if status not in (None, "all"):
        stmt = stmt.where(OUTBOX.c.status == status)
    rows = list(session.execute(stmt).scalars())
    session.expunge_all()
    return rows


class RetryResult(NamedTuple):
    """Which rows were requeued, and which were not and why."""

    requeued: list[int]
    skipped: dict[int, str]


def retry(session: Session, ids: Sequence[int], *, all_failed: bool, now: datetime) -> RetryResult:
    """Requeue rows for sending now: pending, attempts 0, due now; sent rows stay sent."""
    stmt = sa.select(OUTBOX.c.id, OUTBOX.c.status, OUTBOX.c.claimed_until)
    wanted = OUTBOX.c.id.in_(ids)
    stmt = stmt.where(sa.or_(wanted, OUTBOX.c.status == "failed") if all_failed else wanted)
    found = {int(i): (str(status), until) for i, status, until in session.execute(stmt)}
    skipped = {i: "no such outbox row" for i in ids if i not in found}
    for i, (status, until) in found.items():
        if status == "sent":
            skipped[i] = "already sent"
        elif status == "pending" and until is not None and until > now:
            skipped[i] = "being sent right now"  # a live lease: a second send would double it
    requeued = sorted(i for i in found if i not in skipped)
    if requeued:
        session.execute(
            sa.update(OUTBOX)
            .where(OUTBOX.c.id.in_(requeued))
            .values(
                status="pending",
                attempts=0,
                next_attempt_at=now,
                claimed_by=None,
                claimed_until=None,
                handed_at=None,
            )
        )
    return RetryResult(requeued, skipped)


def counts(session: Session) -> dict[str, int]:
    """How many rows have each status."""
    stmt = sa.select(OUTBOX.c.status, sa.func.count()).group_by(OUTBOX.c.status)
    return {str(status): int(n) for status, n in session.execute(stmt)}


def held(session: Session, now: datetime) -> int:
    """Counted answers held back by the answer limits (``pbm.usecases.limits``): pending,
    never tried, due later."""
    stmt = sa.select(sa.func.count()).where(
        OUTBOX.c.status == "pending",
        OUTBOX.c.last_error == HELD,
        OUTBOX.c.next_attempt_at > now,
    )
    return int(session.execute(stmt).scalar_one())


def recipients_of(session: Session, message_ids: Sequence[str]) -> set[str]:
    """The addresses (lower case) the replies with these Message-IDs were written to."""
    if not message_ids:
        return set()
    stmt = sa.select(OUTBOX.c.to_addr).where(OUTBOX.c.message_id.in_(list(message_ids)[:50]))
    return {str(a).lower() for a in session.execute(stmt).scalars()}
