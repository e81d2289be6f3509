"""``pbm serve``: the SMTP listener, the inbox worker and the outbox sender on one loop.

The listener (aiosmtpd on ``loop.create_server``) accepts mail only for the
server's address and its reply-token addresses, commits each message to the
inbox before it answers 250, and answers 451 if it cannot. The inbox worker
and the outbox sender run beside it: the loop drives the worker, whose CPU
work runs in processes of its own (``server.inbox_workers``; 0: in a thread
here), and database work runs in threads, so the loop never blocks on it.
SIGTERM and Ctrl-C stop everything cleanly; a restart carries on with
whatever the inbox and outbox still hold.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import socket
import ssl
import sys
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime
from typing import cast

from aiosmtpd.smtp import SMTP, Envelope, Session
from sqlmodel import col, select

from pbm import store
from pbm.config import Config
from pbm.mail import status
from pbm.mail.worker import Batch, InboxWorker, WorkerProcesses
from pbm.replies import parse_token_address

log = logging.getLogger("pbm.server")


def configure_logging(level: str) -> None:
    """``pbm serve``'s log on stderr (its inbox worker processes log the same way)."""
    logging.basicConfig(
        level=level.upper(),
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
        stream=sys.stderr,
    )
    # alembic's start-up chatter, and aiosmtpd's line-by-line SMTP trace ("mail.log"),
    # only when asked for with log_level = "DEBUG".
    if level.upper() != "DEBUG":
        for chatty in ("alembic", "mail.log"):
            logging.getLogger(chatty).setLevel(logging.WARNING)


def accepts(address: str, config: Config) -> bool:
    """Whether the listener takes mail for ``address``: ours or a reply-token address."""
    addr = address.strip().strip("<>")
    if addr.lower() == config.mail.address.lower():
        return True
    return parse_token_address(addr, config.mail.address) is not None


class InboxWriter:
    """Commits received mails to the inbox, many to a transaction (group commit).

    Every DATA waits for its own row to be committed before it answers 250,
    but mails that arrive while a commit is under way share the next one: one
    fsync for a burst of mail instead of one each.
    """

    def __init__(self, db: store.Database, clock: Callable[[], datetime]) -> None:
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
        rows = [(raw, mail_from, rcpts, None) for raw, mail_from, rcpts in mails]
        with self.db.transaction() as s:
            return store.add_inbox_many(s, rows, self.clock())


class InboxHandler:
    """The aiosmtpd handler: RCPT policy and DATA into the inbox."""

    def __init__(
        self,
        db: store.Database,
        config: Config,
        wake: asyncio.Event,
        clock: Callable[[], datetime] = store.utc_now,
    ) -> None:
        self.config = config
        self.wake = wake
        self.writer = InboxWriter(db, clock)

    async def handle_RCPT(
        self,
        server: SMTP,
        session: Session,
        envelope: Envelope,
        address: str,
        rcpt_options: list[str],
    ) -> str:
        if not accepts(address, self.config):
            log.info("refused RCPT %s from %s", address, session.peer)
            return status.NO_SUCH_USER.format(address=address)
        envelope.rcpt_tos.append(address)
        return status.OK_RCPT

    async def handle_DATA(self, server: SMTP, session: Session, envelope: Envelope) -> str:
        raw = envelope.original_content or b""
        if not envelope.rcpt_tos:
            return status.NO_RECIPIENTS
        try:
            row_id = await self.writer.add(raw, envelope.mail_from or "", list(envelope.rcpt_tos))
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


def tls_context(config: Config) -> ssl.SSLContext | None:
    """A server TLS context for STARTTLS when a certificate and key are configured."""
    if not (config.smtp.tls_cert and config.smtp.tls_key):
        return None
    ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ctx.load_cert_chain(
        str(config.base_dir / config.smtp.tls_cert), str(config.base_dir / config.smtp.tls_key)
    )
    return ctx


