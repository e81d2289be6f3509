"""Which boards the web site shows (``shown``, the rule ``pbm.store.pages`` keeps in SQL
too), and the link to a board's page that mail about it ends with when there is a site
(``web.base``: ``web.base_url``, else the listen address): never for a challenge not yet
accepted."""

from __future__ import annotations

from dataclasses import replace

from pbm.model import SHOWN, Board, BoardOf, BoardStatus
from pbm.replies import Reply
from pbm.usecases.world import World

LEAD = "On the web: "


def shown(board: Board) -> bool:
    """A board anyone may see: in play or played to its end (a challenge never accepted,
    a board cancelled before its first move: not; a handicap's stones are no move)."""
    cancelled = board.status == BoardStatus.CANCELLED
    return board.status in SHOWN or (cancelled and board.last_move_at is not None)


def board_url(base_url: str, number: int) -> str:
    return f"{base_url.rstrip('/')}/boards/{number}"


def linked(world: World, reply: Reply, board_of: BoardOf) -> Reply:
    """``reply`` with its board's web address as its last line, when the site shows the
    board. ``board_of``: the boards as the reply shows them."""
    base = world.config.web.base
    if not base or reply.board is None or reply.is_error or reply.attachments:
        return reply
    board = board_of(reply.board)
    if board is None or not shown(board):
        return reply
    line = LEAD + board_url(base, board.number)
    return replace(reply, body=f"{reply.body.rstrip()}\n\n{line}\n")
