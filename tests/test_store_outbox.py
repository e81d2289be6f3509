"""pbm.store.outbox on a real SQLite file and a real PostgreSQL: replies written, claimed
with a lease, sent, tried again or failed, listed and requeued."""

from __future__ import annotations

import threading
from dataclasses import replace
from datetime import datetime, timedelta

import pytest
import sqlalchemy as sa
from conftest import T0

from pbm.config import Config
from pbm.mail.addresses import parse_token_address, token_address
from pbm.mail.message import reply_address
from pbm.replies import Reply
from pbm.store import outbox
from pbm.store.engine import Database
from pbm.store.tables import OutboxMessage

LEASE = timedelta(minutes=5)
DOMAIN = "example.org"


def _enqueue(db: Database, n: int, due: datetime = T0, prefix: str = "p") -> list[int]:
    replies = [Reply(to=f"{prefix}{i}@x.org", subject=f"s{i}", body="b") for i in range(n)]
    with db.transaction() as s:
        return outbox.enqueue(s, replies, DOMAIN, T0, due)


def _rows(db: Database, ids: list[int]) -> list[OutboxMessage]:
    with db.read() as s:
        rows = [s.get(OutboxMessage, i) for i in ids]
    assert all(r is not None for r in rows)
    return rows  # type: ignore[return-value]


def _claim(db: Database, worker: str, now: datetime, limit: int = 10) -> list[int]:
    """Up to ``limit`` rows claimed one after the other, as a sender's loops do."""
    taken = []
    with db.transaction() as s:
        while len(taken) < limit and (mail := outbox.claim_next(s, worker, now, LEASE)):
            taken.append(mail.id)
    return taken


# ---------------------------------------------------------------- writing


def test_enqueue_writes_the_replies_in_the_callers_transaction(
    db: Database, config: Config
) -> None:
    replies = [
        Reply(to="bob@example.org", subject="s1", body="b1", board=12, reply_as="bob"),
        Reply(to="alice@example.org", subject="s2", body="b2", in_reply_to="<x@y>", is_error=True),
        Reply(to="", subject="cli only", body="not queued"),
    ]
    due = T0 + timedelta(seconds=1)
    with db.transaction() as s:
        ids = outbox.enqueue(s, replies, DOMAIN, T0, due)
        assert outbox.enqueue(s, [], DOMAIN, T0, due) == []
    assert len(ids) == 2
    with db.read() as s:
        out = outbox.listing(s, "all")
    assert [o.id for o in out] == ids
    assert [o.to_addr for o in out] == ["bob@example.org", "alice@example.org"]
    first, second = out
    assert (first.subject, first.body, first.board, first.reply_as) == ("s1", "b1", 12, "bob")
    assert (second.in_reply_to, second.is_error, second.board) == ("<x@y>", True, None)
    assert not first.is_error and first.in_reply_to is None
    assert first.status == second.status == "pending"
    assert first.attempts == 0 and first.created_at == T0 and first.next_attempt_at == due
    assert first.claimed_by is None and first.sent_at is None
    for o in out:
        assert o.message_id.startswith("<pbm.") and o.message_id.endswith("@example.org>")
    assert first.message_id != second.message_id

    # The reply-token address is made from the row when the mail is built, not stored.
    reply_to = reply_address(first, config)
    assert reply_to == token_address("pbm@example.org", "test-secret", 12, "bob")
    parsed = parse_token_address(reply_to, "pbm@example.org")
    assert parsed is not None and parsed.is_valid("test-secret")
    assert reply_address(second, config) is None  # no board
    no_secret = replace(config, mail=replace(config.mail, secret=""))
    assert reply_address(first, no_secret) is None


def test_enqueue_in_a_rolled_back_transaction_writes_nothing(db: Database) -> None:
    with pytest.raises(RuntimeError), db.transaction() as s:
        outbox.enqueue(s, [Reply(to="a@x.org", subject="s", body="b")], DOMAIN, T0, T0)
        raise RuntimeError("the change failed")
    with db.read() as s:
        assert outbox.listing(s, "all") == []


