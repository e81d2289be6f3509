"""Shared fixtures: a real database (SQLite file or PostgreSQL), config, clock.

The ``db_url`` fixture (and everything built on it) runs once on a SQLite
file in ``tmp_path`` and once on PostgreSQL. For PostgreSQL a fresh
database ``pbm_test_<random>`` is created for the test session on the
server of ``PBM_TEST_POSTGRES_URL`` (default: root on 127.0.0.1, database
``test``, trust auth) and its tables are emptied before each test. An
unreachable server makes those tests fail: they are never skipped.
"""

from __future__ import annotations

import os
import secrets
import shutil
import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
import sqlalchemy as sa
from argon2 import PasswordHasher
from mailserver import PbmServer, Sink, StartServer
from sqlalchemy.engine import make_url

from pbm.config import Config, DatabaseConfig, MailConfig
from pbm.store import tables
from pbm.store.engine import Database, init_db
from pbm.usecases import auth, unit
from pbm.usecases.accounts import Signup
from pbm.usecases.auth import Password, Who
from pbm.usecases.challenges import Challenge
from pbm.usecases.proposals import Accept
from pbm.usecases.site import Site

POSTGRES_URL = os.environ.get(
    "PBM_TEST_POSTGRES_URL", "postgresql+psycopg://root@127.0.0.1:5432/test"
)

# Fast password hashing in tests; hashes record their own cost, so the
# production setting is untouched for anything stored outside tests.
auth.HASHER = PasswordHasher(time_cost=1, memory_cost=8, parallelism=1)

T0 = datetime(2025, 3, 1, 12, 0, tzinfo=UTC)


@dataclass
class Clock:
    """A clock the test moves by hand."""

    now: datetime = field(default=T0)

    def __call__(self) -> datetime:
        return self.now

    def advance(self, **kw: float) -> None:
        self.now += timedelta(**kw)


@dataclass(frozen=True)
class Row:
    """Stands in for an outbox row where only the message fields matter."""

    to_addr: str = "bob@example.net"
    subject: str = "Accasta Board 12 - bob to move"
    body: str = "Hello bob.\n"
    board: int | None = None
    reply_as: str | None = None
    reply_key: str | None = None
    in_reply_to: str | None = None
    message_id: str = "<1.abc@example.org>"
    created_at: datetime = T0
    thread: str | None = None
    attachment: str | None = None
    picture: str | None = None


def _admin_url() -> sa.URL:
    url = make_url(POSTGRES_URL)
    if url.drivername in ("postgresql", "postgres"):
        url = url.set(drivername="postgresql+psycopg")
    return url


