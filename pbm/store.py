"""The database: sqlmodel tables, engine and session setup, migrations, passwords.

SQLite (the default, a file in ``server.data_dir``) runs in WAL mode with
``synchronous=FULL``, a busy timeout, foreign keys on, and every transaction
opened with ``BEGIN IMMEDIATE`` so that writers queue up instead of failing
half-way. PostgreSQL (``postgresql+psycopg://`` URLs) locks the game row a
command changes with ``SELECT ... FOR UPDATE`` and hands out inbox and outbox
rows to workers with ``FOR UPDATE SKIP LOCKED``.

The schema is created and upgraded by the alembic migrations shipped in
``pbm/migrations``; ``init_db`` brings a database to the newest revision.
"""

from __future__ import annotations

import base64
import functools
import hashlib
import hmac
import os
import uuid
from collections.abc import Collection, Iterable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, NamedTuple, Protocol

import sqlalchemy as sa
from sqlalchemy import event
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.engine import URL, Connection, Dialect, Engine, make_url
from sqlalchemy.orm import sessionmaker
from sqlalchemy.orm.attributes import set_committed_value
from sqlmodel import Field, Session, SQLModel, col, select

from pbm.config import Config
from pbm.replies import Reply, token_address

MIGRATIONS_PATH = Path(__file__).parent / "migrations"

# scrypt cost. The tests lower SCRYPT_N to keep the suite fast; the hash
# records its own parameters, so a lower cost never weakens stored hashes.
SCRYPT_N = 2**14
SCRYPT_R = 8
SCRYPT_P = 1

SQLITE_BUSY_TIMEOUT_MS = 10_000
READ_ONLY = "pbm_read_only"  # execution option: begin a deferred (reading) transaction
SNAPSHOT = "pbm_snapshot"  # Session.info key: a read-only snapshot (``Database.read``)