# ---------------------------------------------------------------- claiming


def test_claim_next_respects_due_time_and_lease(db: Database) -> None:
    ids = _enqueue(db, 3)
    [later] = _enqueue(db, 1, due=T0 + timedelta(hours=1), prefix="q")
    with db.transaction() as s:
        first = outbox.claim_next(s, "w1", T0, LEASE)
    assert first is not None and first.id == ids[0]  # the oldest first
    assert (first.to_addr, first.subject, first.body) == ("p0@x.org", "s0", "b")
    assert (first.created_at, first.attempts, first.claimed_until) == (T0, 0, T0 + LEASE)
    assert not first.again  # never handed over before
    assert _claim(db, "w1", T0, 1) == [ids[1]]
    assert _claim(db, "w2", T0 + timedelta(minutes=1)) == [ids[2]]  # the rest of what is due
    assert _claim(db, "w3", T0 + timedelta(minutes=2)) == []  # all leased or not due
    assert [r.claimed_by for r in _rows(db, [*ids, later])] == ["w1", "w1", "w2", None]
    # A lease that runs out (its sender died) lets another sender take the rows, which
    # may have gone out already: ``again``.
    with db.transaction() as s:
        taken = outbox.claim_next(s, "w4", T0 + LEASE + timedelta(seconds=1), LEASE)
    assert taken is not None and taken.id == ids[0] and taken.again
    assert _claim(db, "w4", T0 + LEASE + timedelta(seconds=1)) == [ids[1]]
    assert _claim(db, "w5", T0 + timedelta(minutes=7)) == [ids[2]]  # w2's lease ran out
    assert _claim(db, "w6", T0 + timedelta(hours=1)) == [*ids, later]


@pytest.mark.postgres
def test_postgres_claims_skip_rows_another_sender_holds(postgres_db: Database) -> None:
    db = postgres_db
    ids = _enqueue(db, 2)
    with db.transaction() as s1:
        a = outbox.claim_next(s1, "w1", T0, LEASE)
        with db.transaction() as s2:  # a second connection, while s1 is open
            s2.execute(sa.text("SET LOCAL lock_timeout = '5s'"))  # an error, not a hang
            b = outbox.claim_next(s2, "w2", T0, LEASE)
    assert a is not None and b is not None and (a.id, b.id) == (ids[0], ids[1])
    assert [r.claimed_by for r in _rows(db, ids)] == ["w1", "w2"]


def test_racing_claims_never_take_one_row_twice(db: Database) -> None:
    """Senders claiming one row at a time, side by side, until nothing is left.

    On PostgreSQL a claim whose snapshot predates another sender's committed
    claim must still see that claim when it locks the row (READ COMMITTED
    re-tests the locking scan's conditions on the row's newest version).
    The timing is not under the test's control: with the due test outside
    the locking SELECT (before the fix) this failed in 19 runs of 20.
    """
    ids = _enqueue(db, 100)
    senders = [Database.open(db.engine.url) for _ in range(4)]
    start = threading.Barrier(len(senders))
    claimed: list[list[int]] = [[] for _ in senders]

    def unclaimed(sender: Database) -> int:
        free = sa.select(sa.func.count()).where(outbox.OUTBOX.c.claimed_by.is_(None))
        with sender.read() as s:
            return int(s.execute(free).scalar_one())

    def claim_all(i: int) -> None:
        start.wait()
        # Until every row is taken, not just until a claim comes back empty:
        # a sender that stopped at the first empty claim would end the race early.
        while (mine := _claim(senders[i], f"w{i}", T0, limit=1)) or unclaimed(senders[i]):
            claimed[i].extend(mine)

    threads = [threading.Thread(target=claim_all, args=(i,)) for i in range(len(senders))]
    try:
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
    finally:
        for sender in senders:
            sender.close()
    assert not any(t.is_alive() for t in threads)
    everything = sorted(i for mine in claimed for i in mine)
    assert everything == ids  # each row once: none twice, none left behind
    owners = {i: f"w{n}" for n, mine in enumerate(claimed) for i in mine}
    assert [r.claimed_by for r in _rows(db, ids)] == [owners[i] for i in ids]


