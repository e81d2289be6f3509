"""The database connection: engine and sessions, and the migrations that shape it.

SQLite (the default, a file in ``server.data_dir``) runs in WAL mode with
``synchronous=FULL``, a busy timeout, foreign keys on, ``secure_delete`` (erased
bytes are overwritten), and every writing transaction opened with ``BEGIN
IMMEDIATE`` so that writers queue up instead of failing half-way; readers
(``Database.read``) take a snapshot and no lock. PostgreSQL
(``postgresql+psycopg://`` URLs) hands out inbox and outbox rows with ``FOR
UPDATE SKIP LOCKED`` and locks the boards a write transaction decides on.

The schema is created and upgraded by the alembic migrations shipped in
``pbm/migrations``; ``init_db`` brings a database to the newest revision.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from sqlalchemy import event
from sqlalchemy.engine import URL, Connection, Engine, make_url
from sqlalchemy.orm import sessionmaker
from sqlmodel import Session

from pbm.config import Config

MIGRATIONS_PATH = Path(__file__).parent.parent / "migrations"
_NUMBERED = "[0-9][0-9][0-9][0-9]_*.py"  # a migration's file: its revision, then its name
SQLITE_BUSY_TIMEOUT_MS = 10_000
_READ_ONLY = "pbm_read_only"  # execution option: begin a deferred (reading) transaction


def url_of(config_or_url: Config | str | URL) -> URL:
    """The SQLAlchemy URL of a config or URL text, with our PostgreSQL driver."""
    raw = config_or_url.database_url if isinstance(config_or_url, Config) else config_or_url
    url = make_url(raw)
    # A plain postgresql:// URL would pick psycopg2, which is not installed.
    if url.drivername in ("postgresql", "postgres"):
        url = url.set(drivername="postgresql+psycopg")
    return url


def shown_url(config_or_url: Config | str | URL) -> str:
    """The database URL as printed: without its password."""
    return url_of(config_or_url).render_as_string(hide_password=True)


def _sqlite_setup(engine: Engine) -> None:
    """SQLAlchemy's pysqlite recipe: we issue BEGIN ourselves, as BEGIN IMMEDIATE.

    pysqlite would otherwise open transactions lazily (deferred), so two
    writers could both read a board and then one would fail on upgrade to
    a write lock; IMMEDIATE makes the second wait (busy_timeout) instead.
    """

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection: Any, _record: Any) -> None:
        dbapi_connection.isolation_level = None  # no implicit BEGIN from pysqlite
        cur = dbapi_connection.cursor()
        cur.execute(f"PRAGMA busy_timeout = {SQLITE_BUSY_TIMEOUT_MS}")
        cur.execute("PRAGMA journal_mode = WAL")
        cur.execute("PRAGMA synchronous = FULL")
        cur.execute("PRAGMA foreign_keys = ON")
        # Erased mail (passwords in it) is overwritten, not left in free pages.
        cur.execute("PRAGMA secure_delete = ON")
        cur.close()

    @event.listens_for(engine, "begin")
    def _on_begin(conn: Connection) -> None:
        # A reader takes no write lock: in WAL mode it sees a consistent
        # snapshot and neither waits for writers nor holds them up.
        read_only = conn.get_execution_options().get(_READ_ONLY, False)
        conn.exec_driver_sql("BEGIN" if read_only else "BEGIN IMMEDIATE")


def _private_file(path: Path) -> None:
    """Make a new SQLite file readable by its owner only: it holds received mail, with
    passwords in it. SQLite gives its -wal and -shm files the same mode (os_unix.c,
    findCreateFileMode)."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        return
    os.close(fd)


