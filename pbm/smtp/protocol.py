"""aiosmtpd's SMTP and LMTP (RFC 2033) as pbm speaks them: no AUTH, STARTTLS once, an
oversize mail answered with its enhanced code, and a 421 greeting for a client over its
connection rate."""

from __future__ import annotations

import asyncio
import logging
import socket
import ssl
from collections.abc import Callable
from typing import Any, AnyStr

from aiosmtpd.lmtp import LMTP
from aiosmtpd.smtp import SMTP, syntax

from pbm.config import Config
from pbm.smtp import codes
from pbm.smtp.handler import InboxHandler, per_recipient

log = logging.getLogger("pbm.listener")


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
        await self.push(codes.NO_AUTH)

    @syntax("STARTTLS", when="tls_context")
    async def smtp_STARTTLS(self, arg: str) -> None:
        if self._tls_protocol is not None:  # RFC 3207 §4.2: once only
            await self.push(codes.TLS_ACTIVE)
            return
        await super().smtp_STARTTLS(arg)

    async def push(self, reply: AnyStr) -> None:
        # aiosmtpd answers an oversize DATA with one bare 552; say it with its
        # enhanced code and, over LMTP, once for every accepted recipient (RFC 2033 §4.2).
        # (aiosmtpd pushes bytes too, as SMTP.push allows: they pass as they are.)
        if isinstance(reply, str) and reply.startswith("552 Error: Too much mail data"):
            rcpts = list(self.envelope.rcpt_tos) if self.envelope is not None else []
            if isinstance(self, LMTP) and rcpts:
                await super().push(per_recipient(codes.LMTP_TOO_BIG, rcpts))
            else:
                await super().push(codes.TOO_BIG)
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
                transport.write(codes.TOO_MANY_CONNECTIONS.encode("ascii") + b"\r\n")
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
