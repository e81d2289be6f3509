"""The inbox worker: received mail flows through small named steps, then is marked done.

Each step takes the worker and the mail being processed and either lets it go
on or settles its fate (``mail.outcome``): ``parse`` -> ``screen`` (robots,
bounces and lists get no answer) -> ``dedupe`` (a Message-ID already acted on)
-> ``run_commands`` (subject, body or reply mode, through the service layer).
Every change, and every reply, happens in a service transaction; the inbox
row is marked last, so a crash in between only means the mail is looked at
again, and the service's Message-ID record keeps it from acting twice.

Before any of that, ``prepare`` decodes each waiting mail and works out its
moves (``Service.plan_move``) on a snapshot, taking no write lock: with
SQLite there is one write lock for everybody, and the listener and the
outbox sender need it too. Under the lock a planned move is only written.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import functools
import logging
import multiprocessing
import os
import signal
import sys
import threading
import time
import zlib
from collections.abc import Awaitable, Callable, Collection, Iterator
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from datetime import datetime, timedelta

import sqlalchemy as sa
from sqlmodel import Session, col, select

from pbm import commands, games, store
from pbm import service as svc
from pbm.config import Config
from pbm.mail import dispatch
from pbm.mail.inbound import Inbound, command_candidates, read_message, subject_command_text
from pbm.replies import Reply

log = logging.getLogger("pbm.worker")

POLL_SECONDS = 1.0  # look for mail other instances accepted, even when not woken
BATCH = 20  # at most this many mails are committed together (see BatchDatabase)
BATCH_SECONDS = 0.02  # ... or as many as take this long under the write lock
PREPARE_SECONDS = 0.05  # ... or as many as take this long to prepare (no lock held)
READ_AHEAD = 8  # mails whose boards are read at once for planning (Service.read_ahead)
# Replies handed straight to this server's sender are claimed for this long: if
# the hand-over is lost (a worker process dies after its commit), any sender
# takes them once the claim runs out. Longer than the sender's margin
# (``outbound.LEASE_MARGIN``), which it keeps before starting a send.
HANDOVER_LEASE = timedelta(minutes=3)


@dataclass
class Mail:
    """One inbox row on its way through the steps."""

    row_id: int
    raw: bytes
    mail_from: str
    rcpt: list[str]
    inbound: Inbound | None = None
    outcome: str | None = None  # None: go on; else the inbox status: done / ignored / failed
    note: str = ""
    replies: list[Reply] = field(default_factory=list)
    plans: dict[int, svc.MovePlan] = field(default_factory=dict)  # by command line
    planned: bool = False  # ``prepare`` has run (plans or not)
    # (line index, command, comment) of the lines that are commands, by ``decode``
    commands: list[tuple[int, commands.Command, str]] = field(default_factory=list)

    def settle(self, outcome: str, note: str) -> None:
        self.outcome, self.note = outcome, note


Step = Callable[["InboxWorker", Mail], None]


@dataclass(frozen=True)
class Batch:
    """What one batch did: mails processed, and the replies it wrote.

    ``replies`` are claimed for this server's sender (``hand_over_replies``)
    and are for it to send at once; ``unclaimed`` says other replies were
    written that the sender must find for itself (due later, say).
    """

    done: int
    replies: list[store.ClaimedMail] = field(default_factory=list)
    unclaimed: bool = False


NOTHING = Batch(0)


def parse(worker: InboxWorker, mail: Mail) -> None:
    """Decode the message (never raises: garbage comes back with an ignore reason)."""
    if mail.inbound is not None:  # already decoded by ``prepare``
        return
    mail.inbound = read_message(
        mail.raw,
        mail_from=mail.mail_from,
        rcpt_tos=mail.rcpt,
        server_address=worker.config.mail.address,
    )


def screen(worker: InboxWorker, mail: Mail) -> None:
    """Never answer robots: auto-replies, bounces, list mail, ourselves (RFC 3834 §2)."""
    assert mail.inbound is not None
    if mail.inbound.ignore_reason:
        log.info("inbox %d ignored: %s", mail.row_id, mail.inbound.ignore_reason)
        mail.settle("ignored", mail.inbound.ignore_reason)


def dedupe(worker: InboxWorker, mail: Mail) -> None:
    """A Message-ID already acted on is not acted on again (redelivery, a second copy)."""
    assert mail.inbound is not None
    mid = mail.inbound.message_id
    if mid and worker.db.seen(mid):
        log.info("inbox %d ignored: %s was already processed", mail.row_id, mid)
        mail.settle("ignored", f"duplicate of {mid}")


def run_commands(worker: InboxWorker, mail: Mail) -> None:
    """Find the commands (reply, subject or body mode) and carry each out."""
    inbound = mail.inbound
    assert inbound is not None
    names = games.names()
    mid = inbound.message_id or None
    sender = inbound.sender
    token = inbound.token
    reply_mode = token is not None
    lines, found_comment = _candidates(inbound)
    if token is not None and not token.is_valid(worker.config.mail.secret):
        worker.error(sender, svc.WrongPassword("This reply address is not valid."), "", mid)
        mail.settle("done", "wrong reply token")
        return
    if not lines:
        if reply_mode:
            worker.error(
                sender,
                "Your reply had no command. Write your move (or resign, show, history, "
                "moves, undo, accept, reject, chat) on the first line.",
                "",
                mid,
            )
            mail.settle("done", "empty reply")
            return
        # A malformed command in a subject the sender typed (not "Re: <our subject>"),
        # then in the body, is explained and quoted; help is for mail with none at all.
        typed = subject_command_text(inbound.subject)
        tried = [typed] if typed and typed == inbound.subject else []
        tried += [ln.strip() for ln in inbound.new_text.splitlines()]
        attempted = [(ln, why) for ln in tried if (why := commands.explain(ln, names))]
        if attempted:
            worker.error(sender, attempted[0][1], attempted[0][0], mid)
            mail.settle("done", "malformed command")
        else:
            mail.replies += worker.service.help(None, sender=sender, message_id=mid)
            mail.settle("done", "no command: sent help")
        return
    done = 0
    for i, line, cmd, comment in _commands(inbound, lines, found_comment):
        key = mid if (mid is None or len(lines) == 1) else f"{mid}#{i + 1}"
        why = commands.explain_reply(line) if token is not None else commands.explain(line, names)
        if cmd is None:
            worker.error(
                sender,
                why or f"{line!r} is not a command. Send 'help' for the commands.",
                line,
                key,
                board=token.board if token else None,
            )
            continue
        ctx = dispatch.Context(
            sender, key, comment, token.token if token else None, mail.plans.get(i)
        )
        try:
            mail.replies += dispatch.run(worker.service, cmd, ctx)
            done += 1
        except svc.AlreadyProcessed:
            log.info("inbox %d: command %d was already carried out", mail.row_id, i + 1)
        except svc.ServiceError as exc:
            board = getattr(cmd, "board", None)
            worker.error(sender, exc, line, key, board=board)
    mail.settle("done", f"{done} of {len(lines)} command(s) carried out")


STEPS: tuple[Step, ...] = (parse, screen, dedupe, run_commands)


def _boards(mail: Mail) -> Iterator[int | None]:
    """The boards a decoded mail's commands are about."""
    for _, cmd, _ in mail.commands:
        yield getattr(cmd, "board", None)


