"""The tables: one sqlmodel class per table, and the timestamp type they share.

The schema is created and changed only by the alembic migrations in
``pbm/migrations``; these classes describe it for queries. Timestamps are
``UTCDateTime``: stored in UTC, always read back timezone-aware.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Dialect
from sqlmodel import Field, SQLModel

from pbm.model import AccountStatus, BoardStatus, MailStatus


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
    status: str = AccountStatus.ACTIVE
    reset_nonce: str | None = None  # makes a password reset address usable once
    lockout_told_at: datetime | None = _utc_column(nullable=True)
    lockout_answered_at: datetime | None = _utc_column(nullable=True)
    format: str = "html"  # html: a picture of the board with the text | text: plain text only
    new_email: str | None = None  # an address change, until a reply from it confirms it
    new_email_nonce: str | None = None  # makes that confirmation's reply address its own


class Game(SQLModel, table=True):
    """One board. ``position`` is ``GameState.dump()``: loading never replays moves.

    ``clock_since`` is when the player to move got the move (creation, the
    last move, an accepted undo): his clock runs from there, minus the stops
    (``pbm.usecases.clocks``). ``last_nag_at`` is the last reminder of that clock.
    The ``*_rating_*`` columns hold the Elo ratings before and after the game,
    once a finished game has been rated.
    """

    __tablename__ = "games"
    __table_args__ = (
        # The web site's lists (migration 0007): boards in play by their last move,
        # finished ones by their end.
        sa.Index("ix_games_status_last_move_at", "status", "last_move_at"),
        sa.Index("ix_games_status_ended_at", "status", "ended_at"),
        # The timers' one query (migration 0008): the boards whose clock may be due.
        sa.Index("ix_games_status_timer_at", "status", "timer_at"),
    )

    board: int | None = Field(default=None, primary_key=True)
    game: str
    variant: str
    options: dict[str, str] = Field(default_factory=dict, sa_type=sa.JSON, nullable=False)
    white: str = Field(foreign_key="players.userid", index=True)
    black: str = Field(foreign_key="players.userid", index=True)
    status: str = Field(default=BoardStatus.ACTIVE, index=True)
    result: str | None = None  # a ``pbm.games.Result``
    termination: str | None = None  # the game's (castle, checkmate...) or a ``Termination``
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
    draw_offer_by: str | None = None  # a draw offered, waiting for the opponent's answer
    challenger: str | None = None  # who challenged (None: the admin's board)
    clock_since: datetime | None = _utc_column(nullable=True)
    white_rating_before: int | None = None
    white_rating_after: int | None = None
    black_rating_before: int | None = None
    black_rating_after: int | None = None
    # The board's time control (``pbm.timecontrol``: ``days 3``, ``fischer 10d+36h``...);
    # a classic one's days are ``nag_days`` and ``forfeit_days`` too.
    time_control: str = Field(default="classic 7/21", sa_type=sa.Text)
    # Both players' time (JSON, ``pbm.usecases.clocks.clock_json``); None: as at the start.
    clock: str | None = Field(default=None, sa_type=sa.Text)
    # The earliest moment a reminder or the end of a player's time may be due: never
    # later than the truth, so the timers look at these boards only.
    timer_at: datetime | None = _utc_column(nullable=True)
    computer_level: int | None = None  # 1-5: how hard the computer plays on this board


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
    clock_before: str | None = Field(default=None, sa_type=sa.Text)  # the board's, for undo


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


class MoveTree(SQLModel, table=True):
    """A player's conditional move tree on a board (``pbm.usecases.trees``): his answers
    keyed by the opponent's reply, ``lines`` as JSON; one a player and board."""

    __tablename__ = "move_trees"
    __table_args__ = (sa.UniqueConstraint("board", "userid", name="uq_move_trees_board_userid"),)

    id: int | None = Field(default=None, primary_key=True)
    board: int = Field(foreign_key="games.board", index=True)
    userid: str = Field(foreign_key="players.userid")
    lines: str = Field(sa_type=sa.Text)
    created_at: datetime = _utc_column()


class DigestPlan(SQLModel, table=True):
    """A player who gets one mail at set times (a digest) instead of one a move: ``times``
    (``HH:MM,HH:MM``) in ``zone``; ``next_at``: when the next is due (the timers' index)."""

    __tablename__ = "digests"

    userid: str = Field(foreign_key="players.userid", primary_key=True)
    times: str
    zone: str
    next_at: datetime = _utc_column(index=True)


