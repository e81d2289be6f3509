"""Mail about a board links to its page on the web site, when the site has an address
(``web.base_url``): a board in play or played, never a challenge not yet accepted."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

from pbm.replies import Reply
from pbm.usecases.refusals import UnknownBoard
from pbm.usecases.world import Board, World

LEAD = "On the web: "


def board_url(base_url: str, number: int) -> str:
    return f"{base_url.rstrip('/')}/boards/{number}"


def linked(world: World, reply: Reply, decided: Mapping[int, Board]) -> Reply:
    """``reply`` with its board's web address as its last line, when it has one.
    ``decided``: the boards as the decision left them."""
    base = world.config.web.base_url
    if not base or reply.board is None or reply.is_error or reply.attachments:
        return reply
    try:
        board = decided.get(reply.board) or world.board(reply.board)
    except UnknownBoard:
        return reply
    if board.status not in ("active", "finished"):
        return reply
    line = LEAD + board_url(base, board.number)
    return replace(reply, body=f"{reply.body.rstrip()}\n\n{line}\n")
