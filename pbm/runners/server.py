"""``pbm serve``: the listener and the runners (inbox, outbox, computer, timers) on one loop.

The loop drives everything; database work and the drawing of board pictures
run in threads, so the loop never blocks on them; the computer thinks in a
process of its own, and the web site runs in another (``website``). SIGTERM
and Ctrl-C stop everything cleanly; a restart carries on with whatever the
inbox and outbox still hold.
"""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import socket

from pbm.config import Config
from pbm.mail.transports import transport_from_config
from pbm.runners import website
from pbm.runners.computer_runner import ComputerRunner
from pbm.runners.inbox_runner import InboxRunner
from pbm.runners.outbox_runner import SENDS_AT_ONCE, OutboxRunner, worker_name
from pbm.runners.timer_runner import PruneRunner, TimerRunner
from pbm.smtp.handler import InboxHandler
from pbm.smtp.lifecycle import Listener, listen
from pbm.store import inbox, outbox
from pbm.store.engine import Database
from pbm.usecases.site import Site

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
    """Give back the inbox and outbox rows claimed by a process of this host that has died.

    A server killed mid-mail leaves its claims behind; other instances take
    them over when the lease runs out, but a restarted server should carry on
    at once. Claims are named ``HOST:PID...``; only this host's dead PIDs are
    released, so live instances (on any host) keep theirs. An outbox row
    released so, whose send was begun, is sent again: at least once.
    """
    host = socket.gethostname()

    def dead(claimed_by: str) -> bool:
        name, _, rest = claimed_by.partition(":")
        pid = rest.split(":")[0]
        return name == host and pid.isdigit() and not _alive(int(pid))

    with db.transaction() as session:
        released = outbox.release_dead(session, dead) + inbox.release_dead(session, dead)
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
        self.worker_id = worker_name()
        self._listener: Listener | None = None

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
        # Before the first mail is worked out or sent: what a killed predecessor left claimed.
        await asyncio.to_thread(release_dead_claims, self.db)
        handler = InboxHandler(self.db, self.config, self.inbox_wake)
        self._listener = await listen(self.config, handler)
        log.info("listening: %s", self._listener)

    async def run(self) -> None:
        """Serve until ``stop()`` (or SIGTERM/SIGINT when installed)."""
        if self._listener is None:
            await self.start()
        site = Site(self.db, self.config)
        stop = self.stopping
        sending = OutboxRunner(
            self.db,
            self.config,
            transport_from_config(self.config),
            worker=self.worker_id,
            wake=self.outbox_wake,
            stop=stop,
        )
        runs = [
            sending.run(stop, at_once=SENDS_AT_ONCE),
            ComputerRunner(site, wake=self.computer_wake, sent=self.outbox_wake).run(stop),
            TimerRunner(self.db, self.config, sent=self.outbox_wake).run(stop),
            PruneRunner(self.db, self.config).run(stop),
        ]
        if self.config.server.process_inbox:
            written = (self.outbox_wake, self.computer_wake)
            inbox_runner = InboxRunner(site, self.worker_id, wake=self.inbox_wake, written=written)
            runs.append(inbox_runner.run(stop))
        else:
            log.warning("server.process_inbox is false: mail is kept but not acted on")
        tasks = [asyncio.create_task(r) for r in runs]
        try:
            await stop.wait()
        finally:
            await self.listener.close()  # a unix socket file is removed
            for event in (self.inbox_wake, self.outbox_wake, self.computer_wake):
                event.set()
            done, pending = await asyncio.wait(tasks, timeout=10)
            for task in pending:
                task.cancel()
            for task in done:
                if not task.cancelled() and task.exception() is not None:
                    log.error("a runner failed", exc_info=task.exception())
            log.info("stopped")

    def stop(self) -> None:
        self.stopping.set()


async def serve(config: Config) -> None:
    """Run the server until SIGTERM or SIGINT.

    ``CannotListen`` at the start when the mail's address or the web site's cannot be
    had (a port another program holds): nothing runs then.
    """
    # The web site's port first, bound here and kept (``website``): taken, it stops
    # pbm serve as a taken mail port does, before anything has begun.
    web_socket = website.bind(config.web) if config.web.listen else None
    try:
        await _serve(config, web_socket)
    finally:
        if web_socket is not None:
            web_socket.close()


async def _serve(config: Config, web_socket: socket.socket | None) -> None:
    server = Server(config)
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, server.stop)
    await server.start()
    # "pbm serve: SMTP on 127.0.0.1:2525, mail for ...", or "LMTP on unix:/PATH, ...":
    # the first line, which tests/mailserver.py reads.
    print(f"pbm serve: {server.listener}, mail for {config.mail.address}", flush=True)
    # The web site runs beside, started again should it end unasked (``WebProcess``).
    web = None
    if web_socket is not None:
        process = website.WebProcess(config, web_socket)
        web = asyncio.create_task(process.run_forever(server.stopping), name="web")
    try:
        await server.run()
    finally:
        server.stop()
        if web is not None:
            await web
        # Closed as the server stops, not left to the interpreter's end: the last SQLite
        # connection to close folds the write-ahead log into the file and removes it.
        server.db.close()
