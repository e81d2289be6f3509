"""The outbox sender: due replies out through the transport, each outcome recorded.

Rows are claimed with a lease (``pbm.store.outbox``), sent side by side, and
their outcomes written together (one commit for many sends). A failure of
one message stays with that message: a 5xx fails it alone, a 4xx retries it
alone, with backoff. Only a relay that cannot be reached at all (or that
answers 421, RFC 5321 3.8) holds back the rest of the round, and those
untried rows are put back for later without being charged an attempt. A
sender that dies mid-round leaves its rows to be claimed again when the
lease ends: a mail may then go out twice, but a row marked sent is never
sent again. Database work runs in threads.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import os
import socket
import uuid
from collections.abc import Awaitable, Callable, Iterable, Sequence
from datetime import UTC, datetime, timedelta
from typing import Generic, TypeVar

from pbm.config import Config
from pbm.mail import pictures
from pbm.mail.addresses import bounce_address
from pbm.mail.message import build_message
from pbm.mail.transports import DeliveryError, PermanentFailure, TemporaryFailure, Transport
from pbm.runners.logs import Throttled
from pbm.store import outbox
from pbm.store.engine import Database

log = logging.getLogger("pbm.sender")

T = TypeVar("T")
R = TypeVar("R")

Clock = Callable[[], datetime]

MAX_RETRY_DELAY = timedelta(hours=1)
LEASE_MARGIN = timedelta(seconds=90)  # do not start a send this close to the lease's end
SEND_CONCURRENCY = 8  # mails pbm serve hands to the transport at once


def now_utc() -> datetime:
    """The default clock."""
    return datetime.now(UTC)


def retry_delay(attempts: int, base_seconds: float, cap: timedelta = MAX_RETRY_DELAY) -> timedelta:
    """The wait after the ``attempts``-th failed attempt: base, 2 base, 4 base, ... capped."""
    exponent = min(max(attempts - 1, 0), 32)  # 2**32 * base is past any sane cap
    return min(timedelta(seconds=base_seconds * 2**exponent), cap)


def worker_name() -> str:
    """``HOST:PID:random``: claims name their process, so a dead one's can be given back."""
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"


# The outcome of one send: None (sent), a DeliveryError, ``UNTRIED`` (given back
# to be tried at once) or ``DEFERRED`` (the relay is down: tried later, no attempt charged).
UNTRIED = "untried"
DEFERRED = "deferred"
SendOutcome = DeliveryError | str | None


