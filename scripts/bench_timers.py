#!/usr/bin/env python3
"""Timer benchmark: one pass of the clocks' timers over a site of 100,000 boards in play.

Run by hand: ``.venv/bin/python scripts/bench_timers.py [--postgres URL] [--boards N]
[--due N]``. It fills a fresh database (a SQLite file in a temporary folder, or the
PostgreSQL database given, which it empties first) with BOARDS boards in play on
``days 3`` clocks, DUE of which have run out of time, and measures what
``pbm tick`` does (``pbm.runners.timers.tick``):

- a pass when nothing is due (the median of 20): the one indexed query for the
  boards whose moment has come, and the lapsed challenges;
- the pass that ends the DUE games on time: each board read, decided and written
  with its board mails and ratings, ``TICK_BATCH`` boards a transaction;
- a pass right after it, when nothing is due again.

The ``timer_at`` of the generated boards is what ``pbm.usecases.clocks.next_timer``
gives; the script checks that on a sample before it measures.

Targets (issue 24): under 50 ms for a pass with nothing due, under 5 s for the pass
that ends 1,000 games.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from sqlmodel import SQLModel

import pbm.games
from pbm.config import ClockConfig, Config, DatabaseConfig, MailConfig, WebConfig
from pbm.runners.timer_runner import tick
from pbm.store.engine import Database, init_db
from pbm.usecases.auth import hash_password
from pbm.usecases.clocks import next_timer
from pbm.usecases.world import World

NOW = datetime(2026, 6, 1, 12, 0, tzinfo=UTC)
PLAYERS = 2_000
BATCH = 20_000
DAY = timedelta(days=1)


def rows(boards: int, due: int, seed: int) -> Iterator[dict[str, Any]]:
    """The boards: ``due`` of them out of time at ``NOW``, the others with time left."""
    rng = random.Random(seed)
    start = pbm.games.get("accasta").new()
    position = start.dump()
    late = set(rng.sample(range(1, boards + 1), due))
    for board in range(1, boards + 1):
        white, black = rng.sample(range(PLAYERS), 2)
        if board in late:  # got the move 3 to 4 days ago: out of time a while ago
            since = NOW - 3 * DAY - timedelta(minutes=rng.randrange(1, 24 * 60))
            nagged = NOW - timedelta(minutes=rng.randrange(1, 60))  # its reminders are sent
        else:  # got the move within the last day: the first reminder is a day away or more
            since = NOW - timedelta(minutes=rng.randrange(0, 24 * 60))
            nagged = None
        yield {
            "board": board,
            "game": "accasta",
            "variant": "standard",
            "options": dict(start.options),
            "white": f"p{white:05d}",
            "black": f"p{black:05d}",
            "status": "active",
            "position": position,
            "ply": 0,
            "version": 0,
            "nag_days": 7,
            "forfeit_days": 21,
            "created_at": since,
            "clock_since": since,
            "last_nag_at": nagged,
            "time_control": "days 3",
            # What ``next_timer`` gives: a day left (2 days in), or the end for the late.
            "timer_at": since + 3 * DAY if board in late else since + 2 * DAY,
        }


def fill(db: Database, boards: int, due: int, seed: int) -> None:
    tables = SQLModel.metadata.tables
    pw = hash_password("pw")
    players = [
        {
            "userid": f"p{i:05d}",
            "display": f"p{i:05d}",
            "email": f"p{i:05d}@example.org",
            "full_name": "",
            "password_hash": pw,
            "created_at": NOW - 400 * DAY,
        }
        for i in range(PLAYERS)
    ]
    with db.engine.begin() as conn:
        conn.execute(tables["players"].insert(), players)
        batch: list[dict[str, Any]] = []
        for row in rows(boards, due, seed):
            batch.append(row)
            if len(batch) == BATCH:
                conn.execute(tables["games"].insert(), batch)
                batch = []
        if batch:
            conn.execute(tables["games"].insert(), batch)


def check_sample(db: Database, config: Config, seed: int) -> None:
    """The generated ``timer_at`` is the clock's own, on a sample of boards."""
    rng = random.Random(seed)
    with db.read() as session:
        world = World(session, config, NOW)
        total = session.execute(sa.text("select count(*) from games")).scalar_one()
        for number in rng.sample(range(1, int(total) + 1), 50):
            board = world.board(number)
            assert next_timer(board) == board.timer_at, (number, next_timer(board), board.timer_at)


def timed(db: Database, config: Config, at: datetime) -> tuple[float, int]:
    start = time.perf_counter()
    acted = tick(db, config, at)
    return (time.perf_counter() - start) * 1000, acted


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--postgres", metavar="URL", help="a PostgreSQL database to empty and use")
    ap.add_argument("--boards", type=int, default=100_000)
    ap.add_argument("--due", type=int, default=1_000)
    ap.add_argument("--seed", type=int, default=24)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="pbm-bench-timers-") as tmp:
        url = args.postgres or f"sqlite:///{Path(tmp) / 'pbm.sqlite3'}"
        if args.postgres:
            engine = sa.create_engine(url)
            SQLModel.metadata.drop_all(engine)
            with engine.begin() as conn:
                conn.exec_driver_sql("DROP TABLE IF EXISTS alembic_version")
            engine.dispose()
        db = init_db(url)
        config = Config(
            database=DatabaseConfig(url=url),
            mail=MailConfig(address="pbm@bench.test", secret="bench-secret"),
            clock=replace(ClockConfig(), spend_vacation=False),
            web=WebConfig(listen=""),
        )
        start = time.perf_counter()
        fill(db, args.boards, args.due, args.seed)
        if db.dialect == "postgresql":
            with db.engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
                conn.exec_driver_sql("VACUUM ANALYZE games")
        print(
            f"{db.dialect}: {args.boards} boards in play, {args.due} out of time "
            f"(filled in {time.perf_counter() - start:.1f} s)"
        )
        check_sample(db, config, args.seed)
        quiet = [timed(db, config, NOW - 2 * DAY)[0] for _ in range(20)]
        print(
            f"  a pass with nothing due      median {statistics.median(quiet):7.1f} ms, "
            f"max {max(quiet):.1f} ms   (target < 50 ms)"
        )
        took, acted = timed(db, config, NOW)
        print(
            f"  the pass that ends them      {took / 1000:7.2f} s for {acted} boards"
            "   (target < 5 s)"
        )
        with db.read() as session:
            ended = session.execute(
                sa.text("select count(*) from games where status = 'finished'")
            ).scalar_one()
            mails = session.execute(sa.text("select count(*) from outbox")).scalar_one()
        print(f"    games ended on time: {ended}; board mails written: {mails}")
        after = [timed(db, config, NOW)[0] for _ in range(20)]
        print(f"  a pass right after          median {statistics.median(after):7.1f} ms")
        db.close()
    return 0 if ended == args.due else 1


if __name__ == "__main__":
    sys.exit(main())
