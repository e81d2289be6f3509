"""Board mails: the replies that tell everyone on a board what happened, each player's
copy answerable by reply; no database.

``board_mails`` makes them from a board (``boardview.board_view``, then
``boardtext.render_board_mails``); ``audience`` says who reads a board's mail.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime

from pbm.model import Board
from pbm.replies import MailKind, Reply
from pbm.usecases.boardtext import render_board_mails
from pbm.usecases.boardview import board_view


def audience(board: Board) -> list[tuple[str | None, str]]:
    """(userid or None, address) of both players, then the followers."""
    out: list[tuple[str | None, str]] = [
        (uid, board.people[uid].email) for uid in board.players if uid in board.people
    ]
    for f in board.followers:
        if f.userid:
            if f.userid in board.people:
                out.append((f.userid, board.people[f.userid].email))
        elif f.email:
            out.append((None, f.email))
    return out


def board_mails(
    board: Board,
    now: datetime,
    headline: str = "",
    told: Mapping[str, Sequence[str]] | None = None,
) -> list[Reply]:
    """The board mail for every player and follower.

    ``told``: lines for one reader alone (by userid), above the rest (what
    became of his queued moves, say). Each player's copy carries his own
    reply address (``reply_as``), so the player to move can answer with just
    the move and the other with chat, undo, resign and the like.
    """
    view = board_view(board, now)
    readers = audience(board)
    seats = [board.seat_of(uid) if uid is not None else None for uid, _ in readers]
    names = [view.players[seat] if seat is not None else None for seat in seats]
    mails = render_board_mails(view, names, headline)
    told = told or {}
    return [
        Reply(
            to=address,
            subject=subject,
            body="\n".join([*told[uid], "", body]) if uid is not None and uid in told else body,
            board=board.number,
            reply_as=uid if seat is not None else None,
            kind=MailKind.BOARD if seat is not None else MailKind.FOLLOWER,
        )
        for (uid, address), seat, (subject, body) in zip(readers, seats, mails, strict=True)
    ]


def plays(board: Board, address: str) -> bool:
    """Whether ``address`` is a player's of ``board`` (its mail about it is never held back)."""
    return any(
        uid in board.people and board.people[uid].email.lower() == address.lower()
        for uid in board.players
    )
