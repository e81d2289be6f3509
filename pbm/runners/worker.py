"""The inbox worker: waiting mail through the pipeline, its commands carried out in batches.

A batch is worked out on a snapshot, holding no lock: the waiting mails go
through the pipeline's steps (``pbm.mail.pipeline``) and every command they
hold is decided (``pbm.usecases.unit.decide``); passwords are checked in the
background first, mail that comes while the first mail's check goes on is
read meanwhile (its checks begin too), and mails still waiting for theirs
are held for the next batch (``InboxWorker._checked``). Then one short write
transaction takes the mails that still wait, writes what was decided (a
command whose board changed meanwhile is decided again there), marks the
mails and, for this server's sender, claims the replies it wrote. A batch
ends after ``BATCH`` mails or ``PREPARE_SECONDS`` of work, so new mail and
the other writers never wait long for SQLite's single write lock.
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
from collections.abc import Awaitable, Callable, Sequence
from concurrent import futures
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from typing import NamedTuple

from sqlalchemy import exc as sa_exc
from sqlmodel import Session

from pbm import games
from pbm.config import Config
from pbm.mail import pictures
from pbm.mail.controls import one_line
from pbm.mail.pipeline import Env, Mail, run_steps
from pbm.runners.logs import Throttled, configure_logging
from pbm.store import inbox, outbox
from pbm.store.engine import Database
from pbm.usecases import unit
from pbm.usecases.queries import game_of, open_boards_of
from pbm.usecases.site import Site, utc_now
from pbm.usecases.world import World, load_accounts

log = logging.getLogger("pbm.worker")

POLL_SECONDS = 1.0  # look for mail other instances accepted, even when not woken
BATCH = 20  # mails worked out and written together
PREPARE_SECONDS = 0.05  # ... or as many as take this long to work out (no lock held)
# While the first waiting mail's password is being checked, look for new mail this often
# (its checks begin then too).
LOOK_SECONDS = 0.01
# ... and as many as are written in this long: the write lock is let go after
# the mail that passes it (a mail's commands are written together), and the
# rest of the batch waits for the next one.
WRITE_SECONDS = 0.2
# A worker process draws a batch's pictures this many at a time: the first mails need
# not wait for the last one's.
DRAWN_AT_ONCE = 8
# Replies handed straight to this server's sender are claimed for this long: if
# the hand-over is lost (a worker process dies after its commit), any sender
# takes them once the claim runs out. Longer than the sender's margin
# (``sender.LEASE_MARGIN``), which it keeps before starting a send.
HANDOVER_LEASE = timedelta(minutes=3)
# Faults no mail causes: the database is out of reach, locked or full. The batch
# is tried again as it is; any other fault is charged to the mail it came with.
TRANSIENT = (sa_exc.OperationalError, sa_exc.InterfaceError, sa_exc.TimeoutError, TimeoutError)


class Drawing(NamedTuple):
    """Board pictures a worker process is drawing after its batch: their keys (as
    replies store them, ``Picture.to_json``) and, to come, their PNGs."""

    pictures: tuple[str, ...]
    pngs: asyncio.Future[dict[str, bytes]]


@dataclass(frozen=True)
class Batch:
    """What one batch did: mails processed, and the replies it wrote.

    ``replies`` are claimed for this server's sender (``hand_over_replies``)
    and are for it to send at once; ``unclaimed`` says other replies were
    written that the sender must find for itself (due later, say).
    """

    done: int
    replies: list[outbox.ClaimedMail] = field(default_factory=list)
    unclaimed: bool = False
    # The PNGs of the replies' board pictures (``pictures.draw_all``), drawn here
    # after the commit: beside the server's loop, which sends them, not on it.
    pictures: dict[str, bytes] = field(default_factory=dict)
    # ... or, from a worker process, still being drawn there (``WorkerProcesses``).
    drawing: tuple[Drawing, ...] = ()


NOTHING = Batch(0)


def _with_pictures(batch: Batch) -> Batch:
    """``batch`` with the pictures of its replies drawn (those of an HTML board mail).

    What is written stays written: a picture that cannot be drawn here is
    left for the sender, which draws it (or says why not) as it would anyway."""
    shown = _shown(batch)
    return replace(batch, pictures=_drawn(shown)) if shown else batch


def _shown(batch: Batch) -> tuple[str, ...]:
    """The board pictures of a batch's replies (as they store them), each once, in order."""
    return tuple(dict.fromkeys(r.picture for r in batch.replies if r.picture))


