"""The mail listener: mail for the server's address is stored before it is accepted.

aiosmtpd speaks the protocol, SMTP or (``smtp.protocol = "lmtp"``, behind a
mail server) LMTP (RFC 2033), on TCP or on a unix socket; ``InboxHandler``
decides. It accepts mail only for the server's address and its reply-token
addresses (RFC 5321 3.6.2: we relay nothing), at most
``smtp.max_recipients`` of them a mail, commits each message to the inbox
before it answers 250 (RFC 5321 6.1: from then on the mail is ours), and
answers 451 if it cannot, so that the sending server keeps it and tries again.
Over SMTP, a client address gets only so many connections and mails a minute
(``ClientRates``); behind a mail server every mail comes from one client,
which keeps its own rates, so LMTP has none. The replies it gives are in
``pbm.mail.status``.
"""

from __future__ import annotations

import asyncio
import errno
import logging
import os
import socket
import ssl
import stat
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, AnyStr

from aiosmtpd.lmtp import LMTP
from aiosmtpd.smtp import SMTP, Envelope, Session, syntax

from pbm.config import Config
from pbm.mail import status
from pbm.mail.addresses import accepts, ours
from pbm.mail.controls import has_controls
from pbm.runners.logs import Throttled
from pbm.runners.rates import ClientRates, Clock
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
            return status.TOO_MANY_MAILS
        if has_controls(address) or "\n" in address:
            log.info("MAIL FROM with control characters from %s: 553", session.peer)
            return status.BAD_ADDRESS
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
        if has_controls(address) or "\n" in address:
            return status.BAD_ADDRESS
        if not accepts(address, self.config.mail.address, self.config.mail.secret):
            log.info("refused RCPT %s from %s", address, session.peer)
            if ours(address, self.config.mail.address):
                # A reply or bounce address whose token we did not make (RFC 5321 §3.3).
                return status.NO_SUCH_ADDRESS.format(address=address)
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
            row_id = await asyncio.to_thread(self._store, raw, envelope.mail_from or "", rcpts)
        except Exception as exc:
            self.trouble.fault(exc)
            if self.lmtp:
                return _per_recipient(status.LMTP_TRY_AGAIN, rcpts)
            return status.TRY_AGAIN
        self.trouble.cleared()
        self.wake.set()
        if self.lmtp:
            return _per_recipient(status.LMTP_QUEUED, rcpts, id=row_id)
        return status.OK_QUEUED.format(id=row_id)

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
        return status.TRY_AGAIN


def _per_recipient(reply: str, rcpts: list[str], **values: object) -> str:
    """LMTP's answer to DATA: one reply per accepted recipient, in RCPT order (RFC 2033 4.2).

    aiosmtpd sends what ``handle_DATA`` returns as it is, followed by CRLF: the
    replies joined by CRLF reach the client as so many replies.
    """
    return "\r\n".join(reply.format(address=rcpt, **values) for rcpt in rcpts)


class _Fixes(SMTP):
    """What pbm answers differently from aiosmtpd, for SMTP and LMTP alike."""

    _auth_logged = False  # this session's AUTH was logged: the next ones are not

    # No @syntax: HELP does not list AUTH, as EHLO does not offer it.
    async def smtp_AUTH(self, arg: str) -> None:
        """pbm has no SMTP logins, so AUTH is a command it does not implement (RFC 5321
        §4.2.4: 502; RFC 3463 X.5.1). aiosmtpd would start its built-in LOGIN and PLAIN
        exchanges under TLS; a client that asks again and again is logged once."""
        if not self._auth_logged:
            self._auth_logged = True
            peer = self.session.peer if self.session is not None else None
            log.info("AUTH from %s: answered 502 (pbm has no SMTP logins)", peer)
        await self.push(status.NO_AUTH)

    @syntax("STARTTLS", when="tls_context")
    async def smtp_STARTTLS(self, arg: str) -> None:
        if self._tls_protocol is not None:  # RFC 3207 §4.2: once only
            await self.push(status.TLS_ACTIVE)
            return
        await super().smtp_STARTTLS(arg)

    async def push(self, reply: AnyStr) -> None:
        # aiosmtpd answers an oversize DATA with one bare 552; say it with its
        # enhanced code and, over LMTP, once for every accepted recipient (RFC 2033 §4.2).
        # (aiosmtpd pushes bytes too, as SMTP.push allows: they pass as they are.)
        if isinstance(reply, str) and reply.startswith("552 Error: Too much mail data"):
            rcpts = list(self.envelope.rcpt_tos) if self.envelope is not None else []
            if isinstance(self, LMTP) and rcpts:
                await super().push(_per_recipient(status.LMTP_TOO_BIG, rcpts))
            else:
                await super().push(status.TOO_BIG)
            return
        await super().push(reply)


class PbmLMTP(_Fixes, LMTP):
    """aiosmtpd's LMTP with pbm's answers."""


