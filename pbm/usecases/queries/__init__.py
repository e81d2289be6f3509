"""Looking without changing: board lists, rating lists, players, a board's view.

The reading mail commands (``pbm.usecases.queries.reading``) and the command line
both use these; nothing here writes.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from pbm import ratings as elo
from pbm.games import Result
from pbm.model import Account, Board, BoardStatus, rules_of
from pbm.store import Session
from pbm.store.accounts import all_userids, displays, load_accounts
from pbm.store.lists import board_rows, rating_rows
from pbm.store.stops import load_pauses
from pbm.usecases.boardview import BoardView, board_view
from pbm.usecases.glicko_now import glicko_standings
from pbm.usecases.locks import PlayerLocks, player_locks
from pbm.usecases.site import Site
from pbm.usecases.world import World


@dataclass(frozen=True, slots=True)
class BoardSummary:
    """One line of a board list. Names are display forms; ``to_move`` None when over."""

    board: int
    game: str
    variant: str
    white: str
    black: str
    status: BoardStatus
    result: Result | None
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
    glicko: int | None = None  # the Glicko-2 rating (``usecases.glickos``), None: none yet
    deviation: int | None = None  # its deviation


def summaries(
    session: Session,
    status: str | None = BoardStatus.ACTIVE,
    userid: str | None = None,
    game: str | None = None,
) -> list[BoardSummary]:
    """Boards by number: of ``status`` (None or ``all``: any; ``open``: waiting or
    active), of a player, of a game."""
    name = rules_of(game).name if game is not None else None
    return summaries_of(session, board_rows(session, status, userid, name))


def summaries_of(session: Session, rows: Sequence[Any]) -> list[BoardSummary]:
    """``games`` rows (``pbm.store.lists``, ``pbm.store.pages``) as list lines, in their
    order."""
    names = displays(session, [u for g in rows for u in (g.white, g.black)])
    out = []
    for g in rows:
        to_move = None
        if g.status == BoardStatus.ACTIVE:
            to_move = names[(g.white, g.black)[_to_move(g.game, g.position)]]
        elif g.status == BoardStatus.WAITING:
            to_move = names[g.black if g.challenger == g.white else g.white]
        out.append(
            BoardSummary(
                board=g.board,
                game=g.game,
                variant=g.variant,
                white=names[g.white],
                black=names[g.black],
                status=BoardStatus(g.status),
                result=None if g.result is None else Result(g.result),
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
    rows = sorted(
        rating_rows(session, game, variant),
        key=lambda r: (r.game, r.variant, -r.rating, -r.games_played, r.userid),
    )
    names = displays(session, [r.userid for r in rows])
    glicko = glicko_standings(session, game, variant)
    out: list[RatingLine] = []
    rank = 0
    for i, r in enumerate(rows):
        if i == 0 or (r.game, r.variant) != (rows[i - 1].game, rows[i - 1].variant):
            rank = 0
        rank += 1
        found = glicko.get((r.game, r.variant, r.userid))
        out.append(
            RatingLine(
                game=r.game,
                variant=r.variant,
                rank=rank,
                player=names[r.userid],
                rating=elo.round_half_away(r.rating),
                games=r.games_played,
                provisional=r.games_played < elo.PROVISIONAL_GAMES,
                glicko=round(found.rating) if found is not None else None,
                deviation=round(found.deviation) if found is not None else None,
            )
        )
    return out


# -- for the command line: each its own read


def board(site: Site, number: int) -> Board:
    """Everything about a board, as a value; ``UnknownBoard`` if there is none."""
    with site.db.read() as s:
        return World(s, site.config, site.clock()).board(number)


def view(site: Site, number: int) -> BoardView:
    """What a board mail shows of a board now."""
    return board_view(board(site, number), site.clock())


def boards(
    site: Site,
    status: str | None = BoardStatus.ACTIVE,
    userid: str | None = None,
    game: str | None = None,
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
        found = load_accounts(s, all_userids(s))
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
