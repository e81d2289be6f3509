"""Events and leagues as values, loaded and saved: round robins (``events``), who plays
in them (``event_entries``), their boards (``event_boards``), and the leagues with
their members. Standings are none of these: ``pbm.usecases.events.standings`` computes them
from the games that ``event_games`` reads.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import Any

import sqlalchemy as sa
from sqlmodel import Session

from pbm.games import Result
from pbm.model import BoardStatus, EventTag
from pbm.store.statements import ANY, Stale, any_of, rowcount
from pbm.store.tables import Event as EventRow
from pbm.store.tables import EventBoard, EventEntry, LeagueMember, table
from pbm.store.tables import Game as GameRow
from pbm.store.tables import League as LeagueRow
from pbm.store.tables import Rating as RatingRow

EVENTS = table(EventRow)
ENTRIES = table(EventEntry)
BOARDS = table(EventBoard)
LEAGUES = table(LeagueRow)
MEMBERS = table(LeagueMember)
GAMES = table(GameRow)
RATINGS = table(RatingRow)


class EventStatus(StrEnum):
    OPEN = "open"  # taking entries
    PLAYING = "playing"
    FINISHED = "finished"
    CANCELLED = "cancelled"


class Kind(StrEnum):
    ROUND_ROBIN = "roundrobin"
    DIVISION = "division"  # a league's division: a round robin of one season
    CUP = "cup"  # a knockout cup: matches of two games, a third on a tie


@dataclass(frozen=True)
class Event:
    """An event's row (``number`` is its ``id``)."""

    number: int
    name: str
    kind: str
    game: str
    variant: str
    options: Mapping[str, str]
    time_control: str
    double: bool
    players: int
    vacation_days: int | None
    status: EventStatus
    version: int
    created_at: datetime
    starts_at: datetime | None = None
    started_at: datetime | None = None
    ended_at: datetime | None = None
    checked_at: datetime | None = None
    league: int | None = None
    season: int | None = None
    division: int | None = None


@dataclass(frozen=True)
class Entry:
    """A player in an event."""

    event: int
    userid: str
    joined_at: datetime
    seed: int | None = None
    withdrawn_at: datetime | None = None
    reason: str | None = None  # left | time
    struck: bool = False
    id: int | None = None


@dataclass(frozen=True)
class EventGame:
    """A board of an event as its standings need it."""

    board: int
    round: int
    white: str
    black: str
    status: BoardStatus
    result: Result | None
    termination: str | None
    ended_at: datetime | None


@dataclass(frozen=True)
class League:
    id: int
    game: str
    variant: str
    time_control: str
    division_size: int
    vacation_days: int | None
    season: int
    version: int
    created_at: datetime


@dataclass(frozen=True)
class Member:
    league: int
    userid: str
    joined_at: datetime
    leaving: bool = False
    id: int | None = None


_EVENT_FIELDS = tuple("number" if c.name == "id" else c.name for c in EVENTS.c)


def _event(row: Mapping[Any, Any]) -> Event:
    values = {f: row["id" if f == "number" else f] for f in _EVENT_FIELDS}
    values["status"] = EventStatus(values["status"])
    values["options"] = dict(values["options"] or {})
    return Event(**values)


def load_event(session: Session, number: int) -> Event | None:
    row = session.execute(sa.select(EVENTS).where(EVENTS.c.id == number)).first()
    return None if row is None else _event(row._mapping)


def load_events(
    session: Session,
    statuses: Iterable[str] | None = None,
    *,
    league: int | None = None,
    season: int | None = None,
    kinds: Iterable[str] | None = None,
) -> list[Event]:
    """Events by number: of these statuses, of a league's season, of these kinds."""
    stmt = sa.select(EVENTS).order_by(EVENTS.c.id)
    if kinds is not None:
        stmt = stmt.where(EVENTS.c.kind.in_(list(kinds)))
    if statuses is not None:
        stmt = stmt.where(EVENTS.c.status.in_(list(statuses)))
    if league is not None:
        stmt = stmt.where(EVENTS.c.league == league)
    if season is not None:
        stmt = stmt.where(EVENTS.c.season == season)
    return [_event(row._mapping) for row in session.execute(stmt)]


def next_event_number(session: Session) -> int:
    highest = session.execute(sa.select(sa.func.max(EVENTS.c.id))).scalar()
    return int(highest or 0) + 1