class RateLimitedSMTP(_Fixes):
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
    """The protocol factory for ``loop.create_server``: SMTP, or LMTP (RFC 2033)."""
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
        if handler.lmtp:
            return PbmLMTP(handler, ident="pbm LMTP", **options)
        return RateLimitedSMTP(handler, ident="pbm ESMTP", **options)

    return make


# The unix socket: read and written by its owner and its group (a mail server's
# user in that group hands mail over), by nobody else.
UNIX_SOCKET_MODE = 0o660


@dataclass
class Listener:
    """A bound listener: its protocol, where it listens, and how it stops."""

    server: asyncio.Server
    protocol: str  # "SMTP" or "LMTP"
    unix_path: Path | None = None
    _unix_id: tuple[int, int] | None = None  # (device, inode) of the socket we made

    @property
    def address(self) -> tuple[str, int]:
        """The TCP host and port (the real port when 0 was configured)."""
        if self.unix_path is not None:
            raise ValueError(f"listening on unix:{self.unix_path}, not on TCP")
        sock = self.server.sockets[0].getsockname()
        return sock[0], sock[1]

    @property
    def where(self) -> str:
        """``HOST:PORT`` (``[HOST]:PORT`` for IPv6) or ``unix:/PATH``."""
        if self.unix_path is not None:
            return f"unix:{self.unix_path}"
        host, port = self.address
        return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"

    def __str__(self) -> str:
        return f"{self.protocol} on {self.where}"

    async def close(self) -> None:
        """Stop listening; a unix socket file is removed (if it is still ours)."""
        self.server.close()
        await self.server.wait_closed()
        if self.unix_path is not None and self._unix_id is not None:
            try:
                st = os.stat(self.unix_path)
            except FileNotFoundError:
                return
            if (st.st_dev, st.st_ino) == self._unix_id:
                self.unix_path.unlink(missing_ok=True)


class CannotListen(OSError):
    """A listen address that cannot be had (the port taken by another program, a folder
    missing): one line that says where, under which config key (``key``), and why."""

    def __init__(self, key: str, where: str, exc: OSError) -> None:
        # asyncio words a taken port at length ("error while attempting to bind on
        # address ('127.0.0.1', 2525): address already in use"): one wording for both.
        taken = exc.errno == errno.EADDRINUSE
        reason = "address already in use" if taken else (exc.strerror or str(exc))
        super().__init__(exc.errno, f"cannot listen on {where} ({key}): {reason}")
        self.key = key
        self.taken = taken

    def __str__(self) -> str:
        return str(self.strerror)


async def listen(config: Config, handler: InboxHandler) -> Listener:
    """Start listening where ``smtp.listen`` says: ``HOST:PORT`` or ``unix:/PATH``.

    ``CannotListen`` when that is not possible (the port taken, another server on the
    socket, a folder missing); ``ConfigError`` for a listen value of neither form.
    """
    try:
        return await _listen(config, handler)
    except OSError as exc:
        raise CannotListen("smtp.listen", config.smtp.listen, exc) from exc


async def _listen(config: Config, handler: InboxHandler) -> Listener:
    loop = asyncio.get_running_loop()
    factory = smtp_factory(handler, config)
    protocol = "LMTP" if handler.lmtp else "SMTP"
    path = config.listen_unix_path
    if path is None:
        host, port = config.listen_host_port
        return Listener(await loop.create_server(factory, host, port), protocol)
    sock = unix_socket(path)
    st = os.stat(path)
    try:
        server = await loop.create_unix_server(factory, sock=sock)
    except BaseException:
        sock.close()
        path.unlink(missing_ok=True)
        raise
    return Listener(server, protocol, path, (st.st_dev, st.st_ino))


def unix_socket(path: Path) -> socket.socket:
    """A unix socket bound at ``path``, group-writable, not yet listening.

    A socket file left by a server that is gone is removed first; one that a
    running server still answers on is not (EADDRINUSE), nor is anything else
    found at ``path`` (EEXIST). The mode is set before ``listen``: nobody can
    connect before it is right.
    """
    remove_stale_socket(path)
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.bind(str(path))
        os.chmod(path, UNIX_SOCKET_MODE)
    except BaseException:
        sock.close()
        raise
    return sock


def remove_stale_socket(path: Path) -> None:
    """Remove the socket file at ``path`` if no server listens on it any more."""
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        return
    if not stat.S_ISSOCK(mode):
        raise OSError(errno.EEXIST, f"{path} exists and is not a socket")
    probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    probe.settimeout(1.0)
    try:
        probe.connect(str(path))
    except (ConnectionRefusedError, FileNotFoundError):
        path.unlink(missing_ok=True)  # nobody listens: left by a server that is gone
        log.info("removed the stale socket %s", path)
        return
    except OSError:
        pass  # it exists and is not refusing: treat it as taken
    finally:
        probe.close()
    raise OSError(errno.EADDRINUSE, f"another server listens on {path}")
