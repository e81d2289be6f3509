#!/usr/bin/env python3
"""Benchmark applying a move as the number of stored games grows.

For each size (by default 10 and 100,000 stored games) a fresh SQLite file
is migrated with the real migrations, filled with realistic background rows
by bulk inserts (SQLAlchemy core ``executemany``): players, games (most
active with a few moves, some finished with a whole game of moves), their
move rows and an outbox of already sent board mails. Then the same seeded
sequence of moves is played on fresh boards through the real move use case
(``unit.run(site, Move(...), Who(uid, ADMIN))``), one transaction each (WAL,
``synchronous=FULL``, ``BEGIN IMMEDIATE``), and each call is timed.

The sizes are timed interleaved (each move on every size in turn), so that
whatever else the machine does falls on all sizes alike. One line per size
gives the per-move mean, p50 and p99 in milliseconds, the moves per second,
and of that the CPU time of this process and the time spent in SQL
statements (the rest is mostly the fsync of each commit). The last line
gives the growth from the smallest to the largest size; the target is at
most 20%, judged on the median, which stalls of a shared disk do not move.

``--explain`` prints SQLite's ``EXPLAIN QUERY PLAN`` of every statement one
move runs on the largest database, flagging full scans and temporary
B-trees, to show which query needs which index.

    .venv/bin/python scripts/bench_store.py
    .venv/bin/python scripts/bench_store.py --sizes 10 100000 --moves 300 --explain
    .venv/bin/python scripts/bench_store.py --keep --dir /tmp/bench   # keep the files
"""

from __future__ import annotations

import argparse
import random
import shutil
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from sqlalchemy import event
from sqlmodel import SQLModel

import pbm.games
from pbm.config import Config, DatabaseConfig, MailConfig
from pbm.store.engine import Database, init_db
from pbm.usecases import queries, unit
from pbm.usecases.auth import ADMIN, Who, hash_password
from pbm.usecases.challenges import Challenge
from pbm.usecases.moves import Move
from pbm.usecases.site import Site

ACCASTA = pbm.games.get("accasta")
T0 = datetime(2024, 1, 1, tzinfo=UTC)
BATCH = 20_000
GROWTH_LIMIT = 1.20


@dataclass(frozen=True)
class Playout:
    """A seeded random game: the canonical moves and the position before each and at the end."""

    variant: str
    moves: tuple[str, ...]
    positions: tuple[str, ...]  # positions[k]: after k moves; len(moves) + 1 entries


def playout(rng: random.Random, variant: str, max_ply: int) -> Playout:
    state = ACCASTA.new(variant)
    moves: list[str] = []
    positions = [state.dump()]
    while state.outcome is None and len(moves) < max_ply:
        state, canonical = state.play(rng.choice(state.legal_moves()))
        moves.append(canonical)
        positions.append(state.dump())
    return Playout(variant, tuple(moves), tuple(positions))


def unfinished(rng: random.Random, variant: str, plies: int) -> list[str]:
    """``plies`` legal moves from the start that do not end the game."""
    while True:
        p = playout(rng, variant, plies)
        if len(p.moves) == plies and ACCASTA.load(p.positions[-1]).outcome is None:
            return list(p.moves)


def chunks(rows: Iterator[dict[str, Any]], size: int = BATCH) -> Iterator[list[dict[str, Any]]]:
    batch: list[dict[str, Any]] = []
    for row in rows:
        batch.append(row)
        if len(batch) == size:
            yield batch
            batch = []
    if batch:
        yield batch


