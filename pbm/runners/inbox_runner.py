"""The inbox runner: each received mail through the pipeline, its commands carried out.

One mail at a time: it is claimed under a lease (``inbox.claim_next``), read
and decided on a snapshot, holding no lock (``pbm.mail.pipeline``, then
``pbm.usecases.unit.decide``: passwords checked, moves checked, board mails
written), and written in one short transaction with what it caused: each
change guarded by a compare-and-set (a board changed meanwhile is decided
again, by the same function), the replies into the outbox, the mail marked.
A mail whose working out fails (a fault it finds, not the database's) is
charged an attempt; after ``server.mail_attempts`` it is set aside as
``failed`` (``pbm inbox list``, ``pbm inbox retry``), so no mail blocks the
queue.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Sequence
from datetime import timedelta

from sqlalchemy import exc as sa_exc
from sqlmodel import Session

from pbm.mail.controls import one_line
from pbm.mail.env import Env
from pbm.mail.pipeline import Mail, run_steps
from pbm.mail.redact import redacted
from pbm.model import MailStatus
from pbm.runners.base import Runner
from pbm.store import inbox, outbox
from pbm.store.accounts import first_userid_at, load_accounts
from pbm.store.lists import game_of, open_boards_of
from pbm.usecases import unit
from pbm.usecases.site import Site

LEASE = timedelta(minutes=5)  # a mail's working out takes a fraction of a second
# Faults no mail causes: the database is out of reach, locked or full. The mail is
# tried again as it is; any other fault is charged to the mail it came with.
TRANSIENT = (sa_exc.OperationalError, sa_exc.InterfaceError, sa_exc.TimeoutError, TimeoutError)


class InboxRunner(Runner[inbox.WaitingMail]):
    """Works received mail out, one mail at a time (``dispose``)."""

    name = "inbox"

    def __init__(
        self,
        site: Site,
        worker: str,
        *,
        wake: asyncio.Event | None = None,
        written: Sequence[asyncio.Event] = (),
    ) -> None:
        """``written``: set (from the loop) when a mail's commands wrote something: the
        outbox runner has replies to send, the computer a move to answer perhaps."""
        super().__init__(wake)
        self.site = site
        self.worker = worker
        self.written = tuple(written)
        self._event_loop: asyncio.AbstractEventLoop | None = None

    async def handle(self, item: inbox.WaitingMail) -> None:
        self._event_loop = asyncio.get_running_loop()
        await asyncio.to_thread(self.dispose, item)

    def claim(self) -> inbox.WaitingMail | None:
        with self.site.db.transaction() as session:
            return inbox.claim_next(session, self.worker, self.site.clock(), LEASE)

    def dispose(self, item: inbox.WaitingMail) -> None:
        mail = Mail(item.id, item.raw, item.mail_from, item.rcpt_to.split("\n"), item.attempts)
        try:
            decided = self._decide(mail)
            with self.site.db.transaction() as session:
                if not inbox.still_mine(session, mail.row_id, self.worker):
                    return  # taken over by another runner: its lease had run out
                outcomes = unit.write(self.site, session, decided, sender=mail.sender)
                self._finish(session, mail, outcomes)
        except TRANSIENT:
            raise  # the database: the mail waits, claimed, and is tried again
        except Exception as exc:  # a bug that this mail finds: charged to it, never the rest
            self.log.exception("inbox %d: working it out failed", mail.row_id)
            mail.fault = f"{type(exc).__name__}: {exc}"
            with self.site.db.transaction() as session:
                self._charge(session, mail)
            return
        if mail.outcome is MailStatus.IGNORED:
            self.log.info("inbox %d ignored: %s", mail.row_id, mail.note)
        if any(o.replies or o.changed for o in outcomes) and self._event_loop is not None:
            for event in self.written:
                self._event_loop.call_soon_threadsafe(event.set)

    def _decide(self, mail: Mail) -> list[unit.Decided]:
        """The mail read (the pipeline's steps) and its commands decided, on a snapshot."""
        with self.site.db.read() as snapshot:
            env = Env(
                self.site.config,
                seen=functools.partial(inbox.seen, snapshot),
                game_of=functools.partial(game_of, snapshot),
                account=lambda userid: load_accounts(snapshot, [userid]).get(userid.lower()),
                open_boards=functools.partial(open_boards_of, snapshot),
                sent_to=functools.partial(outbox.recipients_of, snapshot),
                known=lambda address: first_userid_at(snapshot, address) is not None,
            )
            run_steps(mail, env)
            if mail.outcome is MailStatus.FAILED:
                raise RuntimeError(mail.note)
            return unit.decide_all(self.site, snapshot, mail.requests)

    def _finish(self, session: Session, mail: Mail, outcomes: Sequence[unit.Outcome]) -> None:
        """Mark the mail with how it ended; its passwords no longer kept with it."""
        status, note = mail.finished(outcomes)
        kept = redacted(mail.inbound, mail.secrets) if mail.inbound and mail.secrets else None
        finished = inbox.Finished(
            mail.row_id, status, note[:500], mail.message_id, self.worker, kept
        )
        erase = self.site.config.server.keep_raw_days == 0
        inbox.finish(session, [finished], self.site.clock(), erase=erase)

    def _charge(self, session: Session, mail: Mail) -> None:
        """One more failed attempt at ``mail``: set aside after ``server.mail_attempts``."""
        if mail.attempts + 1 < self.site.config.server.mail_attempts:
            inbox.count_attempt(session, mail.row_id)
            return
        note = one_line(f"set aside after {mail.attempts + 1} failed attempts: {mail.fault}")
        self.log.error(
            "inbox %d %s; pbm inbox retry %d takes it back", mail.row_id, note, mail.row_id
        )
        failed = inbox.Finished(
            mail.row_id, MailStatus.FAILED, note[:500], mail.message_id, self.worker
        )
        inbox.finish(session, [failed], self.site.clock())
