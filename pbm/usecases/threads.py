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

from pbm.model import Board, BoardOf
from pbm.replies import Reply


def thread_subject(board: Board) -> str:
    """The one subject of every mail about ``board``."""
    return f"{board.title()}: {board.name(board.white)} vs {board.name(board.black)}"


def threaded(reply: Reply, board_of: BoardOf) -> Reply:
    """``reply`` in its board's thread: the board's subject, its own on the first line.
    ``board_of``: the boards as the reply shows them (a board just written is not read
    again for its name)."""
    board = board_of(reply.board) if reply.board is not None else None
    if board is None:
        return reply
    return replace(reply, thread=thread_subject(board))