def fill(
    db: Database,
    games: int,
    players: int,
    pool: Sequence[Playout],
    seed: int,
    finished_share: float = 0.15,
) -> dict[str, int]:
    """Bulk-insert ``games`` background games with their moves and sent board mails."""
    rng = random.Random(seed)
    pw_hash = hash_password("pw")
    tables = SQLModel.metadata.tables
    counts = {"players": 0, "games": 0, "moves": 0, "outbox": 0}
    player_rows = [
        {
            "userid": f"p{i:05d}",
            "display": f"p{i:05d}",
            "email": f"p{i:05d}@example.org",
            "full_name": "",
            "password_hash": pw_hash,
            "created_at": T0,
        }
        for i in range(players)
    ]
    body = "x" * 1500  # about the size of a board mail
    move_rows: list[dict[str, Any]] = []
    outbox_rows: list[dict[str, Any]] = []

    def game_rows() -> Iterator[dict[str, Any]]:
        for board in range(1, games + 1):
            p = pool[rng.randrange(len(pool))]
            white, black = rng.sample(range(players), 2)
            finished = rng.random() < finished_share
            plies = len(p.moves) if finished else rng.randint(0, min(12, len(p.moves) - 1))
            created = T0 + timedelta(minutes=board)
            uids = (f"p{white:05d}", f"p{black:05d}")
            for k in range(plies):
                move_rows.append(
                    {
                        "board": board,
                        "ply": k + 1,
                        "userid": uids[k % 2],
                        "notation": p.moves[k],
                        "text": p.moves[k],
                        "comment": "",
                        "created_at": created + timedelta(hours=k + 1),
                        "message_id": f"<m{board}.{k}@example.org>",
                        "queued": False,
                        "position_before": p.positions[k],
                    }
                )
            # The last board mails of the game, already sent.
            for uid in uids:
                outbox_rows.append(
                    {
                        "created_at": created,
                        "to_addr": f"{uid}@example.org",
                        "subject": f"Accasta Board {board}",
                        "body": body,
                        "board": board,
                        "reply_as": uid,
                        "in_reply_to": None,
                        "message_id": f"<pbm.{uuid.UUID(int=rng.getrandbits(128))}@example.org>",
                        "is_error": False,
                        "status": "sent",
                        "attempts": 1,
                        "next_attempt_at": created,
                        "sent_at": created,
                    }
                )
            yield {
                "board": board,
                "game": "accasta",
                "variant": p.variant,
                "options": {"castle_win": "immediate", "d4_opening": "allowed"},
                "white": uids[0],
                "black": uids[1],
                "status": "finished" if finished else "active",
                "result": ("1-0" if board % 2 else "0-1") if finished else None,
                "termination": "resign" if finished else None,
                "position": p.positions[plies],
                "ply": plies,
                "version": plies,
                "nag_days": 7,
                "forfeit_days": 21,
                "created_at": created,
                "last_move_at": created + timedelta(hours=plies) if plies else None,
                "ended_at": created + timedelta(hours=plies + 1) if finished else None,
            }

    with db.engine.begin() as conn:
        conn.execute(tables["players"].insert(), player_rows)
        counts["players"] = len(player_rows)
        for batch in chunks(game_rows()):
            conn.execute(tables["games"].insert(), batch)
            conn.execute(tables["moves"].insert(), move_rows)
            conn.execute(tables["outbox"].insert(), outbox_rows)
            counts["games"] += len(batch)
            counts["moves"] += len(move_rows)
            counts["outbox"] += len(outbox_rows)
            move_rows.clear()
            outbox_rows.clear()
    # No ANALYZE: the server never runs it, so the planner works without statistics here too.
    if db.dialect == "sqlite":
        raw = db.engine.raw_connection()
        try:
            raw.driver_connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")  # type: ignore[union-attr]
        finally:
            raw.close()
    return counts