class GlickoRating(SQLModel, table=True):
    """A player's Glicko-2 rating in one game and variant (``pbm.glicko``), as of the end
    of ``rated_until``'s rating period (a day, UTC)."""

    __tablename__ = "glicko_ratings"
    __table_args__ = (
        sa.UniqueConstraint("game", "variant", "userid", name="uq_glicko_game_variant_userid"),
    )

    id: int | None = Field(default=None, primary_key=True)
    game: str
    variant: str
    userid: str = Field(foreign_key="players.userid")
    rating: float
    deviation: float
    volatility: float
    games_played: int = 0
    rated_until: datetime = _utc_column()


class RatingPeriod(SQLModel, table=True):
    """How far the rating periods are worked out: every game that ended before
    ``rated_until`` is in the Glicko-2 ratings (one row, ``name`` ``glicko-2``)."""

    __tablename__ = "rating_periods"

    name: str = Field(primary_key=True)
    rated_until: datetime = _utc_column()


class Vacation(SQLModel, table=True):
    """A player's vacation: his clocks stand still from ``starts_at`` to ``ends_at``.

    Cutting a vacation short (``vacation UID PW off``) moves ``ends_at`` to then.
    """

    __tablename__ = "vacations"

    id: int | None = Field(default=None, primary_key=True)
    userid: str = Field(foreign_key="players.userid", index=True)
    starts_at: datetime = _utc_column()
    ends_at: datetime = _utc_column()
    # vacation | bounce (his address bounced meanwhile) | spent (a day his time bank ran out)
    kind: str = "vacation"


class VacationGrant(SQLModel, table=True):
    """Vacation days an admin gave a player for one calendar year, on top of the site's."""

    __tablename__ = "vacation_grants"

    id: int | None = Field(default=None, primary_key=True)
    userid: str = Field(foreign_key="players.userid", index=True)
    year: int
    days: int
    granted_at: datetime = _utc_column()


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
    status: str = Field(default=MailStatus.NEW, index=True)
    note: str | None = Field(default=None, sa_type=sa.Text)
    processed_at: datetime | None = _utc_column(nullable=True, index=True)
    processed_by: str | None = None  # the worker that acted on it (HOST:PID)
    attempts: int = 0  # how often working it out failed (``server.mail_attempts``)
    claimed_by: str | None = None  # the inbox runner working it out (HOST:PID:...)
    claimed_until: datetime | None = _utc_column(nullable=True)  # ... under this lease


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
    reply_key: str | None = None  # another reply context than the board (pbm.replies.Reply)
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
    handed_at: datetime | None = _utc_column(nullable=True)  # given to the transport
    attachment: str | None = Field(default=None, sa_type=sa.Text)  # JSON: pbm.replies.Attachment
    thread: str | None = Field(default=None, sa_type=sa.Text)  # its board's thread subject
    picture: str | None = Field(default=None, sa_type=sa.Text)  # JSON: pbm.replies.Picture
    kind: str | None = None  # who it is for and who pays for it (``pbm.replies.Kind``)


class ProcessedMessage(SQLModel, table=True):
    """The Message-ID of a command mail already acted on."""

    __tablename__ = "processed_messages"

    message_id: str = Field(primary_key=True)
    processed_at: datetime = _utc_column(index=True)


class PasswordFailure(SQLModel, table=True):
    """A wrong password given for an account (kept for the lockout time)."""

    __tablename__ = "password_failures"

    id: int | None = Field(default=None, primary_key=True)
    userid: str = Field(index=True)
    failed_at: datetime = _utc_column()


class AnswerCount(SQLModel, table=True):
    """How many automatic mails went to an address in one clock hour."""

    __tablename__ = "answer_counts"

    address: str = Field(primary_key=True)  # lower case
    hour: datetime = Field(sa_type=UTCDateTime, primary_key=True)
    answers: int = 0  # every counted mail, errors included
    errors: int = 0


class AnswerError(SQLModel, table=True):
    """A refusal sent to an address in one clock hour, by a digest of what it said."""

    __tablename__ = "answer_errors"

    address: str = Field(primary_key=True)  # lower case
    hour: datetime = Field(sa_type=UTCDateTime, primary_key=True)
    digest: str = Field(primary_key=True)


