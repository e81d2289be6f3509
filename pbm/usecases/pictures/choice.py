"""Which mails show the board as a picture, and from which side.

Every mail about a board (a board mail, a ``show``, ``history`` or ``moves``
answer, the end of a game, a reminder, an error about the board) shows its
position in its HTML part (``pbm.mail.html``), from its reader's seat, in
place of the ASCII diagram where the text has one, with the game's legend
under it (the diagram's own speaks of letters); one picture a mail. A
player who chose plain text (``format text``) gets none. Here the mail only
says which picture (``Reply.picture``); the mail side draws it.
"""

from __future__ import annotations

import functools
from dataclasses import replace
from datetime import datetime

from pbm import games
from pbm.games import picture
from pbm.model import OPEN, Board, BoardOf
from pbm.replies import Picture, Reply
from pbm.usecases.boardtext import diagram, ending
from pbm.usecases.boardview import board_view
from pbm.usecases.readers import FOLLOW
from pbm.usecases.world import World


def pictured(world: World, reply: Reply, board_of: BoardOf) -> Reply:
    """``reply`` with the picture of its board for its reader, unless he reads plain text
    or the game draws none. Call after ``readers.addressed`` (it names the reader).
    ``board_of``: the boards as the reply shows them."""
    if reply.board is None or reply.picture is not None or reply.attachments:
        return reply
    board = board_of(reply.board)
    if board is None:
        return reply
    reader = board.people.get(reply.reply_as or "")
    if reader is not None and reader.format == "text":
        return reply
    if reader is None and any(
        a.email.lower() == reply.to.lower() and a.format == "text" for a in board.people.values()
    ):
        return reply
    if not draws_pictures(board.game):
        return reply
    seat = board.seat_of(reply.reply_as or "") if reply.reply_key != FOLLOW else None
    return replace(reply, picture=board_picture(board, seat, reply.body, world.now))


def board_picture(board: Board, seat: int | None, text: str, now: datetime) -> Picture:
    """The picture of ``board`` from ``seat`` (None: White's, as a follower sees it), in
    place of its diagram in ``text`` when ``text`` holds that diagram."""
    last = board.moves[-1].notation if board.moves else ""
    alt = (
        f"{board.title()}: {board.name(board.white)} (White) vs {board.name(board.black)} "
        f"(Black), after move {board.move_number(board.ply) if board.ply else 0}"
    )
    ended = None
    if board.status not in OPEN:
        ended = ending(board_view(board, now))
    found = diagram(board.game, board.position, seat, ended)
    shown = found if found and found in text else ""
    words = board.legend(seat or 0)
    return Picture(board.game, board.position, seat or 0, last, alt, shown, words)


@functools.cache
def draws_pictures(game: str) -> bool:
    """Whether ``game`` draws its positions (the optional ``GameState.picture``)."""
    return picture(games.get(game).new(), 0, "", "") is not None