@dataclass
class Bench:
    """One size: its database, site, fresh boards with their planned moves, and timings."""

    size: int
    db: Database
    site: Site
    boards: list[tuple[int, str, str]]
    plans: list[list[str]]
    fill_seconds: float
    counts: dict[str, int]
    times: list[float] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)
    sql: list[float] = field(default_factory=list)
    file_mb: float = 0.0

    def ms(self, q: float) -> float:
        s = sorted(self.times)
        return s[min(len(s) - 1, int(q * len(s)))] * 1000

    @property
    def mean_ms(self) -> float:
        return statistics.fmean(self.times) * 1000

    def line(self) -> str:
        return (
            f"{self.size:>8,} games ({self.counts['moves']:>9,} moves, "
            f"{self.counts['outbox']:>7,} outbox, {self.file_mb:6.1f} MB, "
            f"filled in {self.fill_seconds:4.1f} s): "
            f"mean {self.mean_ms:5.2f} ms  p50 {self.ms(0.50):5.2f} ms  "
            f"p99 {self.ms(0.99):5.2f} ms  {1 / statistics.fmean(self.times):5.1f} moves/s  "
            f"(CPU {statistics.fmean(self.cpu) * 1000:5.2f} ms, "
            f"SQL statements {statistics.fmean(self.sql) * 1000:4.2f} ms)"
        )


