"""The store on a real SQLite file and a real PostgreSQL: schema, locking, helpers."""

from __future__ import annotations

import sqlite3
import threading
import time
from datetime import timedelta
from pathlib import Path

import pytest
import sqlalchemy as sa
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from conftest import T0
from sqlmodel import SQLModel, select

from pbm import store
from pbm.config import Config
from pbm.replies import Reply, parse_token_address, token_address
from pbm.store import Database, Game, OutboxMessage, Player, ProcessedMessage


def _player(session: store.Session, userid: str) -> Player:
    p = Player(
        userid=userid,
        display=userid.title(),
        email=f"{userid}@example.org",
        password_hash=store.hash_password("pw"),
        created_at=T0,
    )
    session.add(p)
    return p


def _game(session: store.Session) -> Game:
    _player(session, "alice")
    _player(session, "bob")
    session.flush()  # no ORM relationships, so the players go in first by hand
    g = Game(
        game="accasta",
        variant="standard",
        options={"castle_win": "immediate"},
        white="alice",
        black="bob",
        position="POS",
        nag_days=7,
        forfeit_days=21,
        created_at=T0,
    )
    session.add(g)
    session.flush()
    return g


# ---------------------------------------------------------------- schema


def test_migrated_schema_equals_the_models(db: Database) -> None:
    assert store.current_revision(db) == "0003"
    with db.engine.connect() as conn:
        ctx = MigrationContext.configure(conn, opts={"compare_type": True})
        assert compare_metadata(ctx, SQLModel.metadata) == []


def test_every_table_is_migrated(db: Database) -> None:
    names = set(sa.inspect(db.engine).get_table_names())
    assert set(store.ALL_TABLES) <= names
    assert set(store.ALL_TABLES) == set(SQLModel.metadata.tables)


def test_init_db_again_is_harmless(db_url: str) -> None:
    store.init_db(db_url).close()
    again = store.init_db(db_url)
    try:
        assert store.current_revision(again) == "0003"
    finally:
        again.close()


def test_init_db_from_config_creates_the_sqlite_file_and_folder(tmp_path: Path) -> None:
    cfg = Config(path=tmp_path / "pbm.toml")
    db = store.init_db(cfg)
    try:
        assert (tmp_path / "data" / "pbm.sqlite3").exists()
        assert store.current_revision(db) == "0003"
    finally:
        db.close()


# ---------------------------------------------------------------- sqlite setup


def test_sqlite_pragmas(tmp_path: Path) -> None:
    db = store.init_db(f"sqlite:///{tmp_path}/p.sqlite3")
    try:
        with db.engine.connect() as conn:

            def pragma(name: str) -> object:
                return conn.exec_driver_sql(f"PRAGMA {name}").scalar()

            assert pragma("journal_mode") == "wal"
            assert pragma("synchronous") == 2  # FULL
            assert pragma("foreign_keys") == 1
            assert pragma("busy_timeout") == store.SQLITE_BUSY_TIMEOUT_MS
    finally:
        db.close()


def test_sqlite_transactions_take_the_write_lock_at_begin(tmp_path: Path) -> None:
    path = f"{tmp_path}/lock.sqlite3"
    db = store.init_db(f"sqlite:///{path}")
    try:
        with db.transaction() as s:
            s.exec(select(Player)).all()  # only a read, yet the lock is held
            other = sqlite3.connect(path, timeout=0, isolation_level=None)
            with pytest.raises(sqlite3.OperationalError, match="locked"):
                other.execute("BEGIN IMMEDIATE")
            other.close()
        other = sqlite3.connect(path, timeout=0, isolation_level=None)
        other.execute("BEGIN IMMEDIATE")  # free again after commit
        other.execute("ROLLBACK")
        other.close()
    finally:
        db.close()


def test_sqlite_foreign_keys_are_enforced(tmp_path: Path) -> None:
    db = store.init_db(f"sqlite:///{tmp_path}/fk.sqlite3")
    try:
        with pytest.raises(sa.exc.IntegrityError), db.transaction() as s:
            s.add(
                Game(
                    game="accasta",
                    variant="standard",
                    white="nobody",
                    black="noone",
                    position="",
                    nag_days=1,
                    forfeit_days=1,
                    created_at=T0,
                )
            )
    finally:
        db.close()