def test_release_gives_back_only_the_workers_own_rows(db: Database) -> None:
    ids = _enqueue(db, 3)
    assert _claim(db, "w1", T0, 2) == ids[:2]
    assert _claim(db, "w2", T0) == [ids[2]]
    with db.transaction() as s:
        outbox.release(s, [*ids, 999_999], "w1")
        outbox.release(s, [], "w1")
    rows = _rows(db, ids)
    assert [(r.claimed_by, r.claimed_until) for r in rows] == [
        (None, None),
        (None, None),
        ("w2", T0 + LEASE),
    ]
    assert [r.attempts for r in rows] == [0, 0, 0]
    assert _claim(db, "w3", T0) == ids[:2]  # at once, no lease to wait for


def test_defer_makes_rows_due_later_without_charging_an_attempt(db: Database) -> None:
    ids = _enqueue(db, 2)
    assert _claim(db, "w1", T0) == ids
    until = T0 + timedelta(minutes=10)
    with db.transaction() as s:
        outbox.defer(s, ids, "w1", until)
        outbox.defer(s, ids, "not-me", T0 + timedelta(days=1))  # not his: no effect
        outbox.defer(s, [], "w1", until)
    rows = _rows(db, ids)
    assert [(r.status, r.attempts, r.claimed_by, r.next_attempt_at) for r in rows] == [
        ("pending", 0, None, until),
        ("pending", 0, None, until),
    ]
    assert _claim(db, "w2", until - timedelta(seconds=1)) == []
    assert _claim(db, "w2", until) == ids


# ---------------------------------------------------------------- outcomes


def test_mark_sent_marks_only_pending_rows(db: Database) -> None:
    ids = _enqueue(db, 3)
    _claim(db, "w1", T0)
    sent_at = T0 + timedelta(seconds=3)
    with db.transaction() as s:
        assert outbox.record_failure(s, ids[2], "550 no such user", None) == "failed"
        assert outbox.mark_sent(s, [*ids, 999_999], sent_at) == {ids[0], ids[1]}
        assert outbox.mark_sent(s, ids, sent_at) == set()  # sent is never sent again
        assert outbox.mark_sent(s, [], sent_at) == set()
    rows = _rows(db, ids)
    assert [(r.status, r.attempts, r.sent_at, r.claimed_by) for r in rows] == [
        ("sent", 1, sent_at, None),
        ("sent", 1, sent_at, None),
        ("failed", 1, None, None),
    ]
    assert _claim(db, "w2", T0 + timedelta(days=1)) == []


def test_record_failure_tries_again_later_or_gives_up(db: Database) -> None:
    ids = _enqueue(db, 2)
    assert _claim(db, "w1", T0) == ids
    retry_at = T0 + timedelta(minutes=30)
    with db.transaction() as s:
        assert outbox.record_failure(s, ids[0], "421 busy", retry_at) == "pending"
        assert outbox.record_failure(s, ids[1], "550 unknown user", None) == "failed"
        assert outbox.record_failure(s, ids[1], "again", retry_at) is None  # not pending
        assert outbox.record_failure(s, 999_999, "x", retry_at) is None
    rows = _rows(db, ids)
    assert [(r.status, r.attempts, r.last_error, r.claimed_by) for r in rows] == [
        ("pending", 1, "421 busy", None),
        ("failed", 1, "550 unknown user", None),
    ]
    assert rows[0].next_attempt_at == retry_at
    assert _claim(db, "w2", T0 + timedelta(minutes=10)) == []
    with db.transaction() as s:
        due = outbox.claim_next(s, "w2", T0 + timedelta(minutes=31), LEASE)
    assert due is not None and (due.id, due.attempts, due.again) == (ids[0], 1, False)
    with db.transaction() as s:
        assert outbox.record_failure(s, ids[0], "421 still busy", None) == "failed"
    assert [(r.status, r.attempts) for r in _rows(db, ids[:1])] == [("failed", 2)]


