"""What the read-only web site shows (``pbm.web``): public boards, players, ratings.

Only what anyone may see: boards in play or played (never a challenge that
was not accepted), display names and userids of confirmed accounts, moves
with their public comments, results and ratings. Never an address, a
password, a token, a chat, or an account that is not confirmed. Nothing here
writes.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

import sqlalchemy as sa
from sqlmodel import Session

from pbm.usecases.accounts import USERID
from pbm.usecases.queries import BoardSummary, RatingLine, rating_lines, summaries
from pbm.usecases.refusals import UnknownBoard
from pbm.usecases.site import Site
from pbm.usecases.world import PLAYERS, RATINGS, Board, World

PAGE_SIZE = 50
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
class PlayerPage:
    userid: str
    display: str
    active: list[BoardSummary]
    finished: list[BoardSummary]
    ratings: list[RatingLine]


def _public(board: Board) -> bool:
    """A board anyone may see: in play or ended after play began."""
    return board.status in ("active", "finished") or (board.status == "cancelled" and board.ply > 0)


def board(site: Site, number: int) -> Board:
    """A public board, everything about it; ``NotShown`` if there is none."""
    if not 0 < number <= MAX_NUMBER:
        raise NotShown(number)
    with site.db.read() as s:
        try:
            found = World(s, site.config, site.clock()).board(number)
        except UnknownBoard:
            raise NotShown(number) from None
    if not _public(found):
        raise NotShown(number)
    return found


def position_at(board: Board, ply: int) -> str:
    """The board's position after its ``ply``-th turn (0: the start)."""
    if not 0 <= ply <= board.ply or ply > len(board.moves):
        raise NotShown(ply)
    return board.moves[ply].position_before if ply < len(board.moves) else board.position


def _ordered(session: Session, status: str) -> list[BoardSummary]:
    found = [b for b in summaries(session, status) if status != "cancelled" or b.ply > 0]
    moment = datetime.min

    def latest(b: BoardSummary) -> tuple[datetime, int]:
        return ((b.last_move_at or b.created_at).replace(tzinfo=None) or moment, b.board)

    return sorted(found, key=latest, reverse=True)


def front(site: Site, page: int = 1) -> FrontPage:
    """Active boards, newest move first, ``PAGE_SIZE`` a page; the latest finished ones."""
    page = max(page, 1)
    with site.db.read() as s:
        active = _ordered(s, "active")
        finished = _ordered(s, "finished")[:PAGE_SIZE]
    start = (page - 1) * PAGE_SIZE
    return FrontPage(
        active[start : start + PAGE_SIZE], finished, page, len(active) > start + PAGE_SIZE
    )


def player(site: Site, userid: str) -> PlayerPage:
    """A confirmed player's boards and ratings; ``NotShown`` for anyone else."""
    uid = userid.lower()
    if not USERID.match(uid):
        raise NotShown(userid)
    with site.db.read() as s:
        row = s.execute(
            sa.select(PLAYERS.c.userid, PLAYERS.c.display).where(
                PLAYERS.c.userid == uid, PLAYERS.c.status == "active"
            )
        ).first()
        if row is None:
            raise NotShown(userid)
        boards = summaries(s, "all", uid)
        rated = {
            (r.game, r.variant)
            for r in s.execute(
                sa.select(RATINGS.c.game, RATINGS.c.variant).where(RATINGS.c.userid == uid)
            )
        }
        ratings = [
            line
            for game, variant in sorted(rated)
            for line in rating_lines(s, game, variant)
            if line.player == row.display
        ]
    active = [b for b in boards if b.status == "active"]
    ended = [b for b in boards if b.status == "finished" or (b.status == "cancelled" and b.ply)]
    return PlayerPage(str(row.userid), str(row.display), active, ended[::-1], ratings)


def ratings(site: Site) -> list[RatingLine]:
    """Every rating table, by game and variant, best first."""
    with site.db.read() as s:
        return rating_lines(s, None, None)


def archive(
    site: Site,
    game: str | None = None,
    variant: str | None = None,
    player: str | None = None,
    since: datetime | None = None,
    until: datetime | None = None,
) -> list[BoardSummary]:
    """Finished games, the latest first, filtered."""
    with site.db.read() as s:
        found = _ordered(s, "finished")
    if game:
        found = [b for b in found if b.game == game.lower()]
    if variant:
        found = [b for b in found if b.variant == variant.lower()]
    if player:
        who = player.lower()
        found = [b for b in found if who in (b.white.lower(), b.black.lower())]
    if since is not None:
        found = [b for b in found if (b.last_move_at or b.created_at).date() >= since.date()]
    if until is not None:
        found = [b for b in found if (b.last_move_at or b.created_at).date() <= until.date()]
    return found
