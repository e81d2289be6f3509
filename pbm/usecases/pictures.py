"""Which mails show the board as a picture, and from which side.

Every mail about a board (a board mail, a ``show``, ``history`` or ``moves``
answer, the end of a game, a reminder, an error about the board) shows its
position in its HTML part (``pbm.mail.html``), from its reader's seat, in
place of the ASCII diagram where the text has one; one picture a mail. A
player who chose plain text (``format text``) gets none. Here the mail only
says which picture (``Reply.picture``); the mail side draws it.
"""

from __future__ import annotations

import functools
from dataclasses import replace

from pbm import games
from pbm.games import picture
from pbm.replies import Picture, Reply
from pbm.usecases.boardmail import board_view, diagram, ending
from pbm.usecases.readers import FOLLOW
from pbm.usecases.world import BoardOf, World


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
    last = board.moves[-1].notation if board.moves else ""
    alt = (
        f"{board.title()}: {board.name(board.white)} (White) vs {board.name(board.black)} "
        f"(Black), after move {board.move_number(board.ply) if board.ply else 0}"
    )
    ended = None
    if board.status not in ("active", "waiting"):
        ended = ending(board_view(board, world.now))
    found = diagram(board.game, board.position, seat, ended)
    shown = found if found and found in reply.body else ""
    return replace(reply, picture=Picture(board.game, board.position, seat or 0, last, alt, shown))


@functools.cache
def draws_pictures(game: str) -> bool:
    """Whether ``game`` draws its positions (the optional ``GameState.picture``)."""
    return picture(games.get(game).new(), 0, "", "") is not None
