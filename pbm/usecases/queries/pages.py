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

from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from pbm.games import winner_of
from pbm.model import Board, BoardStatus, rules_of
from pbm.store import Session
from pbm.store import pages as store
from pbm.store.boards import load_boards
from pbm.usecases.accounts import USERID
from pbm.usecases.queries import BoardSummary, RatingLine, rating_lines, summaries_of
from pbm.usecases.site import Site
from pbm.usecases.weblinks import shown

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
    """One entry of a feed: a played turn (who played what, when), or the end of a game
    (``ended``: how it ended, its last turn's ``ply``; no player or notation)."""

    board: int
    game: str
    ply: int
    player: str
    notation: str
    at: datetime
    ended: str = ""  # "alice (White) wins (resign): 1-0", "Cancelled"


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
    return store.board_row(session, number)


def made_of(row: Mapping[Any, Any]) -> str:
    """What a board's page (at any ply, from either seat) is made from: its version, and
    what moves the dates its clocks show without a move (``pbm.store.pages.STAMP``)."""
    return ".".join(str(row[k]) for k in ("version", *store.STAMP))


def site_stamp(session: Session) -> str:
    """What the lists are made from: the newest board, move and end (each the end of an
    index: cheap on any number of games)."""
    return ".".join(str(v) for v in store.site_stamp(session))


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


def first_ply(board: Board) -> int:
    """The ply of the board's first position: 0, or the turns the game had before its
    first move (Go's handicap stones are Black's first turn: 1)."""
    return board.ply - len(board.moves)


def position_at(board: Board, ply: int) -> str:
    """The board's position after its ``ply``-th turn (``first_ply``: the start)."""
    first = first_ply(board)
    if not first <= ply <= board.ply:
        raise NotShown(ply)
    k = ply - first
    return board.moves[k].position_before if k < len(board.moves) else board.position


def move_at(board: Board, ply: int) -> str:
    """The notation of the board's ``ply``-th turn, the one that made ``position_at``
    (the start: "")."""
    k = ply - first_ply(board)
    return board.moves[k - 1].notation if 0 < k <= len(board.moves) else ""


def front(site: Site, page: int = 1) -> FrontPage:
    """Active boards, newest move first, ``PAGE_SIZE`` a page (then those without a move
    yet, newest first); the latest finished ones."""
    with site.db.read() as session:
        return front_in(session, page)


def front_in(s: Session, page: int = 1) -> FrontPage:
    """``front`` in a read (``snapshot``) of the caller's."""
    page = max(page, 1)
    start = (page - 1) * PAGE_SIZE
    boards = summaries_of(s, store.moved_rows(s, start, PAGE_SIZE + 1))
    if len(boards) <= PAGE_SIZE:
        skip = 0
        if not boards and start:
            skip = start - store.moved_count(s)
        rest = PAGE_SIZE + 1 - len(boards)
        boards += summaries_of(s, store.unmoved_rows(s, max(skip, 0), rest))
    ended = summaries_of(s, store.finished_rows(s, PAGE_SIZE)) if page == 1 else []
    return FrontPage(boards[:PAGE_SIZE], ended, page, len(boards) > PAGE_SIZE)


def _account(session: Session, userid: str) -> tuple[str, str]:
    """(userid, display) of a confirmed account; ``NotShown`` for anyone else."""
    uid = userid.lower()
    if not USERID.match(uid):
        raise NotShown(userid)
    found = store.confirmed_account(session, uid)
    if found is None:
        raise NotShown(userid)
    return found


def confirmed(session: Session, userid: str) -> tuple[str, str]:
    """(userid, display) of a confirmed account; ``NotShown`` for anyone else."""
    return _account(session, userid)


def player(site: Site, userid: str) -> PlayerPage:
    """A confirmed player's boards, ratings and rating history; ``NotShown`` for anyone
    else."""
    with site.db.read() as s:
        uid, display = _account(s, userid)
        boards = summaries_of(s, store.shown_rows_of(s, uid))
        rated = store.rated_rows_of(s, uid)
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
    active = [b for b in boards if b.status == BoardStatus.ACTIVE]
    ended = [b for b in boards if b.status != BoardStatus.ACTIVE]
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
    uid = None
    if player:
        uid = player.lower()
        if not USERID.match(uid):
            return [], False
    with site.db.read() as s:
        rows = store.archive_rows(
            s,
            (max(page, 1) - 1) * PAGE_SIZE,
            PAGE_SIZE + 1,
            game.lower() if game else None,
            variant.lower() if variant else None,
            uid,
            since,
            until,
        )
        found = summaries_of(s, rows)
    return found[:PAGE_SIZE], len(found) > PAGE_SIZE


def feed(site: Site, number: int | None = None, userid: str | None = None) -> list[FeedEntry]:
    """The latest turns and ends of a public board, or of a player's public boards, newest
    first."""
    with site.db.read() as s:
        if number is not None and board_row(s, number) is None:
            raise NotShown(number)
        uid = _account(s, userid)[0] if userid is not None else None
        rows = store.feed_rows(s, FEED_SIZE, number, uid)
        ends = store.ended_rows(s, FEED_SIZE, number, uid)
        names = store.display_names(s, {r.userid for r in rows} | _players(ends))
    turns = [
        FeedEntry(r.board, r.game, r.ply, names.get(r.userid, r.userid), r.notation, r.created_at)
        for r in rows
    ]
    # An end comes after the turn that made it (a mate is both at one moment).
    entries = sorted(turns + _ends(ends, names), key=lambda e: (e.at, e.ended != ""), reverse=True)
    return entries[:FEED_SIZE]


def finished_feed(site: Site) -> list[FeedEntry]:
    """The games that ended latest, latest first: the site's feed of finished games."""
    with site.db.read() as s:
        ends = store.ended_rows(s, FEED_SIZE)
        names = store.display_names(s, _players(ends))
    return _ends(ends, names)


def _players(rows: Sequence[Any]) -> set[str]:
    return {u for r in rows for u in (r.white, r.black)}


def _ends(rows: Sequence[Any], names: Mapping[str, str]) -> list[FeedEntry]:
    """The end of each game of ``rows`` as a feed entry."""
    return [
        FeedEntry(
            r.board,
            r.game,
            r.ply,
            "",
            "",
            r.ended_at or r.last_move_at or r.created_at,
            ended_words(r, names),
        )
        for r in rows
    ]


def ended_words(row: Any, names: Mapping[str, str]) -> str:
    """How a game of a ``games`` row ended, for everyone: ``alice (White) wins (resign):
    1-0``, ``Draw (agreement): 1/2-1/2``, ``Cancelled``."""
    if row.status == BoardStatus.CANCELLED or not row.result:
        return "Cancelled"
    how = f" ({row.termination})" if row.termination else ""
    winner = winner_of(row.result)
    if winner is None:
        return f"Draw{how}: {row.result}"
    uid = (row.white, row.black)[winner]
    seat = rules_of(row.game).seat_names[winner]
    return f"{names.get(uid, uid)} ({seat}) wins{how}: {row.result}"
