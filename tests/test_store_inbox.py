"""pbm.store.inbox on a real SQLite file and a real PostgreSQL: received mail, waiting,
taken and finished by a worker in one transaction; Message-IDs remembered."""

from __future__ import annotations

from datetime import timedelta

import pytest
import sqlalchemy as sa
from conftest import T0

from pbm.store import inbox
from pbm.store.engine import Database
from pbm.store.inbox import Finished, Received, WaitingMail
from pbm.store.tables import InboxMessage


def _receive(db: Database, n: int, at: object = T0) -> list[int]:
    mails = [Received(f"raw {i}".encode(), f"p{i}@x.org", ["pbm@example.org"]) for i in range(n)]
    with db.transaction() as s:
        return inbox.add(s, mails, at)  # type: ignore[arg-type]


def _rows(db: Database, ids: list[int]) -> list[InboxMessage]:
    with db.read() as s:
        rows = [s.get(InboxMessage, i) for i in ids]
    assert all(r is not None for r in rows)
    return rows  # type: ignore[return-value]


def test_add_stores_new_rows_and_returns_their_ids_in_order(db: Database) -> None:
    mails = [
        Received(b"first", "a@x.org", ["pbm@example.org"]),
        Received(b"second\r\n\x00bytes", "b@x.org", ["pbm@example.org", "other@example.org"]),
        Received(b"third", "", ["pbm@example.org"]),  # a bounce: empty envelope sender
    ]
    with db.transaction() as s:
        ids = inbox.add(s, mails, T0)
        assert inbox.add(s, [], T0) == []
    assert len(ids) == 3 and ids == sorted(ids)
    rows = _rows(db, ids)
    assert [r.raw for r in rows] == [b"first", b"second\r\n\x00bytes", b"third"]
    assert [r.mail_from for r in rows] == ["a@x.org", "b@x.org", ""]
    assert rows[1].rcpt_to == "pbm@example.org\nother@example.org"
    for r in rows:
        assert (r.status, r.received_at, r.processed_at, r.processed_by) == ("new", T0, None, None)
        assert r.message_id is None and r.note is None


def test_waiting_lists_new_mail_oldest_first_up_to_the_limit(db: Database) -> None:
    ids = _receive(db, 4)
    with db.transaction() as s:
        inbox.finish(s, [Finished(ids[1], "done")], T0)
    with db.read() as s:
        assert inbox.waiting(s, 10) == [
            WaitingMail(ids[0], b"raw 0", "p0@x.org", "pbm@example.org"),
            WaitingMail(ids[2], b"raw 2", "p2@x.org", "pbm@example.org"),
            WaitingMail(ids[3], b"raw 3", "p3@x.org", "pbm@example.org"),
        ]
        assert [m.id for m in inbox.waiting(s, 2)] == [ids[0], ids[2]]


def test_take_hands_out_only_rows_that_still_wait(db: Database) -> None:
    ids = _receive(db, 3)
    with db.read() as s:  # a worker reads what waits on a snapshot...
        seen = [m.id for m in inbox.waiting(s, 10)]
    with db.transaction() as s:  # ...meanwhile another worker acts on the first
        assert inbox.take(s, [ids[0]]) == {ids[0]}
        inbox.finish(s, [Finished(ids[0], "done", processed_by="w2")], T0)
    with db.transaction() as s:  # the first worker takes what is still its to do
        assert inbox.take(s, [*seen, 999_999]) == {ids[1], ids[2]}
        assert inbox.take(s, []) == set()
        inbox.finish(s, [Finished(i, "done", processed_by="w1") for i in ids[1:]], T0)
    assert [r.processed_by for r in _rows(db, ids)] == ["w2", "w1", "w1"]
    with db.transaction() as s:
        assert inbox.take(s, ids) == set()  # nothing is ever taken twice


def test_a_worker_that_dies_before_its_commit_leaves_the_mail_waiting(db: Database) -> None:
    ids = _receive(db, 2)
    with pytest.raises(RuntimeError), db.transaction() as s:
        assert inbox.take(s, ids) == set(ids)
        inbox.finish(s, [Finished(i, "done", processed_by="w1") for i in ids], T0)
        raise RuntimeError("killed")
    with db.read() as s:
        assert [m.id for m in inbox.waiting(s, 10)] == ids
    with db.transaction() as s:
        assert inbox.take(s, ids) == set(ids)


