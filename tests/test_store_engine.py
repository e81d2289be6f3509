"""pbm.store.engine on a real SQLite file and a real PostgreSQL: connections, transactions,
snapshots, and the migrations that shape the schema."""

from __future__ import annotations

import contextlib
import secrets
import sqlite3
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest
import sqlalchemy as sa
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from conftest import T0, _admin_url
from sqlmodel import Session, SQLModel, select

from pbm.config import Config
from pbm.store import engine
from pbm.store.engine import Database
from pbm.store.tables import (
    ALL_TABLES,
    Game,
    InboxMessage,
    Move,
    Player,
    ProcessedMessage,
    UTCDateTime,
)
from pbm.usecases.auth import hash_password

HEAD = "0012"


def _player(session: Session, userid: str) -> Player:
    p = Player(
        userid=userid,
        display=userid.title(),
        email=f"{userid}@example.org",
        password_hash=hash_password("pw"),
        created_at=T0,
    )
    session.add(p)
    return p


def _game(session: Session) -> Game:
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


def _players(session: Session) -> list[str]:
    return sorted(p.userid for p in session.exec(select(Player)).all())


def _columns(db: Database, table: str) -> set[str]:
    return {c["name"] for c in sa.inspect(db.engine).get_columns(table)}


def _schema_differences(db: Database) -> list[object]:
    with db.engine.connect() as conn:
        ctx = MigrationContext.configure(conn, opts={"compare_type": True})
        return list(compare_metadata(ctx, SQLModel.metadata))


