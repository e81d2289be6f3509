"""A game's mails form one thread in a mail client: one subject for the whole game.

Mail clients thread by References (Thunderbird, Apple Mail) and by subject
(Gmail): every mail about a board is sent with the board's one subject,
``Accasta Board 1: alice vs bob`` (``Reply.thread``), and says what it is
about on its first line (its own subject: ``Accasta Board 1 - bob to
move``); the mail side writes both and adds the board's thread root to
``References`` (``pbm.mail.message``).
"""

from __future__ import annotations

from dataclasses import replace

from pbm.replies import Reply
from pbm.usecases.refusals import UnknownBoard
from pbm.usecases.world import Board, World


def thread_subject(board: Board) -> str:
    """The one subject of every mail about ``board``."""
    return f"{board.title()}: {board.name(board.white)} vs {board.name(board.black)}"


def threaded(world: World, reply: Reply) -> Reply:
    """``reply`` in its board's thread: the board's subject, its own on the first line."""
    if reply.board is None:
        return reply
    try:
        board = world.board(reply.board)
    except UnknownBoard:
        return reply
    return replace(reply, thread=thread_subject(board))