def test_plain_postgresql_url_uses_psycopg() -> None:
    db = Database.open("postgresql://someone@127.0.0.1:1/x")
    assert db.engine.url.drivername == "postgresql+psycopg"
    assert db.dialect == "postgresql"
    db.close()


# ---------------------------------------------------------------- transactions


def test_transaction_commits_whole_or_not_at_all(db: Database) -> None:
    with pytest.raises(RuntimeError), db.transaction() as s:
        _player(s, "alice")
        s.flush()
        raise RuntimeError("boom")
    with db.transaction() as s:
        assert s.exec(select(Player)).all() == []
        _player(s, "alice")
    with db.transaction() as s:
        assert [p.userid for p in s.exec(select(Player)).all()] == ["alice"]


def test_times_come_back_aware_utc(db: Database) -> None:
    with db.transaction() as s:
        _player(s, "alice")
    with db.transaction() as s:
        p = s.get(Player, "alice")
        assert p is not None
        assert p.created_at == T0
        assert p.created_at.utcoffset() == timedelta(0)


def test_naive_times_are_refused(db: Database) -> None:
    with pytest.raises(sa.exc.StatementError), db.transaction() as s:
        p = _player(s, "alice")
        p.created_at = T0.replace(tzinfo=None)
        s.flush()


def test_game_options_roundtrip_as_json(db: Database) -> None:
    with db.transaction() as s:
        board = _game(s).board
    with db.transaction() as s:
        g = s.get(Game, board)
        assert g is not None
        assert g.options == {"castle_win": "immediate"}
        assert g.status == "active" and g.version == 0 and g.ply == 0


def test_processed_message_ids_are_unique(db: Database) -> None:
    with db.transaction() as s:
        s.add(ProcessedMessage(message_id="<a@x>", processed_at=T0))
    with pytest.raises(sa.exc.IntegrityError), db.transaction() as s:
        s.add(ProcessedMessage(message_id="<a@x>", processed_at=T0))


# ---------------------------------------------------------------- versions and locks


def test_bump_version_counts_changes(db: Database) -> None:
    with db.transaction() as s:
        board = _game(s).board
    assert board is not None
    for expected in (1, 2):
        with db.transaction() as s:
            g = store.lock_game(s, board)
            assert g is not None
            g.ply += 1
            store.bump_version(s, g)
        with db.transaction() as s:
            g = s.get(Game, board)
            assert g is not None
            assert (g.version, g.ply) == (expected, expected)


def test_bump_version_refuses_a_stale_row_and_nothing_is_written(db: Database) -> None:
    with db.transaction() as s:
        board = _game(s).board
    assert board is not None
    with pytest.raises(store.StaleGame), db.transaction() as s:
        g = store.lock_game(s, board)
        assert g is not None
        g.position = "CHANGED"
        # Someone else's change, behind the ORM's back.
        s.connection().exec_driver_sql("UPDATE games SET version = version + 1")
        store.bump_version(s, g)
    with db.transaction() as s:
        g = s.get(Game, board)
        assert g is not None
        assert (g.position, g.version) == ("POS", 0)


def test_lock_game_of_a_missing_board_is_none(db: Database) -> None:
    with db.transaction() as s:
        assert store.lock_game(s, 99) is None


@pytest.mark.postgres
def test_postgres_game_lock_makes_a_second_writer_wait(postgres_db: Database) -> None:
    db = postgres_db
    with db.transaction() as s:
        board = _game(s).board
    assert board is not None
    seen: list[int] = []
    started = threading.Event()

    def second() -> None:
        with db.transaction() as s2:
            started.set()
            g2 = store.lock_game(s2, board)
            assert g2 is not None
            seen.append(g2.version)

    with db.transaction() as s:
        g = store.lock_game(s, board)
        assert g is not None
        t = threading.Thread(target=second)
        t.start()
        started.wait(5)
        time.sleep(0.3)
        assert seen == []  # still waiting for our lock
        store.bump_version(s, g)
    t.join(10)
    assert seen == [1]  # it saw our committed change, not the old row


# ---------------------------------------------------------------- passwords


def test_password_hash_roundtrip() -> None:
    h = store.hash_password("sesame")
    assert h.startswith(f"scrypt${store.SCRYPT_N}$8$1$")
    assert "sesame" not in h
    assert store.verify_password("sesame", h)
    assert not store.verify_password("Sesame", h)
    assert not store.verify_password("", h)
    assert store.hash_password("sesame") != h  # fresh salt each time