def prepare(
    size: int, folder: Path, pool: Sequence[Playout], boards: int, moves: int, seed: int
) -> Bench:
    """A filled database of ``size`` games, ``boards`` fresh boards and their seeded moves."""
    path = folder / f"bench-{size}.sqlite3"
    for leftover in folder.glob(f"bench-{size}.sqlite3*"):
        leftover.unlink()
    url = f"sqlite:///{path}"
    config = Config(
        database=DatabaseConfig(url=url),
        mail=MailConfig(address="pbm@example.org", secret="bench-secret"),
    )
    db = init_db(url)
    t = time.perf_counter()
    counts = fill(db, size, players=max(2, min(1000, size // 10)), pool=pool, seed=seed)
    fill_seconds = time.perf_counter() - t
    site = Site(db, config)
    # The same seeded moves for every size.
    rng = random.Random(f"{seed}:moves")
    per_board = -(-moves // boards)
    plans = [unfinished(rng, "standard", per_board) for _ in range(boards)]
    nums = []
    for i in range(boards):
        n = counts["players"]
        white, black = f"p{(2 * i) % n:05d}", f"p{(2 * i + 1) % n:05d}"
        replies = unit.run(site, Challenge("accasta", white, black, admin=True))
        assert replies[0].board is not None
        nums.append((replies[0].board, white, black))
    # Warm up (statement caches, the first pages) on a board of its own.
    warm = unit.run(site, Challenge("accasta", "p00000", "p00001", admin=True))[0].board
    assert warm is not None
    for k, mv in enumerate(unfinished(rng, "standard", 4)):
        unit.run(site, Move(warm, mv), Who(("p00000", "p00001")[k % 2], ADMIN))
    return Bench(size, db, site, nums, plans, fill_seconds, counts)


def run_interleaved(benches: Sequence[Bench], moves: int) -> None:
    """Time the moves, one size after the other for each move.

    Interleaving makes whatever else the machine does at the moment fall on
    every size alike, so the growth compares like with like.
    """
    sql_time = [0.0]

    def before(conn: Any, *_: Any) -> None:
        conn.info["bench_t0"] = time.perf_counter()

    def after(conn: Any, *_: Any) -> None:
        sql_time[0] += time.perf_counter() - conn.info["bench_t0"]

    for b in benches:
        event.listen(b.db.engine, "before_cursor_execute", before)
        event.listen(b.db.engine, "after_cursor_execute", after)
    perf, cpu = time.perf_counter, time.process_time
    per_board = len(benches[0].plans[0])
    done = 0
    for k in range(per_board):
        for i in range(len(benches[0].boards)):
            if done == moves:
                return
            for b in benches:
                board, white, black = b.boards[i]
                uid = white if k % 2 == 0 else black
                sql_time[0] = 0.0
                t0, c0 = perf(), cpu()
                unit.run(b.site, Move(board, b.plans[i][k]), Who(uid, ADMIN))
                b.times.append(perf() - t0)
                b.cpu.append(cpu() - c0)
                b.sql.append(sql_time[0])
            done += 1


def explain_one_move(
    site: Site,
    db: Database,
    board_info: tuple[int, str, str],
    rng: random.Random,
) -> None:
    """Capture the SQL of one move and print each statement's query plan."""
    board, white, black = board_info
    state = queries.board(site, board).state
    uid = (white, black)[state.to_move]
    mv = rng.choice(state.legal_moves())
    seen: list[tuple[str, Any]] = []

    def capture(_conn: Any, _cursor: Any, statement: str, params: Any, *_: Any) -> None:
        seen.append((statement, params))

    event.listen(db.engine, "before_cursor_execute", capture)
    try:
        unit.run(site, Move(board, mv), Who(uid, ADMIN))
    finally:
        event.remove(db.engine, "before_cursor_execute", capture)
    print(f"\nEXPLAIN QUERY PLAN of the {len(seen)} statements of one move:")
    with db.engine.connect() as conn:
        raw = conn.connection.driver_connection
        assert raw is not None
        for statement, params in seen:
            if statement.strip().upper() in ("BEGIN IMMEDIATE", "COMMIT", "ROLLBACK"):
                continue
            one_line = " ".join(statement.split())
            plan = raw.execute(f"EXPLAIN QUERY PLAN {statement}", params or ()).fetchall()
            details = [row[-1] for row in plan]
            bad = any(
                (d.startswith("SCAN") and "USING" not in d) or "TEMP B-TREE" in d for d in details
            )
            print(f"{'!! ' if bad else '   '}{one_line[:150]}")
            for d in details:
                print(f"       {d}")


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--sizes", type=int, nargs="+", default=[10, 100_000], help="stored games")
    ap.add_argument("--moves", type=int, default=300, help="timed moves per size")
    ap.add_argument("--boards", type=int, default=30, help="fresh boards the moves go to")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--dir", type=Path, default=None, help="where the SQLite files go")
    ap.add_argument("--keep", action="store_true", help="keep the SQLite files")
    ap.add_argument("--explain", action="store_true", help="query plans of one move")
    args = ap.parse_args(argv)

    folder = args.dir or Path(tempfile.mkdtemp(prefix="pbm-bench-"))
    folder.mkdir(parents=True, exist_ok=True)
    rng = random.Random(args.seed)
    t = time.perf_counter()
    pool = [playout(rng, "standard" if i % 4 else "pari", 60) for i in range(24)]
    print(f"{len(pool)} playouts for the background games in {time.perf_counter() - t:.1f} s")
    print(f"{args.moves} timed moves (ADMIN) per size, SQLite file in {folder}")
    results: list[Bench] = []
    try:
        for size in sorted(args.sizes):
            b = prepare(size, folder, pool, args.boards, args.moves, args.seed)
            results.append(b)
            print(f"{size:>8,} games stored in {b.fill_seconds:.1f} s", flush=True)
        run_interleaved(results, args.moves)
        for b in results:
            b.file_mb = sum(p.stat().st_size for p in folder.glob(f"bench-{b.size}.sqlite3*"))
            b.file_mb /= 2**20
            print(b.line(), flush=True)
        if args.explain:
            last = results[-1]
            explain_one_move(last.site, last.db, last.boards[0], random.Random(args.seed))
    finally:
        for b in results:
            b.db.close()
        if not args.keep and args.dir is None:
            shutil.rmtree(folder, ignore_errors=True)
    if len(results) >= 2:
        small, large = results[0], results[-1]
        growth = large.mean_ms / small.mean_ms
        p50_growth = large.ms(0.5) / small.ms(0.5)
        sql_growth = statistics.fmean(large.sql) / statistics.fmean(small.sql)
        cpu_growth = statistics.fmean(large.cpu) / statistics.fmean(small.cpu)
        verdict = "ok" if p50_growth <= GROWTH_LIMIT else "TOO MUCH"
        print(
            f"growth {small.size:,} -> {large.size:,} games: p50 x{p50_growth:.2f}, "
            f"mean x{growth:.2f}, CPU x{cpu_growth:.2f}, SQL statements x{sql_growth:.2f} "
            f"(limit x{GROWTH_LIMIT:.2f} on p50: {verdict})"
        )
        return 0 if p50_growth <= GROWTH_LIMIT else 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
