"""Bounds on slow and crowding clients of the web site, in uvicorn's HTTP/1.1 protocol.

uvicorn bounds how long an idle keep-alive connection lives (``timeout_keep_alive``)
and how many connections there are at all (``limit_concurrency``: past it every request
is answered 503), but not how long a request's headers may take to come: 4,200
connections that each sent a header line every 3 s held the site at 503 for every
visitor (issue 35, case 6). ``GuardedH11`` adds what nginx has for it:

- a deadline for a request's headers (nginx's ``client_header_timeout``;
  ``web.header_timeout_seconds``), counted from when the site waits for a request (the
  connection is made, or the last answer is sent): then the connection is closed,
  however many header lines came meanwhile, with a 408 (RFC 9110 15.5.9) if part of a
  request came;
- a cap on the connections one client address holds open (nginx's ``limit_conn``;
  ``web.connections_per_address``): the next is answered 503 (RFC 9110 15.6.4) and
  closed before it is read;
- and a connection that never asks anything is closed after the keep-alive time, as
  one is that asks nothing more (uvicorn waits for the first request forever).

Each process counts its own connections (``web.workers`` processes share the
listening socket: a client may hold the cap in each).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
import time
from collections import Counter
from dataclasses import dataclass

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

from pbm.config import WebConfig

log = logging.getLogger("pbm.web")


def _answer(status: str, text: str) -> bytes:
    """A whole HTTP/1.1 answer that closes the connection (no request needed to send it)."""
    body = text.encode("ascii")
    return (
        f"HTTP/1.1 {status}\r\ncontent-type: text/plain; charset=utf-8\r\n"
        f"content-length: {len(body)}\r\nconnection: close\r\n\r\n"
    ).encode("ascii") + body


TOO_MANY = _answer("503 Service Unavailable", "Too many connections from your address.\n")
TOO_SLOW = _answer("408 Request Timeout", "The request's headers took too long to come.\n")
LOG_EVERY = 60.0  # seconds: how often cut-off slow clients are summed up in the log
# After such an answer the connection is half-closed and what the client still sends is
# read and dropped, until it closes or for this long at most (RFC 9112 9.6, a lingering
# close): closed at once over unread data, the kernel would send a reset, and the client
# could lose the answer with it.
LINGER_SECONDS = 2.0


@dataclass(frozen=True)
class Bounds:
    """``web.header_timeout_seconds`` and ``web.connections_per_address`` (0: no cap)."""

    header_seconds: float = WebConfig.header_timeout_seconds
    per_address: int = WebConfig.connections_per_address


class _State:
    """What this process knows of its connections: the bounds, the connections open by
    client address, and what has been logged."""

    def __init__(self) -> None:
        self.bounds = Bounds()
        self.open: Counter[str] = Counter()
        self.told: set[str] = set()  # addresses over the cap whose refusal was logged
        self.cut = 0  # slow clients cut off since the last line about them
        self.cut_logged = -LOG_EVERY

    def slow_one_cut(self) -> None:
        """Count a slow client cut off; say how many, at most once a ``LOG_EVERY``."""
        self.cut += 1
        now = time.monotonic()
        if now - self.cut_logged >= LOG_EVERY:
            log.info(
                "cut off %d connection(s) whose request headers took over %g s "
                "(web.header_timeout_seconds): answered 408",
                self.cut,
                self.bounds.header_seconds,
            )
            self.cut, self.cut_logged = 0, now


STATE = _State()


def configure(web: WebConfig) -> None:
    """Take the bounds of ``web`` in this process (each uvicorn worker process calls it
    through the application factory, ``pbm.web.app.from_environment``)."""
    STATE.bounds = Bounds(web.header_timeout_seconds, web.connections_per_address)


def _no_delay(transport: asyncio.BaseTransport) -> None:
    """``TCP_NODELAY`` on the connection, as asyncio sets it on one it knows for TCP:
    uvicorn takes the socket it is handed (``pbm web --fd``) for a unix one, and asyncio
    then leaves it. Without it an answer's head and body (two writes) may wait for the
    visitor's delayed ACK (Nagle's algorithm)."""
    sock = transport.get_extra_info("socket")
    if sock is not None:
        with contextlib.suppress(OSError):  # not TCP after all
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)


def _client(transport: asyncio.BaseTransport) -> str:
    peer = transport.get_extra_info("peername")
    return str(peer[0]) if isinstance(peer, tuple) and peer else ""


class GuardedH11(H11Protocol):
    """uvicorn's HTTP/1.1 with a deadline for request headers and a cap on one address's
    connections (the module's docstring)."""

    client_address = ""
    refused = False
    header_deadline: asyncio.TimerHandle | None = None
    lingering: asyncio.TimerHandle | None = None  # answered: closed when this fires

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        _no_delay(transport)
        address = _client(transport)
        cap = STATE.bounds.per_address
        if cap and STATE.open[address] >= cap:
            # Answered and closed before uvicorn counts it: it takes no slot of
            # limit_concurrency, and nothing of it is read.
            self.refused = True
            self.transport = transport
            self._end_with(TOO_MANY)
            if address not in STATE.told:
                STATE.told.add(address)
                log.warning(
                    "%s holds %d connections (web.connections_per_address): "
                    "more are answered 503 until it holds fewer",
                    address,
                    cap,
                )
            return
        self.client_address = address
        STATE.open[address] += 1
        super().connection_made(transport)
        self.timeout_keep_alive_task = self.loop.call_later(
            self.timeout_keep_alive, self.timeout_keep_alive_handler
        )
        self._wait_for_headers()

    def connection_lost(self, exc: Exception | None) -> None:
        if self.lingering is not None:
            self.lingering.cancel()
        if self.refused:
            return  # uvicorn never saw it
        self._headers_in()
        left = STATE.open[self.client_address] - 1
        if left > 0:
            STATE.open[self.client_address] = left
        else:
            del STATE.open[self.client_address]
            STATE.told.discard(self.client_address)
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        if self.lingering is not None:
            return  # answered already: what still comes is dropped
        super().data_received(data)
        if self.conn.their_state is not h11.IDLE:
            self._headers_in()  # the request line and headers are in: the app has it

    def on_response_complete(self) -> None:
        super().on_response_complete()
        if not self.transport.is_closing() and self.conn.their_state is h11.IDLE:
            self._wait_for_headers()  # the next request on this connection

    def _wait_for_headers(self) -> None:
        self._headers_in()
        self.header_deadline = self.loop.call_later(STATE.bounds.header_seconds, self._headers_late)

    def _headers_in(self) -> None:
        if self.header_deadline is not None:
            self.header_deadline.cancel()
            self.header_deadline = None

    def _headers_late(self) -> None:
        self.header_deadline = None
        if self.transport.is_closing() or self.conn.their_state is not h11.IDLE:
            return
        self._unset_keepalive_if_required()
        if self.conn.trailing_data[0]:  # part of a request came: say why it ends
            STATE.slow_one_cut()
            self._end_with(TOO_SLOW)
        else:
            self.transport.close()

    def _end_with(self, answer: bytes) -> None:
        """Send ``answer`` and end the connection by a lingering close."""
        self.transport.write(answer)
        try:
            if not self.transport.can_write_eof():
                raise OSError("no half-close on this transport (TLS)")
            self.transport.write_eof()
        except OSError:  # the client is gone already (a reset): nothing to linger for
            self.transport.close()
            return
        self.lingering = self.loop.call_later(LINGER_SECONDS, self.transport.close)
