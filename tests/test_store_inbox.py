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


LEASE = timedelta(minutes=5)


def test_claim_next_hands_out_the_oldest_waiting_mail_once(db: Database) -> None:
    ids = _receive(db, 4)
    with db.transaction() as s:
        inbox.finish(s, [Finished(ids[1], "done")], T0)
    with db.transaction() as s:
        first = inbox.claim_next(s, "w1", T0, LEASE)
        second = inbox.claim_next(s, "w2", T0, LEASE)
    assert first == WaitingMail(ids[0], b"raw 0", "p0@x.org", "pbm@example.org")
    assert second is not None and second.id == ids[2]  # the finished one is not handed out
    rows = _rows(db, ids)
    assert [r.claimed_by for r in rows] == ["w1", None, "w2", None]
    assert rows[0].claimed_until == T0 + LEASE


def test_a_claim_is_its_runners_until_the_lease_ends(db: Database) -> None:
    [row] = _receive(db, 1)
    with db.transaction() as s:
        assert inbox.claim_next(s, "w1", T0, LEASE) is not None
        assert inbox.claim_next(s, "w2", T0, LEASE) is None  # held by w1
        again = inbox.claim_next(s, "w1", T0, LEASE)  # its own, after a database fault
        assert again is not None and again.id == row
        assert inbox.claim_next(s, "w2", T0 + LEASE, LEASE) is None  # not over yet
        later = inbox.claim_next(s, "w2", T0 + LEASE + timedelta(seconds=1), LEASE)
    assert later is not None and later.id == row
    with db.transaction() as s:
        assert not inbox.still_mine(s, row, "w1")  # w1 finds it taken over
        assert inbox.still_mine(s, row, "w2")


def test_a_runner_that_dies_before_its_commit_leaves_the_mail_waiting(db: Database) -> None:
    ids = _receive(db, 2)
    with pytest.raises(RuntimeError), db.transaction() as s:
        taken = inbox.claim_next(s, "w1", T0, LEASE)
        assert taken is not None
        inbox.finish(s, [Finished(taken.id, "done", processed_by="w1")], T0)
        raise RuntimeError("killed")
    with db.transaction() as s:
        found = inbox.claim_next(s, "w2", T0, LEASE)
    assert found is not None and found.id == ids[0]


def test_release_dead_frees_the_mail_of_runners_that_died(db: Database) -> None:
    ids = _receive(db, 3)
    with db.transaction() as s:
        inbox.claim_next(s, "host:1:dead", T0, LEASE)
        inbox.claim_next(s, "host:2:alive", T0, LEASE)
        assert inbox.release_dead(s, lambda claimer: claimer.endswith("dead")) == 1
        taken = inbox.claim_next(s, "host:3:new", T0, LEASE)
    assert taken is not None and taken.id == ids[0]
    assert _rows(db, ids)[1].claimed_by == "host:2:alive"


@pytest.mark.postgres
def test_postgres_a_row_another_transaction_is_claiming_is_skipped(postgres_db: Database) -> None:
    db = postgres_db
    ids = _receive(db, 2)
    with db.transaction() as s1:
        first = inbox.claim_next(s1, "w1", T0, LEASE)
        with db.transaction() as s2:  # a second connection, while s1 is open
            s2.execute(sa.text("SET LOCAL lock_timeout = '5s'"))  # an error, not a hang
            second = inbox.claim_next(s2, "w2", T0, LEASE)
    assert first is not None and second is not None
    assert (first.id, second.id) == (ids[0], ids[1])  # SKIP LOCKED: no waiting, no double


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
