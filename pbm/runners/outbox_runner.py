"""The outbox runner: each due reply made into a message and handed to the transport.

A row is claimed under a lease, and the claim marks it as being sent before
the message is handed over (``outbox.claim_next``). Its outcome is written
after: sent, tried again later with backoff, or failed for good. A sender
that dies between the two leaves the row claimed; when the lease ends (at
once when this host's server starts again: ``serve.release_dead_claims``)
it is claimed and sent again, under the same Message-ID: at least once,
never lost (RFC 5321 6.1: a mail accepted is the sender's to deliver). A
4yz or 5yz refusal stays with its message; a relay that is down defers the
row without charging it an attempt, and the loop pauses before the next.
"""

from __future__ import annotations

import asyncio
import os
import socket
import uuid
from collections.abc import Callable
from datetime import datetime, timedelta

from pbm.config import Config
from pbm.mail.addresses import bounce_address
from pbm.mail.message import build_message
from pbm.mail.transports import DeliveryError, PermanentFailure, TemporaryFailure, Transport
from pbm.runners.base import Runner
from pbm.store import outbox
from pbm.store.engine import Database
from pbm.usecases.site import utc_now

MAX_RETRY_DELAY = timedelta(hours=1)
LEASE = timedelta(minutes=10)  # longer than any send (the SMTP transport's timeout: 60 s)
Clock = Callable[[], datetime]
SENDS_AT_ONCE = 8  # a relay far away answers slowly: this many sends wait on it together


def retry_delay(attempts: int, base_seconds: float, cap: timedelta = MAX_RETRY_DELAY) -> timedelta:
    """The wait after the ``attempts``-th failed attempt: base, 2 base, 4 base, ... capped."""
    exponent = min(max(attempts - 1, 0), 32)  # 2**32 * base is past any sane cap
    return min(timedelta(seconds=base_seconds * 2**exponent), cap)


def worker_name() -> str:
    """``HOST:PID:random``: claims name their process, so a dead one's can be given back."""
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"


class RelayDown(Exception):
    """The relay cannot be reached: the loop pauses (its fault is logged once a minute)."""


class OutboxRunner(Runner[outbox.ClaimedMail]):
    """Sends due outbox rows through a transport; safe to run in several processes."""

    name = "outbox"

    def __init__(
        self,
        db: Database,
        config: Config,
        transport: Transport,
        clock: Clock = utc_now,
        *,
        worker: str | None = None,
        wake: asyncio.Event | None = None,
        stop: asyncio.Event | None = None,
    ) -> None:
        super().__init__(wake)
        self.db = db
        self.config = config
        self.transport = transport
        self.clock = clock
        self.worker = worker or worker_name()
        self.poll_seconds = config.outbound.poll_seconds
        self.stop = stop  # set: a row claimed meanwhile is given back, not sent

    def claim(self) -> outbox.ClaimedMail | None:
        with self.db.transaction() as session:
            return outbox.claim_next(session, self.worker, self.clock(), LEASE)

    async def handle(self, item: outbox.ClaimedMail) -> None:
        if self.stop is not None and self.stop.is_set():
            await asyncio.to_thread(self._give_back, item, None)  # another may take it
            return
        error = await self._send(item)
        if isinstance(error, TemporaryFailure) and error.relay_down:
            later = self.clock() + retry_delay(1, self.config.outbound.retry_base_seconds)
            await asyncio.to_thread(self._give_back, item, later)
            raise RelayDown(str(error)) from error
        await asyncio.to_thread(self._record, item, error)

    async def _send(self, item: outbox.ClaimedMail) -> DeliveryError | None:
        """Make the message and hand it to the transport; what went wrong, if anything."""
        try:
            # The board's picture is drawn as the message is made: beside the loop.
            message = await asyncio.to_thread(build_message, item, self.config)
        except (ValueError, TypeError) as exc:  # e.g. a line break in a header value
            return PermanentFailure(f"cannot make a message of this row: {exc}")
        if item.again:  # its sender stopped after the claim: it may have gone out already
            self.log.info("outbox %s: sending again, its outcome never written", item.id)
        try:
            await self.transport.send(
                message,
                self._return_path(item.id),
                [item.to_addr],
                key=item.message_id,
                again=item.again,
            )
        except DeliveryError as exc:
            return exc
        except Exception as exc:  # a bug, not the mail: count it, so that it cannot loop
            self.log.exception("outbox %s: unexpected error while sending", item.id)
            return TemporaryFailure(f"unexpected error: {exc!r}")
        return None

    def _give_back(self, item: outbox.ClaimedMail, until: datetime | None) -> None:
        """Give back a row not handed over: to be claimed at once, or (the relay down) at
        ``until``, no attempt charged."""
        with self.db.transaction() as session:
            if until is None:
                outbox.release(session, [item.id], self.worker)
            else:
                outbox.defer(session, [item.id], self.worker, until)

    def _record(self, item: outbox.ClaimedMail, error: DeliveryError | None) -> None:
        """Write the outcome of one send: sent, tried again later, or failed for good."""
        now = self.clock()
        with self.db.transaction() as session:
            if error is None:
                outbox.mark_sent(session, [item.id], now)
                self.log.info("outbox %s sent to %s", item.id, item.to_addr)
                return
            config = self.config.outbound
            attempts = item.attempts + 1
            retry_at: datetime | None = None
            if not isinstance(error, PermanentFailure) and attempts < config.max_attempts:
                retry_at = now + retry_delay(attempts, config.retry_base_seconds)
            status = outbox.record_failure(session, item.id, str(error), retry_at)
        self.log.warning("outbox %s to %s: %s (%s)", item.id, item.to_addr, error, status)

    def _return_path(self, outbox_id: int) -> str:
        """The envelope sender of a reply: its own bounce address (VERP), so a bounce
        names the reply it is for (``pbm.mail.dsn``); without a secret, ours."""
        mail = self.config.mail
        if not mail.secret:
            return mail.address
        return bounce_address(mail.address, mail.secret, outbox_id)