def test_password_hash_keeps_its_own_cost(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(store, "SCRYPT_N", 2**14)
    strong = store.hash_password("pw")
    monkeypatch.setattr(store, "SCRYPT_N", 2**4)
    assert strong.startswith("scrypt$16384$")
    assert store.verify_password("pw", strong)


@pytest.mark.parametrize("junk", ["", "plain", "md5$1$2$3$4$5", "scrypt$x$8$1$AA==$AA=="])
def test_unreadable_hash_never_matches(junk: str) -> None:
    assert not store.verify_password("pw", junk)


# ---------------------------------------------------------------- mail tables


def test_enqueue_replies_fills_the_outbox(db: Database, config: Config) -> None:
    replies = [
        Reply(to="bob@example.org", subject="s1", body="b1", board=12, reply_as="Bob"),
        Reply(to="alice@example.org", subject="s2", body="b2", in_reply_to="<x@y>", is_error=True),
        Reply(to="", subject="cli only", body="not queued"),
    ]
    with db.transaction() as s:
        ids = store.enqueue_replies(s, replies, config, T0)
    assert len(ids) == 2
    with db.transaction() as s:
        out = s.exec(select(OutboxMessage).order_by(OutboxMessage.id)).all()  # type: ignore[arg-type]
    assert [o.id for o in out] == ids
    assert [o.to_addr for o in out] == ["bob@example.org", "alice@example.org"]
    first, second = out
    assert first.reply_to == token_address("pbm@example.org", "test-secret", 12, "bob")
    parsed = parse_token_address(first.reply_to, "pbm@example.org")
    assert parsed is not None and parsed.is_valid("test-secret")
    assert second.reply_to is None and second.in_reply_to == "<x@y>" and second.is_error
    assert first.status == second.status == "pending"
    assert first.attempts == 0 and first.next_attempt_at == T0
    for o in out:
        assert o.message_id.startswith("<pbm.") and o.message_id.endswith("@example.org>")
    assert first.message_id != second.message_id


def test_enqueue_without_a_secret_sets_no_reply_address(db: Database, config: Config) -> None:
    from dataclasses import replace

    no_secret = replace(config, mail=replace(config.mail, secret=""))
    with db.transaction() as s:
        (row_id,) = store.enqueue_replies(
            s, [Reply(to="b@x.org", subject="s", body="b", board=1, reply_as="bob")], no_secret, T0
        )
        row = s.get(OutboxMessage, row_id)
        assert row is not None and row.reply_to is None


def test_claim_inbox_hands_each_row_out_once(db: Database) -> None:
    with db.transaction() as s:
        for i in range(3):
            store.add_inbox(s, b"raw", "a@x.org", ["pbm@example.org"], f"<{i}@x>", T0)
    with db.transaction() as s:
        first = store.claim_inbox(s, "w1", T0, limit=2)
    with db.transaction() as s:
        second = store.claim_inbox(s, "w2", T0, limit=5)
    assert len(first) == 2 and len(second) == 1 and not set(first) & set(second)
    with db.transaction() as s:
        assert first[0] is not None
        store.finish_inbox(s, first[0], "done", T0, "ok")
    # The unfinished claim goes stale and is handed out again; the done row never.
    later = T0 + timedelta(minutes=11)
    with db.transaction() as s:
        again = set(store.claim_inbox(s, "w3", later, limit=5))
    assert again == {first[1], second[0]}


def test_finish_inbox_many_marks_each_row_its_own_way(db: Database) -> None:
    with db.transaction() as s:
        ids = [
            store.add_inbox(s, b"raw", "a@x.org", ["pbm@example.org"], f"<{i}@x>", T0)
            for i in range(3)
        ]
    later = T0 + timedelta(seconds=5)
    with db.transaction() as s:
        finished = [
            store.Finished(ids[0], "done", "1 of 1", "<new@x>"),
            store.Finished(ids[1], "ignored", "bounce"),
            store.Finished(ids[2], "failed", None),
        ]
        assert store.finish_inbox_many(s, finished, later) == 3
        assert store.finish_inbox_many(s, [store.Finished(999_999, "done")], later) == 0
        with pytest.raises(ValueError, match="bad inbox status"):
            store.finish_inbox_many(s, [store.Finished(ids[0], "lost")], later)
        with pytest.raises(KeyError):
            store.finish_inbox(s, 999_999, "done", later)
    with db.read() as s:
        rows = [s.get(store.InboxMessage, i) for i in ids]
        assert [
            (r.status, r.note, r.processed_at, r.message_id) for r in rows if r is not None
        ] == [
            ("done", "1 of 1", later, "<new@x>"),  # the worker's reading of it
            ("ignored", "bounce", later, "<1@x>"),  # as accepted: left alone
            ("failed", None, later, "<2@x>"),
        ]


def test_claim_outbox_respects_due_time_and_lease(db: Database, config: Config) -> None:
    with db.transaction() as s:
        ids = store.enqueue_replies(
            s, [Reply(to=f"p{i}@x.org", subject="s", body="b") for i in range(2)], config, T0
        )
    with db.transaction() as s:
        claimed = store.claim_outbox(s, "w1", T0, lease=timedelta(minutes=5))
        assert [r.id for r in claimed] == ids
    with db.transaction() as s:
        assert store.claim_outbox(s, "w2", T0 + timedelta(minutes=1)) == []
    with db.transaction() as s:
        assert ids[0] is not None and ids[1] is not None
        store.outbox_sent(s, ids[0], T0)
        store.outbox_failed(s, ids[1], "421 busy", T0, retry_at=T0 + timedelta(minutes=30))
    with db.transaction() as s:
        assert store.claim_outbox(s, "w3", T0 + timedelta(minutes=10)) == []
        (due,) = store.claim_outbox(s, "w3", T0 + timedelta(minutes=31))
        assert due.id == ids[1] and due.attempts == 1 and due.last_error == "421 busy"


def test_claim_written_takes_only_due_rows_nobody_holds(db: Database, config: Config) -> None:
    with db.transaction() as s:
        now_ids = store.enqueue_replies(
            s, [Reply(to=f"p{i}@x.org", subject=f"s{i}", body="b") for i in range(3)], config, T0
        )
        [later] = store.enqueue_replies(
            s, [Reply(to="q@x.org", subject="s", body="b")], config, T0, T0 + timedelta(hours=1)
        )
    with db.transaction() as s:  # someone else holds the first
        store.claim_outbox(s, "other", T0, limit=1)
    with db.transaction() as s:
        mails = store.claim_written(s, [*now_ids, later, 999_999], "me", T0, timedelta(minutes=3))
    assert [m.id for m in mails] == now_ids[1:]
    assert [m.subject for m in mails] == ["s1", "s2"]
    assert mails[0].to_addr == "p1@x.org" and mails[0].created_at == T0
    assert mails[0].claimed_until == T0 + timedelta(minutes=3)
    with db.transaction() as s:
        holders = [store.claim_outbox(s, "third", T0 + timedelta(minutes=1))]
        assert holders == [[]]  # held by "other" and "me"; the last is not due
        rows = [s.get(OutboxMessage, i) for i in [*now_ids, later]]
        assert [r.claimed_by for r in rows if r is not None] == ["other", "me", "me", None]
    with db.transaction() as s:
        assert store.claim_written(s, [], "me", T0, timedelta(minutes=3)) == []


@pytest.mark.postgres
def test_postgres_claims_skip_rows_another_worker_holds(postgres_db: Database) -> None:
    db = postgres_db
    with db.transaction() as s:
        for i in range(4):
            store.add_inbox(s, b"raw", "a@x.org", ["pbm@example.org"], f"<{i}@x>", T0)
    with db.transaction() as s1:
        a = set(store.claim_inbox(s1, "w1", T0, limit=2))
        with db.transaction() as s2:  # a second connection, while s1 is open
            b = set(store.claim_inbox(s2, "w2", T0, limit=4))
    assert len(a) == 2 and len(b) == 2 and not a & b


def test_head_revision_is_what_init_db_reaches(db: Database) -> None:
    assert store.head_revision() == store.current_revision(db) == "0003"


def test_insert_new_tells_a_new_row_from_an_existing_one(db: Database) -> None:
    row = {"message_id": "<once@x>", "processed_at": T0}
    with db.transaction() as s:
        assert store.insert_new(s, store.ProcessedMessage, row) is True
        assert store.insert_new(s, store.ProcessedMessage, row) is False
    with db.transaction() as s:  # and after the commit, from another transaction
        assert store.insert_new(s, store.ProcessedMessage, row) is False
        assert store.insert_new(s, store.ProcessedMessage, {**row, "message_id": "<two@x>"})
    with db.read() as s:
        assert len(s.exec(select(store.ProcessedMessage)).all()) == 2