def _drawn(shown: Sequence[str]) -> dict[str, bytes]:
    """The PNGs of these pictures (in a worker process: asked for by the server)."""
    try:
        return pictures.draw_all(shown)
    except Exception:
        log.exception("inbox worker: a board picture could not be drawn; the sender tries")
        return {}


def sender_share(mail_from: str, shares: int) -> int:
    """Which of ``shares`` workers takes mail from this envelope sender (stable everywhere)."""
    return zlib.crc32(mail_from.strip().strip("<>").lower().encode("utf-8", "replace")) % shares


class InboxWorker:
    """Works waiting mail out in batches (``run_batch``)."""

    def __init__(
        self,
        db: Database,
        config: Config,
        worker_id: str,
        outbox_wake: asyncio.Event | None = None,
        clock: Callable[[], datetime] = utc_now,
        *,
        shard: tuple[int, int] = (0, 1),
        hand_over_replies: bool = False,
        draws_pictures: bool = True,
    ) -> None:
        """``shard`` (k, n): take only the mail of senders whose share is k of n.

        ``hand_over_replies``: claim the replies a batch writes for the sender
        of this server (``worker_id``), in the batch's own transaction, and
        return them from ``run_batch``; the sender then need not look for them.
        ``draws_pictures``: draw their board pictures before returning them (a
        worker process leaves that to ``WorkerProcesses``, after the hand-over).
        """
        self.site = Site(db, config, clock)
        self.db = db
        self.config = config
        self.worker_id = worker_id
        self.outbox_wake = outbox_wake
        self.clock = clock
        self.shard = shard
        self.hand_over_replies = hand_over_replies
        self.draws_pictures = draws_pictures
        # Mails read already but not carried out yet: their passwords were still being
        # checked, or the batch's time ran out. The next look takes them as they are.
        self._held: dict[int, Mail] = {}
        # After a batch failed as a whole: this many batches of one mail, so that the
        # mail that causes it is found and charged (``server.mail_attempts``).
        self._alone = 0
        # The games' modules are loaded now (python-chess builds its tables, for
        # one), and what their pictures are laid on is drawn: the first mails after a
        # start would wait for it otherwise.
        games.registry()
        pictures.prepare()

    def _take_in(self, snapshot: Session, limit: int) -> list[Mail]:
        """This worker's share of the waiting mails, oldest first, through the pipeline's
        steps (once: a mail held from an earlier look was read then)."""
        k, n = self.shard
        waiting = [
            row
            for row in inbox.waiting(snapshot, limit * n)
            if n == 1 or sender_share(row.mail_from, n) == k
        ][:limit]
        env = Env(
            self.config,
            seen=functools.partial(inbox.seen, snapshot),
            game_of=functools.partial(game_of, snapshot),
            account=lambda userid: load_accounts(snapshot, [userid]).get(userid.lower()),
            open_boards=functools.partial(open_boards_of, snapshot),
            sent_to=functools.partial(outbox.recipients_of, snapshot),
        )
        held, self._held = self._held, {}
        return [
            held.get(row.id)
            or run_steps(
                Mail(row.id, row.raw, row.mail_from, row.rcpt_to.split("\n"), row.attempts), env
            )
            for row in waiting
        ]

    def _checked(self, world: World, mails: Sequence[Mail]) -> int:
        """How many of ``mails``, from the first, have had their passwords checked.

        The checks of every mail's passwords begin at once, in the background.
        While the first mail's go on, the answer is 0 after ``LOOK_SECONDS``:
        the batch looks at the inbox again, so mail that came meanwhile has its
        checks begun too. Once they are done, the others' are waited for as long
        as it may take to work mail out (``PREPARE_SECONDS``), and the batch
        carries out the mails up to the first still waiting (the rest are held,
        read, for the next batches). So a burst of players' first mails is
        carried out in the order it came, a few at a time as their checks end,
        not all at the end of the slowest.
        """
        check = self.site.passwords
        pairs = [unit.passwords(self.site, world, m.requests) for m in mails]
        running = [check.start(mail_pairs) for mail_pairs in pairs]
        if futures.wait(running[0], LOOK_SECONDS).not_done:
            return 0
        futures.wait([f for r in running[1:] for f in r], PREPARE_SECONDS)
        return next((i for i, p in enumerate(pairs) if i and check.start(p)), len(mails))

    def _decide(self, limit: int) -> list[tuple[Mail, list[unit.Decided]]]:
        """The next waiting mails whose passwords are checked, and their commands decided
        on one snapshot (none: no mail waits)."""
        while True:
            with self.db.read() as snapshot:
                mails = self._take_in(snapshot, limit)
                if not mails:
                    return []
                requests = [r for m in mails for r in m.requests]
                # The boards are read once it is known which mails go ahead (``preload``).
                world = unit.world_for(self.site, snapshot, requests, boards=False)
                ready = self._checked(world, mails)
                self._held = {m.row_id: m for m in mails[ready:]}
                if not ready:
                    continue  # the first mail's passwords are still being checked: look again
                mails = mails[:ready]
                unit.preload(world, [r for m in mails for r in m.requests])
                deadline = time.monotonic() + PREPARE_SECONDS
                decided: list[tuple[Mail, list[unit.Decided]]] = []
                for mail in mails:
                    if decided and time.monotonic() > deadline:
                        self._held[mail.row_id] = mail  # the rest waits for the next batch
                        continue
                    decided.append((mail, self._decided(world, mail)))
                return decided

    def _decided(self, world: World, mail: Mail) -> list[unit.Decided]:
        """The mail's commands decided; none, and ``mail.fault`` set, when deciding fails."""
        try:
            return [unit.decide(self.site, world, r) for r in mail.requests]
        except TRANSIENT:
            raise
        except Exception as exc:  # a bug that this mail finds: charged to it, never the rest
            log.exception("inbox %d: deciding its commands failed", mail.row_id)
            mail.fault = f"{type(exc).__name__}: {exc}"
            return []

    def run_batch(self, limit: int = BATCH) -> Batch:
        """Work out and carry out a batch of waiting mails; what it did.

        No single mail can stop the queue: a mail whose commands cannot be decided
        or written (whatever the fault, but the database's own) is charged an
        attempt, and after ``server.mail_attempts`` it is set aside as ``failed``
        (``pbm status`` says so, ``pbm inbox retry`` takes it back).
        """
        alone = self._alone > 0
        if alone:
            self._alone -= 1
        decided = self._decide(1 if alone else limit)
        if not decided:
            return NOTHING
        try:
            written = self._write(decided)
            return _with_pictures(written) if self.draws_pictures else written
        except TRANSIENT:
            raise
        except Exception as exc:
            if len(decided) > 1:  # which mail? one at a time from now on, for a while
                log.exception("inbox worker: a batch of %d failed; one at a time", len(decided))
                self._alone = len(decided)
                self._held = {}
                raise
            mail = decided[0][0]
            log.exception("inbox %d: writing what it caused failed", mail.row_id)
            mail.fault = f"{type(exc).__name__}: {exc}"
            with self.db.transaction() as session:
                return self._write([(mail, [])], session)

    def _write(
        self, decided: Sequence[tuple[Mail, list[unit.Decided]]], session: Session | None = None
    ) -> Batch:
        """Write what ``decided`` caused, in one transaction (``session``'s, or a new one)."""
        if session is None:
            with self.db.transaction() as session:
                return self._write(decided, session)
        deadline = time.monotonic() + WRITE_SECONDS
        mine = inbox.take(session, [m.row_id for m, _ in decided])
        writer = unit.Writer(self.site, session)
        done: list[tuple[Mail, list[unit.Decided]]] = []
        written: list[int] = []
        finished = []
        for mail, ds in decided:
            if mail.row_id not in mine:
                continue
            if done and time.monotonic() > deadline:
                break  # the rest waits for the next batch, the lock let go meanwhile
            outcomes = self._written(session, writer, mail, ds)
            if mail.fault is not None:
                failed = self._charge(session, mail)
                if failed is not None:
                    finished.append(failed)
                continue
            done.append((mail, ds))
            written += [i for o in outcomes for i in o.outbox_ids]
            finished.append(_finished(mail, outcomes)._replace(processed_by=self.worker_id))
        erase = self.config.server.keep_raw_days == 0  # passwords kept no longer than needed
        inbox.finish(session, finished, self.clock(), erase=erase)
        handed: list[outbox.ClaimedMail] = []
        if self.hand_over_replies:
            handed = outbox.claim_written(
                session, written, self.worker_id, self.clock(), HANDOVER_LEASE
            )
        for mail, _ in done:
            if mail.outcome == "ignored":
                log.info("inbox %d ignored: %s", mail.row_id, mail.note)
        return Batch(len(done), handed, unclaimed=len(handed) < len(written))

    def _written(
        self, session: Session, writer: unit.Writer, mail: Mail, ds: list[unit.Decided]
    ) -> list[unit.Outcome]:
        """Write one mail's decisions in a savepoint: all of it, or (``mail.fault``) none."""
        if mail.fault is not None:
            return []
        try:
            with session.begin_nested():
                return writer.write(ds)
        except TRANSIENT:
            raise
        except Exception as exc:
            log.exception("inbox %d: writing what it caused failed", mail.row_id)
            mail.fault = f"{type(exc).__name__}: {exc}"
            return []

    def _charge(self, session: Session, mail: Mail) -> inbox.Finished | None:
        """One more failed attempt at ``mail``: set aside after ``server.mail_attempts``."""
        if mail.attempts + 1 < self.config.server.mail_attempts:
            inbox.count_attempt(session, mail.row_id)
            self._held.pop(mail.row_id, None)
            return None
        note = one_line(f"set aside after {mail.attempts + 1} failed attempts: {mail.fault}")
        log.error("inbox %d %s; pbm inbox retry %d takes it back", mail.row_id, note, mail.row_id)
        return inbox.Finished(mail.row_id, "failed", note[:500], mail.message_id, self.worker_id)

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


