"""Looking without changing: board lists, rating lists, players, a board's view.

The reading mail commands (``pbm.usecases.reading``) and the command line
both use these; nothing here writes.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import sqlalchemy as sa
from sqlmodel import Session

from pbm import ratings as elo
from pbm.usecases.boardmail import BoardView, board_view
from pbm.usecases.locks import PlayerLocks, player_locks
from pbm.usecases.site import Site
from pbm.usecases.world import (
    GAMES,
    PLAYERS,
    RATINGS,
    Account,
    Board,
    World,
    load_accounts,
    load_pauses,
    rules_of,
)


@dataclass(frozen=True, slots=True)
class BoardSummary:
    """One line of a board list. Names are display forms; ``to_move`` None when over."""

    board: int
    game: str
    variant: str
    white: str
    black: str
    status: str
    result: str | None
    termination: str | None
    ply: int
    to_move: str | None  # an active board's player to move; a waiting one's challenged player
    created_at: datetime
    last_move_at: datetime | None


@dataclass(frozen=True, slots=True)
class RatingLine:
    """One line of a rating list; ``provisional``: fewer than 20 rated games."""

    game: str
    variant: str
    rank: int
    player: str
    rating: int
    games: int
    provisional: bool


def displays(session: Session, userids: Iterable[str]) -> dict[str, str]:
    """Display names by userid (the userid itself for one that does not exist)."""
    wanted = set(userids)
    if not wanted:
        return {}
    # Only the names: a list of 100 boards need not load whole accounts.
    stmt = sa.select(PLAYERS.c.userid, PLAYERS.c.display).where(
        PLAYERS.c.userid.in_(sorted(wanted))
    )
    found: dict[str, str] = {row.userid: row.display for row in session.execute(stmt)}
    return {u: found.get(u, u) for u in wanted}


def summaries(
    session: Session,
    status: str | None = "active",
    userid: str | None = None,
    game: str | None = None,
) -> list[BoardSummary]:
    """Boards by number: of ``status`` (None or ``all``: any; ``open``: waiting or
    active), of a player, of a game."""
    stmt = sa.select(GAMES).order_by(GAMES.c.board)
    if status == "open":
        stmt = stmt.where(GAMES.c.status.in_(("waiting", "active")))
    elif status not in (None, "all"):
        stmt = stmt.where(GAMES.c.status == status)
    if game is not None:
        stmt = stmt.where(GAMES.c.game == rules_of(game).name)
    if userid is not None:
        uid = userid.lower()
        stmt = stmt.where(sa.or_(GAMES.c.white == uid, GAMES.c.black == uid))
    return summaries_of(session, stmt)


def summaries_of(session: Session, stmt: sa.Select[Any]) -> list[BoardSummary]:
    """The boards a select of ``games`` rows finds, as list lines, in its order."""
    rows = list(session.execute(stmt))
    names = displays(session, [u for g in rows for u in (g.white, g.black)])
    out = []
    for g in rows:
        to_move = None
        if g.status == "active":
            to_move = names[(g.white, g.black)[_to_move(g.game, g.position)]]
        elif g.status == "waiting":
            to_move = names[g.black if g.challenger == g.white else g.white]
        out.append(
            BoardSummary(
                board=g.board,
                game=g.game,
                variant=g.variant,
                white=names[g.white],
                black=names[g.black],
                status=g.status,
                result=g.result,
                termination=g.termination,
                ply=g.ply,
                to_move=to_move,
                created_at=g.created_at,
                last_move_at=g.last_move_at,
            )
        )
    return out


@functools.lru_cache(maxsize=4096)
def _to_move(game: str, position: str) -> int:
    """The seat to move in a position (loading one may replay its moves: kept)."""
    return rules_of(game).load(position).to_move


def rating_lines(session: Session, game: str | None, variant: str | None) -> list[RatingLine]:
    """Rating lists by game and variant, best first."""
    stmt = sa.select(RATINGS)
    if game is not None:
        stmt = stmt.where(RATINGS.c.game == game)
    if variant is not None:
        stmt = stmt.where(RATINGS.c.variant == variant.lower())
    rows = sorted(
        session.execute(stmt),
        key=lambda r: (r.game, r.variant, -r.rating, -r.games_played, r.userid),
    )
    names = displays(session, [r.userid for r in rows])
    out: list[RatingLine] = []
    rank = 0
    for i, r in enumerate(rows):
        if i == 0 or (r.game, r.variant) != (rows[i - 1].game, rows[i - 1].variant):
            rank = 0
        rank += 1
        out.append(
            RatingLine(
                game=r.game,
                variant=r.variant,
                rank=rank,
                player=names[r.userid],
                rating=elo.round_half_away(r.rating),
                games=r.games_played,
                provisional=r.games_played < elo.PROVISIONAL_GAMES,
            )
        )
    return out


def open_boards_of(session: Session, address: str) -> list[tuple[str, int]]:
    """(userid, board) of the waiting and active boards of the confirmed accounts whose
    address is ``address``, oldest board first."""
    accounts = (
        sa.select(PLAYERS.c.userid)
        .where(sa.func.lower(PLAYERS.c.email) == address.lower(), PLAYERS.c.status == "active")
        .scalar_subquery()
    )
    found: list[tuple[str, int]] = []
    for seat in (GAMES.c.white, GAMES.c.black):
        stmt = sa.select(seat, GAMES.c.board).where(
            GAMES.c.status.in_(("active", "waiting")), seat.in_(accounts)
        )
        found += [(str(u), int(b)) for u, b in session.execute(stmt)]
    return sorted(found, key=lambda pair: pair[1])[:20]


def game_of(session: Session, board: int) -> str | None:
    """The game a board is of (None: there is no such board)."""
    found: str | None = session.execute(
        sa.select(GAMES.c.game).where(GAMES.c.board == board)
    ).scalar()
    return found


# -- for the command line: each its own read


def board(site: Site, number: int) -> Board:
    """Everything about a board, as a value; ``UnknownBoard`` if there is none."""
    with site.db.read() as s:
        return World(s, site.config, site.clock()).board(number)


def view(site: Site, number: int) -> BoardView:
    """What a board mail shows of a board now."""
    return board_view(board(site, number), site.clock())


def boards(
    site: Site, status: str | None = "active", userid: str | None = None, game: str | None = None
) -> list[BoardSummary]:
    with site.db.read() as s:
        if userid is not None:
            World(s, site.config, site.clock()).account(userid)  # an unknown player is refused
        return summaries(s, status, userid, game)


def standings(site: Site, game: str | None = None, variant: str | None = None) -> list[RatingLine]:
    with site.db.read() as s:
        name = rules_of(game).name if game is not None else None
        return rating_lines(s, name, variant)


def players(site: Site) -> list[Account]:
    """Every account, by userid."""
    with site.db.read() as s:
        userids = s.execute(sa.select(PLAYERS.c.userid)).scalars()
        found = load_accounts(s, userids)
        return [found[u] for u in sorted(found)]


def player(site: Site, userid: str) -> Account:
    with site.db.read() as s:
        return World(s, site.config, site.clock()).account(userid)


def locks(site: Site, userid: str) -> PlayerLocks:
    """What holds ``userid`` back now (``pbm player show``)."""
    with site.db.read() as s:
        return player_locks(World(s, site.config, site.clock()), userid)


def clocks_paused_since(site: Site) -> datetime | None:
    """When the site-wide clock pause began, or None if the clocks run."""
    with site.db.read() as s:
        return next((p.started_at for p in load_pauses(s) if p.ended_at is None), None)
