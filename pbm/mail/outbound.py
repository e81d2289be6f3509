"""Replies leave the house: outbox rows -> email messages -> a transport.

``build_message`` turns one outbox row into an RFC 5322 message (pure).
A ``Transport`` delivers a message: ``SmtpTransport`` hands it to a relay,
``MaildirTransport`` drops it into a Maildir. The ``OutboxSender`` claims due
rows, sends them, and records the outcome: sent, retried later with backoff
on a temporary failure, or failed for good.
"""

from __future__ import annotations

import asyncio
import functools
import itertools
import logging
import os
import socket
import threading
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from email.headerregistry import Address
from email.message import EmailMessage
from email.utils import format_datetime
from pathlib import Path
from typing import Protocol

import aiosmtplib
import sqlalchemy as sa
from sqlmodel import Session, col, select

from pbm.config import Config, ConfigError
from pbm.mail.headers import SMTP_POLICY, ParsedOnce
from pbm.store import Database, OutboxMessage, claim_outbox, outbox_failed, outbox_sent

log = logging.getLogger(__name__)

MAX_LINE = 78  # RFC 5322 §2.1.1: lines SHOULD be no more than 78 characters


class OutgoingMail(Protocol):
    """The fields of an outbox row that make up a message."""

    @property
    def to_addr(self) -> str: ...
    @property
    def subject(self) -> str: ...
    @property
    def body(self) -> str: ...
    @property
    def reply_to(self) -> str | None: ...
    @property
    def in_reply_to(self) -> str | None: ...
    @property
    def message_id(self) -> str: ...
    @property
    def created_at(self) -> datetime: ...


class ClaimedRow(OutgoingMail, Protocol):
    """An outbox row claimed by a sender (an ``OutboxMessage`` or a ``ClaimedMail``)."""

    @property
    def id(self) -> int | None: ...
    @property
    def claimed_until(self) -> datetime | None: ...


# ---------------------------------------------------------------------------
# Building messages (pure)


def wrap_line(line: str, width: int = MAX_LINE) -> list[str]:
    """``line`` cut into pieces of at most ``width`` characters, at spaces if possible."""
    pieces: list[str] = []
    while len(line) > width:
        cut = line.rfind(" ", 1, width + 1)
        if cut <= 0 or not line[:cut].strip():
            pieces.append(line[:width])  # no space to break at: a hard cut
            line = line[width:]
        else:
            pieces.append(line[:cut].rstrip(" "))
            line = line[cut + 1 :]
    pieces.append(line)
    return pieces


def wrap_body(text: str, width: int = MAX_LINE) -> str:
    """The body with LF line ends, every line at most ``width`` characters, ending in LF.

    The service wraps its text already; this is the defensive hard wrap that
    keeps us within RFC 5322 §2.1.1 whatever it hands us.
    """
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    lines: list[str] = []
    for line in text.split("\n"):
        lines.extend(wrap_line(line, width))
    while len(lines) > 1 and lines[-1] == "":
        lines.pop()
    return "\n".join(lines) + "\n"


def _utc(moment: datetime) -> datetime:
    """Naive datetimes from the database are UTC."""
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment


def build_message(mail: OutgoingMail, config: Config) -> EmailMessage:
    """The message for one outbox row: headers, threading, a plain-text body.

    The same row always gives the same message (``Date`` is the row's
    ``created_at``), so a retried mail is byte-for-byte the first attempt.
    """
    msg = ParsedOnce(policy=SMTP_POLICY)
    headers: list[tuple[str, str]] = [
        ("From", from_header(config.mail.from_name, config.mail.address)),
        ("To", mail.to_addr),
        ("Subject", mail.subject),
        # RFC 5322 §3.6.1: the origination date is when the reply was committed.
        ("Date", format_datetime(_utc(mail.created_at))),
        ("Message-ID", mail.message_id),  # RFC 5322 §3.6.4, our own, made at insert
    ]
    if mail.reply_to:
        headers.append(("Reply-To", mail.reply_to))  # the player's reply-token address
    if mail.in_reply_to:
        # RFC 5322 §3.6.4: we only know the parent's id, so References is just that.
        headers += [("In-Reply-To", mail.in_reply_to), ("References", mail.in_reply_to)]
    # RFC 3834 §5: we answer mail automatically; well-behaved responders stay quiet.
    headers += [
        ("Auto-Submitted", "auto-replied"),
        ("X-Auto-Response-Suppress", "All"),  # Exchange's spelling of the same wish
        ("MIME-Version", "1.0"),  # RFC 2045 §4
    ]
    for name, value in headers:
        _set_header(msg, name, value)
    body = wrap_body(mail.body)
    if body.isascii():
        _set_header(msg, "Content-Type", 'text/plain; charset="us-ascii"')
        _set_header(msg, "Content-Transfer-Encoding", "7bit")
        msg.set_payload(body)
    else:
        # RFC 2045 §6.7: quoted-printable keeps mostly-ASCII text readable.
        msg.set_content(body, subtype="plain", charset="utf-8", cte="quoted-printable")
    return msg


