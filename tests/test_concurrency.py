"""Conflicting commands for one board at the same moment, from threads and processes.

Exactly one is applied; the others are refused (NotYourTurn, BoardChanged,
AlreadyProcessed) and leave no trace: one move row, one version bump, and
only the winner's mails in the outbox. Each thread or process has a site of
its own (its own engine), as separate workers would.
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
from pbm.refusals import AlreadyProcessed, BoardChanged, NotYourTurn, Refused
from pbm.store.engine import Database
from pbm.store.tables import Game, Move, OutboxMessage, ProcessedMessage
from pbm.usecases import unit
from pbm.usecases.accounts import Signup
from pbm.usecases.auth import Password, Who
from pbm.usecases.challenges import Challenge
from pbm.usecases.moves import Move as MoveAction
from pbm.usecases.moves import Resign
from pbm.usecases.site import Site

ACCASTA = pbm.games.get("accasta")
ALICE = Who("alice", Password("pw"))
FIRST_MOVES = ACCASTA.new().legal_moves()


@pytest.fixture
def site(db: Database, config: Config, clock: Clock) -> Site:
    s = Site(db, config, clock)
    unit.run(s, Signup("alice", "pw", "alice@example.org", confirmed=True))
    unit.run(s, Signup("bob", "pw", "bob@example.org", confirmed=True))
    return s


def new_board(site: Site) -> int:
    board = unit.run(site, Challenge("accasta", "alice", "bob", admin=True))[0].board
    assert board is not None
    return board


def outcome(call: Callable[[], object]) -> str:
    """``ok`` or the name of the refusal (or ``AlreadyProcessed``) raised."""
    try:
        call()
    except (Refused, AlreadyProcessed) as exc:
        return type(exc).__name__
    return "ok"


def sites(site: Site, n: int) -> list[Site]:
    """``n`` sites on the same database, each with an engine of its own."""
    return [Site(Database.open(site.db.engine.url), site.config, site.clock) for _ in range(n)]


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
def test_threads_conflicting_moves(db: Database, site: Site, guard: bool) -> None:
    for round_ in range(4):
        board = new_board(site)
        before = outbox_count(db)
        moves = [FIRST_MOVES[round_], FIRST_MOVES[-1 - round_], FIRST_MOVES[50 + round_]]
        expect = 1 if guard else None
        workers = sites(site, len(moves))
        try:
            results = race(
                [
                    partial(unit.run, w, MoveAction(board, m, expect), ALICE)
                    for w, m in zip(workers, moves, strict=True)
                ]
            )
        finally:
            for w in workers:
                w.db.close()
        assert sorted(results).count("ok") == 1, results
        refusals = {r for r in results if r != "ok"}
        assert refusals <= {NotYourTurn.__name__, BoardChanged.__name__}, results
        check_one_move(db, board, before, moves)


def test_threads_same_mail_delivered_twice(db: Database, site: Site) -> None:
    for round_ in range(3):
        board = new_board(site)
        before = outbox_count(db)
        mid = f"<same-{round_}@example.org>"
        workers = sites(site, 3)
        move = MoveAction(board, FIRST_MOVES[round_])
        try:
            results = race([partial(unit.run, w, move, ALICE, message_id=mid) for w in workers])
        finally:
            for w in workers:
                w.db.close()
        assert sorted(results) == ["AlreadyProcessed", "AlreadyProcessed", "ok"], results
        check_one_move(db, board, before, [move.notation])
        with db.transaction() as s:
            assert s.get(ProcessedMessage, mid) is not None


def test_threads_moves_decided_on_one_snapshot(db: Database, site: Site) -> None:
    """As the inbox workers do: decide on a snapshot, then write; all decided before any writes.

    The compare-and-set finds the board changed for all but one; each of those
    is decided again on the board as it is now, and refused.
    """
    board = new_board(site)
    before = outbox_count(db)
    moves = [FIRST_MOVES[0], FIRST_MOVES[9], FIRST_MOVES[-1]]
    workers = sites(site, len(moves))
    decided_all = threading.Barrier(len(moves))

    def worker(w: Site, text: str) -> None:
        request = unit.Request(MoveAction(board, text), ALICE)
        with w.db.read() as snap:
            decided = unit.decide_all(w, snap, [request])
        assert not isinstance(decided[0].decision, Refused)
        decided_all.wait(30)
        with w.db.transaction() as s:
            (done,) = unit.write(w, s, decided)
        if done.refused is not None:
            raise done.refused

    try:
        results = race([partial(worker, w, m) for w, m in zip(workers, moves, strict=True)])
    finally:
        for w in workers:
            w.db.close()
    assert results.count("ok") == 1, results
    assert {r for r in results if r != "ok"} == {NotYourTurn.__name__}, results
    check_one_move(db, board, before, moves)


def test_threads_move_against_resign(db: Database, site: Site) -> None:
    """White moves while White resigns: one of the two, never both."""
    board = new_board(site)
    workers = sites(site, 2)
    try:
        results = race(
            [
                partial(unit.run, workers[0], MoveAction(board, FIRST_MOVES[0]), ALICE),
                partial(unit.run, workers[1], Resign(board), ALICE),
            ]
        )
    finally:
        for w in workers:
            w.db.close()
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
    """In a child process: its own engine and site, one move, report the outcome."""
    db = Database.open(url)
    try:
        site = Site(db, config)
        action = MoveAction(board, move, 1)
        barrier.wait()
        results.put(outcome(lambda: unit.run(site, action, ALICE, message_id=message_id)))
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


def test_processes_conflicting_moves(db: Database, config: Config, site: Site) -> None:
    url = db.engine.url.render_as_string(hide_password=False)
    board = new_board(site)
    before = outbox_count(db)
    moves = [FIRST_MOVES[0], FIRST_MOVES[7], FIRST_MOVES[-1]]
    results = _race_processes(url, config, board, moves, None)
    assert results.count("ok") == 1, results
    assert {r for r in results if r != "ok"} <= {NotYourTurn.__name__, BoardChanged.__name__}
    check_one_move(db, board, before, moves)


def test_processes_same_mail_twice(db: Database, config: Config, site: Site) -> None:
    url = db.engine.url.render_as_string(hide_password=False)
    board = new_board(site)
    before = outbox_count(db)
    move = FIRST_MOVES[3]
    results = _race_processes(url, config, board, [move, move], "<twice@example.org>")
    assert sorted(results) == [AlreadyProcessed.__name__, "ok"], results
    check_one_move(db, board, before, [move])