class UTCDateTime(sa.types.TypeDecorator[datetime]):
    """A timestamp stored in UTC and always read back timezone-aware.

    SQLite keeps no zone, PostgreSQL returns the session's zone; both come
    back as UTC here so that times compare with the service clock.
    """

    impl = sa.DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            raise ValueError("naive datetime given to the database; use UTC-aware times")
        value = value.astimezone(UTC)
        # SQLite would store the offset as text; keep its timestamps plain UTC.
        return value.replace(tzinfo=None) if dialect.name == "sqlite" else value

    def process_result_value(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            return value.replace(tzinfo=UTC)
        return value.astimezone(UTC)


def _utc_column(nullable: bool = False, index: bool = False) -> Any:
    return Field(sa_type=UTCDateTime, nullable=nullable, index=index)


# ---------------------------------------------------------------- tables


class Player(SQLModel, table=True):
    """A player account; ``userid`` is the lower-case key, ``display`` as signed up."""

    __tablename__ = "players"

    userid: str = Field(primary_key=True)
    display: str
    email: str = Field(index=True)
    full_name: str = ""
    password_hash: str
    created_at: datetime = _utc_column()
    # Unused since 0002: vacations are rows of ``vacations`` (kept for the schema).
    vacation_until: datetime | None = _utc_column(nullable=True)
    vacation_days_used: int = 0
    vacation_year: int | None = None


class Game(SQLModel, table=True):
    """One board. ``position`` is ``GameState.dump()``: loading never replays moves.

    ``clock_since`` is when the player to move got the move (creation, the
    last move, an accepted undo): his clock runs from there, minus the stops
    (``pbm.clock``). ``last_nag_at`` is the last reminder of that clock.
    The ``*_rating_*`` columns hold the Elo ratings before and after the game,
    once a finished game has been rated.
    """

    __tablename__ = "games"

    board: int | None = Field(default=None, primary_key=True)
    game: str
    variant: str
    options: dict[str, str] = Field(default_factory=dict, sa_type=sa.JSON, nullable=False)
    white: str = Field(foreign_key="players.userid", index=True)
    black: str = Field(foreign_key="players.userid", index=True)
    status: str = Field(default="active", index=True)  # active | finished | cancelled
    result: str | None = None  # "1-0" | "0-1"
    termination: str | None = None  # castle | no moves | resign | forfeit
    position: str = Field(sa_type=sa.Text)
    ply: int = 0
    version: int = 0  # bumped by every change, queued moves too; guards lost updates
    nag_days: int
    forfeit_days: int
    created_at: datetime = _utc_column()
    last_move_at: datetime | None = _utc_column(nullable=True)
    last_nag_at: datetime | None = _utc_column(nullable=True)
    archived_at: datetime | None = _utc_column(nullable=True)
    ended_at: datetime | None = _utc_column(nullable=True)  # finished or cancelled
    undo_request_by: str | None = None
    cancel_request_by: str | None = None
    clock_since: datetime | None = _utc_column(nullable=True)
    white_rating_before: int | None = None
    white_rating_after: int | None = None
    black_rating_before: int | None = None
    black_rating_after: int | None = None

    def seat_of(self, userid: str) -> int | None:
        """0 for White, 1 for Black, None for someone else."""
        if userid == self.white:
            return 0
        if userid == self.black:
            return 1
        return None

    def player_at(self, seat: int) -> str:
        return self.white if seat == 0 else self.black


class Move(SQLModel, table=True):
    """One played turn. ``ply`` is the move number (1 for the first move).

    ``position_before`` is the position the move was played from, so that
    an accepted undo restores it without replaying the game.
    """

    __tablename__ = "moves"
    __table_args__ = (sa.UniqueConstraint("board", "ply", name="uq_moves_board_ply"),)

    id: int | None = Field(default=None, primary_key=True)
    board: int = Field(foreign_key="games.board", index=True)
    ply: int
    userid: str
    notation: str  # canonical
    text: str  # as the player wrote it
    comment: str = Field(default="", sa_type=sa.Text)
    created_at: datetime = _utc_column()
    message_id: str | None = None
    queued: bool = False
    position_before: str = Field(sa_type=sa.Text)


class Subscription(SQLModel, table=True):
    """Someone who gets every board mail of a board without playing on it."""

    __tablename__ = "subscriptions"
    __table_args__ = (sa.UniqueConstraint("board", "userid", name="uq_subscriptions_board_userid"),)

    id: int | None = Field(default=None, primary_key=True)
    board: int = Field(foreign_key="games.board", index=True)
    userid: str | None = None
    email: str | None = None
    created_at: datetime = _utc_column()


class Rating(SQLModel, table=True):
    """A player's Elo rating in one game and variant (whole numbers; ``pbm.ratings``)."""

    __tablename__ = "ratings"
    __table_args__ = (
        sa.UniqueConstraint("game", "variant", "userid", name="uq_ratings_game_variant_userid"),
    )

    id: int | None = Field(default=None, primary_key=True)
    game: str
    variant: str
    userid: str = Field(foreign_key="players.userid")
    rating: float = 1500.0
    games_played: int = 0


class QueuedMove(SQLModel, table=True):
    """A move a player queued for his next turn, maybe only if the opponent plays ``if_move``.

    Rows of one player on one board are alternatives, tried in ``id`` order
    when the opponent moves; then all of them are gone.
    """

    __tablename__ = "queued_moves"

    id: int | None = Field(default=None, primary_key=True)
    board: int = Field(foreign_key="games.board", index=True)
    userid: str = Field(foreign_key="players.userid")
    move_text: str
    if_move: str | None = None
    created_at: datetime = _utc_column()


class Vacation(SQLModel, table=True):
    """A player's vacation: his clocks stand still from ``starts_at`` to ``ends_at``.

    Cutting a vacation short (``vacation UID PW off``) moves ``ends_at`` to then.
    """

    __tablename__ = "vacations"

    id: int | None = Field(default=None, primary_key=True)
    userid: str = Field(foreign_key="players.userid", index=True)
    starts_at: datetime = _utc_column()
    ends_at: datetime = _utc_column()


class ClockPause(SQLModel, table=True):
    """A site-wide stop of every clock (``pbm clock pause``); open while ``ended_at`` is None."""

    __tablename__ = "clock_pauses"

    id: int | None = Field(default=None, primary_key=True)
    started_at: datetime = _utc_column()
    ended_at: datetime | None = _utc_column(nullable=True)


class InboxMessage(SQLModel, table=True):
    """A received mail, committed before SMTP answers 250."""

    __tablename__ = "inbox"

    id: int | None = Field(default=None, primary_key=True)
    received_at: datetime = _utc_column()
    mail_from: str
    rcpt_to: str = Field(sa_type=sa.Text)
    message_id: str | None = Field(default=None, index=True)
    raw: bytes = Field(sa_type=sa.LargeBinary)
    status: str = Field(default="new", index=True)  # new | done | ignored | failed
    note: str | None = Field(default=None, sa_type=sa.Text)
    processed_at: datetime | None = _utc_column(nullable=True)
    claimed_by: str | None = None
    claimed_at: datetime | None = _utc_column(nullable=True)


class OutboxMessage(SQLModel, table=True):
    """A reply waiting to be sent (or sent); written with the change that caused it."""

    __tablename__ = "outbox"
    __table_args__ = (sa.UniqueConstraint("message_id", name="uq_outbox_message_id"),)

    id: int | None = Field(default=None, primary_key=True)
    created_at: datetime = _utc_column()
    to_addr: str
    subject: str = Field(sa_type=sa.Text)
    body: str = Field(sa_type=sa.Text)
    board: int | None = None
    reply_as: str | None = None
    reply_to: str | None = None
    in_reply_to: str | None = None
    message_id: str
    is_error: bool = False
    status: str = Field(default="pending", index=True)  # pending | sent | failed
    attempts: int = 0
    next_attempt_at: datetime | None = _utc_column(nullable=True)
    last_error: str | None = Field(default=None, sa_type=sa.Text)
    sent_at: datetime | None = _utc_column(nullable=True)
    claimed_by: str | None = None
    claimed_until: datetime | None = _utc_column(nullable=True)


class ProcessedMessage(SQLModel, table=True):
    """The Message-ID of a command mail already acted on."""

    __tablename__ = "processed_messages"

    message_id: str = Field(primary_key=True)
    processed_at: datetime = _utc_column()


# ---------------------------------------------------------------- engine


def _url_of(config_or_url: Config | str | URL) -> URL:
    raw = config_or_url.database_url if isinstance(config_or_url, Config) else config_or_url
    url = make_url(raw)
    # A plain postgresql:// URL would pick psycopg2, which is not installed.
    if url.drivername in ("postgresql", "postgres"):
        url = url.set(drivername="postgresql+psycopg")
    return url


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
        cur.close()

    @event.listens_for(engine, "begin")
    def _on_begin(conn: Connection) -> None:
        # A reader (``Database.read``) takes no write lock: in WAL mode it sees a
        # consistent snapshot and neither waits for writers nor holds them up.
        read_only = conn.get_execution_options().get(READ_ONLY, False)
        conn.exec_driver_sql("BEGIN" if read_only else "BEGIN IMMEDIATE")


def _plain_savepoints(dialect: sa.Dialect) -> None:
    """Savepoints as plain SQL text on this engine's dialect.

    Every command is a savepoint of its batch (``BatchDatabase``), and
    SQLAlchemy compiles its savepoint clauses anew each time (they have no
    cache key), which costs three times the statement. The names are
    SQLAlchemy's own (``sa_savepoint_N``): nothing to quote.
    """

    def savepoint(conn: Connection, name: str) -> None:
        conn.exec_driver_sql(f"SAVEPOINT {name}")

    def rollback_to(conn: Connection, name: str) -> None:
        conn.exec_driver_sql(f"ROLLBACK TO SAVEPOINT {name}")

    def release(conn: Connection, name: str) -> None:
        conn.exec_driver_sql(f"RELEASE SAVEPOINT {name}")

    # This dialect object is this engine's alone.
    dialect.do_savepoint = savepoint  # type: ignore[method-assign,assignment]
    dialect.do_rollback_to_savepoint = rollback_to  # type: ignore[method-assign,assignment]
    dialect.do_release_savepoint = release  # type: ignore[method-assign,assignment]


class Transactions(Protocol):
    """What the service layer needs of a database: units of work, and snapshots to read."""

    def transaction(self) -> AbstractContextManager[Session]: ...

    def read(self) -> AbstractContextManager[Session]: ...


@dataclass
class Database:
    """An engine and its session factory; ``transaction()`` is the unit of work."""

    engine: Engine
    sessions: sessionmaker[Session]

    @classmethod
    def open(cls, config_or_url: Config | str | URL) -> Database:
        """Connect (creating the SQLite file's folder); does not migrate: see ``init_db``."""
        url = _url_of(config_or_url)
        if url.get_backend_name() == "sqlite":
            if url.database and url.database != ":memory:":
                Path(url.database).parent.mkdir(parents=True, exist_ok=True)
            engine = sa.create_engine(url, connect_args={"check_same_thread": False})
            _sqlite_setup(engine)
        else:
            engine = sa.create_engine(url, pool_pre_ping=True)
        _plain_savepoints(engine.dialect)
        return cls(engine, sessionmaker(engine, class_=Session, expire_on_commit=False))

    @property
    def dialect(self) -> str:
        """``sqlite`` or ``postgresql``."""
        return self.engine.dialect.name

    @contextmanager
    def transaction(self) -> Iterator[Session]:
        """A session in one transaction: committed on leaving, rolled back on an error."""
        with self.sessions() as session, session.begin():
            yield session

    @contextmanager
    def read(self) -> Iterator[Session]:
        """A session for reading only: a snapshot, no write lock (SQLite), nothing committed."""
        with (
            self.engine.connect().execution_options(**{READ_ONLY: True}) as conn,
            Session(bind=conn, info={SNAPSHOT: True}) as session,
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
    url = _url_of(config_or_url)
    cfg.set_main_option(
        "sqlalchemy.url", url.render_as_string(hide_password=False).replace("%", "%%")
    )
    return cfg


def upgrade(config_or_url: Config | str | URL | Database, revision: str = "head") -> None:
    """Bring the database's schema to ``revision`` (the newest by default)."""
    from alembic import command

    db = config_or_url if isinstance(config_or_url, Database) else Database.open(config_or_url)
    try:
        cfg = alembic_config(db.engine.url)
        with db.engine.begin() as conn:
            cfg.attributes["connection"] = conn
            command.upgrade(cfg, revision)
    finally:
        if db is not config_or_url:
            db.close()


def init_db(config_or_url: Config | str | URL) -> Database:
    """Open the database, create or upgrade its schema to the newest revision."""
    db = Database.open(config_or_url)
    upgrade(db)
    return db


def head_revision() -> str:
    """The newest schema revision the shipped migrations know."""
    from alembic.script import ScriptDirectory

    head = ScriptDirectory(str(MIGRATIONS_PATH)).get_current_head()
    assert head is not None
    return head


def current_revision(db: Database) -> str | None:
    """The schema revision the database is at (None before the first migration)."""
    from alembic.runtime.migration import MigrationContext

    with db.engine.connect() as conn:
        rev: str | None = MigrationContext.configure(conn).get_current_revision()
        return rev


# ---------------------------------------------------------------- passwords


def hash_password(password: str) -> str:
    """A salted scrypt hash: ``scrypt$N$r$p$salt$hash`` (base64)."""
    salt = os.urandom(16)
    digest = hashlib.scrypt(
        password.encode(), salt=salt, n=SCRYPT_N, r=SCRYPT_R, p=SCRYPT_P, dklen=32
    )
    b64 = base64.b64encode
    return f"scrypt${SCRYPT_N}${SCRYPT_R}${SCRYPT_P}${b64(salt).decode()}${b64(digest).decode()}"


def verify_password(password: str, stored: str) -> bool:
    """Whether ``password`` matches the stored hash (constant-time compare)."""
    try:
        scheme, n, r, p, salt, digest = stored.split("$")
        if scheme != "scrypt":
            return False
        expected = base64.b64decode(digest)
        got = hashlib.scrypt(
            password.encode(),
            salt=base64.b64decode(salt),
            n=int(n),
            r=int(r),
            p=int(p),
            dklen=len(expected),
        )
    except ValueError:
        return False
    return hmac.compare_digest(got, expected)


# ---------------------------------------------------------------- helpers


def lock_game(session: Session, board: int) -> Game | None:
    """The game row, locked ``FOR UPDATE`` on PostgreSQL until the transaction ends.

    ``populate_existing`` makes sure the locked, current row is what we see
    even if the session had loaded the game before.
    """
    stmt = (
        select(Game)
        .where(Game.board == board)
        .with_for_update()
        .execution_options(populate_existing=True)
    )
    return session.exec(stmt).first()


def bump_version(session: Session, game: Game) -> None:
    """Write the game's changes, guarded by its version (compare-and-set).

    Raises ``StaleGame`` if someone else changed the row since it was read;
    the caller's transaction then rolls back whole.
    """
    assert game.board is not None
    old = game.version
    session.flush()
    res = session.execute(
        sa.update(Game)
        .where(col(Game.board) == game.board, col(Game.version) == old)
        .values(version=old + 1)
        .execution_options(synchronize_session=False)
    )
    if getattr(res, "rowcount", 1) != 1:
        raise StaleGame(game.board)
    # The row now holds the new version; record it without another UPDATE.
    set_committed_value(game, "version", old + 1)


class StaleGame(Exception):
    """The game row changed under us (lost-update guard)."""


def insert_new(session: Session, model: type[SQLModel], values: dict[str, Any]) -> bool:
    """INSERT a row unless one with the same unique key exists; whether it was new.

    ``ON CONFLICT DO NOTHING`` (SQLite and PostgreSQL): no error to recover
    from, so the caller's transaction goes on either way.
    """
    stmt = _insert_new(model, session.get_bind().dialect.name)
    return session.connection().execute(stmt, values).first() is not None


@functools.cache
def _insert_new(model: type[SQLModel], dialect_name: str) -> sa.Insert:
    """The statement of ``insert_new``, built once per table and dialect."""
    table = model.__table__  # type: ignore[attr-defined]
    dialect = postgresql if dialect_name == "postgresql" else sqlite
    # RETURNING, not rowcount: an INSERT's rowcount is not reliable across drivers.
    stmt: sa.Insert = (
        dialect.insert(table).on_conflict_do_nothing().returning(*table.primary_key.columns)
    )
    return stmt


def in_params(prefix: str, count: int) -> list[sa.BindParameter[Any]]:
    """``count`` parameters ``prefix0``, ``prefix1``... for an ``IN`` list.

    For statements built once per count: an expanding ``IN`` is rendered anew
    on every call, which costs more than these small queries. ``in_values``
    gives the values to go with them.
    """
    return [sa.bindparam(f"{prefix}{i}") for i in range(count)]


def in_values(prefix: str, values: Iterable[Any]) -> dict[str, Any]:
    """The parameters of ``in_params(prefix, len(values))``, set to ``values`` in order."""
    return {f"{prefix}{i}": value for i, value in enumerate(values)}


_SEEN = sa.select(sa.literal(1)).where(
    col(ProcessedMessage.message_id) == sa.bindparam("message_id")
)


def message_seen(session: Session, message_id: str) -> bool:
    """Whether a command mail with this Message-ID was acted on."""
    return session.connection().execute(_SEEN, {"message_id": message_id}).first() is not None


_SEEN_AMONG = sa.select(col(ProcessedMessage.message_id)).where(
    col(ProcessedMessage.message_id).in_(sa.bindparam("message_ids", expanding=True))
)


def messages_seen(session: Session, message_ids: Collection[str]) -> set[str]:
    """Which of these Message-IDs were acted on (``message_seen`` for many, at once)."""
    if not message_ids:
        return set()
    found = session.connection().execute(_SEEN_AMONG, {"message_ids": sorted(message_ids)})
    return set(found.scalars())


def message_id_domain(config: Config) -> str:
    return config.mail.address.rpartition("@")[2] or "localhost"


def new_message_id(config: Config) -> str:
    return f"<pbm.{uuid.uuid4()}@{message_id_domain(config)}>"


def enqueue_replies(
    session: Session,
    replies: Sequence[Reply],
    config: Config,
    now: datetime,
    due: datetime | None = None,
) -> list[int]:
    """Write replies to the outbox in the caller's transaction, to be sent from ``due`` (now).

    Returns the new rows' ids, in the order of ``replies``.

    A reply with no address (``to == ""``, e.g. an answer to a CLI caller)
    is not queued. ``reply_to`` is the board's reply-token address for
    ``reply_as``; it is left empty when no ``mail.secret`` is configured,
    since tokens made with an empty secret could be forged.
    """
    values: list[dict[str, Any]] = []
    for reply in replies:
        if not reply.to:
            continue
        reply_to = None
        if reply.board is not None and reply.reply_as and config.mail.secret:
            reply_to = token_address(
                config.mail.address, config.mail.secret, reply.board, reply.reply_as
            )
        values.append(
            {
                "created_at": now,
                "to_addr": reply.to,
                "subject": reply.subject,
                "body": reply.body,
                "board": reply.board,
                "reply_as": reply.reply_as,
                "reply_to": reply_to,
                "in_reply_to": reply.in_reply_to,
                "message_id": new_message_id(config),
                "is_error": reply.is_error,
                "status": "pending",
                "attempts": 0,
                "next_attempt_at": now if due is None else due,
            }
        )
    if not values:
        return []
    # One Core INSERT for all rows, not a unit-of-work flush per ORM object: replies
    # are written inside the move's transaction, while the write lock is held.
    return [int(i) for i in session.connection().execute(_OUTBOX_ROWS, values).scalars()]


def _insert_returning_ids(table: sa.Table) -> sa.Insert:
    """INSERT of many rows at once, their ids returned in the order given."""
    return sa.insert(table).returning(table.c.id, sort_by_parameter_order=True)


_INBOX_ROWS = _insert_returning_ids(InboxMessage.__table__)  # type: ignore[attr-defined]
_OUTBOX_ROWS = _insert_returning_ids(OutboxMessage.__table__)  # type: ignore[attr-defined]


def add_inbox(
    session: Session,
    raw: bytes,
    mail_from: str,
    rcpt_to: Sequence[str],
    message_id: str | None,
    now: datetime,
) -> int:
    """Store a received mail as a ``new`` inbox row (``rcpt_to`` joined by newlines); its id."""
    return add_inbox_many(session, [(raw, mail_from, rcpt_to, message_id)], now)[0]


def add_inbox_many(
    session: Session,
    mails: Sequence[tuple[bytes, str, Sequence[str], str | None]],
    now: datetime,
) -> list[int]:
    """Store received mails (raw, envelope sender, recipients, Message-ID) in one INSERT.

    Returns the new rows' ids in the order given.
    """
    if not mails:
        return []
    rows = [
        {
            "received_at": now,
            "mail_from": mail_from,
            "rcpt_to": "\n".join(rcpt_to),
            "message_id": message_id,
            "raw": raw,
            "status": "new",
        }
        for raw, mail_from, rcpt_to, message_id in mails
    ]
    return [int(i) for i in session.connection().execute(_INBOX_ROWS, rows).scalars()]


def _waiting() -> tuple[Any, ...]:
    """Inbox rows to be processed: new, and unclaimed or claimed before ``stale``."""
    return (
        InboxMessage.status == "new",
        sa.or_(
            col(InboxMessage.claimed_at).is_(None),
            col(InboxMessage.claimed_at) < sa.bindparam("stale", type_=UTCDateTime),
        ),
    )


class WaitingMail(NamedTuple):
    """An inbox row waiting to be processed, as ``waiting_inbox`` reads it."""

    id: int
    raw: bytes
    mail_from: str
    rcpt_to: str  # the envelope recipients, one per line


_WAITING = (
    sa.select(
        col(InboxMessage.id),
        col(InboxMessage.raw),
        col(InboxMessage.mail_from),
        col(InboxMessage.rcpt_to),
    )
    .where(*_waiting())
    .order_by(col(InboxMessage.id))
    .limit(sa.bindparam("limit"))
)


def waiting_inbox(
    session: Session,
    now: datetime,
    limit: int = 10,
    stale_after: timedelta = timedelta(minutes=10),
) -> list[WaitingMail]:
    """The rows ``claim_inbox`` would hand out, oldest first, without claiming them."""
    params = {"stale": now - stale_after, "limit": limit}
    return [
        WaitingMail(row_id, raw, mail_from, rcpt_to)
        for row_id, raw, mail_from, rcpt_to in session.connection().execute(_WAITING, params)
        if row_id is not None  # a primary key, never None once stored
    ]


@functools.lru_cache(maxsize=64)
def _claim(count: int | None) -> sa.Executable:
    """The statement of ``claim_inbox``, of ``count`` ids (``i0``, ``i1``...) or of any.

    Built once per count (``in_params``).
    """
    table = InboxMessage.__table__  # type: ignore[attr-defined]
    waiting = sa.select(table.c.id).where(*_waiting())
    if count is not None:
        waiting = waiting.where(table.c.id.in_(in_params("i", count)))
    waiting = (
        waiting.order_by(table.c.id).limit(sa.bindparam("limit")).with_for_update(skip_locked=True)
    )
    return (
        sa.update(table)
        .where(table.c.id.in_(waiting.scalar_subquery()))
        .values(
            claimed_by=sa.bindparam("worker"),
            claimed_at=sa.bindparam("now", type_=UTCDateTime),
        )
        .returning(table.c.id)
    )


def claim_inbox(
    session: Session,
    worker: str,
    now: datetime,
    limit: int = 10,
    stale_after: timedelta = timedelta(minutes=10),
    ids: Sequence[int] | None = None,
) -> list[int]:
    """Take up to ``limit`` new inbox rows (of ``ids``, if given) for ``worker``; their ids.

    Oldest first. A row claimed longer than ``stale_after`` ago (its worker
    died) can be taken again. On PostgreSQL rows another transaction is
    claiming are skipped (``FOR UPDATE SKIP LOCKED``); SQLite serialises
    writers anyway.
    """
    params: dict[str, Any] = {
        "stale": now - stale_after,
        "limit": limit,
        "worker": worker,
        "now": now,
    }
    if ids is not None:
        params.update(in_values("i", ids))
    stmt = _claim(None if ids is None else len(ids))
    return sorted(session.connection().execute(stmt, params).scalars())


def release_inbox(session: Session, ids: Sequence[int]) -> None:
    """Give claimed inbox rows back untouched, for the next batch (or another worker)."""
    table = InboxMessage.__table__  # type: ignore[attr-defined]
    session.connection().execute(
        sa.update(table).where(table.c.id.in_(ids)).values(claimed_by=None, claimed_at=None)
    )


_INBOX = InboxMessage.__table__  # type: ignore[attr-defined]
_FINISH = (
    sa.update(_INBOX)
    .where(_INBOX.c.id == sa.bindparam("inbox_id"))
    .values(
        status=sa.bindparam("status"),
        note=sa.bindparam("note"),
        processed_at=sa.bindparam("processed_at"),
        message_id=sa.func.coalesce(
            sa.bindparam("message_id", type_=sa.String), _INBOX.c.message_id
        ),
    )
)


def finish_inbox(
    session: Session, inbox_id: int, status: str, now: datetime, note: str | None = None
) -> None:
    """Mark an inbox row ``done``, ``ignored`` or ``failed``."""
    if not finish_inbox_many(session, [Finished(inbox_id, status, note)], now):
        raise KeyError(inbox_id)


class Finished(NamedTuple):
    """How an inbox row ended: its status and note, and the Message-ID read from it."""

    inbox_id: int
    status: str  # done | ignored | failed
    note: str | None = None
    message_id: str | None = None  # None: leave the row's as it is


def finish_inbox_many(session: Session, finished: Sequence[Finished], now: datetime) -> int:
    """Mark inbox rows with one statement; how many rows were marked."""
    for row in finished:
        if row.status not in ("done", "ignored", "failed"):
            raise ValueError(f"bad inbox status {row.status!r}")
    if not finished:
        return 0
    params = [{**row._asdict(), "processed_at": now} for row in finished]
    return int(session.connection().execute(_FINISH, params).rowcount)


def claim_outbox(
    session: Session,
    worker: str,
    now: datetime,
    limit: int = 10,
    lease: timedelta = timedelta(minutes=5),
) -> list[OutboxMessage]:
    """Take up to ``limit`` pending outbox rows that are due, for ``lease``.

    A claim that expired (its sender died) can be taken again.
    ``FOR UPDATE SKIP LOCKED`` on PostgreSQL, as in ``claim_inbox``.
    """
    stmt = (
        select(OutboxMessage)
        .where(
            OutboxMessage.status == "pending",
            sa.or_(
                col(OutboxMessage.next_attempt_at).is_(None),
                col(OutboxMessage.next_attempt_at) <= now,
            ),
            sa.or_(
                col(OutboxMessage.claimed_until).is_(None),
                col(OutboxMessage.claimed_until) < now,
            ),
        )
        .order_by(col(OutboxMessage.id))
        .limit(limit)
        .with_for_update(skip_locked=True)
    )
    rows = list(session.exec(stmt).all())
    for row in rows:
        row.claimed_by = worker
        row.claimed_until = now + lease
    session.flush()
    return rows


class ClaimedMail(NamedTuple):
    """An outbox row claimed for sending: what a message is made of, and the lease."""

    id: int
    to_addr: str
    subject: str
    body: str
    reply_to: str | None
    in_reply_to: str | None
    message_id: str
    created_at: datetime
    claimed_until: datetime | None


_OUTBOX = OutboxMessage.__table__  # type: ignore[attr-defined]
_CLAIM_WRITTEN = (
    sa.update(_OUTBOX)
    .where(
        _OUTBOX.c.id.in_(sa.bindparam("ids", expanding=True)),
        _OUTBOX.c.status == "pending",
        _OUTBOX.c.claimed_by.is_(None),
        sa.or_(
            _OUTBOX.c.next_attempt_at.is_(None), _OUTBOX.c.next_attempt_at <= sa.bindparam("now")
        ),
    )
    .values(claimed_by=sa.bindparam("worker"), claimed_until=sa.bindparam("until"))
    .returning(*(_OUTBOX.c[name] for name in ClaimedMail._fields))
)


def claim_written(
    session: Session, ids: Sequence[int], worker: str, now: datetime, lease: timedelta
) -> list[ClaimedMail]:
    """Claim, for ``worker``, the rows of ``ids`` that are due and nobody holds.

    For replies written in the caller's own transaction, which no other sender
    can see yet: the sender of this server gets them without looking for them.
    """
    if not ids:
        return []
    result = session.connection().execute(
        _CLAIM_WRITTEN, {"ids": list(ids), "now": now, "worker": worker, "until": now + lease}
    )
    return sorted((ClaimedMail(*row) for row in result), key=lambda mail: mail.id)


def outbox_sent(session: Session, outbox_id: int, now: datetime) -> None:
    """Mark an outbox row sent."""
    row = session.get(OutboxMessage, outbox_id)
    if row is None:
        raise KeyError(outbox_id)
    row.status = "sent"
    row.sent_at = now
    row.attempts += 1
    row.claimed_by = None
    row.claimed_until = None
    session.flush()


def outbox_failed(
    session: Session, outbox_id: int, error: str, now: datetime, retry_at: datetime | None
) -> None:
    """Record a failed attempt: retry at ``retry_at``, or give up (status failed) if None."""
    row = session.get(OutboxMessage, outbox_id)
    if row is None:
        raise KeyError(outbox_id)
    row.attempts += 1
    row.last_error = error
    row.claimed_by = None
    row.claimed_until = None
    if retry_at is None:
        row.status = "failed"
    else:
        row.next_attempt_at = retry_at
    session.flush()


ALL_TABLES: tuple[str, ...] = (
    "players",
    "games",
    "moves",
    "subscriptions",
    "ratings",
    "queued_moves",
    "vacations",
    "clock_pauses",
    "inbox",
    "outbox",
    "processed_messages",
)


def utc_now() -> datetime:
    return datetime.now(UTC)
