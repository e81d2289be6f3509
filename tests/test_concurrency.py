"""Conflicting commands for one board at the same moment, from threads and processes.

Exactly one is applied; the others are refused (NotYourTurn, BoardChanged,
AlreadyProcessed) and leave no trace: one move row, one version bump, and
only the winner's mails in the outbox.
"""

from __future__ import annotations

import multiprocessing
import threading
from collections.abc import Callable
from functools import partial
from typing import Any

import pytest
from conftest import Clock
from sqlmodel import col, select

import pbm.games
from pbm.config import Config
from pbm.service import (
    AlreadyProcessed,
    BoardChanged,
    NotYourTurn,
    Password,
    Service,
    ServiceError,
)
from pbm.store import Database, Game, Move, OutboxMessage, ProcessedMessage

ACCASTA = pbm.games.get("accasta")
PW = Password("pw")
FIRST_MOVES = ACCASTA.new().legal_moves()


@pytest.fixture
def svc(db: Database, config: Config, clock: Clock) -> Service:
    s = Service(db, config, clock)
    s.signup("alice", "pw", "alice@example.org")
    s.signup("bob", "pw", "bob@example.org")
    return s


def new_board(svc: Service) -> int:
    board = svc.challenge("accasta", "alice", "bob", admin=True)[0].board
    assert board is not None
    return board


def outcome(call: Callable[[], object]) -> str:
    """``ok`` or the name of the ServiceError raised."""
    try:
        call()
    except ServiceError as exc:
        return type(exc).__name__
    return "ok"


def race(calls: list[Callable[[], object]]) -> list[str]:
    """Run the calls in threads, released together."""
    barrier = threading.Barrier(len(calls))
    results: list[str] = [""] * len(calls)

    def run(i: int) -> None:
        barrier.wait()
        results[i] = outcome(calls[i])

    threads = [threading.Thread(target=run, args=(i,)) for i in range(len(calls))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    return results


def check_one_move(db: Database, board: int, outbox_before: int, moves: list[str]) -> None:
    """One move on the board, played from the start, and only its two mails queued."""
    with db.transaction() as s:
        g = s.get(Game, board)
        assert g is not None
        rows = s.exec(select(Move).where(Move.board == board)).all()
        out = s.exec(select(OutboxMessage).order_by(col(OutboxMessage.id))).all()
    assert (g.ply, g.version, len(rows)) == (1, 1, 1)
    assert rows[0].text in moves
    assert g.position == ACCASTA.new().play(rows[0].text)[0].dump()
    assert len(out) == outbox_before + 2


def outbox_count(db: Database) -> int:
    with db.transaction() as s:
        return len(s.exec(select(OutboxMessage)).all())


@pytest.mark.parametrize("guard", [False, True], ids=["plain", "with-#1"])
def test_threads_conflicting_moves(db: Database, config: Config, svc: Service, guard: bool) -> None:
    for round_ in range(4):
        board = new_board(svc)
        before = outbox_count(db)
        moves = [FIRST_MOVES[round_], FIRST_MOVES[-1 - round_], FIRST_MOVES[50 + round_]]
        suffix = "#1" if guard else ""
        # Each thread with its own Service and engine, as separate workers would be.
        services = [Service(Database.open(db.engine.url), config, svc.clock) for _ in moves]
        try:
            results = race(
                [
                    partial(s.move, board, "alice", PW, m + suffix)
                    for s, m in zip(services, moves, strict=True)
                ]
            )
        finally:
            for s in services:
                s.db.close()
        assert sorted(results).count("ok") == 1, results
        refusals = {r for r in results if r != "ok"}
        assert refusals <= {NotYourTurn.__name__, BoardChanged.__name__}, results
        check_one_move(db, board, before, moves)


def test_threads_same_mail_delivered_twice(db: Database, config: Config, svc: Service) -> None:
    for round_ in range(3):
        board = new_board(svc)
        before = outbox_count(db)
        mid = f"<same-{round_}@example.org>"
        services = [Service(Database.open(db.engine.url), config, svc.clock) for _ in range(3)]
        move = FIRST_MOVES[round_]
        try:
            results = race(
                [partial(s.move, board, "alice", PW, move, message_id=mid) for s in services]
            )
        finally:
            for s in services:
                s.db.close()
        assert sorted(results) == ["AlreadyProcessed", "AlreadyProcessed", "ok"], results
        check_one_move(db, board, before, [move])
        with db.transaction() as s:
            assert s.get(ProcessedMessage, mid) is not None


def test_threads_move_against_resign(db: Database, config: Config, svc: Service) -> None:
    """White moves while White resigns: one of the two, never both."""
    board = new_board(svc)
    services = [Service(Database.open(db.engine.url), config, svc.clock) for _ in range(2)]
    try:
        results = race(
            [
                lambda: services[0].move(board, "alice", PW, FIRST_MOVES[0]),
                lambda: services[1].resign(board, "alice", PW),
            ]
        )
    finally:
        for s in services:
            s.db.close()
    with db.transaction() as s:
        g = s.get(Game, board)
        assert g is not None
        n_moves = len(s.exec(select(Move).where(Move.board == board)).all())
    if results == ["ok", "ok"]:
        # Both may succeed only in this order: the move, then the resignation.
        assert (g.status, g.result, g.ply, n_moves, g.version) == ("finished", "0-1", 1, 1, 2)
    else:
        assert sorted(results) == ["GameOver", "ok"], results
        assert g.status == "finished" and g.version == 1
        assert (g.ply, n_moves) == (0, 0)


# ---------------------------------------------------------------- processes


def _process_move(
    url: str,
    config: Config,
    board: int,
    move: str,
    message_id: str | None,
    barrier: Any,
    results: Any,
) -> None:
    """In a child process: its own engine and Service, one move, report the outcome."""
    db = Database.open(url)
    try:
        svc = Service(db, config)
        barrier.wait()
        results.put(
            outcome(lambda: svc.move(board, "alice", PW, move + "#1", message_id=message_id))
        )
    finally:
        db.close()


def _race_processes(
    url: str, config: Config, board: int, moves: list[str], message_id: str | None
) -> list[str]:
    ctx = multiprocessing.get_context("spawn")
    barrier = ctx.Barrier(len(moves))
    results = ctx.Queue()
    procs = [
        ctx.Process(
            target=_process_move, args=(url, config, board, m, message_id, barrier, results)
        )
        for m in moves
    ]
    for p in procs:
        p.start()
    out = [results.get(timeout=120) for _ in procs]
    for p in procs:
        p.join(30)
        assert p.exitcode == 0
    return out


def test_processes_conflicting_moves(db: Database, config: Config, svc: Service) -> None:
    url = db.engine.url.render_as_string(hide_password=False)
    board = new_board(svc)
    before = outbox_count(db)
    moves = [FIRST_MOVES[0], FIRST_MOVES[7], FIRST_MOVES[-1]]
    results = _race_processes(url, config, board, moves, None)
    assert results.count("ok") == 1, results
    assert {r for r in results if r != "ok"} <= {NotYourTurn.__name__, BoardChanged.__name__}
    check_one_move(db, board, before, moves)


def test_processes_same_mail_twice(db: Database, config: Config, svc: Service) -> None:
    url = db.engine.url.render_as_string(hide_password=False)
    board = new_board(svc)
    before = outbox_count(db)
    move = FIRST_MOVES[3]
    results = _race_processes(url, config, board, [move, move], "<twice@example.org>")
    assert sorted(results) == [AlreadyProcessed.__name__, "ok"], results
    check_one_move(db, board, before, [move])