@pytest.mark.postgres
def test_postgres_a_row_another_transaction_holds_is_not_taken(postgres_db: Database) -> None:
    db = postgres_db
    ids = _receive(db, 4)
    with db.transaction() as s1:
        first = inbox.take(s1, ids[:2])
        with db.transaction() as s2:  # a second connection, while s1 is open
            s2.execute(sa.text("SET LOCAL lock_timeout = '5s'"))  # an error, not a hang
            second = inbox.take(s2, ids)
            assert second == set(ids[2:])  # SKIP LOCKED: no waiting, no double
            inbox.finish(s2, [Finished(i, "done", processed_by="w2") for i in second], T0)
        inbox.finish(s1, [Finished(i, "done", processed_by="w1") for i in first], T0)
    assert first == set(ids[:2])
    assert [r.processed_by for r in _rows(db, ids)] == ["w1", "w1", "w2", "w2"]


def test_finish_marks_each_row_its_own_way(db: Database) -> None:
    with db.transaction() as s:
        ids = inbox.add(s, [Received(b"raw", "a@x.org", ["pbm@example.org"])] * 3, T0)
        # What the listener read from the mail when it accepted it.
        for i, row_id in enumerate(ids):
            row = s.get(InboxMessage, row_id)
            assert row is not None
            row.message_id = f"<{i}@x>"
    later = T0 + timedelta(seconds=5)
    with db.transaction() as s:
        finished = [
            Finished(ids[0], "done", "1 of 1", "<new@x>", "host:1"),
            Finished(ids[1], "ignored", "bounce", None, "host:1"),
            Finished(ids[2], "failed", None),
        ]
        assert inbox.finish(s, finished, later) == 3
        assert inbox.finish(s, [Finished(999_999, "done")], later) == 0
        assert inbox.finish(s, [], later) == 0
        with pytest.raises(ValueError, match="bad inbox status"):
            inbox.finish(s, [Finished(ids[0], "lost")], later)
        with pytest.raises(ValueError, match="bad inbox status"):
            inbox.finish(s, [Finished(ids[0], "new")], later)
    rows = _rows(db, ids)
    assert [(r.status, r.note, r.processed_at, r.message_id, r.processed_by) for r in rows] == [
        ("done", "1 of 1", later, "<new@x>", "host:1"),  # the worker's reading of it
        ("ignored", "bounce", later, "<1@x>", "host:1"),  # as accepted: left alone
        ("failed", None, later, "<2@x>", None),
    ]


def test_a_bad_status_marks_none_of_the_rows(db: Database) -> None:
    ids = _receive(db, 2)
    with db.transaction() as s, pytest.raises(ValueError):
        inbox.finish(s, [Finished(ids[0], "done"), Finished(ids[1], "lost")], T0)
    assert [r.status for r in _rows(db, ids)] == ["new", "new"]


def test_remember_tells_a_new_message_id_from_a_known_one(db: Database) -> None:
    with db.transaction() as s:
        assert not inbox.seen(s, "<once@x>")
        assert inbox.remember(s, "<once@x>", T0) is True
        assert inbox.remember(s, "<once@x>", T0) is False  # the transaction goes on
        assert inbox.seen(s, "<once@x>")
    with db.transaction() as s:  # and after the commit, from another transaction
        assert inbox.remember(s, "<once@x>", T0) is False
        assert inbox.remember(s, "<two@x>", T0) is True
    with db.read() as s:
        assert inbox.seen(s, "<once@x>") and inbox.seen(s, "<two@x>")
        assert not inbox.seen(s, "<three@x>")


def test_a_message_id_remembered_in_a_rolled_back_transaction_is_not_known(
    db: Database,
) -> None:
    with pytest.raises(RuntimeError), db.transaction() as s:
        assert inbox.remember(s, "<lost@x>", T0)
        raise RuntimeError("the change failed")
    with db.transaction() as s:
        assert not inbox.seen(s, "<lost@x>")
        assert inbox.remember(s, "<lost@x>", T0) is True


def test_counts_and_oldest_waiting(db: Database) -> None:
    with db.read() as s:
        assert inbox.counts(s) == {}
        assert inbox.oldest_waiting(s) is None
    ids = [
        *_receive(db, 2, T0),
        *_receive(db, 1, T0 + timedelta(minutes=1)),
        *_receive(db, 1, T0 + timedelta(minutes=2)),
    ]
    with db.transaction() as s:
        inbox.finish(
            s,
            [Finished(ids[0], "done"), Finished(ids[1], "ignored"), Finished(ids[3], "failed")],
            T0,
        )
    with db.read() as s:
        assert inbox.counts(s) == {"done": 1, "ignored": 1, "new": 1, "failed": 1}
        oldest = inbox.oldest_waiting(s)
        assert oldest == T0 + timedelta(minutes=1)  # the done ones are older, not waiting
        assert oldest is not None and oldest.utcoffset() == timedelta(0)