class SMTPSession(SMTP):
    """aiosmtpd's SMTP protocol, reading each envelope address once per process.

    ``SMTP._getaddr`` parses MAIL FROM and RCPT TO arguments with the email
    package's full address parser (and makes a class each time); players send
    from the same few addresses to the same few, so the answers are kept.
    """

    def _getaddr(self, arg: str) -> tuple[str | None, str | None]:
        key = (arg, self.local_part_limit)
        found = _ENVELOPE_ADDRESSES.get(key)
        if found is None:
            found = super()._getaddr(arg)
            if len(_ENVELOPE_ADDRESSES) >= _ENVELOPE_ADDRESSES_KEPT:
                _ENVELOPE_ADDRESSES.clear()
            _ENVELOPE_ADDRESSES[key] = found
        return found


# SMTPSession._getaddr's answers: (argument, local-part limit) -> (address, rest).
_ENVELOPE_ADDRESSES: dict[tuple[str, int], tuple[str | None, str | None]] = {}
_ENVELOPE_ADDRESSES_KEPT = 4096


def smtp_factory(handler: InboxHandler, config: Config) -> Callable[[], SMTP]:
    """The protocol factory for ``loop.create_server``."""
    ctx = tls_context(config)
    hostname = config.smtp.hostname or socket.getfqdn()

    def make() -> SMTP:
        return SMTPSession(
            handler,
            data_size_limit=config.smtp.max_message_bytes,  # 552 when exceeded
            enable_SMTPUTF8=True,  # RFC 6531
            decode_data=False,  # keep the bytes; 8BITMIME is advertised (RFC 6152)
            hostname=hostname,
            ident="pbm ESMTP",
            tls_context=ctx,
            require_starttls=False,
        )

    return make


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def release_dead_claims(db: store.Database) -> int:
    """Give back inbox and outbox rows claimed by a process of this host that has died.

    A server killed mid-batch leaves its claims behind; other instances take
    them over once the claim is stale, but a restarted server should carry on
    at once. Claims are named ``HOST:PID...``; only this host's dead PIDs are
    released, so live instances (on any host) keep theirs.
    """
    host = socket.gethostname()

    def dead(claimed_by: str | None) -> bool:
        pid = (claimed_by or "").split(":")[1:2]
        return bool(pid) and pid[0].isdigit() and not _alive(int(pid[0]))

    released = 0
    with db.transaction() as s:
        queues: tuple[tuple[type[store.InboxMessage | store.OutboxMessage], str, str], ...] = (
            (store.InboxMessage, "new", "claimed_at"),
            (store.OutboxMessage, "pending", "claimed_until"),
        )
        for model, waiting, claim_time in queues:
            found = s.exec(
                select(model).where(
                    col(model.status) == waiting,
                    col(model.claimed_by).startswith(f"{host}:"),
                )
            ).all()
            for row in cast(Sequence[store.InboxMessage | store.OutboxMessage], found):
                if dead(row.claimed_by):
                    row.claimed_by = None
                    setattr(row, claim_time, None)
                    released += 1
    if released:
        log.info("took back %d message(s) claimed by a stopped server", released)
    return released