def sender_share(mail_from: str, shares: int) -> int:
    """Which of ``shares`` workers takes mail from this envelope sender (stable everywhere)."""
    return zlib.crc32(mail_from.strip().strip("<>").lower().encode("utf-8", "replace")) % shares


def _candidates(inbound: Inbound) -> tuple[list[str], str]:
    """The lines to read as commands, and the comment (COMMANDS.md's modes)."""
    names = games.names()

    def is_command(line: str) -> bool:
        return commands.parse_command(line, names) is not None

    reply_mode = inbound.token is not None
    return command_candidates(inbound, reply_mode=reply_mode, is_command=is_command)


def _commands(
    inbound: Inbound, lines: list[str], comment: str
) -> Iterator[tuple[int, str, commands.Command | None, str]]:
    """(index, line, command or None, comment so far) for each candidate line."""
    token = inbound.token
    names = games.names()
    for i, line in enumerate(lines):
        cmd: commands.Command | None
        if token is not None:
            rc = commands.parse_reply_command(line)
            # The board, not a game word, says which game a reply is about.
            cmd = rc.bind("", token.board, token.userid) if rc is not None else None
            if rc is not None and rc.text:  # "chat Good luck!": the line starts the message
                comment = f"{rc.text}\n{comment}".strip("\n")
        else:
            cmd = commands.parse_command(line, names)
        yield i, line, cmd, comment


