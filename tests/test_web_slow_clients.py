"""Slow and crowding clients against a real ``pbm serve`` and its web site (uvicorn with
``pbm.web.connections.GuardedH11``) over real sockets: a slowloris from one address is
held to ``web.connections_per_address`` connections and cut off after
``web.header_timeout_seconds``, while a visitor from another address is answered.
Loopback carries all of 127.0.0.0/8: 127.0.0.2 is another client address."""

from __future__ import annotations

import http.client
import select
import socket
import time

import pytest
from mailserver import WAIT, PbmServer, Sink, StartServer

SLOW = 300  # connections of the slowloris, all from 127.0.0.1
CAP = 100  # web.connections_per_address in this test
HEADER_SECONDS = 3  # web.header_timeout_seconds in this test
VISITOR = "127.0.0.2"


@pytest.fixture
def site(start_server: StartServer) -> tuple[PbmServer, int]:
    srv = start_server(
        web=True,
        PBM_WEB_HEADER_TIMEOUT_SECONDS=str(HEADER_SECONDS),
        PBM_WEB_CONNECTIONS_PER_ADDRESS=str(CAP),
    )
    return srv, int(srv.web_base.rpartition(":")[2])


def visit(port: int, source: str) -> tuple[int, float]:
    """A visitor's GET of the front page from ``source``: its status and its seconds."""
    start = time.monotonic()
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=WAIT, source_address=(source, 0))
    try:
        conn.request("GET", "/")
        got = conn.getresponse()
        got.read()
        return got.status, time.monotonic() - start
    finally:
        conn.close()


def test_a_slowloris_takes_the_web_site_down_no_more(
    site: tuple[PbmServer, int], sink: Sink
) -> None:
    """Issue 35, case 6: 4,200 connections each sent ``GET / HTTP/1.1``, ``Host: x`` and
    then a header line every 3 s; for 30-40 s every visitor got 503. Here 300 such
    connections from one address, which keep sending header lines: the address holds
    CAP of them (the rest are answered 503 at once), those are answered 408 and closed
    when their headers have taken HEADER_SECONDS, and meanwhile a visitor from another
    address gets the front page; the mail is answered too."""
    srv, port = site
    slow: list[socket.socket] = []
    try:
        for _ in range(SLOW):
            s = socket.create_connection(("127.0.0.1", port), timeout=WAIT)
            s.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n")
            slow.append(s)
        status, seconds = visit(port, VISITOR)
        assert status == 200
        print(f"a visitor's front page during {SLOW} slow connections: {seconds * 1000:.0f} ms")
        srv.send("carol@example.org", "help")
        sink.wait_for("carol@example.org", "help")
        answers = slow_to_their_end(slow)
    finally:
        for s in slow:
            s.close()
    assert sorted(answers) == sorted(
        [b"HTTP/1.1 408 Request Timeout"] * CAP
        + [b"HTTP/1.1 503 Service Unavailable"] * (SLOW - CAP)
    )
    # The address is let in again once its connections are gone.
    assert visit(port, "127.0.0.1")[0] == 200
    log = srv.log()
    assert "Traceback" not in log
    assert log.count("127.0.0.1 holds 100 connections (web.connections_per_address)") == 1


def slow_to_their_end(slow: list[socket.socket]) -> list[bytes]:
    """Keep each connection sending a header line whenever the server has said nothing on
    it, until the server ends it; the status line each got (waiting for the server's
    answers with select, never for a time)."""
    answers: dict[socket.socket, bytes] = {}
    deadline = time.monotonic() + WAIT + HEADER_SECONDS
    while len(answers) < len(slow):
        assert time.monotonic() < deadline, f"{len(slow) - len(answers)} still open"
        waiting = [s for s in slow if s not in answers]
        readable, _, _ = select.select(waiting, [], [], 0.5)
        for s in readable:
            answers[s] = read_to_the_end(s).split(b"\r\n", 1)[0]
        for s in waiting:
            if s not in answers:
                try:
                    s.sendall(b"X-Slow: still here\r\n")
                except OSError:
                    answers[s] = read_to_the_end(s).split(b"\r\n", 1)[0]
    return list(answers.values())


def read_to_the_end(s: socket.socket) -> bytes:
    got = b""
    try:
        while chunk := s.recv(4096):
            got += chunk
    except OSError:  # a reset after the answer: what came before it counts
        pass
    return got


def test_a_slow_request_after_a_quick_one_is_cut_off_too(site: tuple[PbmServer, int]) -> None:
    """The deadline runs again for each request on a kept-alive connection: a client
    that asks once quickly and then starts a request it never ends gets 408 too; one that
    sends nothing is closed without a word (after the keep-alive time)."""
    _, port = site
    kept = socket.create_connection(("127.0.0.1", port), timeout=WAIT)
    silent = socket.create_connection(("127.0.0.1", port), timeout=WAIT)
    try:
        kept.sendall(f"GET / HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n".encode())
        head = b""
        while b"\r\n\r\n" not in head:
            head += kept.recv(1)
        assert head.startswith(b"HTTP/1.1 200 ")
        length = int(head.lower().split(b"content-length: ")[1].split(b"\r\n")[0])
        body = b""
        while len(body) < length:
            body += kept.recv(length - len(body))
        kept.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n")
        assert slow_to_their_end([kept]) == [b"HTTP/1.1 408 Request Timeout"]
        assert read_to_the_end(silent) == b""
    finally:
        kept.close()
        silent.close()
