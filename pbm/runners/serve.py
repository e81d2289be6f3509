"""``pbm serve``: the listener, the inbox worker, the outbox sender and the timers on one loop.

The loop drives everything; the inbox worker's CPU work runs in processes of
its own (``server.inbox_workers``; 0: in a thread here), database work in
threads, so the loop never blocks on it. SIGTERM and Ctrl-C stop everything
cleanly; a restart carries on with whatever the inbox and outbox still hold.
"""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import socket
from concurrent.futures import ThreadPoolExecutor

from pbm.config import Config
from pbm.mail import pictures
from pbm.mail.transports import transport_from_config
from pbm.runners.computer import ComputerPlayer
from pbm.runners.listener import InboxHandler, Listener, listen
from pbm.runners.sender import SEND_CONCURRENCY, OutboxSender
from pbm.runners.timers import run_prune, run_timers
from pbm.runners.website import WebProcess
from pbm.runners.worker import Batch, InboxWorker, WorkerProcesses
from pbm.store import outbox
from pbm.store.engine import Database

log = logging.getLogger("pbm.server")


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def release_dead_claims(db: Database) -> int:
    """Give back the outbox rows claimed by a process of this host that has died.

    A server killed mid-send leaves its claims behind; other instances take
    them over when the lease runs out, but a restarted server should carry on
    at once. Claims are named ``HOST:PID...``; only this host's dead PIDs are
    released, so live instances (on any host) keep theirs.
    """
    host = socket.gethostname()

    def dead(claimed_by: str) -> bool:
        name, _, rest = claimed_by.partition(":")
        pid = rest.split(":")[0]
        return name == host and pid.isdigit() and not _alive(int(pid))

    with db.transaction() as session:
        released = outbox.release_dead(session, dead)
    if released:
        log.info("took back %d mail(s) claimed by a stopped server", released)
    return released


class Server:
    """The running pieces of ``pbm serve``; ``run()`` until ``stop()``."""

    def __init__(self, config: Config, db: Database | None = None) -> None:
        self.config = config
        self.db = db or Database.open(config)
        self.stopping = asyncio.Event()
        self.inbox_wake = asyncio.Event()
        self.outbox_wake = asyncio.Event()
        self.computer_wake = asyncio.Event()
        self.worker_id = f"{socket.gethostname()}:{os.getpid()}"
        self._listener: Listener | None = None
        self._worker: InboxWorker | WorkerProcesses | None = None  # None: process_inbox off

    @property
    def listener(self) -> Listener:
        """The started listener: ``str()`` says what it speaks where (``SMTP on HOST:PORT``)."""
        assert self._listener is not None, "start() first"
        return self._listener

    @property
    def address(self) -> tuple[str, int]:
        """Where the listener is bound on TCP (the real port when 0 was configured)."""
        return self.listener.address

    async def start(self) -> None:
        loop = asyncio.get_running_loop()
        # Blocking work runs in threads (asyncio.to_thread): the inbox worker, the
        # inbox writer, outbox records and several Maildir/SMTP sends at once. The
        # default pool (CPUs + 4 threads) would make the worker queue behind sends.
        loop.set_default_executor(ThreadPoolExecutor(max_workers=32, thread_name_prefix="pbm"))
        # Before the first mail is sent: what a killed predecessor left claimed.
        await asyncio.to_thread(release_dead_claims, self.db)
        if self.config.server.process_inbox:
            self._worker = self._inbox_worker()
            if isinstance(self._worker, WorkerProcesses):
                # Its processes start (an interpreter each) before the first mail comes.
                await self._worker.ready()
        handler = InboxHandler(self.db, self.config, self.inbox_wake)
        try:
            self._listener = await listen(self.config, handler)
        except (OSError, ValueError):  # ValueError: ConfigError, a listen value of no known form
            if isinstance(self._worker, WorkerProcesses):
                await asyncio.to_thread(self._worker.close)
            raise
        log.info("listening: %s", self._listener)

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
        if self._listener is None:
            await self.start()
        sender = OutboxSender(
            self.db,
            self.config,
            transport_from_config(self.config),
            worker=self.worker_id,
            concurrency=SEND_CONCURRENCY,
            poll_seconds=self.config.outbound.poll_seconds,
        )
        player = ComputerPlayer(self.db, self.config, self.outbox_wake)
        tasks = [
            asyncio.create_task(sender.run_forever(self.stopping, self.outbox_wake), name="outbox"),
            asyncio.create_task(
                player.run_forever(self.stopping, self.computer_wake), name="computer"
            ),
            asyncio.create_task(
                run_timers(self.db, self.config, self.stopping, self.outbox_wake), name="timers"
            ),
            asyncio.create_task(run_prune(self.db, self.config, self.stopping), name="prune"),
        ]

        def written(batch: Batch) -> None:
            self.computer_wake.set()  # a challenge or a move for the computer, perhaps
            # The worker claimed its replies for our sender: no need to look for them.
            if batch.replies:
                pictures.keep(batch.pictures)  # drawn by the worker: not again here
                sender.hand_over(batch.replies, batch.drawing)
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
            await self.listener.close()  # a unix socket file is removed
            self.inbox_wake.set()
            self.outbox_wake.set()
            done, pending = await asyncio.wait(tasks, timeout=10)
            for t in pending:
                t.cancel()
            for t in done:
                if not t.cancelled() and t.exception() is not None:
                    log.error("task %s failed", t.get_name(), exc_info=t.exception())
            log.info("stopped")

    def stop(self) -> None:
        self.stopping.set()


async def serve(config: Config) -> None:
    """Run the server until SIGTERM or SIGINT."""
    server = Server(config)
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, server.stop)
    await server.start()
    # "pbm serve: SMTP on 127.0.0.1:2525, mail for ...", or "LMTP on unix:/PATH, ...":
    # the first line, which tests/mailserver.py reads.
    print(f"pbm serve: {server.listener}, mail for {config.mail.address}", flush=True)
    web = WebProcess(config) if config.web.listen else None
    try:
        await server.run()
    finally:
        if web is not None:
            await asyncio.to_thread(web.stop)