def decode(worker: InboxWorker, mail: Mail) -> None:
    """Outside the write lock: decode the mail and find its commands (never raises)."""
    try:
        parse(worker, mail)
        inbound = mail.inbound
        assert inbound is not None
        token = inbound.token
        if inbound.ignore_reason or (
            token is not None and not token.is_valid(worker.config.mail.secret)
        ):
            return
        lines, found_comment = _candidates(inbound)
        mail.commands = [
            (i, cmd, comment)
            for i, _, cmd, comment in _commands(inbound, lines, found_comment)
            if cmd is not None
        ]
    except Exception:  # the mail is carried out (or its fault reported) under the lock
        log.debug("inbox %d: could not decode", mail.row_id, exc_info=True)


def prepare(worker: InboxWorker, mail: Mail) -> None:
    """Outside the write lock: plan the decoded mail's moves (never raises).

    Planning only saves work: a move without a plan, or whose board changed
    meanwhile, is carried out in full by ``run_commands``.
    """
    inbound = mail.inbound
    if inbound is None:
        return
    token = inbound.token.token if inbound.token else None
    for i, cmd, comment in mail.commands:
        try:
            # A plan remembers nothing: the Message-ID is recorded when it is written.
            ctx = dispatch.Context(inbound.sender, None, comment, token)
            plan = dispatch.plan(worker.service, cmd, ctx)
        except Exception:  # carried out (or its fault reported) under the lock
            log.debug("inbox %d: could not prepare", mail.row_id, exc_info=True)
            continue
        if plan is not None:
            mail.plans[i] = plan
    mail.planned = True


class BatchDatabase:
    """A ``Database`` whose transactions, inside ``batch()``, are savepoints of one.

    Each command keeps its all-or-nothing unit (a SAVEPOINT that is rolled
    back alone when the command is refused), but a whole batch of mails —
    claim, commands, replies, inbox marks — is committed once: one fsync
    instead of several per mail. A crash before that commit leaves the mails
    unclaimed, to be processed again; nothing was promised outside.
    """

    def __init__(self, db: store.Database) -> None:
        self.db = db
        self._session: Session | None = None
        self._snapshot: Session | None = None
        # In a batch (``know_seen``): its mails' Message-IDs acted on when it began,
        # and those not yet asked about (a second ask goes to the database).
        self._seen: set[str] = set()
        self._unasked: set[str] = set()

    @contextlib.contextmanager
    def transaction(self) -> Iterator[Session]:
        if self._session is None:
            with self.db.transaction() as s:
                yield s
        else:
            with self._session.begin_nested():
                yield self._session

    @contextlib.contextmanager
    def statement(self) -> Iterator[Session]:
        """For one statement: the batch's session (a statement is atomic: no savepoint)."""
        if self._session is None:
            with self.db.transaction() as s:
                yield s
        else:
            yield self._session

    @contextlib.contextmanager
    def read(self) -> Iterator[Session]:
        """A snapshot of what is committed (not of the batch under way).

        Inside ``snapshot()``, that one snapshot, shared by all who read.
        """
        if self._snapshot is not None:
            yield self._snapshot
        else:
            with self.db.read() as s:
                yield s

    @contextlib.contextmanager
    def snapshot(self) -> Iterator[Session]:
        """One read-only snapshot for everything read inside (a batch's preparing)."""
        with self.db.read() as s:
            self._snapshot = s
            try:
                yield s
            finally:
                self._snapshot = None

    def know_seen(self, message_ids: Collection[str]) -> None:
        """In a batch: read at once which of these Message-IDs were acted on, for ``seen``."""
        assert self._session is not None
        self._unasked = set(message_ids)
        self._seen = store.messages_seen(self._session, self._unasked)

    def seen(self, message_id: str) -> bool:
        """Whether a mail with this Message-ID was acted on (in the batch, or before).

        Asks once per Message-ID: a second mail with it in the same batch (the
        same mail delivered twice) asks again, since the first may have acted.
        """
        if self._session is None:
            with self.db.read() as s:
                return store.message_seen(s, message_id)
        if message_id in self._unasked:
            self._unasked.discard(message_id)
            return message_id in self._seen
        return store.message_seen(self._session, message_id)

    @contextlib.contextmanager
    def batch(self) -> Iterator[Session]:
        """One outer transaction for everything done inside."""
        with self.db.transaction() as s:
            self._session = s
            try:
                yield s
            finally:
                self._session = None
                self._unasked = set()