@functools.lru_cache(maxsize=16)
def from_header(display_name: str, address: str) -> str:
    """The ``From`` value for the server: the display name quoted as RFC 5322 §3.4 needs.

    Checking an address is a full parse, and every reply has the same sender,
    so the answer is kept.
    """
    return str(Address(display_name=display_name, addr_spec=address))


def _set_header(msg: EmailMessage, name: str, value: str) -> None:
    """Add a header; plain short ASCII values go in as they are.

    The policy's header parser is thorough and slow; a value that needs no
    encoding or folding (ASCII, one line, within RFC 5322 §2.1.1's 78
    characters) is stored raw, which serializes identically. Anything else
    (an encoded word, a long line) takes the full path.
    """
    if (
        value.isascii()
        and "\r" not in value
        and "\n" not in value
        and len(name) + 2 + len(value) <= MAX_LINE
    ):
        msg.set_raw(name, value)
    else:
        msg[name] = value


# ---------------------------------------------------------------------------
# Transports


class DeliveryError(Exception):
    """A message could not be handed over; ``str()`` says why."""


class TemporaryFailure(DeliveryError):
    """Try again later (RFC 5321 §4.2.1: 4yz replies, or no answer at all).

    ``relay_down`` marks failures that have nothing to do with this message
    (the relay unreachable): the rest of the batch waits too.
    """

    def __init__(self, message: str, *, relay_down: bool = False) -> None:
        super().__init__(message)
        self.relay_down = relay_down


class PermanentFailure(DeliveryError):
    """Do not try again (RFC 5321 §4.2.1: 5yz replies)."""


class Transport(Protocol):
    """Delivers one message to its recipients or raises a ``DeliveryError``."""

    async def send(self, msg: EmailMessage, recipients: Sequence[str]) -> None: ...