class Server:
    """The running pieces of ``pbm serve``; ``run()`` until ``stop()``."""

    def __init__(self, config: Config, db: store.Database | None = None) -> None:
        self.config = config
        self.db = db or store.Database.open(config)
        self.stopping = asyncio.Event()
        self.inbox_wake = asyncio.Event()
        self.outbox_wake = asyncio.Event()
        self.worker_id = f"{socket.gethostname()}:{os.getpid()}"
        self._smtp: asyncio.Server | None = None
        self._worker: InboxWorker | WorkerProcesses | None = None  # None: process_inbox off

    @property
    def address(self) -> tuple[str, int]:
        """Where the listener is bound (the real port when 0 was configured)."""
        assert self._smtp is not None
        sock = self._smtp.sockets[0].getsockname()
        return sock[0], sock[1]

    async def start(self) -> None:
        loop = asyncio.get_running_loop()
        # Blocking work runs in threads (asyncio.to_thread): the inbox worker, the
        # inbox writer, outbox records and several Maildir/SMTP sends at once. The
        # default pool (CPUs + 4 threads) would make the worker queue behind sends.
        loop.set_default_executor(ThreadPoolExecutor(max_workers=32, thread_name_prefix="pbm"))
        # Before the first mail is taken: what a killed predecessor left claimed.
        await asyncio.to_thread(release_dead_claims, self.db)
        if self.config.server.process_inbox:
            self._worker = self._inbox_worker()
            if isinstance(self._worker, WorkerProcesses):
                # Its processes start (an interpreter each) before the first mail comes.
                await self._worker.ready()
        handler = InboxHandler(self.db, self.config, self.inbox_wake)
        host, port = self.config.listen_host_port
        try:
            self._smtp = await loop.create_server(smtp_factory(handler, self.config), host, port)
        except OSError:
            if isinstance(self._worker, WorkerProcesses):
                await asyncio.to_thread(self._worker.close)
            raise
        log.info("listening for SMTP on %s:%d", *self.address)

    def _inbox_worker(self) -> InboxWorker | WorkerProcesses:
        """``server.inbox_workers`` processes of their own, or (0) this process itself."""
        processes = self.config.server.inbox_workers
        if processes:
            return WorkerProcesses(
                self.config, processes, self.worker_id, self.outbox_wake, hand_over_replies=True
            )
        return InboxWorker(
            self.db, self.config, self.worker_id, self.outbox_wake, hand_over_replies=True
        )

    async def run(self) -> None:
        """Serve until ``stop()`` (or SIGTERM/SIGINT when installed)."""
        from pbm.mail.outbound import SEND_CONCURRENCY, OutboxSender, transport_from_config

        if self._smtp is None:
            await self.start()
        sender = OutboxSender(
            self.db,
            self.config,
            transport_from_config(self.config),
            worker=self.worker_id,
            concurrency=SEND_CONCURRENCY,
        )
        tasks = [
            asyncio.create_task(sender.run_forever(self.stopping, self.outbox_wake), name="outbox"),
        ]
        tasks.append(asyncio.create_task(self._run_timers(), name="timers"))

        def written(batch: Batch) -> None:
            # The worker claimed its replies for our sender: no need to look for them.
            if batch.replies:
                sender.hand_over(batch.replies)
            if batch.unclaimed:
                self.outbox_wake.set()

        if self._worker is not None:
            tasks.append(
                asyncio.create_task(
                    self._worker.run_forever(self.stopping, self.inbox_wake, written),
                    name="inbox",
                )
            )
        else:
            log.warning("server.process_inbox is false: mail is kept but not acted on")
        try:
            await self.stopping.wait()
        finally:
            assert self._smtp is not None
            self._smtp.close()
            await self._smtp.wait_closed()
            self.inbox_wake.set()
            self.outbox_wake.set()
            done, pending = await asyncio.wait(tasks, timeout=10)
            for t in pending:
                t.cancel()
            for t in done:
                if not t.cancelled() and t.exception() is not None:
                    log.error("task %s failed", t.get_name(), exc_info=t.exception())
            log.info("stopped")

    async def _run_timers(self) -> None:
        """Reminders and forfeits (``pbm.clock.tick``) every ``server.tick_seconds``."""
        from pbm.clock import tick

        while not self.stopping.is_set():
            try:
                acted = await asyncio.to_thread(tick, self.db, self.config, store.utc_now())
                if acted:
                    self.outbox_wake.set()
            except Exception:
                log.exception("timers: database trouble; trying again next time")
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.stopping.wait(), self.config.server.tick_seconds)

    def stop(self) -> None:
        self.stopping.set()


async def serve(config: Config) -> None:
    """Run the server until SIGTERM or SIGINT."""
    server = Server(config)
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, server.stop)
    await server.start()
    host, port = server.address
    print(f"pbm serve: SMTP on {host}:{port}, mail for {config.mail.address}", flush=True)
    await server.run()
