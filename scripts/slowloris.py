#!/usr/bin/env python3
"""A slowloris against a bare ``pbm web``, and what a visitor gets meanwhile (issue 35, case 6).

Starts a real ``pbm web`` (uvicorn with ``pbm.web.connections.GuardedH11``, the
configured bounds: ``web.header_timeout_seconds``, ``web.connections_per_address``)
on a fresh site with GAMES stored games, then opens CONNECTIONS connections spread over
ADDRESSES client addresses (127.0.0.1, 127.0.0.2, ...: loopback carries 127.0.0.0/8),
each sending ``GET / HTTP/1.1``, ``Host: x`` and then one header line every EVERY
seconds, never ending its headers (``--reconnect``: a connection the site ends is opened
again at once, the attacker keeps his count: a connection flood too). Meanwhile a
visitor from another address asks for the front page every 0.2 s. Reported: the
visitor's answers by status with p50, p99 and the slowest in milliseconds, and how the
site ended the attacker's connections.

    .venv/bin/python scripts/slowloris.py                      # 4,200 from one address
    .venv/bin/python scripts/slowloris.py --addresses 60       # 4,200 from 60 addresses
    .venv/bin/python scripts/slowloris.py --header-timeout 3600 --per-address 0  # unbounded
"""

from __future__ import annotations

import argparse
import http.client
import random
import selectors
import socket
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from bench_store import fill, playout
from bench_web import pct, start_web

from pbm.store.engine import init_db

VISITOR = "127.0.1.1"


def attack(
    port: int,
    connections: int,
    addresses: int,
    every: float,
    until: float,
    reconnect: bool,
    ends: Counter[str],
) -> None:
    """Open ``connections`` slow connections and keep them talking until ``until`` (with
    ``reconnect``, one the site ends is opened again); count how each ended."""
    due: dict[socket.socket, float] = {}  # each open socket: when its next line is due
    watch = selectors.DefaultSelector()  # epoll: select() takes no descriptor past 1023
    made = 0

    def end(s: socket.socket, how: str) -> None:
        ends[how] += 1
        watch.unregister(s)
        del due[s]
        s.close()

    while time.monotonic() < until:
        while (
            len(due) < connections
            and time.monotonic() < until
            and (reconnect or made < connections)
        ):
            source = f"127.0.0.{1 + made % addresses}"
            made += 1
            try:
                s = socket.create_connection(
                    ("127.0.0.1", port), timeout=5, source_address=(source, 0)
                )
                s.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n")
                s.setblocking(False)
            except OSError as exc:
                ends[f"not connected ({type(exc).__name__})"] += 1
                continue
            due[s] = time.monotonic() + every
            watch.register(s, selectors.EVENT_READ)
        for key, _ in watch.select(0.2):
            s = key.fileobj
            assert isinstance(s, socket.socket)
            try:
                got = s.recv(4096)
            except OSError:
                got = b""
            end(s, got.split(b"\r\n", 1)[0].decode("latin-1") or "closed without a word")
        now = time.monotonic()
        for s, when in list(due.items()):
            if when <= now:
                try:
                    s.sendall(b"X-Slow: still here\r\n")
                    due[s] = now + every
                except OSError:
                    end(s, "reset")
    ends["held at the end"] += len(due)
    ends["connections made"] += made
    for s in due:
        s.close()


def visitor(port: int, until: float, times: dict[str, list[float]]) -> None:
    while time.monotonic() < until:
        start = time.perf_counter()
        try:
            conn = http.client.HTTPConnection(
                "127.0.0.1", port, timeout=30, source_address=(VISITOR, 0)
            )
            conn.request("GET", "/")
            response = conn.getresponse()
            response.read()
            conn.close()
            kind = str(response.status)
        except (OSError, http.client.HTTPException) as exc:
            kind = type(exc).__name__
        times.setdefault(kind, []).append(time.perf_counter() - start)
        time.sleep(0.2)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--connections", type=int, default=4200)
    ap.add_argument("--addresses", type=int, default=1)
    ap.add_argument("--every", type=float, default=3.0, help="seconds between header lines")
    ap.add_argument("--duration", type=float, default=40.0)
    ap.add_argument(
        "--reconnect", action="store_true", help="open a connection again when the site ends it"
    )
    ap.add_argument("--games", type=int, default=1000)
    ap.add_argument("--header-timeout", type=float, default=None, help="web.header_timeout_seconds")
    ap.add_argument("--per-address", type=int, default=None, help="web.connections_per_address")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="pbm-slowloris-") as tmp:
        root = Path(tmp)
        url = f"sqlite:///{root / 'pbm.sqlite3'}"
        db = init_db(url)
        rng = random.Random(1)
        pool = [playout(rng, "standard", 40) for _ in range(8)]
        fill(db, args.games, players=max(10, args.games // 20), pool=pool, seed=1)
        db.close()
        extra = ""
        if args.header_timeout is not None:
            extra += f"header_timeout_seconds = {args.header_timeout}\n"
        if args.per_address is not None:
            extra += f"connections_per_address = {args.per_address}\n"
        proc, port = start_web(root, url, extra=extra)
        try:
            until = time.monotonic() + args.duration
            ends: Counter[str] = Counter()
            times: dict[str, list[float]] = {}
            threads = [
                threading.Thread(
                    target=attack,
                    args=(
                        port,
                        args.connections,
                        args.addresses,
                        args.every,
                        until,
                        args.reconnect,
                        ends,
                    ),
                ),
                threading.Thread(target=visitor, args=(port, until, times)),
            ]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
        finally:
            proc.terminate()
            proc.wait()
    print(
        f"{args.connections} slow connections from {args.addresses} address(es), a header "
        f"line every {args.every:g} s, for {args.duration:g} s"
        f"{', opened again when ended' if args.reconnect else ''}:"
    )
    for kind, spent in sorted(times.items()):
        print(
            f"  visitor: {len(spent)} x {kind}: p50 {pct(spent, 50):.0f} ms, "
            f"p99 {pct(spent, 99):.0f} ms, slowest {max(spent) * 1000:.0f} ms"
        )
    for what, n in ends.most_common():
        print(f"  attacker: {n} {what}")


if __name__ == "__main__":
    main()
