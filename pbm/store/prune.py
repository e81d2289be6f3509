"""Forgetting what is no longer needed: received mail (passwords in it) and what it left behind.

Received mail holds passwords (``accasta move 1 alice SECRET a1:C-d1``).
``prune`` erases, in the caller's transaction:

- the raw mail of inbox rows acted on more than ``keep_raw_days`` days ago
  (0: every row acted on); rows still ``new`` keep theirs, whatever their age;
- the body of outbox rows sent more than ``keep_raw_days`` days ago (their
  subject, address and times stay, for ``pbm outbox list``); pending and
  failed rows keep theirs, to be sent;
- remembered Message-IDs once a copy of their mail can no longer arrive;
- password failures and answer counts once no limit reads them any more.

Rows erased once are not counted again. ``compact`` then makes sure the erased
bytes are gone from the database's files too.
"""

from __future__ import annotations

import logging
from datetime import datetime, timedelta
from typing import NamedTuple

import sqlalchemy as sa
from sqlmodel import Session

from pbm.model import MailStatus
from pbm.store.engine import Database
from pbm.store.tables import (
    AnswerCount,
    AnswerError,
    InboxMessage,
    OutboxMessage,
    PasswordFailure,
    ProcessedMessage,
    table,
)

log = logging.getLogger("pbm.prune")

# A Message-ID is remembered so that a second copy of a mail acts no more. A
# mail server retries a delivery for up to 5 days (RFC 5321 4.5.4.1 suggests
# giving up after 4-5 days); after 30 days no copy can arrive any more.
REMEMBER_MESSAGE_IDS = timedelta(days=30)
# Password failures (the lockout) and answer counts (per address and hour) are
# read for at most two hours (the limits look at the last hour); a day is ample.
KEEP_COUNTERS = timedelta(days=1)

_INBOX = table(InboxMessage)
_OUTBOX = table(OutboxMessage)
_SEEN = table(ProcessedMessage)
_FAILURES = table(PasswordFailure)
_ANSWERS = table(AnswerCount)
_ERRORS = table(AnswerError)


class Pruned(NamedTuple):
    """How many rows one ``prune`` erased or deleted, table by table."""

    raw_mails: int = 0  # inbox rows whose raw mail was erased
    sent_bodies: int = 0  # sent outbox rows whose body was erased
    message_ids: int = 0  # remembered Message-IDs deleted
    password_failures: int = 0
    answer_counts: int = 0


def _older(when: sa.ColumnElement[datetime], limit: datetime | None) -> sa.ColumnElement[bool]:
    """``when`` is before ``limit`` (None: any time at all)."""
    return sa.true() if limit is None else when < limit


def prune(session: Session, now: datetime, keep_raw_days: int) -> Pruned:
    """Erase raw mail and sent bodies older than ``keep_raw_days``, delete old bookkeeping.

    A row acted on (or sent) exactly ``keep_raw_days`` ago keeps its text until
    the next prune; with ``keep_raw_days`` 0 every row acted on loses it. Runs
    in the caller's transaction; nothing is erased twice.
    """
    if keep_raw_days < 0:
        raise ValueError(f"keep_raw_days must be 0 or more, not {keep_raw_days}")
    limit = now - timedelta(days=keep_raw_days) if keep_raw_days else None
    conn = session.connection()
    # A row acted on has processed_at; received_at stands in should one lack it.
    acted_on = sa.func.coalesce(_INBOX.c.processed_at, _INBOX.c.received_at)
    raw = conn.execute(
        sa.update(_INBOX)
        .where(
            _INBOX.c.status != MailStatus.NEW,
            _older(acted_on, limit),
            sa.func.length(_INBOX.c.raw) > 0,
        )
        .values(raw=b"")
    ).rowcount
    sent_at = sa.func.coalesce(_OUTBOX.c.sent_at, _OUTBOX.c.created_at)
    bodies = conn.execute(
        sa.update(_OUTBOX)
        .where(_OUTBOX.c.status == "sent", _older(sent_at, limit), _OUTBOX.c.body != "")
        .values(body="")
    ).rowcount
    seen = conn.execute(
        sa.delete(_SEEN).where(_SEEN.c.processed_at < now - REMEMBER_MESSAGE_IDS)
    ).rowcount
    failures = conn.execute(
        sa.delete(_FAILURES).where(_FAILURES.c.failed_at < now - KEEP_COUNTERS)
    ).rowcount
    answers = conn.execute(
        sa.delete(_ANSWERS).where(_ANSWERS.c.hour < now - KEEP_COUNTERS)
    ).rowcount
    conn.execute(sa.delete(_ERRORS).where(_ERRORS.c.hour < now - KEEP_COUNTERS))
    return Pruned(int(raw), int(bodies), int(seen), int(failures), int(answers))


def compact(db: Database) -> bool:
    """Leave no erased page in a file beside the database; False if that had to wait.

    SQLite overwrites erased bytes in the database file (``secure_delete``),
    but in WAL mode the pages as they were before stay in the ``-wal`` file
    until a checkpoint copies the new ones over them: ``PRAGMA
    wal_checkpoint(TRUNCATE)`` copies everything and empties the ``-wal``
    file. It cannot run inside a transaction, so it is given on the bare
    connection. While readers hold an older snapshot it waits (the busy
    timeout) and may give up: False, and the next prune tries again.

    On PostgreSQL it does nothing. An erased value leaves a dead row version
    behind; VACUUM (autovacuum does it on its own) frees its space, and new
    rows overwrite it. PostgreSQL has no ``secure_delete``: until then, and
    in its write-ahead log and in backups, old bytes may remain.
    """
    if db.dialect != "sqlite":
        return True
    raw = db.engine.raw_connection()
    try:
        cursor = raw.cursor()
        cursor.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        row = cursor.fetchone()  # (busy, pages in the log, pages copied)
        cursor.close()
    finally:
        raw.close()
    busy = row is not None and bool(row[0])
    if busy:
        log.warning("the SQLite -wal file could not be emptied now: readers were busy")
    return not busy