def _fsync(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


class MaildirTransport:
    """One file per mail in a Maildir (its ``new/``), for a local MDA or a person to read.

    Delivery follows the Maildir protocol (https://cr.yp.to/proto/maildir.html):
    write the file under ``tmp/`` and fsync it, rename it into ``new/``, fsync
    ``new/``. Readers never see half a mail, and once the file is in ``new/`` we
    never touch it again: a mail reader may move it to ``cur/`` at once.
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self._ready = False  # tmp/, new/ and cur/ exist (made on first use)
        self._serial = itertools.count(1)
        # Group fsync of new/: one fsync covers every rename made before it started.
        self._renames = 0  # renames into new/ so far
        self._synced = 0  # renames that an fsync of new/ has covered
        self._count_lock = threading.Lock()
        self._sync_lock = threading.Lock()
        # The host part of a Maildir name may not hold "/" or ":" (the spec's escapes).
        self._host = socket.gethostname().replace("/", "\\057").replace(":", "\\072")

    def _unique_name(self) -> str:
        """``time.MusecPpidQn.host``: unique across processes and hosts sharing the folder."""
        now = time.time()
        usec = int((now % 1) * 1_000_000)
        return f"{int(now)}.M{usec}P{os.getpid()}Q{next(self._serial)}.{self._host}"

    def _deliver(self, data: bytes) -> None:
        try:
            self._write(data)
        except FileNotFoundError:
            # The folder was removed or moved under us: make it again, once.
            self._ready = False
            self._write(data)

    def _write(self, data: bytes) -> None:
        if not self._ready:
            for sub in ("tmp", "new", "cur"):
                (self.path / sub).mkdir(parents=True, exist_ok=True)
            self._ready = True
        name = self._unique_name()
        tmp = self.path / "tmp" / name
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            os.fsync(fd)
        except BaseException:
            os.close(fd)
            tmp.unlink(missing_ok=True)
            raise
        os.close(fd)
        try:
            os.rename(tmp, self.path / "new" / name)
        except BaseException:
            tmp.unlink(missing_ok=True)
            raise
        with self._count_lock:
            self._renames += 1
            mine = self._renames
        # The row is marked sent next: the new directory entry must be on disk first.
        # Mails delivered side by side share the fsync of new/ (group commit).
        with self._sync_lock:
            if self._synced >= mine:
                return  # an fsync that started after our rename has covered it
            with self._count_lock:
                covered = self._renames
            _fsync(self.path / "new")
            self._synced = covered

    async def send(self, msg: EmailMessage, recipients: Sequence[str]) -> None:
        # Files on disk use the local line end, not SMTP's CRLF.
        data = msg.as_bytes(policy=msg.policy.clone(linesep="\n"))
        try:
            await asyncio.to_thread(self._deliver, data)
        except OSError as exc:  # a full disk or a missing permission may well pass
            raise TemporaryFailure(f"maildir {self.path}: {exc}", relay_down=True) from exc


def _smtp_failure(code: int, text: str) -> DeliveryError:
    """RFC 5321 §4.2.1: 4yz is a transient, 5yz a permanent negative completion."""
    message = f"{code} {text}".strip()
    if 500 <= code < 600:
        return PermanentFailure(message)
    return TemporaryFailure(message)


class SmtpTransport:
    """Hands each message to an SMTP relay (aiosmtplib), one connection per message."""

    def __init__(
        self,
        host: str,
        port: int,
        starttls: bool = False,
        username: str = "",
        password: str = "",
        *,
        sender: str = "",
        timeout: float = 60.0,
    ) -> None:
        self.host = host
        self.port = port
        self.starttls = starttls
        self.username = username
        self.password = password
        self.sender = sender
        self.timeout = timeout

    async def send(self, msg: EmailMessage, recipients: Sequence[str]) -> None:
        where = f"{self.host}:{self.port}"
        try:
            errors, _ = await aiosmtplib.send(
                msg,
                sender=self.sender or None,
                recipients=list(recipients),
                hostname=self.host,
                port=self.port,
                start_tls=self.starttls,
                username=self.username or None,
                password=self.password or None,
                timeout=self.timeout,
            )
        except aiosmtplib.SMTPRecipientsRefused as exc:
            # Every recipient refused: the mildest code decides (4yz before 5yz).
            refused = min(exc.recipients, key=lambda r: r.code)
            raise _smtp_failure(refused.code, refused.message) from exc
        except aiosmtplib.SMTPAuthenticationError as exc:
            # Our credentials, not the mail, are at fault: keep it until they are fixed.
            raise TemporaryFailure(
                f"relay {where} refused our login: {exc.code} {exc.message}", relay_down=True
            ) from exc
        except aiosmtplib.SMTPConnectResponseError as exc:
            # A 421/554 greeting: the relay will not talk to us at all right now.
            raise TemporaryFailure(
                f"relay {where} greeted with {exc.code} {exc.message}", relay_down=True
            ) from exc
        except aiosmtplib.SMTPResponseException as exc:
            raise _smtp_failure(exc.code, exc.message) from exc
        except (aiosmtplib.SMTPException, OSError) as exc:
            # No reply at all (refused, reset, timed out, STARTTLS missing): try later.
            raise TemporaryFailure(f"relay {where}: {exc}", relay_down=True) from exc
        if errors:  # some recipients refused, the others accepted
            reply = min(errors.values(), key=lambda r: r.code)
            raise _smtp_failure(reply.code, reply.message)


def transport_from_config(config: Config) -> Transport:
    """The transport ``outbound.transport`` names."""
    out = config.outbound
    if out.transport == "maildir":
        return MaildirTransport(config.maildir_path)
    if out.transport == "smtp":
        return SmtpTransport(
            out.smtp_host,
            out.smtp_port,
            out.starttls,
            out.username,
            out.password,
            sender=config.mail.address,
        )
    raise ConfigError(f'outbound.transport must be "maildir" or "smtp", not {out.transport!r}')


# ---------------------------------------------------------------------------
# The outbox sender

Clock = Callable[[], datetime]

MAX_RETRY_DELAY = timedelta(hours=1)
LEASE_MARGIN = timedelta(seconds=90)  # do not start a send this close to the lease's end
SEND_CONCURRENCY = 8  # mails pbm serve hands to the transport at once


_OUTBOX = OutboxMessage.__table__  # type: ignore[attr-defined]
# Delivered rows, marked sent in one statement (``OutboxSender._record_many``).
_SENT = (
    sa.update(_OUTBOX)
    .where(_OUTBOX.c.id.in_(sa.bindparam("ids", expanding=True)), _OUTBOX.c.status == "pending")
    .values(
        status="sent",
        sent_at=sa.bindparam("now"),
        attempts=_OUTBOX.c.attempts + 1,
        claimed_by=None,
        claimed_until=None,
    )
    .returning(_OUTBOX.c.id)
)


def now_utc() -> datetime:
    """The default clock."""
    return datetime.now(UTC)


def retry_delay(attempts: int, base_seconds: float, cap: timedelta = MAX_RETRY_DELAY) -> timedelta:
    """The wait after the ``attempts``-th failed attempt: base, 2 base, 4 base, ... capped."""
    exponent = min(max(attempts - 1, 0), 32)  # 2**32 * base is past any sane cap
    return min(timedelta(seconds=base_seconds * 2**exponent), cap)


def _worker_name() -> str:
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"


class OutboxSender:
    """Delivers due outbox rows through a transport; safe to run in several processes.

    Rows are claimed with a lease (``claimed_by``/``claimed_until``); on
    PostgreSQL the claim skips rows another sender is claiming (``FOR UPDATE
    SKIP LOCKED``), on SQLite the claim is a short ``BEGIN IMMEDIATE``
    transaction. A sender that dies mid-batch leaves its rows to be claimed
    again when the lease ends: a mail may then go out twice, but a row marked
    sent is never sent again. All database work runs in a thread.
    """

    def __init__(
        self,
        db: Database,
        config: Config,
        transport: Transport,
        clock: Clock = now_utc,
        *,
        batch_size: int = 100,
        lease: timedelta = timedelta(minutes=10),
        poll_seconds: float = 10.0,
        worker: str | None = None,
        concurrency: int = 1,
    ) -> None:
        self.db = db
        self.config = config
        self.transport = transport
        self.clock = clock
        self.batch_size = batch_size
        self.lease = lease
        self.poll_seconds = poll_seconds
        self.worker = worker or _worker_name()
        self.concurrency = concurrency
        self._to_record: list[
            tuple[list[tuple[int, DeliveryError | None]], asyncio.Future[list[str]]]
        ] = []
        self._recorder: asyncio.Task[None] | None = None
        self._stop: asyncio.Event | None = None  # run_forever's, so a batch can end early
        self._handed: set[asyncio.Task[int]] = set()  # hand_over's sends under way
        self._limit: tuple[asyncio.AbstractEventLoop, asyncio.Semaphore] | None = None

    # -- database work (blocking; called through asyncio.to_thread) --

    def _claim(self, now: datetime) -> list[OutboxMessage]:
        with self.db.transaction() as session:
            rows = claim_outbox(session, self.worker, now, limit=self.batch_size, lease=self.lease)
            session.expunge_all()
            return rows

    def _record_in(
        self, session: Session, row_id: int, error: DeliveryError | None, now: datetime
    ) -> str:
        row = session.get(OutboxMessage, row_id)
        if row is None or row.status != "pending":
            # Someone requeued or settled it meanwhile (our lease ran out): leave it be.
            log.warning("outbox %s changed while we were sending it; left alone", row_id)
            return row.status if row is not None else "gone"
        if error is None:
            outbox_sent(session, row_id, now)
            return "sent"
        attempts = row.attempts + 1
        if isinstance(error, PermanentFailure) or attempts >= self.config.outbound.max_attempts:
            outbox_failed(session, row_id, str(error), now, None)
            return "failed"
        delay = retry_delay(attempts, self.config.outbound.retry_base_seconds)
        outbox_failed(session, row_id, str(error), now, now + delay)
        return "pending"

    async def _record(self, outcomes: list[tuple[int, DeliveryError | None]]) -> list[str]:
        """Write outcomes; those that arrive while a commit runs share the next (group commit)."""
        fut: asyncio.Future[list[str]] = asyncio.get_running_loop().create_future()
        self._to_record.append((outcomes, fut))
        if self._recorder is None or self._recorder.done():
            self._recorder = asyncio.create_task(self._flush_records())
        return await fut

    async def _flush_records(self) -> None:
        while self._to_record:
            batch, self._to_record = self._to_record, []
            flat = [o for outcomes, _ in batch for o in outcomes]
            try:
                statuses = await asyncio.to_thread(self._record_many, flat, self.clock())
            except Exception as exc:
                for _, fut in batch:
                    if not fut.done():
                        fut.set_exception(exc)
                continue
            for outcomes, fut in batch:
                mine, statuses = statuses[: len(outcomes)], statuses[len(outcomes) :]
                if not fut.done():
                    fut.set_result(mine)

    def _record_many(
        self, outcomes: Sequence[tuple[int, DeliveryError | None]], now: datetime
    ) -> list[str]:
        """Write a batch's outcomes in one transaction; returns each row's new status.

        Delivered rows, the common case, are marked sent by one UPDATE; only
        rows that failed, or that changed while we sent them, are looked at
        one by one.
        """
        delivered = [row_id for row_id, error in outcomes if error is None]
        with self.db.transaction() as session:
            marked: set[int] = set()
            if delivered:
                found = session.connection().execute(_SENT, {"ids": delivered, "now": now})
                marked = set(found.scalars())
            return [
                "sent" if row_id in marked else self._record_in(session, row_id, error, now)
                for row_id, error in outcomes
            ]

    def _release(self, row_ids: Sequence[int]) -> None:
        """Give back claimed rows untried, to be claimed again at once."""
        with self.db.transaction() as session:
            for row_id in row_ids:
                row = session.get(OutboxMessage, row_id)
                if row is not None and row.claimed_by == self.worker:
                    row.claimed_by = None
                    row.claimed_until = None

    def next_due(self, now: datetime) -> datetime | None:
        """When the earliest pending row that no live lease holds is due (blocking)."""
        due_at = sa.func.coalesce(col(OutboxMessage.next_attempt_at), col(OutboxMessage.created_at))
        stmt = sa.select(sa.func.min(due_at)).where(
            col(OutboxMessage.status) == "pending",
            sa.or_(
                col(OutboxMessage.claimed_until).is_(None),
                col(OutboxMessage.claimed_until) < now,
            ),
        )
        with self.db.read() as session:
            due = session.execute(stmt).scalar()
        if due is None:
            return None
        assert isinstance(due, datetime)
        return _utc(due)

    # -- the loop --

    async def run_once(self) -> int:
        """Claim the due rows, send them side by side, record every outcome at once.

        Sending in parallel lets the file system and the relay take several
        mails per flush; recording the outcomes in one transaction costs one
        commit per batch instead of one per mail.
        """
        rows = await asyncio.to_thread(self._claim, self.clock())
        if not rows:
            return 0
        return await self._send(rows)

    def hand_over(self, rows: Sequence[ClaimedRow]) -> asyncio.Task[int]:
        """Send rows claimed for this sender elsewhere (the inbox worker's replies), now.

        They are sent beside the rounds of ``run_forever``, which stops only
        when these are done or given back. The task tells how many were sent.
        """
        task = asyncio.get_running_loop().create_task(self._send_handed(rows))
        self._handed.add(task)
        task.add_done_callback(self._handed.discard)
        return task

    async def _send_handed(self, rows: Sequence[ClaimedRow]) -> int:
        try:
            return await self._send(rows)
        except Exception:  # they stay claimed: any sender takes them when the claim ends
            log.exception("outbox: sending %d handed-over mail(s) failed", len(rows))
            return 0

    def _semaphore(self) -> asyncio.Semaphore:
        """One limit on sends at once, for rounds and hand-overs alike (per event loop)."""
        loop = asyncio.get_running_loop()
        if self._limit is None or self._limit[0] is not loop:
            self._limit = (loop, asyncio.Semaphore(self.concurrency))
        return self._limit[1]

    async def _send(self, rows: Sequence[ClaimedRow]) -> int:
        """Send claimed rows side by side and record the outcomes; the number sent."""
        limit = self._semaphore()
        relay_down: list[TemporaryFailure] = []
        given_back: list[int] = []

        async def attempt(row: ClaimedRow) -> DeliveryError | None:
            try:
                msg = build_message(row, self.config)
            except (ValueError, TypeError) as exc:  # e.g. a line break in a header value
                return PermanentFailure(f"cannot make a message of this row: {exc}")
            async with limit:
                now = self.clock()
                nearly_up = row.claimed_until is not None and (
                    now > _utc(row.claimed_until) - LEASE_MARGIN
                )
                if nearly_up or (self._stop is not None and self._stop.is_set()):
                    # Shutting down, or the lease is nearly up: another sender may take it.
                    assert row.id is not None
                    given_back.append(row.id)
                    return None
                if relay_down:  # nothing else will get through either: wait your turn
                    return relay_down[0]
                try:
                    await self.transport.send(msg, [row.to_addr])
                except TemporaryFailure as exc:
                    if exc.relay_down:
                        relay_down.append(exc)
                    return exc
                except DeliveryError as exc:
                    return exc
                except Exception as exc:  # a bug, not the mail: count it, so it cannot loop
                    log.exception("outbox %s: unexpected error while sending", row.id)
                    return TemporaryFailure(f"unexpected error: {exc!r}")
            return None

        errors = await asyncio.gather(*(attempt(r) for r in rows))
        done = [(r, e) for r, e in zip(rows, errors, strict=True) if r.id not in given_back]
        outcomes = [(r.id, e) for r, e in done if r.id is not None]
        statuses = await self._record(outcomes)
        if given_back:
            await asyncio.to_thread(self._release, given_back)
        sent = 0
        for (row, error), status in zip(done, statuses, strict=True):
            if error is None:
                sent += 1
                log.info("outbox %s sent to %s", row.id, row.to_addr)
            else:
                log.warning("outbox %s to %s: %s (%s)", row.id, row.to_addr, error, status)
        return sent

    async def run_forever(self, stop: asyncio.Event, wake: asyncio.Event) -> None:
        """Send until ``stop`` is set; ``wake`` says new rows are waiting.

        Between rounds it sleeps until the next row is due, at most
        ``poll_seconds`` (other processes add rows without waking us).
        """
        self._stop = stop
        while not stop.is_set():
            wake.clear()
            delay = self.poll_seconds
            try:
                await self.run_once()
                now = self.clock()
                due = await asyncio.to_thread(self.next_due, now)
                if due is not None:
                    delay = min(max((due - now).total_seconds(), 0.0), self.poll_seconds)
            except Exception:
                log.exception("outbox sender: round failed; trying again in %ss", delay)
            if delay <= 0:
                await asyncio.sleep(0)  # let others run between back-to-back rounds
                continue
            await _wait_any(stop, wake, delay)
        if self._handed:  # they see ``stop`` and give back what they have not sent
            await asyncio.gather(*self._handed)


async def _wait_any(stop: asyncio.Event, wake: asyncio.Event, timeout: float) -> None:
    """Return when either event is set or ``timeout`` seconds have passed."""
    waiters = [asyncio.ensure_future(stop.wait()), asyncio.ensure_future(wake.wait())]
    try:
        await asyncio.wait(waiters, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for waiter in waiters:
            waiter.cancel()


# ---------------------------------------------------------------------------
# Administration (the ``pbm outbox`` commands)

STATUSES = ("pending", "sent", "failed")


def list_outbox(db: Database, status: str | None = None) -> list[OutboxMessage]:
    """Outbox rows with ``status`` (None or "all": every row), oldest first."""
    if status not in (None, "all", *STATUSES):
        raise ValueError(f"status must be one of {', '.join(STATUSES)} or all, not {status!r}")
    with db.transaction() as session:
        stmt = select(OutboxMessage).order_by(col(OutboxMessage.id))
        if status not in (None, "all"):
            stmt = stmt.where(col(OutboxMessage.status) == status)
        rows = list(session.exec(stmt).all())
        session.expunge_all()
        return rows


@dataclass(frozen=True)
class RetryResult:
    """Which rows were requeued, and which were not and why."""

    requeued: list[int]
    skipped: dict[int, str]


def retry(
    db: Database,
    ids: Sequence[int] = (),
    *,
    all_failed: bool = False,
    now: datetime | None = None,
) -> RetryResult:
    """Requeue rows for sending now: status pending, attempts 0, due now.

    ``ids`` may name failed or pending rows (a pending one is then due at
    once); sent rows are not sent again. ``all_failed`` adds every failed row.
    """
    now = now or now_utc()
    requeued: list[int] = []
    skipped: dict[int, str] = {}
    with db.transaction() as session:
        rows: dict[int, OutboxMessage] = {}
        if all_failed:
            stmt = select(OutboxMessage).where(col(OutboxMessage.status) == "failed")
            rows.update((r.id, r) for r in session.exec(stmt).all() if r.id is not None)
        for row_id in ids:
            if row_id in rows:
                continue
            row = session.get(OutboxMessage, row_id)
            if row is None:
                skipped[row_id] = "no such outbox row"
            elif row.status == "sent":
                skipped[row_id] = "already sent"
            else:
                rows[row_id] = row
        for row_id in sorted(rows):
            row = rows[row_id]
            row.status = "pending"
            row.attempts = 0
            row.next_attempt_at = now
            row.claimed_by = None
            row.claimed_until = None
            requeued.append(row_id)
    return RetryResult(requeued, skipped)
