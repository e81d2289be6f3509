"""The outbox queue: replies written with the change that caused them, until sent.

Rows are written in the use case's own transaction (``enqueue``). A sender
claims the next due row with a lease (``claim_next``; on PostgreSQL ``FOR
UPDATE SKIP LOCKED``), delivers it and records its outcome: sent
(``mark_sent``), tried again later or failed for good (``record_failure``).
A lease that runs out (its sender died) lets any sender take the row again,
and it is sent again: at least once, never lost. A row marked sent is never
sent again.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Sequence
from datetime import UTC, datetime, timedelta
from typing import NamedTuple

import sqlalchemy as sa
from sqlmodel import Session

from pbm.replies import Reply, attachments_json, pictures_json
from pbm.store.tables import OutboxMessage, table

OUTBOX = table(OutboxMessage)
STATUSES = ("pending", "sent", "failed")
# The note of a counted answer held back by the answer limits (``Reply.not_before``).
HELD = "held by the answer limits until answers to this address resume"
HOUR = timedelta(hours=1)


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
    again: bool = False  # a send of it was begun before and its outcome never written


_CLAIMED = tuple(OUTBOX.c[name] for name in ClaimedMail._fields if name != "again")


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
            "picture": pictures_json(reply),
            "kind": str(reply.kind),
        }
        for reply in replies
        if reply.to
    ]
    if not rows:
        return []
    stmt = sa.insert(OUTBOX).returning(OUTBOX.c.id, sort_by_parameter_order=True)
    return [int(i) for i in session.execute(stmt, rows).scalars()]


def _due(now: datetime) -> sa.ColumnElement[bool]:
    """Pending rows whose time has come and that no live lease holds."""
    return sa.and_(
        OUTBOX.c.status == "pending",
        sa.or_(OUTBOX.c.next_attempt_at.is_(None), OUTBOX.c.next_attempt_at <= now),
        sa.or_(OUTBOX.c.claimed_until.is_(None), OUTBOX.c.claimed_until < now),
    )


def claim_next(
    session: Session, worker: str, now: datetime, lease: timedelta
) -> ClaimedMail | None:
    """The oldest due row, claimed for ``worker`` until ``now + lease``; None if none.

    The claim is also the mark that a send was begun (``handed_at``), written
    before the message is handed over: a row claimed again whose mark is still
    there (its sender died, or could not write the outcome: a full disk) may
    have gone out already. It is sent again all the same (at least once, as
    Postfix delivers) and says so (``ClaimedMail.again``), so that the
    transport can keep the duplicate harmless.

    On PostgreSQL a row another sender is claiming is skipped (``FOR UPDATE
    SKIP LOCKED``); SQLite's write transaction holds the whole file.
    """
    found = session.execute(
        sa.select(OUTBOX.c.id, OUTBOX.c.handed_at)
        .where(_due(now))
        .order_by(OUTBOX.c.id)
        .limit(1)
        .with_for_update(skip_locked=True)
    ).first()
    if found is None:
        return None
    row = session.execute(
        sa.update(OUTBOX)
        .where(OUTBOX.c.id == found.id)
        .values(claimed_by=worker, claimed_until=now + lease, handed_at=now)
        .returning(*_CLAIMED)
    ).one()
    return ClaimedMail(*row)._replace(again=found.handed_at is not None)


def _ours(ids: Sequence[int], worker: str) -> sa.ColumnElement[bool]:
    return sa.and_(
        OUTBOX.c.id.in_(ids), OUTBOX.c.claimed_by == worker, OUTBOX.c.status == "pending"
    )


def release(session: Session, ids: Sequence[int], worker: str) -> None:
    """Give back rows ``worker`` claimed but did not hand over, to be claimed again at once."""
    if ids:
        session.execute(
            sa.update(OUTBOX)
            .where(_ours(ids, worker))
            .values(claimed_by=None, claimed_until=None, handed_at=None)
        )


def defer(session: Session, ids: Sequence[int], worker: str, until: datetime) -> None:
    """Give back rows ``worker`` claimed but could not hand over now, due again at ``until``.

    No attempt is charged: the relay was down, the messages were not at fault.
    """
    if ids:
        session.execute(
            sa.update(OUTBOX)
            .where(_ours(ids, worker))
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


class LastOfKind(NamedTuple):
    """The latest mail of a kind to an address: when it is (or was) due, and whether it
    still waits to be sent (held for later, nobody sending it); ``recent``: how many of
    that kind to that address were due since the time asked about."""

    id: int
    due_at: datetime
    waiting: bool
    recent: int


def last_of_kind(session: Session, to: str, kind: str, since: datetime) -> LastOfKind | None:
    """The latest mail of ``kind`` to ``to`` due since ``since`` (or later), if any."""
    due_at = sa.func.coalesce(OUTBOX.c.next_attempt_at, OUTBOX.c.created_at)
    stmt = (
        sa.select(OUTBOX.c.id, due_at.label("due_at"), OUTBOX.c.status, OUTBOX.c.claimed_until)
        .where(
            sa.func.lower(OUTBOX.c.to_addr) == to.lower(),
            OUTBOX.c.kind == kind,
            due_at >= since,
        )
        .order_by(OUTBOX.c.id.desc())
        .limit(1)
    )
    row = session.execute(stmt).first()
    if row is None:
        return None
    due = row.due_at if isinstance(row.due_at, datetime) else datetime.fromisoformat(row.due_at)
    if due.tzinfo is None:
        due = due.replace(tzinfo=UTC)
    waiting = row.status == "pending" and row.claimed_until is None and due > since + HOUR
    count = session.execute(
        sa.select(sa.func.count()).where(
            sa.func.lower(OUTBOX.c.to_addr) == to.lower(), OUTBOX.c.kind == kind, due_at >= since
        )
    ).scalar_one()
    return LastOfKind(int(row.id), due, waiting, int(count))


GATHERED = (
    "Several challenges came for you within the hour, so they come together in this "
    "mail. To answer one, send the command it names (a reply with just accept cannot "
    "tell which one you mean)."
)


def gather_challenge(session: Session, row_id: int, subject: str, body: str) -> None:
    """Add one more challenge to the held mail ``row_id``: it becomes a mail of them all,
    about no one board (each names its own command)."""
    row = session.execute(
        sa.select(OUTBOX.c.subject, OUTBOX.c.body, OUTBOX.c.board).where(OUTBOX.c.id == row_id)
    ).one()
    text = row.body
    if row.board is not None:  # the first one gathered: its own text becomes a part
        text = f"{GATHERED}\n\n== {row.subject} ==\n\n{text.rstrip()}\n"
    text += f"\n== {subject} ==\n\n{body.rstrip()}\n"
    count = text.count("\n== ")
    session.execute(
        sa.update(OUTBOX)
        .where(OUTBOX.c.id == row_id)
        .values(
            subject=f"pbm - {count} challenges for you",
            body=text,
            board=None,
            reply_as=None,
            reply_key=None,
            thread=None,
            picture=None,
        )
    )


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
