#!/usr/bin/env python3
"""Web site benchmark: board pages and the front page of a large site under many clients.

Fills a fresh database (the embedded SQLite file, or with ``--postgres`` the
PostgreSQL database ``test`` at 127.0.0.1:5432) with GAMES stored games by
bulk inserts (``bench_store.fill``: players, games in play and finished, their
moves), starts a real ``pbm web`` (uvicorn) on it, and lets CLIENTS keep-alive
HTTP clients ask for pages for DURATION seconds: mostly board pages of random
boards, one in ten the front page, one in ten a board page the client has
already (If-None-Match: a 304), each visitor reading a page for THINK seconds
(on average, exponentially) before the next. Reported per kind of page:
requests, p50 and p99 in milliseconds, and requests per second over all.
``--think 0`` asks as fast as the site answers: its throughput limit, where
the latency is the clients' queue (CLIENTS / throughput).

Targets (issue 23): with 100,000 games and 50 clients, a board page's p99 under
50 ms and the front page's under 100 ms, on SQLite and on PostgreSQL. For the
mail side under web load, run ``bench_mail.py`` while this runs with a long
``--duration`` and compare with its figures alone.

    .venv/bin/python scripts/bench_web.py
    .venv/bin/python scripts/bench_web.py --postgres
    .venv/bin/python scripts/bench_web.py --games 100000 --clients 50 --duration 20
"""

from __future__ import annotations

import argparse
import http.client
import os
import random
import re
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import sqlalchemy as sa

sys.path.insert(0, str(Path(__file__).parent))
from bench_store import fill, playout

from pbm.store.engine import init_db

POSTGRES = os.environ.get("PBM_TEST_POSTGRES_URL", "postgresql+psycopg://root@127.0.0.1:5432/test")


def pct(values: list[float], p: float) -> float:
    s = sorted(values)
    return s[min(len(s) - 1, round(p / 100 * (len(s) - 1)))] * 1000 if s else float("nan")


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def fresh_postgres() -> str:
    engine = sa.create_engine(POSTGRES)
    with engine.begin() as conn:
        conn.exec_driver_sql("DROP SCHEMA public CASCADE; CREATE SCHEMA public")
    engine.dispose()
    return POSTGRES


def start_web(
    root: Path, url: str, workers: int = 1, extra: str = ""
) -> tuple[subprocess.Popen[bytes], int]:
    """``pbm web`` on a free port; ``extra``: more lines of its [web] section."""
    port = free_port()
    (root / "pbm.toml").write_text(
        f'[database]\nurl = "{url}"\n[mail]\naddress = "pbm@bench.test"\nsecret = "s"\n'
        f'[server]\nlog_level = "WARNING"\n[web]\nlisten = "127.0.0.1:{port}"\n'
        f"workers = {workers}\n{extra}"
    )
    proc = subprocess.Popen(
        [sys.executable, "-m", "pbm", "--config", str(root / "pbm.toml"), "web"], cwd=root
    )
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return proc, port
        except OSError:
            time.sleep(0.1)
    proc.kill()
    raise SystemExit("pbm web did not start")


def client(
    port: int, games: int, until: float, seed: int, think: float, times: dict[str, list[float]]
) -> None:
    rng = random.Random(seed)
    time.sleep(rng.uniform(0, think))  # visitors do not all come at the same moment
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    tags: dict[str, str] = {}
    while time.monotonic() < until:
        roll = rng.random()
        if roll < 0.1:
            kind, path, headers = "front", "/", {}
        elif roll < 0.2 and tags:
            path = rng.choice(list(tags))
            kind, headers = "304", {"If-None-Match": tags[path]}
        else:
            kind, path, headers = "board", f"/boards/{rng.randint(1, games)}", {}
        start = time.perf_counter()
        conn.request("GET", path, headers=headers)
        response = conn.getresponse()
        response.read()
        spent = time.perf_counter() - start
        if kind == "board" and response.status == 200:
            tags[path] = response.getheader("ETag") or ""
        if response.status not in (200, 304):
            kind = f"status {response.status}"
        times.setdefault(kind, []).append(spent)
        if think:
            time.sleep(rng.expovariate(1 / think))  # reading the page
    conn.close()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--games", type=int, default=100_000)
    ap.add_argument("--clients", type=int, default=50)
    ap.add_argument("--duration", type=float, default=15.0, help="seconds of load")
    ap.add_argument(
        "--think",
        type=float,
        default=0.5,
        help="mean seconds a visitor reads a page before the next (0: none, the site's limit)",
    )
    ap.add_argument("--postgres", action="store_true", help="PostgreSQL instead of SQLite")
    ap.add_argument("--workers", type=int, default=1, help="web.workers: processes answering")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="pbm-bench-web-") as tmp:
        root = Path(tmp)
        url = fresh_postgres() if args.postgres else f"sqlite:///{root / 'pbm.sqlite3'}"
        db = init_db(url)
        rng = random.Random(1)
        pool = [playout(rng, "standard" if i % 4 else "pari", 60) for i in range(24)]
        t = time.perf_counter()
        counts = fill(
            db, args.games, players=min(1000, max(2, args.games // 10)), pool=pool, seed=1
        )
        if args.postgres:  # as a real site is: its games not all written a moment ago
            with db.engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
                conn.exec_driver_sql("VACUUM ANALYZE")  # as autovacuum leaves it
                conn.exec_driver_sql("CHECKPOINT")  # the fill's pages on disk, not during the run
        db.close()
        print(
            f"{counts['games']:,} games, {counts['moves']:,} moves stored in "
            f"{time.perf_counter() - t:.1f} s ({'PostgreSQL' if args.postgres else 'SQLite'})"
        )
        proc, port = start_web(root, url, args.workers)
        try:
            # Warm: the first requests load templates and python's caches.
            warm = http.client.HTTPConnection("127.0.0.1", port)
            for path in ("/", "/boards/1"):
                warm.request("GET", path)
                warm.getresponse().read()
            page = http.client.HTTPConnection("127.0.0.1", port)
            page.request("GET", "/")
            front = page.getresponse().read().decode()
            assert re.search(r'href="/boards/\d+"', front), "the front page lists no board"
            times: dict[str, list[float]] = {}
            until = time.monotonic() + args.duration
            threads = [
                threading.Thread(
                    target=client, args=(port, args.games, until, i, args.think, times)
                )
                for i in range(args.clients)
            ]
            start = time.perf_counter()
            for th in threads:
                th.start()
            for th in threads:
                th.join()
            wall = time.perf_counter() - start
        finally:
            proc.terminate()
            proc.wait(10)
    total = sum(len(v) for v in times.values())
    print(
        f"{args.clients} clients (reading {args.think} s a page), {total:,} requests in "
        f"{wall:.1f} s: {total / wall:.0f}/s"
    )
    targets = {"board": 50, "front": 100}
    for kind, values in sorted(times.items()):
        target = f"   (target p99 < {targets[kind]} ms)" if kind in targets else ""
        print(
            f"  {kind:<8} {len(values):>7,}  p50 {pct(values, 50):7.1f} ms  "
            f"p99 {pct(values, 99):7.1f} ms{target}"
        )


if __name__ == "__main__":
    main()