class InboxWorker:
    """Takes inbox rows and runs them through ``STEPS``."""

    def __init__(
        self,
        db: store.Database,
        config: Config,
        worker_id: str,
        outbox_wake: asyncio.Event | None = None,
        clock: Callable[[], datetime] = store.utc_now,
        shard: tuple[int, int] = (0, 1),
        hand_over_replies: bool = False,
    ) -> None:
        """``shard`` (k, n): take only the mail of senders whose share is k of n.

        ``hand_over_replies``: claim the replies a batch writes for the sender
        of this server (``worker_id``), in the batch's own transaction, and
        return them from ``run_batch``; the sender then need not look for them.
        """
        self.shard = shard
        self.db = BatchDatabase(db)
        self.config = config
        self.worker_id = worker_id
        self.outbox_wake = outbox_wake
        self.clock = clock
        self.hand_over_replies = hand_over_replies
        self.service = svc.Service(self.db, config, clock)
        self._written: list[int] = []  # outbox ids written in the batch under way
        self.service.on_queued = self._written.extend
        self._prepared: dict[int, Mail] = {}  # row id -> a mail prepared but not yet done

    def error(
        self,
        to: str,
        error: svc.ServiceError | str,
        command: str,
        message_id: str | None,
        board: int | None = None,
    ) -> None:
        """Answer a refused command, at most ``limits.error_replies_per_hour`` per sender."""
        limit = self.config.limits.error_replies_per_hour
        if self._recent_errors(to) >= limit:
            log.warning("not answering %s: %d error replies in the last hour", to, limit)
            return
        self.service.report_error(to, error, command=command, board=board, message_id=message_id)

    def _recent_errors(self, to: str) -> int:
        since = self.clock() - timedelta(hours=1)
        with self.db.transaction() as s:
            n = s.exec(
                select(sa.func.count())
                .select_from(store.OutboxMessage)
                .where(
                    sa.func.lower(store.OutboxMessage.to_addr) == to.lower(),
                    col(store.OutboxMessage.is_error).is_(True),
                    col(store.OutboxMessage.created_at) >= since,
                )
            ).one()
            return int(n)

    def process(self, mail: Mail) -> Mail:
        """Run one mail through the steps; its ``outcome`` is then set (see ``finish``)."""
        try:
            # A savepoint per mail: whatever goes wrong in one mail, even in the
            # database, is undone alone and cannot spoil the rest of the batch.
            with self.db.transaction():
                for step in STEPS:
                    step(self, mail)
                    if mail.outcome is not None:
                        break
        except Exception as exc:  # a broken mail must never stop the worker
            log.exception("inbox %d failed", mail.row_id)
            mail.settle("failed", f"{type(exc).__name__}: {exc}")
        if mail.outcome is None:
            mail.settle("done", mail.note)
        return mail

    def finish(self, mails: list[Mail]) -> None:
        """Mark the inbox rows of processed mails, all with one statement."""
        with self.db.statement() as s:
            finished = [
                store.Finished(
                    m.row_id,
                    m.outcome or "done",
                    m.note[:500],
                    # For the inbox's index: accepting a mail does not read it.
                    (m.inbound.message_id or None) if m.inbound is not None else None,
                )
                for m in mails
            ]
            store.finish_inbox_many(s, finished, self.clock())

    def run_batch(self, limit: int = BATCH) -> Batch:
        """Process waiting mails in one batch.

        The mails are read from a snapshot and prepared (decoded, moves
        planned) with no lock held; then one write transaction claims them
        and carries them out. A batch ends after ``limit`` mails or
        ``PREPARE_SECONDS`` of preparing or ``BATCH_SECONDS`` of work under
        the lock, so the database's write lock (SQLite has one for
        everybody) is never held long: the listener must be able to commit
        new mail while we work.
        """
        k, n = self.shard
        # Outside the write lock, on one snapshot: the waiting mails, decoded and planned.
        with self.db.snapshot() as s:
            waiting = [
                row
                for row in store.waiting_inbox(s, self.clock(), limit=limit * n)
                if n == 1 or sender_share(row.mail_from, n) == k
            ][:limit]
            # Mails decoded or planned last time but left for lack of time keep their
            # work (a plan that has gone stale meanwhile is noticed when it is applied).
            prepared, self._prepared = self._prepared, {}
            deadline = time.monotonic() + PREPARE_SECONDS
            mails: list[Mail] = []
            out_of_time = False
            for start in range(0, len(waiting), READ_AHEAD):
                chunk = []
                for row_id, raw, mail_from, rcpt in waiting[start : start + READ_AHEAD]:
                    mail = prepared.get(row_id)
                    if mail is None:
                        mail = Mail(row_id, raw, mail_from, rcpt.split("\n"))
                        decode(self, mail)
                    chunk.append(mail)
                # What planning these reads, read for all their boards at once.
                boards = {b for m in chunk if not m.planned for b in _boards(m) if b is not None}
                self.service.read_ahead(s, boards)
                for i, mail in enumerate(chunk):
                    if not mail.planned:
                        if mails and time.monotonic() > deadline:
                            # The rest wait for the next batch, in order, decoded.
                            self._prepared.update((m.row_id, m) for m in chunk[i:])
                            out_of_time = True
                            break
                        prepare(self, mail)
                    mails.append(mail)
                if out_of_time:
                    break
        if not mails:
            return NOTHING
        deadline = time.monotonic() + BATCH_SECONDS
        handed: list[store.ClaimedMail] = []
        self._written.clear()
        with self.db.batch() as s:
            claimed = set(
                store.claim_inbox(
                    s,
                    self.worker_id,
                    self.clock(),
                    limit=len(mails),
                    ids=[m.row_id for m in mails],
                )
            )
            # For ``dedupe``: one read for the batch, not one a mail.
            self.db.know_seen({m.inbound.message_id for m in mails if m.inbound is not None} - {""})
            late: list[int] = []
            processed: list[Mail] = []
            for mail in mails:
                if mail.row_id not in claimed:
                    continue  # another worker took it
                if processed and time.monotonic() > deadline:
                    # Out of time: it goes back, for the next batch (or another worker).
                    late.append(mail.row_id)
                    self._prepared[mail.row_id] = mail
                    continue
                processed.append(self.process(mail))
            self.finish(processed)
            if late:
                store.release_inbox(s, late)
            if self.hand_over_replies:
                handed = store.claim_written(
                    s, self._written, self.worker_id, self.clock(), HANDOVER_LEASE
                )
        # Rolled-back rows are among the written ids too: then the sender looks in vain.
        return Batch(len(processed), handed, unclaimed=len(handed) < len(self._written))

    async def run_forever(
        self,
        stop: asyncio.Event,
        wake: asyncio.Event,
        written: Callable[[Batch], None] | None = None,
    ) -> None:
        """Drain the inbox whenever woken (and every ``POLL_SECONDS``) until ``stop``.

        ``written`` is told of each batch's replies (else ``outbox_wake`` is set).
        """
        batch = functools.partial(asyncio.to_thread, self.run_batch)
        await drain(batch, stop, wake, written or _waker(self.outbox_wake))


