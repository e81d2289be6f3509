"""Which mails show the board as a picture, and from which side.

Every mail about a board (a board mail, a ``show``, ``history`` or ``moves``
answer, the end of a game, a reminder, an error about the board) shows its
position in its HTML part (``pbm.mail.html``), from its reader's seat, in
place of the ASCII diagram where the text has one; one picture a mail. A
player who chose plain text (``format text``) gets none. Here the mail only
says which picture (``Reply.picture``); the mail side draws it.
"""

from __future__ import annotations

from dataclasses import replace

from pbm.games import picture
from pbm.replies import Picture, Reply
from pbm.usecases.boardmail import board_view, ending
from pbm.usecases.readers import FOLLOW
from pbm.usecases.refusals import UnknownBoard
from pbm.usecases.world import World


def pictured(world: World, reply: Reply) -> Reply:
    """``reply`` with the picture of its board for its reader, unless he reads plain text
    or the game draws none. Call after ``readers.addressed`` (it names the reader)."""
    if reply.board is None or reply.picture is not None or reply.attachments:
        return reply
    try:
        board = world.board(reply.board)
    except UnknownBoard:
        return reply
    reader = board.people.get(reply.reply_as or "")
    if reader is not None and reader.format == "text":
        return reply
    if reader is None and any(
        a.email.lower() == reply.to.lower() and a.format == "text" for a in board.people.values()
    ):
        return reply
    state = board.state
    seat = board.seat_of(reply.reply_as or "") if reply.reply_key != FOLLOW else None
    last = board.moves[-1].notation if board.moves else ""
    alt = (
        f"{board.title()}: {board.name(board.white)} (White) vs {board.name(board.black)} "
        f"(Black), after move {board.move_number(board.ply) if board.ply else 0}"
    )
    if picture(state, seat or 0, alt, last) is None:
        return reply
    view = board_view(board, world.now)
    ended = None if board.status in ("active", "waiting") else ending(view)
    diagram = _diagram_in(reply.body, state.diagram(seat, ended))
    return replace(
        reply, picture=Picture(board.game, board.position, seat or 0, last, alt, diagram)
    )


def _diagram_in(body: str, *diagrams: str) -> str:
    """The ASCII diagram as ``body`` has it ("" when it has none)."""
    for diagram in diagrams:
        lines = "\n".join(line.rstrip() for line in diagram.rstrip("\n").splitlines())
        if lines and lines in body:
            return lines
    return ""
