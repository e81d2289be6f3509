"""The SMTP listener: mail for the server's address is stored before it is accepted.

aiosmtpd speaks the protocol; ``InboxHandler`` decides. It accepts mail only
for the server's address and its reply-token addresses (RFC 5321 3.6.2: we
relay nothing), at most ``smtp.max_recipients`` of them a mail, commits each
message to the inbox before it answers 250 (RFC 5321 6.1: from then on the
mail is ours), and answers 451 if it cannot, so that the sending server keeps
it and tries again. A client address gets only so many connections and mails
a minute (``ClientRates``). The replies it gives are in ``pbm.mail.status``.
"""

from __future__ import annotations

import asyncio
import logging
import socket
import ssl
import time
from collections.abc import Callable
from datetime import datetime
from typing import Any

from aiosmtpd.smtp import SMTP, Envelope, Session

from pbm.config import Config
from pbm.mail import status
from pbm.mail.addresses import accepts
from pbm.runners.rates import ClientRates, Clock
from pbm.store import inbox
from pbm.store.engine import Database
from pbm.usecases.site import utc_now

log = logging.getLogger("pbm.listener")


class InboxWriter:
    """Commits received mails to the inbox, many to a transaction (group commit).

    Every DATA waits for its own row to be committed before it answers 250,
    but mails that arrive while a commit is under way share the next one: one
    fsync for a burst of mail instead of one each.
    """

    def __init__(self, db: Database, clock: Callable[[], datetime]) -> None:
        self.db = db
        self.clock = clock
        self._pending: list[tuple[bytes, str, list[str], asyncio.Future[int]]] = []
        self._flushing = False
        self._task: asyncio.Task[None] | None = None

    async def add(self, raw: bytes, mail_from: str, rcpt_tos: list[str]) -> int:
        """Store one mail durably; its inbox row id."""
        fut: asyncio.Future[int] = asyncio.get_running_loop().create_future()
        self._pending.append((raw, mail_from, rcpt_tos, fut))
        if not self._flushing:
            self._flushing = True
            self._task = asyncio.create_task(self._flush())
        return await fut

    async def _flush(self) -> None:
        try:
            while self._pending:
                batch, self._pending = self._pending, []
                try:
                    ids = await asyncio.to_thread(self._store, [b[:3] for b in batch])
                except Exception as exc:
                    for *_, fut in batch:
                        if not fut.done():
                            fut.set_exception(exc)
                else:
                    for (*_, fut), row_id in zip(batch, ids, strict=True):
                        if not fut.done():
                            fut.set_result(row_id)
        finally:
            self._flushing = False

    def _store(self, mails: list[tuple[bytes, str, list[str]]]) -> list[int]:
        # The Message-ID is filled in by the worker, which reads the mail anyway.
        received = [inbox.Received(raw, mail_from, rcpts) for raw, mail_from, rcpts in mails]
        with self.db.transaction() as s:
            return inbox.add(s, received, self.clock())