def _waker(outbox_wake: asyncio.Event | None) -> Callable[[Batch], None]:
    """Tell the sender of a batch's replies by waking it (it finds them itself)."""

    def written(batch: Batch) -> None:
        if outbox_wake is not None and (batch.replies or batch.unclaimed):
            outbox_wake.set()

    return written


async def drain(
    batch: Callable[[], Awaitable[Batch]],
    stop: asyncio.Event,
    wake: asyncio.Event,
    written: Callable[[Batch], None],
) -> None:
    """Run ``batch`` while it finds mail, then whenever woken (or every ``POLL_SECONDS``).

    ``written`` gets each batch that did something, for its replies.
    """
    while not stop.is_set():
        wake.clear()
        try:
            done = await batch()
        except Exception:
            log.exception("inbox worker: database trouble; trying again")
            done = NOTHING
        if done.done:
            written(done)
            continue
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(wake.wait(), POLL_SECONDS)


# ---------------------------------------------------------------------------
# Worker processes (``server.inbox_workers``)

_PROCESS_WORKER: InboxWorker | None = None


def _die_with(server_pid: int) -> None:
    """Never outlive the server, even one killed with SIGKILL.

    Its mail claims carry the server's name, so a restarted server takes
    them back at once (``release_dead_claims``); nobody else may still be
    working on them by then.
    """
    if sys.platform.startswith("linux"):
        pr_set_pdeathsig = 1  # prctl(2): this signal when the parent dies
        ctypes.CDLL(None, use_errno=True).prctl(pr_set_pdeathsig, signal.SIGKILL)
    else:  # elsewhere, look every second

        def watch() -> None:
            while os.getppid() == server_pid:
                time.sleep(1.0)
            os._exit(1)

        threading.Thread(target=watch, name="pbm-watch-server", daemon=True).start()
    if os.getppid() != server_pid:  # it died before we asked
        os._exit(1)