def save_event(session: Session, before: Event | None, after: Event) -> None:
    """Insert ``after`` or write it over ``before`` if the row still has its version."""
    row = {"id" if f == "number" else f: getattr(after, f) for f in _EVENT_FIELDS}
    row["options"] = dict(after.options)
    if before is None:
        rowcount(session, sa.insert(EVENTS).values({**row, "version": 0}))
        return
    del row["id"], row["version"]
    stmt = (
        sa.update(EVENTS)
        .where(EVENTS.c.id == before.number, EVENTS.c.version == before.version)
        .values(**row, version=before.version + 1)
    )
    if rowcount(session, stmt) != 1:
        raise Stale


_ENTRIES = (
    sa.select(
        ENTRIES.c.event,
        ENTRIES.c.userid,
        ENTRIES.c.joined_at,
        ENTRIES.c.seed,
        ENTRIES.c.withdrawn_at,
        ENTRIES.c.reason,
        ENTRIES.c.struck,
        ENTRIES.c.id,
    )
    .where(ENTRIES.c.event.in_(ANY))
    .order_by(ENTRIES.c.event, ENTRIES.c.seed, ENTRIES.c.id)
)


def load_entries(session: Session, events: Iterable[int]) -> dict[int, list[Entry]]:
    """The entries of ``events``, by event: by draw number, then as they joined."""
    wanted = set(events)
    out: dict[int, list[Entry]] = {n: [] for n in wanted}
    if wanted:
        for row in session.execute(_ENTRIES, any_of(wanted)):
            out[row.event].append(Entry(*row))
    return out


def entries_of(session: Session, userid: str) -> list[Entry]:
    """Every entry of ``userid``, newest first."""
    stmt = (
        sa.select(*_ENTRIES.selected_columns)
        .where(ENTRIES.c.userid == userid.lower())
        .order_by(ENTRIES.c.id.desc())
    )
    return [Entry(*row) for row in session.execute(stmt)]


def save_entry(session: Session, before: Entry | None, after: Entry | None) -> None:
    """Insert, update (if it has not changed since ``before``) or delete an entry."""
    if before is None:
        assert after is not None
        values = {k: getattr(after, k) for k in after.__dataclass_fields__ if k != "id"}
        session.execute(sa.insert(ENTRIES), [values])  # one statement, compiled once
        return
    where = (
        (ENTRIES.c.event == before.event)
        & (ENTRIES.c.userid == before.userid)
        & (ENTRIES.c.seed.is_(None) if before.seed is None else ENTRIES.c.seed == before.seed)
        & (
            ENTRIES.c.withdrawn_at.is_(None)
            if before.withdrawn_at is None
            else ENTRIES.c.withdrawn_at == before.withdrawn_at
        )
    )
    if after is None:
        stmt: sa.Executable = sa.delete(ENTRIES).where(where)
    else:
        stmt = (
            sa.update(ENTRIES)
            .where(where)
            .values(
                seed=after.seed,
                withdrawn_at=after.withdrawn_at,
                reason=after.reason,
                struck=after.struck,
            )
        )
    if rowcount(session, stmt) != 1:
        raise Stale


def add_event_boards(session: Session, event: int, boards: Sequence[tuple[int, int]]) -> None:
    """Link ``boards`` (board, round) to ``event``."""
    if boards:
        session.execute(
            sa.insert(BOARDS), [{"board": b, "event": event, "round": r} for b, r in boards]
        )


_GAMES_OF = (
    sa.select(
        BOARDS.c.event,
        GAMES.c.board,
        BOARDS.c.round,
        GAMES.c.white,
        GAMES.c.black,
        GAMES.c.status,
        GAMES.c.result,
        GAMES.c.termination,
        GAMES.c.ended_at,
    )
    .join(GAMES, GAMES.c.board == BOARDS.c.board)
    .where(BOARDS.c.event.in_(ANY))
    .order_by(BOARDS.c.event, BOARDS.c.round, GAMES.c.board)
)


def event_games(session: Session, events: Iterable[int]) -> dict[int, list[EventGame]]:
    """The boards of ``events`` as their standings need them, by event, by round."""
    wanted = set(events)
    out: dict[int, list[EventGame]] = {n: [] for n in wanted}
    if not wanted:
        return out
    for row in session.execute(_GAMES_OF, any_of(wanted)):
        result = None if row.result is None else Result(row.result)
        out[row.event].append(
            EventGame(
                row.board,
                row.round,
                row.white,
                row.black,
                BoardStatus(row.status),
                result,
                row.termination,
                row.ended_at,
            )
        )
    return out


_TAGS = (
    sa.select(BOARDS.c.board, EVENTS.c.id, EVENTS.c.name, BOARDS.c.round, EVENTS.c.vacation_days)
    .join(EVENTS, EVENTS.c.id == BOARDS.c.event)
    .where(BOARDS.c.board.in_(ANY))
)