class InboxHandler:
    """The aiosmtpd handler: client rates, RCPT policy, and DATA into the inbox."""

    def __init__(
        self,
        db: Database,
        config: Config,
        wake: asyncio.Event,
        clock: Callable[[], datetime] = utc_now,
        rate_clock: Clock = time.monotonic,
    ) -> None:
        self.config = config
        self.wake = wake
        self.writer = InboxWriter(db, clock)
        self.rates: ClientRates | None = ClientRates(
            config.smtp.connections_per_minute,
            config.smtp.messages_per_minute,
            clock=rate_clock,
        )

    def admit_connection(self, peer: Any) -> bool:
        """Whether a new connection from ``peer`` is within its client's rate."""
        if self.rates is None or self.rates.admit_connection(peer):
            return True
        log.info("too many connections from %s: greeted with 421", peer)
        return False

    async def handle_MAIL(
        self,
        server: SMTP,
        session: Session,
        envelope: Envelope,
        address: str,
        mail_options: list[str],
    ) -> str:
        if self.rates is not None and not self.rates.admit_mail(session.peer):
            log.info("too many mails from %s: MAIL answered 451", session.peer)
            return status.TOO_MANY_MAILS
        envelope.mail_from = address
        envelope.mail_options.extend(mail_options)
        return status.OK_SENDER

    async def handle_RCPT(
        self,
        server: SMTP,
        session: Session,
        envelope: Envelope,
        address: str,
        rcpt_options: list[str],
    ) -> str:
        if not accepts(address, self.config.mail.address):
            log.info("refused RCPT %s from %s", address, session.peer)
            return status.NO_SUCH_USER.format(address=address)
        limit = self.config.smtp.max_recipients
        if 0 < limit <= len(envelope.rcpt_tos):
            return status.TOO_MANY_RECIPIENTS
        envelope.rcpt_tos.append(address)
        envelope.rcpt_options.extend(rcpt_options)
        return status.OK_RCPT

    async def handle_DATA(self, server: SMTP, session: Session, envelope: Envelope) -> str:
        raw = envelope.original_content or b""
        rcpts = list(envelope.rcpt_tos)
        if not rcpts:
            return status.NO_RECIPIENTS
        try:
            row_id = await self.writer.add(raw, envelope.mail_from or "", rcpts)
        except Exception:
            log.exception("could not commit a message to the inbox; answered 451")
            return status.TRY_AGAIN
        self.wake.set()
        return status.OK_QUEUED.format(id=row_id)

    async def handle_exception(self, error: Exception) -> str:
        # aiosmtpd would answer "500 Error: (Exception) text": never a 5xx for our
        # own fault, and never our internals on the wire.
        log.error("SMTP handler error", exc_info=error)
        return status.TRY_AGAIN


class RateLimitedSMTP(SMTP):
    """aiosmtpd's SMTP, whose greeting is a 421 for a client over its connection rate.

    ``connection_made`` is asyncio's public protocol method: a connection over
    the rate is answered and closed before aiosmtpd starts a session for it.
    """

    def __init__(self, handler: InboxHandler, **kwargs: Any) -> None:
        super().__init__(handler, **kwargs)
        self.inbox_handler = handler
        self.admitted: bool | None = None  # decided on the first connection_made

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        # STARTTLS calls this again for the TLS transport: the client is counted once.
        if self.admitted is None:
            self.admitted = self.inbox_handler.admit_connection(
                transport.get_extra_info("peername")
            )
            if not self.admitted:
                assert isinstance(transport, asyncio.WriteTransport)
                transport.write(status.TOO_MANY_CONNECTIONS.encode("ascii") + b"\r\n")
                transport.close()  # after what was written has gone out
                return
        super().connection_made(transport)

    def connection_lost(self, error: Exception | None) -> None:
        if self.admitted is False:
            return  # no session was begun: nothing of aiosmtpd's to end
        super().connection_lost(error)


def tls_context(config: Config) -> ssl.SSLContext | None:
    """A server TLS context for STARTTLS when a certificate and key are configured."""
    if not (config.smtp.tls_cert and config.smtp.tls_key):
        return None
    ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ctx.load_cert_chain(
        str(config.base_dir / config.smtp.tls_cert), str(config.base_dir / config.smtp.tls_key)
    )
    return ctx


def smtp_factory(handler: InboxHandler, config: Config) -> Callable[[], SMTP]:
    """The protocol factory for ``loop.create_server``."""
    ctx = tls_context(config)
    hostname = config.smtp.hostname or socket.getfqdn()
    options: dict[str, Any] = {
        "data_size_limit": config.smtp.max_message_bytes,  # 552 when exceeded
        "enable_SMTPUTF8": True,  # RFC 6531
        "decode_data": False,  # keep the bytes; 8BITMIME is advertised (RFC 6152)
        "hostname": hostname,
        "tls_context": ctx,
        "require_starttls": False,
    }

    def make() -> SMTP:
        return RateLimitedSMTP(handler, ident="pbm ESMTP", **options)

    return make
