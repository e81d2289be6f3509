"""What the read-only web site shows (``pbm.web``): public boards, players, ratings.

Only what anyone may see: boards in play or played (never a challenge that
was not accepted), display names and userids of confirmed accounts, moves
with their public comments, results and ratings. Never an address, a
password, a token, a chat, or an account that is not confirmed. Nothing here
writes. Every list is one indexed query a page (the site may hold 100,000
games), and each page says what it was made from (``made_of``,
``site_stamp``), so that a visitor who has it already gets a 304 for the
price of that query.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import sqlalchemy as sa
from sqlmodel import Session

from pbm.usecases.accounts import USERID
from pbm.usecases.queries import BoardSummary, RatingLine, rating_lines, summaries_of
from pbm.usecases.site import Site
from pbm.usecases.weblinks import SHOWN, shown
from pbm.usecases.world import GAMES, MOVES, PAUSES, PLAYERS, VACATIONS, Board, load_boards

PAGE_SIZE = 50
FEED_SIZE = 50
# Board numbers past this are no board (and would overflow a database integer).
MAX_NUMBER = 2**31 - 1


class NotShown(LookupError):
    """Nothing public by that name: the page is a 404."""


@dataclass(frozen=True, slots=True)
class FrontPage:
    active: list[BoardSummary]  # newest move first
    finished: list[BoardSummary]  # latest ended first
    page: int
    more: bool  # a next page of active boards


@dataclass(frozen=True, slots=True)
class RatedGame:
    """One rated game of a player: his rating before and after it."""

    board: int
    game: str
    variant: str
    ended_at: datetime | None
    before: int
    after: int


@dataclass(frozen=True, slots=True)
class PlayerPage:
    userid: str
    display: str
    active: list[BoardSummary]
    finished: list[BoardSummary]
    ratings: list[RatingLine]
    history: list[RatedGame]  # latest first


@dataclass(frozen=True, slots=True)
class FeedEntry:
    """One played turn, for a feed: the board, its title, who played what, when."""

    board: int
    game: str
    ply: int
    player: str
    notation: str
    at: datetime


def _shown() -> sa.ColumnElement[bool]:
    """``shown`` as SQL."""
    return sa.or_(
        GAMES.c.status.in_(SHOWN), sa.and_(GAMES.c.status == "cancelled", GAMES.c.ply > 0)
    )


def _newest_first() -> list[sa.ColumnElement[object]]:
    return [GAMES.c.last_move_at.desc().nulls_last(), GAMES.c.board.desc()]


@contextmanager
def snapshot(site: Site) -> Iterator[Session]:
    """One read for all a page is made of: what it is made from (``board_row``, all a
    revalidation costs) and, when it must be made, the rest (``board_in``)."""
    with site.db.read() as session:
        yield session


def board_row(session: Session, number: int) -> Mapping[Any, Any] | None:
    """A shown board's ``games`` row and what its page is made from (``made_of``), None
    if there is none."""
    if not 0 < number <= MAX_NUMBER:
        return None
    row = session.execute(_BOARD_ROW, {"number": number}).first()
    return None if row is None else row._mapping


def made_of(row: Mapping[Any, Any]) -> str:
    """What a board's page (at any ply, from either seat) is made from: its version, and
    what moves the dates its clocks show without a move (``_clocks_stamp``)."""
    return ".".join(str(row[k]) for k in ("version", *_STAMP))


_STAMP = ("white_away", "black_away", "away", "paused", "resumed")


def _clocks_stamp() -> list[sa.Label[Any]]:
    """Its players' vacations (each his latest end: one replaces the last, or ends early)
    and the site's clock pauses, as columns of a board's row (``_STAMP``): a vacation or
    a pause moves the dates on its page, and a page cached before must be made anew."""

    def latest(column: sa.ColumnElement[Any], *where: sa.ColumnElement[bool]) -> Any:
        return sa.select(sa.func.max(column)).where(*where).scalar_subquery()

    white, black, away, paused, resumed = _STAMP
    return [
        latest(VACATIONS.c.ends_at, VACATIONS.c.userid == GAMES.c.white).label(white),
        latest(VACATIONS.c.ends_at, VACATIONS.c.userid == GAMES.c.black).label(black),
        latest(VACATIONS.c.id, VACATIONS.c.userid.in_([GAMES.c.white, GAMES.c.black])).label(away),
        latest(PAUSES.c.id).label(paused),
        sa.select(sa.func.count(PAUSES.c.ended_at)).scalar_subquery().label(resumed),
    ]


# Built once, the board's number bound at each read: building and keying this
# statement afresh cost more than reading the row.
_BOARD_ROW = sa.select(GAMES, *_clocks_stamp()).where(
    GAMES.c.board == sa.bindparam("number"), _shown()
)


def site_stamp(session: Session) -> str:
    """What the lists are made from: the newest board, move and end (each the end of an
    index: cheap on any number of games)."""
    ends = [
        sa.select(sa.func.max(GAMES.c.ended_at)).where(GAMES.c.status == status).scalar_subquery()
        for status in ("finished", "cancelled")
    ]
    newest = sa.select(
        sa.select(sa.func.max(GAMES.c.board)).scalar_subquery(),
        sa.select(sa.func.max(MOVES.c.id)).scalar_subquery(),
        *ends,
    )
    row = session.execute(newest).one()
    return ".".join(str(v) for v in row)


def board(site: Site, number: int) -> Board:
    """A public board, everything about it that anyone may see; ``NotShown`` if there is
    none."""
    with site.db.read() as session:
        row = board_row(session, number)
        if row is None:
            raise NotShown(number)
        return board_in(session, site, row)


def board_in(session: Session, site: Site, row: Mapping[Any, Any]) -> Board:
    """``board`` of its row (``board_row``), in a read (``snapshot``) of the caller's:
    its followers and queued moves are not even read."""
    number = int(row["board"])
    loaded = load_boards(
        session,
        [number],
        now=site.clock(),
        reminders=site.config.clock.reminders,
        public=True,
        rows={number: row},
    )
    found = loaded.get(number)
    if found is None or not shown(found):
        raise NotShown(number)
    return found


def position_at(board: Board, ply: int) -> str:
    """The board's position after its ``ply``-th turn (0: the start)."""
    if not 0 <= ply <= board.ply or ply > len(board.moves):
        raise NotShown(ply)
    return board.moves[ply].position_before if ply < len(board.moves) else board.position


