"""What pbm does with each SMTP or LMTP command: client rates, RCPT policy, DATA into the inbox.

It accepts mail only for the server's address and its reply-token addresses
(RFC 5321 §3.6.2: we relay nothing), at most ``smtp.max_recipients`` of them a
mail, commits each message to the inbox before it answers 250 (RFC 5321 §6.1:
from then on the mail is ours), and answers 451 if it cannot, so that the
sending server keeps it and tries again. Over SMTP, a client address gets only
so many connections and mails a minute (``pbm.smtp.rates``); behind a mail
server every mail comes from one client, which keeps its own rates, so LMTP
has none. The replies it gives are in ``pbm.smtp.codes``.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from datetime import datetime
from typing import Any

from aiosmtpd.smtp import SMTP, Envelope, Session

from pbm.config import Config
from pbm.logs import Throttled
from pbm.mail.addresses import accepts, ours
from pbm.mail.controls import has_controls
from pbm.smtp import codes
from pbm.smtp.rates import ClientRates, Clock
from pbm.store import inbox
from pbm.store.engine import Database
from pbm.usecases.site import utc_now

log = logging.getLogger("pbm.listener")


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
        self.db = db
        self.clock = clock
        self.trouble = Throttled(log, "could not commit a message to the inbox; answered 451")
        self.lmtp = config.smtp.protocol == "lmtp"
        # Behind a mail server (LMTP) every mail comes from that one client.
        self.rates: ClientRates | None = None
        if not self.lmtp:
            self.rates = ClientRates(
                config.smtp.connections_per_minute,
                config.smtp.messages_per_minute,
                clock=rate_clock,
            )

    def _store(self, raw: bytes, mail_from: str, rcpt_tos: list[str]) -> int:
        """Commit one received mail to the inbox: its row id. (The Message-ID is read by
        the inbox runner, which reads the mail anyway.)"""
        with self.db.transaction() as session:
            (row_id,) = inbox.add(session, [inbox.Received(raw, mail_from, rcpt_tos)], self.clock())
            return row_id

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
            return codes.TOO_MANY_MAILS
        if has_controls(address) or "\n" in address:
            log.info("MAIL FROM with control characters from %s: 553", session.peer)
            return codes.BAD_ADDRESS
        envelope.mail_from = address
        envelope.mail_options.extend(mail_options)
        return codes.OK_SENDER

    async def handle_RCPT(
        self,
        server: SMTP,
        session: Session,
        envelope: Envelope,
        address: str,
        rcpt_options: list[str],
    ) -> str:
        if has_controls(address) or "\n" in address:
            return codes.BAD_ADDRESS
        if not accepts(address, self.config.mail.address, self.config.mail.secret):
            log.info("refused RCPT %s from %s", address, session.peer)
            if ours(address, self.config.mail.address):
                # A reply or bounce address whose token we did not make (RFC 5321 §3.3).
                return codes.NO_SUCH_ADDRESS.format(address=address)
            return codes.NO_SUCH_USER.format(address=address)
        limit = self.config.smtp.max_recipients
        if 0 < limit <= len(envelope.rcpt_tos):
            return codes.TOO_MANY_RECIPIENTS
        envelope.rcpt_tos.append(address)
        envelope.rcpt_options.extend(rcpt_options)
        return codes.OK_RCPT

    async def handle_DATA(self, server: SMTP, session: Session, envelope: Envelope) -> str:
        raw = envelope.original_content or b""
        rcpts = list(envelope.rcpt_tos)
        if not rcpts:
            return codes.NO_RECIPIENTS
        try:
            row_id = await asyncio.to_thread(self._store, raw, envelope.mail_from or "", rcpts)
        except Exception as exc:
            self.trouble.fault(exc)
            if self.lmtp:
                return per_recipient(codes.LMTP_TRY_AGAIN, rcpts)
            return codes.TRY_AGAIN
        self.trouble.cleared()
        self.wake.set()
        if self.lmtp:
            return per_recipient(codes.LMTP_QUEUED, rcpts, id=row_id)
        return codes.OK_QUEUED.format(id=row_id)

    async def handle_EHLO(
        self,
        server: SMTP,
        session: Session,
        envelope: Envelope,
        hostname: str,
        responses: list[str],
    ) -> list[str]:
        """The EHLO (and LHLO) keywords, without AUTH: pbm has no SMTP logins, and a
        server must not advertise what it cannot do (RFC 4954 §3)."""
        session.host_name = hostname
        return [r for r in responses if not r[4:].upper().startswith("AUTH")]

    async def handle_exception(self, error: Exception) -> str:
        # aiosmtpd would answer "500 Error: (Exception) text": never a 5xx for our
        # own fault, and never our internals on the wire.
        log.error("SMTP handler error", exc_info=error)
        return codes.TRY_AGAIN


def per_recipient(reply: str, rcpts: list[str], **values: object) -> str:
    """LMTP's answer to DATA: one reply per accepted recipient, in RCPT order (RFC 2033 4.2).

    aiosmtpd sends what ``handle_DATA`` returns as it is, followed by CRLF: the
    replies joined by CRLF reach the client as so many replies.
    """
    return "\r\n".join(reply.format(address=rcpt, **values) for rcpt in rcpts)