class NoticeCount(SQLModel, table=True):
    """Mails sent on someone's behalf in one day, by what they count against: a
    confirmation to an address, a password reset of an account."""

    __tablename__ = "notice_counts"

    key: str = Field(primary_key=True)  # "confirm:ADDRESS", "reset:USERID"
    day: datetime = Field(sa_type=UTCDateTime, primary_key=True)  # its midnight, UTC
    sent: int = 0


class League(SQLModel, table=True):
    """A league of one game and variant: divisions of round robins, renewed each season."""

    __tablename__ = "leagues"
    __table_args__ = (sa.UniqueConstraint("game", "variant", name="uq_leagues_game_variant"),)

    id: int | None = Field(default=None, primary_key=True)
    game: str
    variant: str
    time_control: str = Field(sa_type=sa.Text)
    division_size: int
    vacation_days: int | None = None
    season: int = 0  # the season in play (0: none yet)
    version: int = 0
    created_at: datetime = _utc_column()


class Event(SQLModel, table=True):
    """A round robin (``kind``), or a league's division (``league``, ``season``,
    ``division``); its standings are computed from its games, never stored."""

    __tablename__ = "events"
    __table_args__ = (
        sa.Index("ix_events_league_season", "league", "season"),
        sa.Index("ix_events_status", "status"),
    )

    id: int | None = Field(default=None, primary_key=True)
    name: str = Field(sa_type=sa.Text)
    kind: str
    game: str
    variant: str
    options: dict[str, str] = Field(default_factory=dict, sa_type=sa.JSON, nullable=False)
    time_control: str = Field(sa_type=sa.Text)
    double: bool = False
    players: int
    vacation_days: int | None = None  # the most vacation days that stop its clocks
    status: str  # open | playing | finished | cancelled
    version: int = 0
    created_at: datetime = _utc_column()
    starts_at: datetime | None = _utc_column(nullable=True)
    started_at: datetime | None = _utc_column(nullable=True)
    ended_at: datetime | None = _utc_column(nullable=True)
    checked_at: datetime | None = _utc_column(nullable=True)  # the timers' last look
    league: int | None = Field(default=None, foreign_key="leagues.id")
    season: int | None = None
    division: int | None = None  # 1: the top


class EventEntry(SQLModel, table=True):
    """A player in an event: his draw number once it starts, his withdrawal if any."""

    __tablename__ = "event_entries"
    __table_args__ = (
        sa.UniqueConstraint("event", "userid", name="uq_event_entries_event_userid"),
        sa.Index("ix_event_entries_userid", "userid"),
    )

    id: int | None = Field(default=None, primary_key=True)
    event: int = Field(foreign_key="events.id")
    userid: str = Field(foreign_key="players.userid")
    joined_at: datetime = _utc_column()
    seed: int | None = None
    withdrawn_at: datetime | None = _utc_column(nullable=True)
    reason: str | None = None  # left | time
    struck: bool = False  # withdrawn with fewer than half his games played


class EventBoard(SQLModel, table=True):
    """A board of an event, and its round."""

    __tablename__ = "event_boards"
    __table_args__ = (sa.Index("ix_event_boards_event", "event"),)

    board: int = Field(foreign_key="games.board", primary_key=True)
    event: int = Field(foreign_key="events.id")
    round: int


class LeagueMember(SQLModel, table=True):
    """A player entered in a league, season after season, until he says he leaves."""

    __tablename__ = "league_members"
    __table_args__ = (
        sa.UniqueConstraint("league", "userid", name="uq_league_members_league_userid"),
    )

    id: int | None = Field(default=None, primary_key=True)
    league: int = Field(foreign_key="leagues.id")
    userid: str = Field(foreign_key="players.userid")
    joined_at: datetime = _utc_column()
    leaving: bool = False


# Every table the models declare (the migrations make the same: tests/test_store_engine).
ALL_TABLES: tuple[str, ...] = tuple(SQLModel.metadata.tables)


def table(model: type[SQLModel]) -> sa.Table:
    """The Core table of a model, for statements that need no ORM objects."""
    found: sa.Table = model.__table__  # type: ignore[attr-defined]
    return found