@dataclass
class Database:
    """An engine and its session factory: ``transaction()`` to write, ``read()`` to look."""

    engine: Engine
    sessions: sessionmaker[Session]

    @classmethod
    def open(cls, config_or_url: Config | str | URL, *, create: bool = True) -> Database:
        """Connect; does not migrate (see ``init_db``).

        ``create`` False: a SQLite file that does not exist yet is an error
        (``FileNotFoundError``), not a new empty database.
        """
        url = url_of(config_or_url)
        if url.get_backend_name() == "sqlite":
            if url.database and url.database != ":memory:":
                path = Path(url.database)
                if not create and not path.exists():
                    raise FileNotFoundError(f"no database file {path}")
                path.parent.mkdir(parents=True, exist_ok=True)
                _private_file(path)
            engine = sa.create_engine(url, connect_args={"check_same_thread": False})
            _sqlite_setup(engine)
        else:
            engine = sa.create_engine(url, pool_pre_ping=True)
        return cls(engine, sessionmaker(engine, class_=Session, expire_on_commit=False))

    @property
    def dialect(self) -> str:
        """``sqlite`` or ``postgresql``."""
        return self.engine.dialect.name

    @contextmanager
    def transaction(self) -> Iterator[Session]:
        """A session in one writing transaction: committed on leaving, rolled back on an error."""
        with self.sessions() as session, session.begin():
            yield session

    @contextmanager
    def read(self) -> Iterator[Session]:
        """A session for reading only: one snapshot for all it reads, no lock, nothing committed.

        SQLite's WAL mode gives a deferred transaction a snapshot; PostgreSQL
        needs REPEATABLE READ for one (READ COMMITTED sees each statement's own).
        """
        options: dict[str, Any] = {_READ_ONLY: True}
        if self.dialect == "postgresql":
            options["isolation_level"] = "REPEATABLE READ"
            options["postgresql_readonly"] = True
        with (
            self.engine.connect().execution_options(**options) as conn,
            Session(bind=conn) as session,
        ):
            yield session  # closing the session rolls its transaction back

    def close(self) -> None:
        self.engine.dispose()


# ---------------------------------------------------------------- migrations


def alembic_config(config_or_url: Config | str | URL) -> Any:
    """An alembic ``Config`` for our migrations folder and the given database."""
    from alembic.config import Config as AlembicConfig

    cfg = AlembicConfig()
    cfg.set_main_option("script_location", str(MIGRATIONS_PATH))
    url = url_of(config_or_url)
    cfg.set_main_option(
        "sqlalchemy.url", url.render_as_string(hide_password=False).replace("%", "%%")
    )
    return cfg


def upgrade(config_or_url: Config | str | URL | Database, revision: str = "head") -> None:
    """Bring the database's schema to ``revision`` (the newest by default)."""
    from alembic import command

    _migrate(config_or_url, lambda cfg: command.upgrade(cfg, revision))


def downgrade(config_or_url: Config | str | URL | Database, revision: str) -> None:
    """Take the database's schema back to ``revision``."""
    from alembic import command

    _migrate(config_or_url, lambda cfg: command.downgrade(cfg, revision))


def _migrate(config_or_url: Config | str | URL | Database, run: Callable[[Any], None]) -> None:
    """Run an alembic command in one transaction.

    On SQLite, changing a column copies its table and drops the old one, which
    foreign keys would forbid: they are off for the migration (it must be said
    outside a transaction) and checked before it commits (alembic's advice).
    """
    db = config_or_url if isinstance(config_or_url, Database) else Database.open(config_or_url)
    sqlite = db.dialect == "sqlite"
    try:
        cfg = alembic_config(db.engine.url)
        with db.engine.connect() as conn:
            if sqlite:
                conn.connection.driver_connection.execute("PRAGMA foreign_keys = OFF")  # type: ignore[union-attr]
            try:
                with conn.begin():
                    cfg.attributes["connection"] = conn
                    run(cfg)
                    if sqlite:
                        broken = conn.exec_driver_sql("PRAGMA foreign_key_check").all()
                        if broken:
                            raise RuntimeError(f"the migration broke foreign keys: {broken[:5]}")
            finally:
                if sqlite:
                    conn.connection.driver_connection.execute("PRAGMA foreign_keys = ON")  # type: ignore[union-attr]
    finally:
        if db is not config_or_url:
            db.close()


def init_db(config_or_url: Config | str | URL) -> Database:
    """Open the database, create or upgrade its schema to the newest revision."""
    db = Database.open(config_or_url)
    upgrade(db)
    return db


def head_revision() -> str:
    """The newest schema revision the shipped migrations know: the highest number in
    ``migrations/versions`` (``0012_events.py`` is revision ``0012``, after ``0011``;
    ``tests/test_store_engine.py`` holds alembic to it). Read from the names, as every
    ``pbm`` command checks it: alembic would take 0.15 s to import and say the same."""
    return max(path.name[:4] for path in (MIGRATIONS_PATH / "versions").glob(_NUMBERED))


def current_revision(db: Database) -> str | None:
    """The schema revision the database is at (None before the first migration), as
    alembic keeps it: the one row of its table ``alembic_version``."""
    with db.engine.connect() as conn:
        if not sa.inspect(conn).has_table("alembic_version"):
            return None
        rev: str | None = conn.execute(sa.text("SELECT version_num FROM alembic_version")).scalar()
        return rev