def test_release_dead_frees_the_rows_of_senders_that_died(db: Database) -> None:
    ids = _enqueue(db, 4)
    _claim(db, "host:1", T0, 1)
    _claim(db, "host:2", T0, 1)
    _claim(db, "host:3", T0, 1)
    with db.transaction() as s:
        outbox.mark_sent(s, [ids[2]], T0)  # host:3's row is sent: left alone
    asked: list[str] = []

    def dead(worker: str) -> bool:
        asked.append(worker)
        return worker != "host:2"

    with db.transaction() as s:
        assert outbox.release_dead(s, dead) == 1
    assert asked == ["host:1", "host:2"]
    rows = _rows(db, ids)
    assert [r.claimed_by for r in rows] == [None, "host:2", None, None]
    assert [r.status for r in rows] == ["pending", "pending", "sent", "pending"]
    assert _claim(db, "w", T0) == [ids[0], ids[3]]  # at once, before the lease runs out


# ---------------------------------------------------------------- the admin's view


def test_listing_by_status(db: Database) -> None:
    ids = _enqueue(db, 3)
    with db.transaction() as s:
        outbox.mark_sent(s, [ids[0]], T0)
        outbox.record_failure(s, ids[1], "550", None)
    with db.read() as s:
        by_status = {
            status: [r.id for r in outbox.listing(s, status)]
            for status in ("pending", "sent", "failed", "all", None)
        }
        with pytest.raises(ValueError, match="status must be one of pending, sent, failed"):
            outbox.listing(s, "lost")
    assert by_status == {
        "pending": [ids[2]],
        "sent": [ids[0]],
        "failed": [ids[1]],
        "all": ids,
        None: ids,
    }
    with db.read() as s:
        rows = outbox.listing(s, "failed")
    assert rows[0].last_error == "550"  # usable after the session is gone


def test_retry_requeues_failed_rows_but_never_sent_ones(db: Database) -> None:
    ids = _enqueue(db, 4)
    _claim(db, "w1", T0)
    with db.transaction() as s:
        outbox.mark_sent(s, [ids[0]], T0)
        for i in ids[1:3]:
            outbox.record_failure(s, i, "550", None)
        outbox.record_failure(s, ids[3], "421", T0 + timedelta(hours=1))
    now = T0 + timedelta(days=1)
    with db.transaction() as s:
        result = outbox.retry(s, [ids[0], ids[1], 999_999], all_failed=False, now=now)
    assert result.requeued == [ids[1]]
    assert result.skipped == {ids[0]: "already sent", 999_999: "no such outbox row"}
    rows = _rows(db, ids)
    assert [(r.status, r.attempts) for r in rows] == [
        ("sent", 1),
        ("pending", 0),
        ("failed", 1),
        ("pending", 1),
    ]
    assert rows[1].next_attempt_at == now and rows[1].claimed_by is None

    with db.transaction() as s:
        result = outbox.retry(s, [ids[3]], all_failed=True, now=now)
    assert result.requeued == [ids[2], ids[3]] and result.skipped == {}
    assert [(r.status, r.attempts, r.next_attempt_at) for r in _rows(db, ids[2:])] == [
        ("pending", 0, now),
        ("pending", 0, now),
    ]
    with db.transaction() as s:
        assert outbox.retry(s, [], all_failed=True, now=now) == outbox.RetryResult([], {})
    assert _claim(db, "w2", now) == ids[1:]


def test_counts(db: Database) -> None:
    with db.read() as s:
        assert outbox.counts(s) == {}
    ids = _enqueue(db, 4)
    with db.transaction() as s:
        outbox.mark_sent(s, ids[:2], T0)
        outbox.record_failure(s, ids[2], "550", None)
    with db.read() as s:
        assert outbox.counts(s) == {"sent": 2, "failed": 1, "pending": 1}