def front(site: Site, page: int = 1) -> FrontPage:
    """Active boards, newest move first, ``PAGE_SIZE`` a page (then those without a move
    yet, newest first); the latest finished ones."""
    with site.db.read() as session:
        return front_in(session, page)


def front_in(s: Session, page: int = 1) -> FrontPage:
    """``front`` in a read (``snapshot``) of the caller's."""
    page = max(page, 1)
    start = (page - 1) * PAGE_SIZE
    active = sa.select(GAMES).where(GAMES.c.status == "active")
    # Two index walks, not one sort of every board in play: SQLite and PostgreSQL put
    # NULLs at opposite ends, and an index gives "newest first" only without them.
    moved = active.where(GAMES.c.last_move_at.is_not(None)).order_by(
        GAMES.c.last_move_at.desc(), GAMES.c.board.desc()
    )
    unmoved = active.where(GAMES.c.last_move_at.is_(None)).order_by(GAMES.c.board.desc())
    finished = (
        sa.select(GAMES)
        .where(GAMES.c.status == "finished")
        .order_by(GAMES.c.ended_at.desc(), GAMES.c.board.desc())
        .limit(PAGE_SIZE)
    )
    boards = summaries_of(s, moved.offset(start).limit(PAGE_SIZE + 1))
    if len(boards) <= PAGE_SIZE:
        skip = 0
        if not boards and start:
            count = sa.select(sa.func.count()).select_from(moved.subquery())
            skip = start - int(s.execute(count).scalar_one())
        rest = PAGE_SIZE + 1 - len(boards)
        boards += summaries_of(s, unmoved.offset(max(skip, 0)).limit(rest))
    ended = summaries_of(s, finished) if page == 1 else []
    return FrontPage(boards[:PAGE_SIZE], ended, page, len(boards) > PAGE_SIZE)


def _account(session: Session, userid: str) -> tuple[str, str]:
    """(userid, display) of a confirmed account; ``NotShown`` for anyone else."""
    uid = userid.lower()
    if not USERID.match(uid):
        raise NotShown(userid)
    row = session.execute(
        sa.select(PLAYERS.c.userid, PLAYERS.c.display).where(
            PLAYERS.c.userid == uid, PLAYERS.c.status == "active"
        )
    ).first()
    if row is None:
        raise NotShown(userid)
    return str(row.userid), str(row.display)