@pytest.fixture(scope="session")
def postgres_url() -> Iterator[str]:
    """A fresh PostgreSQL database for this test session, migrated to head."""
    admin = sa.create_engine(_admin_url(), isolation_level="AUTOCOMMIT")
    name = f"pbm_test_{secrets.token_hex(6)}"
    with admin.connect() as conn:
        conn.exec_driver_sql(f'CREATE DATABASE "{name}"')
        # Durability is not under test here; waiting for fsync only slows the suite.
        conn.exec_driver_sql(f'ALTER DATABASE "{name}" SET synchronous_commit = off')
    url = _admin_url().set(database=name).render_as_string(hide_password=False)
    try:
        init_db(url).close()
        yield url
    finally:
        with admin.connect() as conn:
            conn.exec_driver_sql(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        admin.dispose()


# Children before parents. DELETE is ~30 times faster than TRUNCATE on tables this small.
_EMPTY_ORDER = (
    "move_trees",
    "digests",
    "glicko_ratings",
    "rating_periods",
    "event_boards",
    "event_entries",
    "league_members",
    "events",
    "leagues",
    "vacations",
    "vacation_grants",
    "clock_pauses",
    "moves",
    "subscriptions",
    "ratings",
    "games",
    "players",
    "inbox",
    "outbox",
    "processed_messages",
    "password_failures",
    "answer_counts",
    "answer_errors",
    "notice_counts",
)
_SERIALS = (
    ("games", "board"),
    ("moves", "id"),
    ("subscriptions", "id"),
    ("ratings", "id"),
    ("move_trees", "id"),
    ("glicko_ratings", "id"),
    ("vacations", "id"),
    ("vacation_grants", "id"),
    ("clock_pauses", "id"),
    ("inbox", "id"),
    ("outbox", "id"),
    ("password_failures", "id"),
    ("events", "id"),
    ("event_entries", "id"),
    ("leagues", "id"),
    ("league_members", "id"),
)


def _truncate(url: str) -> None:
    """Empty every table and restart the numbering (board 1 again)."""
    assert set(_EMPTY_ORDER) == set(tables.ALL_TABLES)
    engine = sa.create_engine(url, poolclass=sa.pool.NullPool)
    try:
        with engine.begin() as conn:
            for table in _EMPTY_ORDER:
                conn.exec_driver_sql(f"DELETE FROM {table}")
            for table, column in _SERIALS:
                conn.exec_driver_sql(
                    f"SELECT setval(pg_get_serial_sequence('{table}', '{column}'), 1, false)"
                )
    finally:
        engine.dispose()


@pytest.fixture(scope="session")
def sqlite_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A SQLite file migrated once; each test gets a copy (migrating takes ~0.3 s)."""
    path = tmp_path_factory.mktemp("template") / "pbm.sqlite3"
    init_db(f"sqlite:///{path}").close()
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")  # all of it in the file we copy
    conn.close()
    return path


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def db_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """The URL of an empty, migrated database (SQLite file or PostgreSQL)."""
    if request.param == "sqlite":
        path = tmp_path / "pbm.sqlite3"
        shutil.copyfile(request.getfixturevalue("sqlite_template"), path)
        return f"sqlite:///{path}"
    url = str(request.getfixturevalue("postgres_url"))
    _truncate(url)
    return url


@pytest.fixture
def db(db_url: str) -> Iterator[Database]:
    database = Database.open(db_url)
    yield database
    database.close()


@pytest.fixture
def config(db_url: str) -> Config:
    return Config(
        database=DatabaseConfig(url=db_url),
        mail=MailConfig(address="pbm@example.org", secret="test-secret"),
    )


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def postgres_db(postgres_url: str) -> Iterator[Database]:
    """An emptied PostgreSQL database, for tests about PostgreSQL only."""
    _truncate(postgres_url)
    database = Database.open(postgres_url)
    yield database
    database.close()


@pytest.fixture
def site(db: Database, config: Config, clock: Clock) -> Site:
    """The site over the test database, with players alice, bob and carol (password pw).

    Modules that need other players define their own ``site``.
    """
    s = Site(db, config, clock)
    for uid in ("alice", "bob", "carol"):
        unit.run(s, Signup(uid, "pw", f"{uid}@example.org", confirmed=True))
    return s


# -- end to end: a real pbm serve and the SMTP relay it delivers to (tests/mailserver.py)


@pytest.fixture
def sink() -> Iterator[Sink]:
    """A started SMTP sink: the relay a test server hands its replies to."""
    s = Sink()
    s.start()
    yield s
    s.stop()


@pytest.fixture
def start_server(tmp_path: Path, sink: Sink) -> Iterator[StartServer]:
    """Starts ``pbm serve`` on a fresh embedded site (in ``tmp_path``, or ``root``),
    replying through ``sink``, with its web site when ``web``, and ``env`` in its
    environment (``PBM_...`` settings); every server started is stopped at the end."""
    started: list[PbmServer] = []

    def start(root: Path | None = None, *, web: bool = False, **env: str) -> PbmServer:
        srv = PbmServer(root or tmp_path, sink_port=sink.port, web=web, extra_env=env)
        started.append(srv)
        srv.start()
        return srv

    yield start
    for srv in started:
        if srv.proc is not None:
            srv.stop()


@pytest.fixture
def server(start_server: StartServer) -> PbmServer:
    """A running ``pbm serve`` on a fresh embedded site in ``tmp_path``."""
    return start_server()


def accepted(site: Site, challenge: Challenge, password: str = "pw") -> int:
    """Run a player's ``challenge`` and have the other accept it; the started board."""
    replies = unit.run(site, challenge)
    board = replies[0].board
    assert board is not None
    sender = (challenge.sender or "").lower()
    opponent = challenge.black if sender.startswith(f"{challenge.white}@") else challenge.white
    unit.run(site, Accept(board), Who(opponent, Password(password)))
    return board
