"""What the correspondence comforts add to a board mail as it is written (after the
decision, as ``weblinks.linked`` adds the board's page): the board that waits for its
reader next, his calendar when he reads a digest, the players' Glicko-2 ratings at a
game's end."""

from __future__ import annotations

from dataclasses import replace

from pbm.model import Board, BoardOf, BoardStatus
from pbm.replies import MailKind, Reply
from pbm.store.digests import digest_readers
from pbm.store.glicko import standings
from pbm.usecases.glicko_now import shown, standing_now
from pbm.usecases.text import wrap
from pbm.usecases.waiting import with_next
from pbm.usecases.world import World

RATINGS_LEAD = "Ratings ("  # the Elo line of a game's last board mail (``boardtext``)


def noted(world: World, reply: Reply, sender: str | None, board_of: BoardOf) -> Reply:
    """``reply`` with what the comforts add to it (nothing to a mail about no board)."""
    if reply.board is None:
        return reply
    reply = with_next(world, reply, sender, board_of)
    reply = with_glicko(world, reply, board_of)
    return with_calendar(world, reply)


def with_calendar(world: World, reply: Reply) -> Reply:
    """A board mail to a player who reads a digest, with where his deadlines are as a
    calendar (when the site has a web address)."""
    base = world.config.web.base_url
    if not base or reply.kind is not MailKind.BOARD or reply.reply_as is None:
        return reply
    if reply.reply_key is not None or not digest_readers(world.session, [reply.reply_as]):
        return reply
    url = f"{base.rstrip('/')}/players/{reply.reply_as}/deadlines.ics"
    return replace(reply, body=f"{reply.body.rstrip()}\n\nYour deadlines in a calendar: {url}\n")


def with_glicko(world: World, reply: Reply, board_of: BoardOf) -> Reply:
    """A game's last board mail, with both players' Glicko-2 ratings under their Elo
    changes: as they stand now; the game counts in them when its day is over."""
    board = board_of(reply.board) if reply.board is not None else None
    if board is None or board.status != BoardStatus.FINISHED or RATINGS_LEAD not in reply.body:
        return reply
    if board.ended_at != world.now:
        return reply  # a game that ended before (a show, a history): its day is over
    head, found, tail = reply.body.partition(RATINGS_LEAD)
    paragraph, gap, rest = tail.partition("\n\n")
    line = glicko_line(world, board)
    return replace(reply, body=f"{head}{found}{paragraph}\n{line}{gap}{rest}")


def glicko_line(world: World, board: Board) -> str:
    """``Glicko-2: alice 1500 (RD 350), bob ...`` for a finished board's players."""
    found = standings(world.session, board.game, board.variant, board.players)
    parts = [
        f"{board.name(uid)} "
        + shown(standing_now(found.get((board.game, board.variant, uid)), world.now))
        for uid in board.players
    ]
    text = f"Glicko-2: {', '.join(parts)}; this game counts in them once its day (UTC) is over."
    return "\n".join(wrap(text))