def _downgrade(db: Database, revision: str) -> None:
    engine.downgrade(db, revision)


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def empty_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """A database with nothing in it, not even migrated: a SQLite file to be, or a fresh
    PostgreSQL database of its own (migrations here never touch the shared test database)."""
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'empty.sqlite3'}"
        return
    admin = sa.create_engine(_admin_url(), isolation_level="AUTOCOMMIT")
    name = f"pbm_test_mig_{secrets.token_hex(6)}"
    with admin.connect() as conn:
        conn.exec_driver_sql(f'CREATE DATABASE "{name}"')
    try:
        yield _admin_url().set(database=name).render_as_string(hide_password=False)
    finally:
        with admin.connect() as conn:
            conn.exec_driver_sql(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        admin.dispose()


# ---------------------------------------------------------------- schema


def test_migrated_schema_equals_the_models(db: Database) -> None:
    assert engine.current_revision(db) == HEAD
    assert _schema_differences(db) == []


def test_head_revision_is_what_init_db_reaches(db: Database) -> None:
    assert engine.head_revision() == engine.current_revision(db) == HEAD


def test_the_migrations_are_numbered_as_head_revision_reads_them() -> None:
    """Each migration's revision is its file's number, after the one before it, so the
    highest number is the head alembic finds."""
    scripts = ScriptDirectory(str(engine.MIGRATIONS_PATH))
    chain = list(reversed(list(scripts.walk_revisions())))
    assert [Path(s.path).name[:4] for s in chain] == [s.revision for s in chain]
    assert [s.down_revision for s in chain] == [None] + [s.revision for s in chain[:-1]]
    assert scripts.get_current_head() == engine.head_revision() == chain[-1].revision


def test_every_table_is_migrated(db: Database) -> None:
    names = set(sa.inspect(db.engine).get_table_names())
    assert set(ALL_TABLES) <= names


def test_init_db_again_is_harmless(db_url: str) -> None:
    engine.init_db(db_url).close()
    again = engine.init_db(db_url)
    try:
        assert engine.current_revision(again) == HEAD
    finally:
        again.close()


def test_init_db_from_config_creates_the_sqlite_file_and_folder(tmp_path: Path) -> None:
    cfg = Config(path=tmp_path / "pbm.toml")
    db = engine.init_db(cfg)
    try:
        assert (tmp_path / "data" / "pbm.sqlite3").exists()
        assert engine.current_revision(db) == HEAD
    finally:
        db.close()


# ---------------------------------------------------------------- migrations


def test_migrations_go_down_to_nothing_and_up_again(empty_url: str) -> None:
    db = engine.init_db(empty_url)
    try:
        assert engine.current_revision(db) == HEAD
        _downgrade(db, "base")
        assert engine.current_revision(db) is None
        assert not set(ALL_TABLES) & set(sa.inspect(db.engine).get_table_names())
        engine.upgrade(db)
        assert engine.current_revision(db) == HEAD
        assert _schema_differences(db) == []
    finally:
        db.close()


def test_0004_upgrade_keeps_the_games_and_the_inbox(empty_url: str) -> None:
    """A site at 0003 with players, a game, a move and a claimed inbox row: 0004 renames
    the claim to ``processed_by``, drops the old vacation columns, adds draw offers, and
    every row lives through it."""
    db = Database.open(empty_url)
    try:
        engine.upgrade(db, "0003")
        assert engine.current_revision(db) == "0003"
        assert {"vacation_until", "vacation_days_used", "vacation_year"} <= _columns(db, "players")
        assert {"claimed_by", "claimed_at"} <= _columns(db, "inbox")
        assert "draw_offer_by" not in _columns(db, "games")
        t = sa.bindparam("t", T0, type_=UTCDateTime)
        with db.engine.begin() as conn:
            for uid in ("alice", "bob"):
                conn.execute(
                    sa.text(
                        "INSERT INTO players (userid, display, email, full_name, password_hash,"
                        " created_at, vacation_days_used) VALUES (:u, :u, :e, '', 'h', :t, 3)"
                    ).bindparams(t),
                    {"u": uid, "e": f"{uid}@example.org"},
                )
            conn.execute(
                sa.text(
                    "INSERT INTO games (game, variant, options, white, black, status, position,"
                    " ply, version, nag_days, forfeit_days, created_at)"
                    " VALUES ('accasta', 'standard', '{}', 'alice', 'bob', 'active', 'POS',"
                    " 1, 1, 7, 21, :t)"
                ).bindparams(t)
            )
            conn.execute(
                sa.text(
                    "INSERT INTO moves (board, ply, userid, notation, text, comment, created_at,"
                    " queued, position_before) VALUES (1, 1, 'alice', 'a1:C-d1', 'a1:C-d1', '',"
                    " :t, false, 'START')"
                ).bindparams(t)
            )
            conn.execute(
                sa.text(
                    "INSERT INTO inbox (received_at, mail_from, rcpt_to, raw, status, claimed_by,"
                    " claimed_at) VALUES (:t, 'a@x.org', 'pbm@example.org', :raw, 'done', 'w1',"
                    " :t)"
                ).bindparams(t),
                {"raw": b"raw mail"},
            )

        engine.upgrade(db)
        assert engine.current_revision(db) == HEAD
        assert not {"vacation_until", "vacation_days_used", "vacation_year"} & _columns(
            db, "players"
        )
        assert "processed_by" in _columns(db, "inbox")
        assert "claimed_at" not in _columns(db, "inbox")  # 0010's claims are leases anew
        assert _schema_differences(db) == []
        with db.transaction() as s:
            assert _players(s) == ["alice", "bob"]
            g = s.get(Game, 1)
            assert g is not None
            assert (g.white, g.black, g.ply, g.draw_offer_by) == ("alice", "bob", 1, None)
            [mv] = s.exec(select(Move)).all()
            assert (mv.board, mv.notation) == (1, "a1:C-d1")
            [mail] = s.exec(select(InboxMessage)).all()
            assert (mail.raw, mail.status, mail.processed_by) == (b"raw mail", "done", "w1")
            g.draw_offer_by = "bob"  # the new column takes values
    finally:
        db.close()


def test_0004_downgrade_keeps_the_games_and_the_inbox(empty_url: str) -> None:
    """Going back to 0003 restores its columns (claims, vacation columns, no draw offers)
    and keeps every row; going up again gives the schema of the models."""
    db = engine.init_db(empty_url)
    try:
        with db.transaction() as s:
            g = _game(s)
            g.draw_offer_by = "bob"
            s.add(
                Move(
                    board=g.board,
                    ply=1,
                    userid="alice",
                    notation="a1:C-d1",
                    text="a1:C-d1",
                    created_at=T0,
                    position_before="START",
                )
            )
            s.add(
                InboxMessage(
                    received_at=T0,
                    mail_from="a@x.org",
                    rcpt_to="pbm@example.org",
                    raw=b"raw mail",
                    status="done",
                    processed_by="w1",
                )
            )

        _downgrade(db, "0003")
        assert engine.current_revision(db) == "0003"
        assert "draw_offer_by" not in _columns(db, "games")
        assert {"claimed_by", "claimed_at"} <= _columns(db, "inbox")
        assert "processed_by" not in _columns(db, "inbox")
        with db.engine.connect() as conn:
            assert conn.execute(
                sa.text("SELECT userid, vacation_days_used FROM players ORDER BY userid")
            ).all() == [("alice", 0), ("bob", 0)]
            assert conn.execute(sa.text("SELECT board, white FROM games")).all() == [(1, "alice")]
            assert conn.execute(sa.text("SELECT board, ply FROM moves")).all() == [(1, 1)]
            assert conn.execute(sa.text("SELECT claimed_by, claimed_at FROM inbox")).all() == [
                ("w1", None)
            ]

        engine.upgrade(db)
        assert engine.current_revision(db) == HEAD
        assert _schema_differences(db) == []
        with db.read() as s:
            assert _players(s) == ["alice", "bob"]
            assert [m.ply for m in s.exec(select(Move)).all()] == [1]
            assert [m.processed_by for m in s.exec(select(InboxMessage)).all()] == ["w1"]
    finally:
        db.close()


# ---------------------------------------------------------------- opening


def test_open_without_create_refuses_a_missing_sqlite_file(tmp_path: Path) -> None:
    path = tmp_path / "data" / "pbm.sqlite3"
    url = f"sqlite:///{path}"
    with pytest.raises(FileNotFoundError, match="no database file"):
        Database.open(url, create=False)
    assert not path.exists() and not path.parent.exists()  # nothing made on the way
    with pytest.raises(FileNotFoundError):
        Database.open(Config(path=tmp_path / "pbm.toml"), create=False)  # data/pbm.sqlite3

    db = Database.open(url)  # create=True by default: the folder, and the file on use
    try:
        with db.transaction() as s:
            s.execute(sa.text("SELECT 1"))
    finally:
        db.close()
    assert path.is_file()
    db = Database.open(url, create=False)  # there now
    try:
        with db.read() as s:
            assert s.execute(sa.text("SELECT 1")).scalar() == 1
    finally:
        db.close()


def test_open_without_create_leaves_memory_and_postgresql_alone() -> None:
    Database.open("sqlite://", create=False).close()
    Database.open("sqlite:///:memory:", create=False).close()
    Database.open("postgresql://someone@127.0.0.1:1/x", create=False).close()


def test_plain_postgresql_url_uses_psycopg() -> None:
    db = Database.open("postgresql://someone@127.0.0.1:1/x")
    assert db.engine.url.drivername == "postgresql+psycopg"
    assert db.dialect == "postgresql"
    db.close()
    assert engine.url_of("postgres://someone@h/x").drivername == "postgresql+psycopg"
    assert engine.url_of("sqlite:///x.sqlite3").drivername == "sqlite"


def test_shown_url_hides_the_password() -> None:
    shown = engine.shown_url("postgresql://pbm:s3cret@db.example.org:5432/pbm")
    assert shown == "postgresql+psycopg://pbm:***@db.example.org:5432/pbm"
    cfg = Config(path=Path("/srv/pbm/pbm.toml"))
    assert engine.shown_url(cfg) == "sqlite:////srv/pbm/data/pbm.sqlite3"


# ---------------------------------------------------------------- sqlite setup


def test_sqlite_pragmas(tmp_path: Path) -> None:
    db = engine.init_db(f"sqlite:///{tmp_path}/p.sqlite3")
    try:
        with db.engine.connect() as conn:

            def pragma(name: str) -> object:
                return conn.exec_driver_sql(f"PRAGMA {name}").scalar()

            assert pragma("journal_mode") == "wal"
            assert pragma("synchronous") == 2  # FULL
            assert pragma("foreign_keys") == 1
            assert pragma("busy_timeout") == engine.SQLITE_BUSY_TIMEOUT_MS
            assert pragma("secure_delete") == 1
    finally:
        db.close()


def test_sqlite_erased_mail_is_overwritten_in_the_file(tmp_path: Path) -> None:
    """secure_delete: a deleted inbox row (a password in it) leaves no trace in the file."""
    path = tmp_path / "erase.sqlite3"
    db = engine.init_db(f"sqlite:///{path}")
    secret = b"move 12 alice Zebra-Passw0rd-4711 a1:C-d1"
    try:
        with db.transaction() as s:
            s.add(
                InboxMessage(
                    received_at=T0, mail_from="a@x.org", rcpt_to="pbm@x.org", raw=secret * 50
                )
            )
        with db.transaction() as s:
            s.execute(sa.delete(InboxMessage))
    finally:
        db.close()
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")  # what the WAL holds, into the file
    conn.close()
    stored = path.read_bytes()
    wal = path.with_name(path.name + "-wal")
    if wal.exists():
        stored += wal.read_bytes()
    assert b"Zebra-Passw0rd-4711" not in stored


def test_sqlite_transactions_take_the_write_lock_at_begin(tmp_path: Path) -> None:
    path = f"{tmp_path}/lock.sqlite3"
    db = engine.init_db(f"sqlite:///{path}")
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


def test_sqlite_readers_and_a_writer_do_not_wait_for_each_other(tmp_path: Path) -> None:
    path = f"{tmp_path}/read.sqlite3"
    db = engine.init_db(f"sqlite:///{path}")
    try:
        with db.read() as s:
            assert _players(s) == []  # reading: no write lock taken
            other = sqlite3.connect(path, timeout=0, isolation_level=None)
            other.execute("BEGIN IMMEDIATE")
            # ...and a writer holding the lock does not keep a new reader out.
            with db.read() as s2:
                assert _players(s2) == []
            other.execute("ROLLBACK")
            other.close()
    finally:
        db.close()


def test_sqlite_foreign_keys_are_enforced(tmp_path: Path) -> None:
    db = engine.init_db(f"sqlite:///{tmp_path}/fk.sqlite3")
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


# ---------------------------------------------------------------- transactions and snapshots


def test_transaction_commits_whole_or_not_at_all(db: Database) -> None:
    with pytest.raises(RuntimeError), db.transaction() as s:
        _player(s, "alice")
        s.flush()
        raise RuntimeError("boom")
    with db.transaction() as s:
        assert _players(s) == []
        _player(s, "alice")
    with db.transaction() as s:
        assert _players(s) == ["alice"]


def test_read_is_a_snapshot(db: Database) -> None:
    """What a reader sees stays as it was when it began, whatever is committed meanwhile."""
    with db.transaction() as s:
        _player(s, "alice")
    with db.read() as reader:
        assert _players(reader) == ["alice"]
        with db.transaction() as s:
            _player(s, "bob")
            g = s.get(Player, "alice")
            assert g is not None
            g.email = "new@example.org"
        assert _players(reader) == ["alice"]
        emails = reader.execute(sa.text("SELECT email FROM players")).scalars().all()
        assert emails == ["alice@example.org"]
    with db.read() as reader:
        assert _players(reader) == ["alice", "bob"]


def test_read_commits_nothing(db: Database) -> None:
    """A read is for reading: a write in it is refused (PostgreSQL's read-only
    transaction) or rolled back (SQLite), never committed."""
    with contextlib.suppress(sa.exc.DBAPIError), db.read() as s:
        s.add(ProcessedMessage(message_id="<a@x>", processed_at=T0))
        s.flush()
    with db.read() as s:
        assert s.exec(select(ProcessedMessage)).all() == []


def test_times_come_back_aware_utc(db: Database) -> None:
    with db.transaction() as s:
        _player(s, "alice")
    with db.read() as s:
        p = s.get(Player, "alice")
        assert p is not None
        assert p.created_at == T0
        assert p.created_at.utcoffset() == timedelta(0)


def test_naive_times_are_refused(db: Database) -> None:
    with pytest.raises(sa.exc.StatementError), db.transaction() as s:
        p = _player(s, "alice")
        p.created_at = T0.replace(tzinfo=None)
        s.flush()
    with db.read() as s:
        assert _players(s) == []


def test_game_options_roundtrip_as_json(db: Database) -> None:
    with db.transaction() as s:
        board = _game(s).board
    with db.read() as s:
        g = s.get(Game, board)
        assert g is not None
        assert g.options == {"castle_win": "immediate"}
        assert g.status == "active" and g.version == 0 and g.ply == 0
        assert g.draw_offer_by is None


def test_processed_message_ids_are_unique(db: Database) -> None:
    with db.transaction() as s:
        s.add(ProcessedMessage(message_id="<a@x>", processed_at=T0))
    with pytest.raises(sa.exc.IntegrityError), db.transaction() as s:
        s.add(ProcessedMessage(message_id="<a@x>", processed_at=T0))


def test_0008_upgrade_keeps_the_classic_clocks_of_existing_boards(empty_url: str) -> None:
    """Boards made before time controls keep the classic clock their days say, and the
    boards in play are looked at by the first timer pass (their ``timer_at`` is due)."""
    db = Database.open(empty_url)
    try:
        engine.upgrade(db, "0007")
        t = sa.bindparam("t", T0, type_=UTCDateTime)
        with db.engine.begin() as conn:
            for uid in ("alice", "bob"):
                conn.execute(
                    sa.text(
                        "INSERT INTO players (userid, display, email, full_name, password_hash,"
                        " created_at) VALUES (:u, :u, :e, '', 'h', :t)"
                    ).bindparams(t),
                    {"u": uid, "e": f"{uid}@example.org"},
                )
            for status, nag, forfeit in (("active", 5, 14), ("finished", 7, 21)):
                conn.execute(
                    sa.text(
                        "INSERT INTO games (game, variant, options, white, black, status,"
                        " position, ply, version, nag_days, forfeit_days, created_at)"
                        " VALUES ('accasta', 'standard', '{}', 'alice', 'bob', :s, 'POS',"
                        " 0, 0, :n, :f, :t)"
                    ).bindparams(t),
                    {"s": status, "n": nag, "f": forfeit},
                )
        engine.upgrade(db)
        assert engine.current_revision(db) == HEAD
        assert _schema_differences(db) == []
        with db.transaction() as s:
            active, finished = s.get(Game, 1), s.get(Game, 2)
            assert active is not None and finished is not None
            assert (active.time_control, active.timer_at) == ("classic 5/14", T0)
            assert (finished.time_control, finished.timer_at) == ("classic 7/21", None)
            assert active.clock is None
    finally:
        db.close()