def _start_process(
    config: Config, worker_id: str, server_pid: int, shard: tuple[int, int], hand_over: bool
) -> None:
    """A worker process's start: bound to the server's life, its own log and connection."""
    from pbm.mail.server import configure_logging

    global _PROCESS_WORKER
    _die_with(server_pid)
    # Ctrl-C reaches every process of the terminal's group: the server, not the
    # worker, decides when to stop (it lets the batch under way finish first).
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    configure_logging(config.server.log_level)
    db = store.Database.open(config)
    _PROCESS_WORKER = InboxWorker(db, config, worker_id, shard=shard, hand_over_replies=hand_over)


def _ping() -> bool:
    return _PROCESS_WORKER is not None


def _run_in_process() -> Batch:
    assert _PROCESS_WORKER is not None
    return _PROCESS_WORKER.run_batch()


class WorkerProcesses:
    """``InboxWorker``s in processes of their own, driven from the server's loop.

    Deciding moves and writing board mails is CPU work; in processes of
    their own it runs beside the listener and the outbox sender instead of
    taking turns with them for one interpreter. With several processes each
    takes the mail of its share of senders (``InboxWorker.shard``), so one
    sender's mails are still carried out one after the other, in order. They
    claim mail under the server's name (``worker_id``) and die with the server.
    """

    def __init__(
        self,
        config: Config,
        processes: int,
        worker_id: str,
        outbox_wake: asyncio.Event | None = None,
        hand_over_replies: bool = False,
    ) -> None:
        """``hand_over_replies`` as for ``InboxWorker``."""
        self.config = config
        self.processes = processes
        self.worker_id = worker_id
        self.outbox_wake = outbox_wake
        self.hand_over_replies = hand_over_replies
        self._pools = [self._new_pool(k) for k in range(processes)]

    def _new_pool(self, k: int) -> ProcessPoolExecutor:
        # "spawn": a fresh interpreter; forking a process that runs threads is unsafe.
        return ProcessPoolExecutor(
            1,
            mp_context=multiprocessing.get_context("spawn"),
            initializer=_start_process,
            initargs=(
                self.config,
                self.worker_id,
                os.getpid(),
                (k, self.processes),
                self.hand_over_replies,
            ),
        )

    async def ready(self) -> None:
        """Start the processes and wait until each has connected to the database."""
        loop = asyncio.get_running_loop()
        await asyncio.gather(*(loop.run_in_executor(pool, _ping) for pool in self._pools))

    def close(self) -> None:
        """Stop the processes (each finishes its batch first); blocking."""
        for pool in self._pools:
            pool.shutdown(wait=True)

    async def run_forever(
        self,
        stop: asyncio.Event,
        wake: asyncio.Event,
        written: Callable[[Batch], None] | None = None,
    ) -> None:
        """As ``InboxWorker.run_forever``, each process on its share of the mail."""
        loop = asyncio.get_running_loop()
        # Every process is woken by new mail, whoever it is for.
        wakes = [asyncio.Event() for _ in self._pools]

        async def relay() -> None:
            while not stop.is_set():
                await _wait_either(stop, wake)
                wake.clear()
                for w in wakes:
                    w.set()

        def batch(k: int) -> Callable[[], Awaitable[Batch]]:
            async def run() -> Batch:
                try:
                    return await loop.run_in_executor(self._pools[k], _run_in_process)
                except BrokenProcessPool:
                    log.error("inbox worker process %d died; starting a new one", k + 1)
                    await asyncio.to_thread(self._pools[k].shutdown, wait=False)
                    self._pools[k] = self._new_pool(k)
                    return NOTHING

            return run

        relaying = asyncio.create_task(relay())
        try:
            await asyncio.gather(
                *(
                    drain(batch(k), stop, wakes[k], written or _waker(self.outbox_wake))
                    for k in range(self.processes)
                )
            )
        finally:
            relaying.cancel()
            # The batch under way is finished and committed; then the processes exit.
            await asyncio.to_thread(self.close)


async def _wait_either(a: asyncio.Event, b: asyncio.Event) -> None:
    waiters = [asyncio.ensure_future(a.wait()), asyncio.ensure_future(b.wait())]
    try:
        await asyncio.wait(waiters, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for waiter in waiters:
            waiter.cancel()