def event_tags(session: Session, boards: Iterable[int]) -> dict[int, EventTag]:
    """The event of each of ``boards`` that is played in one."""
    wanted = set(boards)
    if not wanted:
        return {}
    return {
        row.board: EventTag(row.id, row.name, row.round, row.vacation_days)
        for row in session.execute(_TAGS, any_of(wanted))
    }


def events_due(session: Session, now: datetime) -> list[int]:
    """The events the timers look at: open ones whose start date has come, and those in
    play with a board ended since their last look."""
    ended = (
        sa.select(BOARDS.c.board)
        .join(GAMES, GAMES.c.board == BOARDS.c.board)
        .where(
            BOARDS.c.event == EVENTS.c.id,
            GAMES.c.ended_at.is_not(None),
            sa.or_(EVENTS.c.checked_at.is_(None), GAMES.c.ended_at >= EVENTS.c.checked_at),
        )
        .exists()
    )
    stmt = (
        sa.select(EVENTS.c.id)
        .where(
            sa.or_(
                (EVENTS.c.status == EventStatus.OPEN) & (EVENTS.c.starts_at <= now),
                (EVENTS.c.status == EventStatus.PLAYING) & ended,
            )
        )
        .order_by(EVENTS.c.id)
    )
    return [int(n) for n in session.scalars(stmt)]


def ratings_of(
    session: Session, game: str, variant: str, userids: Iterable[str]
) -> dict[str, float]:
    """The ratings of ``userids`` in a game and variant (those rated)."""
    wanted = set(userids)
    if not wanted:
        return {}
    stmt = sa.select(RATINGS.c.userid, RATINGS.c.rating).where(
        RATINGS.c.game == game, RATINGS.c.variant == variant, RATINGS.c.userid.in_(ANY)
    )
    return {row.userid: float(row.rating) for row in session.execute(stmt, any_of(wanted))}


# ---------------------------------------------------------------- leagues


def _league(row: Any) -> League:
    m = row._mapping
    return League(**{k: m[k] for k in League.__dataclass_fields__})


def load_league(session: Session, game: str, variant: str | None = None) -> League | None:
    stmt = sa.select(LEAGUES).where(LEAGUES.c.game == game).order_by(LEAGUES.c.id)
    if variant is not None:
        stmt = stmt.where(LEAGUES.c.variant == variant)
    row = session.execute(stmt).first()
    return None if row is None else _league(row)


def league_by_id(session: Session, number: int) -> League | None:
    row = session.execute(sa.select(LEAGUES).where(LEAGUES.c.id == number)).first()
    return None if row is None else _league(row)


def load_leagues(session: Session) -> list[League]:
    return [_league(r) for r in session.execute(sa.select(LEAGUES).order_by(LEAGUES.c.id))]


def next_league_number(session: Session) -> int:
    highest = session.execute(sa.select(sa.func.max(LEAGUES.c.id))).scalar()
    return int(highest or 0) + 1


def save_league(session: Session, before: League | None, after: League) -> None:
    values = {k: getattr(after, k) for k in League.__dataclass_fields__}
    if before is None:
        rowcount(session, sa.insert(LEAGUES).values(**values))
        return
    del values["id"], values["version"]
    stmt = (
        sa.update(LEAGUES)
        .where(LEAGUES.c.id == before.id, LEAGUES.c.version == before.version)
        .values(**values, version=before.version + 1)
    )
    if rowcount(session, stmt) != 1:
        raise Stale


def load_members(session: Session, league: int) -> list[Member]:
    stmt = (
        sa.select(
            MEMBERS.c.league, MEMBERS.c.userid, MEMBERS.c.joined_at, MEMBERS.c.leaving, MEMBERS.c.id
        )
        .where(MEMBERS.c.league == league)
        .order_by(MEMBERS.c.id)
    )
    return [Member(*row) for row in session.execute(stmt)]


def save_member(session: Session, before: Member | None, after: Member | None) -> None:
    """Insert, update (``leaving``) or delete a league member."""
    if before is None:
        assert after is not None
        values = {k: getattr(after, k) for k in Member.__dataclass_fields__ if k != "id"}
        rowcount(session, sa.insert(MEMBERS).values(**values))
        return
    where = (MEMBERS.c.league == before.league) & (MEMBERS.c.userid == before.userid)
    if after is None:
        stmt: sa.Executable = sa.delete(MEMBERS).where(where)
    else:
        stmt = sa.update(MEMBERS).where(where).values(leaving=after.leaving)
    if rowcount(session, stmt) != 1:
        raise Stale