def _of(uid: str) -> sa.ColumnElement[bool]:
    return sa.or_(GAMES.c.white == uid, GAMES.c.black == uid)


def player(site: Site, userid: str) -> PlayerPage:
    """A confirmed player's boards, ratings and rating history; ``NotShown`` for anyone
    else."""
    with site.db.read() as s:
        uid, display = _account(s, userid)
        boards = summaries_of(
            s, sa.select(GAMES).where(_of(uid), _shown()).order_by(*_newest_first())
        )
        rated = s.execute(
            sa.select(GAMES)
            .where(_of(uid), GAMES.c.white_rating_after.is_not(None))
            .order_by(GAMES.c.ended_at.desc().nulls_last(), GAMES.c.board.desc())
        ).all()
        kinds = {(g.game, g.variant) for g in rated}
        ratings = [
            line
            for game, variant in sorted(kinds)
            for line in rating_lines(s, game, variant)
            if line.player == display
        ]
    history = [
        RatedGame(
            g.board,
            g.game,
            g.variant,
            g.ended_at,
            *(
                (g.white_rating_before, g.white_rating_after)
                if g.white == uid
                else (g.black_rating_before, g.black_rating_after)
            ),
        )
        for g in rated
    ]
    active = [b for b in boards if b.status == "active"]
    ended = [b for b in boards if b.status != "active"]
    return PlayerPage(uid, display, active, ended, ratings, history)


def ratings(site: Site) -> list[RatingLine]:
    """Every rating table, by game and variant, best first."""
    with site.db.read() as s:
        return rating_lines(s, None, None)


def archive(
    site: Site,
    page: int = 1,
    game: str | None = None,
    variant: str | None = None,
    player: str | None = None,
    since: datetime | None = None,
    until: datetime | None = None,
) -> tuple[list[BoardSummary], bool]:
    """Finished games, the latest first, filtered, ``PAGE_SIZE`` a page; and whether
    there are more."""
    stmt = sa.select(GAMES).where(GAMES.c.status == "finished")
    if game:
        stmt = stmt.where(GAMES.c.game == game.lower())
    if variant:
        stmt = stmt.where(GAMES.c.variant == variant.lower())
    if player:
        uid = player.lower()
        if not USERID.match(uid):
            return [], False
        stmt = stmt.where(_of(uid))
    if since is not None:
        stmt = stmt.where(GAMES.c.ended_at >= since)
    if until is not None:
        stmt = stmt.where(GAMES.c.ended_at < until)
    stmt = (
        # A finished game always has its end (migration 0003 filled in the old ones):
        # no NULLs to place, so the index gives the order.
        stmt.order_by(GAMES.c.ended_at.desc(), GAMES.c.board.desc())
        .offset((max(page, 1) - 1) * PAGE_SIZE)
        .limit(PAGE_SIZE + 1)
    )
    with site.db.read() as s:
        found = summaries_of(s, stmt)
    return found[:PAGE_SIZE], len(found) > PAGE_SIZE


def feed(site: Site, number: int | None = None, userid: str | None = None) -> list[FeedEntry]:
    """The latest turns of a public board, or of a player's public boards, newest first."""
    stmt = (
        sa.select(MOVES.c.board, GAMES.c.game, MOVES.c.ply, MOVES.c.userid, MOVES.c.notation)
        .add_columns(MOVES.c.created_at)
        .join(GAMES, GAMES.c.board == MOVES.c.board)
        .where(_shown())
        .order_by(MOVES.c.created_at.desc(), MOVES.c.id.desc())
        .limit(FEED_SIZE)
    )
    with site.db.read() as s:
        if number is not None:
            if board_row(s, number) is None:
                raise NotShown(number)
            stmt = stmt.where(MOVES.c.board == number)
        if userid is not None:
            uid, _ = _account(s, userid)
            stmt = stmt.where(_of(uid))
        rows = s.execute(stmt).all()
        names = dict(
            s.execute(
                sa.select(PLAYERS.c.userid, PLAYERS.c.display).where(
                    PLAYERS.c.userid.in_({r.userid for r in rows})
                )
            ).all()
        )
    return [
        FeedEntry(r.board, r.game, r.ply, names.get(r.userid, r.userid), r.notation, r.created_at)
        for r in rows
    ]