class OutboxSender:
    """Delivers due outbox rows through a transport; safe to run in several processes."""

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
        self.worker = worker or worker_name()
        self.concurrency = concurrency
        self._recorder = GroupCommit(self._record_now)
        self._marker = GroupCommit(self._mark_now)
        self._stop: asyncio.Event | None = None  # run_forever's, so a round can end early
        self._handed: set[asyncio.Task[int]] = set()  # hand_over's sends under way
        # Board pictures being drawn elsewhere (an inbox worker's process), by key: the
        # mail that shows one waits for it rather than draw it again on our loop.
        self._coming: dict[str, asyncio.Future[None]] = {}
        self._limit: tuple[asyncio.AbstractEventLoop, asyncio.Semaphore] | None = None
        self._trouble = Throttled(log, "outbox sender: the database cannot be written")

    # -- database work (blocking; called through asyncio.to_thread) --

    def _claim(self, now: datetime) -> list[outbox.ClaimedMail]:
        with self.db.transaction() as session:
            return outbox.claim_due(session, self.worker, now, self.batch_size, self.lease)

    def _record_many(
        self, outcomes: Sequence[tuple[outbox.ClaimedMail, SendOutcome]], now: datetime
    ) -> list[str]:
        """Write a round's outcomes in one transaction; each row's new status."""
        config = self.config.outbound
        with self.db.transaction() as session:
            sent = outbox.mark_sent(session, [m.id for m, e in outcomes if e is None], now)
            outbox.release(session, [m.id for m, e in outcomes if e == UNTRIED], self.worker)
            later = now + retry_delay(1, config.retry_base_seconds)
            outbox.defer(session, [m.id for m, e in outcomes if e == DEFERRED], self.worker, later)
            statuses = []
            for mail, error in outcomes:
                if error is None:
                    statuses.append("sent" if mail.id in sent else "changed")
                elif isinstance(error, DeliveryError):
                    attempts = mail.attempts + 1
                    retry_at: datetime | None = None
                    if not isinstance(error, PermanentFailure) and attempts < config.max_attempts:
                        retry_at = now + retry_delay(attempts, config.retry_base_seconds)
                    status = outbox.record_failure(session, mail.id, str(error), retry_at)
                    statuses.append(status or "changed")
                else:
                    statuses.append("pending")
            return statuses

    def _mark_handed(self, ids: list[int], now: datetime) -> set[int]:
        with self.db.transaction() as session:
            return outbox.mark_handed(session, ids, self.worker, now)

    def next_due(self, now: datetime) -> datetime | None:
        """When the earliest pending row that no live lease holds is due (blocking)."""
        with self.db.read() as session:
            return outbox.next_due(session, now)

    # -- many sends to a commit: marks and outcomes that come while one commits share the next

    async def _record(self, outcomes: list[tuple[outbox.ClaimedMail, SendOutcome]]) -> list[str]:
        """Write outcomes; each row's new status."""
        return await self._recorder.add(outcomes)

    async def _given(self, row_id: int) -> bool:
        """Mark a row given to the transport (before it is); False: not ours any more."""
        return (await self._marker.add([row_id]))[0]

    def _record_now(self, outcomes: list[tuple[outbox.ClaimedMail, SendOutcome]]) -> list[str]:
        return self._record_many(outcomes, self.clock())

    def _mark_now(self, ids: list[int]) -> list[bool]:
        marked = self._mark_handed(ids, self.clock())
        return [i in marked for i in ids]

    # -- sending --

    async def run_once(self) -> int:
        """Claim the due rows, send them side by side, record every outcome; the number sent."""
        rows = await asyncio.to_thread(self._claim, self.clock())
        if not rows:
            return 0
        return await self._send(rows)

    def hand_over(
        self,
        rows: Sequence[outbox.ClaimedMail],
        drawing: Iterable[tuple[Sequence[str], Awaitable[dict[str, bytes]]]] = (),
    ) -> asyncio.Task[int]:
        """Send rows claimed for this sender elsewhere (the inbox worker's replies), now.

        ``drawing``: their board pictures still being drawn there (keys, PNGs to
        come); a mail that shows one is made once it has come. They are sent
        beside the rounds of ``run_forever``, which stops only when these are done
        or given back. The task tells how many were sent.
        """
        loop = asyncio.get_running_loop()
        for keys, pngs in drawing:
            arrival = loop.create_task(self._kept(pngs))
            for key in keys:
                self._coming[key] = arrival
            arrival.add_done_callback(functools.partial(self._arrived, keys))
        task = loop.create_task(self._send_handed(rows))
        self._handed.add(task)
        task.add_done_callback(self._handed.discard)
        return task

    async def _kept(self, pngs: Awaitable[dict[str, bytes]]) -> None:
        try:
            pictures.keep(await pngs)
        except Exception as exc:  # the process died, say: the mails draw their own
            log.warning("board pictures drawn elsewhere did not come (%s); drawn here", exc)

    def _arrived(self, keys: Sequence[str], arrival: asyncio.Future[None]) -> None:
        for key in keys:
            if self._coming.get(key) is arrival:
                del self._coming[key]

    async def _send_handed(self, rows: Sequence[outbox.ClaimedMail]) -> int:
        try:
            return await self._send(rows)
        except Exception as exc:  # they stay claimed: any sender takes them when the claim ends
            self._trouble.fault(exc)
            return 0

    def _return_path(self, outbox_id: int) -> str:
        """The envelope sender of a reply: its own bounce address (VERP), so a bounce
        names the reply it is for (``pbm.mail.bounces``); without a secret, ours."""
        mail = self.config.mail
        if not mail.secret:
            return mail.address
        return bounce_address(mail.address, mail.secret, outbox_id)

    def _semaphore(self) -> asyncio.Semaphore:
        """One limit on sends at once, for rounds and hand-overs alike (per event loop)."""
        loop = asyncio.get_running_loop()
        if self._limit is None or self._limit[0] is not loop:
            self._limit = (loop, asyncio.Semaphore(self.concurrency))
        return self._limit[1]

    async def _send(self, rows: Sequence[outbox.ClaimedMail]) -> int:
        """Send claimed rows side by side and record the outcomes; the number sent."""
        limit = self._semaphore()
        relay_down: list[TemporaryFailure] = []

        async def attempt(row: outbox.ClaimedMail) -> SendOutcome:
            coming = self._coming.get(row.picture) if row.picture else None
            if coming is not None:  # however it ends: a picture that did not come is drawn here
                await asyncio.wait({coming})
            try:
                # A board picture takes about a millisecond to lay together: beside the loop.
                msg = await asyncio.to_thread(build_message, row, self.config)
            except (ValueError, TypeError) as exc:  # e.g. a line break in a header value
                return PermanentFailure(f"cannot make a message of this row: {exc}")
            async with limit:
                nearly_up = row.claimed_until is not None and (
                    self.clock() > _utc(row.claimed_until) - LEASE_MARGIN
                )
                if nearly_up or (self._stop is not None and self._stop.is_set()):
                    return UNTRIED  # shutting down, or the lease nearly up: another may take it
                if relay_down:
                    return DEFERRED  # nothing gets through now: later, no attempt charged
                try:  # marked first: a retry must find it handed over, never send it twice
                    if not await self._given(row.id):
                        return UNTRIED  # not ours any more
                except Exception as exc:
                    self._trouble.fault(exc)
                    return DEFERRED
                try:
                    await self.transport.send(msg, self._return_path(row.id), [row.to_addr])
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

        outcomes = await asyncio.gather(*(attempt(r) for r in rows))
        statuses = await self._record(list(zip(rows, outcomes, strict=True)))
        sent = 0
        for row, error, status in zip(rows, outcomes, statuses, strict=True):
            if error is None:
                sent += 1
                log.info("outbox %s sent to %s", row.id, row.to_addr)
            elif isinstance(error, DeliveryError):
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
                self._trouble.cleared()
            except Exception as exc:
                self._trouble.fault(exc)
            if delay <= 0:
                await asyncio.sleep(0)  # let others run between back-to-back rounds
                continue
            await wait_any(stop, wake, delay)
        if self._handed:  # they see ``stop`` and give back what they have not sent
            await asyncio.gather(*self._handed)