def _finished(mail: Mail, outcomes: Sequence[unit.Outcome]) -> inbox.Finished:
    """How a mail's row ends: its status and a note of what its commands did."""
    if mail.outcome in ("ignored", "failed"):
        return inbox.Finished(mail.row_id, mail.outcome, mail.note[:500], mail.message_id)
    if outcomes and all(o.already_done for o in outcomes):
        # A copy of a mail acted on meanwhile (earlier in this batch, say).
        note = f"duplicate of {mail.message_id}"
        return inbox.Finished(mail.row_id, "ignored", note, mail.message_id)
    if mail.note == "no command" or mail.note == "wrong reply token":
        note = mail.note
    else:
        done = sum(1 for o in outcomes if not o.refused and not o.already_done)
        note = f"{done} of {len(outcomes)} command(s) carried out"
    return inbox.Finished(mail.row_id, "done", note, mail.message_id)


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
    trouble = Throttled(log, "inbox worker: a batch failed; trying again")
    while not stop.is_set():
        wake.clear()
        try:
            done = await batch()
            trouble.cleared()
        except Exception as exc:
            trouble.fault(exc)
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
    global _PROCESS_WORKER
    _die_with(server_pid)
    # Ctrl-C reaches every process of the terminal's group: the server, not the
    # worker, decides when to stop (it lets the batch under way finish first).
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    configure_logging(config.server.log_level)
    db = Database.open(config)
    _PROCESS_WORKER = InboxWorker(
        db, config, worker_id, shard=shard, hand_over_replies=hand_over, draws_pictures=False
    )


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

    def _drawing(self, k: int, batch: Batch) -> Batch:
        """``batch`` with its pictures given to its process to draw, a few at a time and
        before its next batch: its replies go to the sender now, each mail as soon as its
        picture is drawn, and the sender marks them meanwhile (a commit of its own)."""
        shown = _shown(batch)
        if not shown:
            return batch
        loop = asyncio.get_running_loop()
        parts = [shown[i : i + DRAWN_AT_ONCE] for i in range(0, len(shown), DRAWN_AT_ONCE)]
        return replace(
            batch,
            drawing=tuple(
                Drawing(part, loop.run_in_executor(self._pools[k], _drawn, part)) for part in parts
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
                    found = await loop.run_in_executor(self._pools[k], _run_in_process)
                    return self._drawing(k, found)
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