class GroupCommit(Generic[T, R]):
    """Items written by one blocking function, in a thread: the items that come while
    it runs are written together by the next call (one commit for many sends)."""

    def __init__(self, write: Callable[[list[T]], list[R]]) -> None:
        self._write = write
        self._waiting: list[tuple[list[T], asyncio.Future[list[R]]]] = []
        self._writer: asyncio.Task[None] | None = None

    async def add(self, items: list[T]) -> list[R]:
        """Write ``items``; what the function returned for each."""
        fut: asyncio.Future[list[R]] = asyncio.get_running_loop().create_future()
        self._waiting.append((items, fut))
        if self._writer is None or self._writer.done():
            self._writer = asyncio.create_task(self._flush())
        return await fut

    async def _flush(self) -> None:
        while self._waiting:
            batch, self._waiting = self._waiting, []
            try:
                results = await asyncio.to_thread(
                    self._write, [i for items, _ in batch for i in items]
                )
            except Exception as exc:
                for _, fut in batch:
                    if not fut.done():
                        fut.set_exception(exc)
                continue
            for items, fut in batch:
                mine, results = results[: len(items)], results[len(items) :]
                if not fut.done():
                    fut.set_result(mine)


def _utc(moment: datetime) -> datetime:
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment


async def wait_any(stop: asyncio.Event, wake: asyncio.Event, timeout: float) -> None:
    """Return when either event is set or ``timeout`` seconds have passed."""
    waiters = [asyncio.ensure_future(stop.wait()), asyncio.ensure_future(wake.wait())]
    try:
        await asyncio.wait(waiters, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for waiter in waiters:
            waiter.cancel()
