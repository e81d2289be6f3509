"""Talking on a board and following one: chat, subscribe, unsubscribe."""

from __future__ import annotations

from dataclasses import dataclass, replace

from pbm.model import Follower
from pbm.refusals import BadRequest, NotAPlayer
from pbm.replies import MailKind, Reply
from pbm.store.answer_counts import boards_followed
from pbm.usecases.auth import Actor
from pbm.usecases.boardmail import audience
from pbm.usecases.boardtext import render_board_mail
from pbm.usecases.boardview import board_view
from pbm.usecases.changes import BoardChange
from pbm.usecases.moves import MAX_COMMENT_BYTES, acting
from pbm.usecases.readers import CHAT
from pbm.usecases.text import note, wrap
from pbm.usecases.unit import Decision
from pbm.usecases.world import World


@dataclass(frozen=True)
class Chat:
    """Send ``text`` to everyone else on the board (players and followers)."""

    board: int
    text: str

    def decide(self, world: World, actor: Actor | None) -> Decision:
        me = acting(actor)
        if not self.text.strip():
            raise BadRequest("A chat needs a message: put it in the body of the mail.")
        if len(self.text.encode()) > MAX_COMMENT_BYTES:
            raise BadRequest(
                f"A chat holds at most {MAX_COMMENT_BYTES // 1024} KB: it goes to everyone on "
                "the board. Send a shorter one."
            )
        board = world.board(self.board)
        readers = audience(board)
        if all(uid != me.userid for uid, _ in readers):
            raise NotAPlayer(f"{me.display} neither plays nor follows board {board.number}.")
        subject = f"{board.title()} - chat from {me.display}"
        body = "\n".join(
            [f"{me.display} writes on board {board.number}:", "", *wrap(self.text.strip())]
        )
        replies = [
            Reply(
                to=address,
                subject=subject,
                body=body + "\n",
                board=board.number,
                reply_as=uid,  # a reply is chat back, or a command (``readers.CHAT``)
                reply_key=CHAT if uid else None,
                kind=MailKind.BOARD if board.seat_of(uid or "") is not None else MailKind.FOLLOWER,
            )
            for uid, address in readers
            if uid != me.userid
        ]
        return Decision(replies)


@dataclass(frozen=True)
class Subscribe:
    """Follow a board: get every board mail. The current one comes at once."""

    board: int

    def decide(self, world: World, actor: Actor | None) -> Decision:
        me = acting(actor)
        board = world.board(self.board)
        if board.seat_of(me.userid) is not None:
            raise BadRequest(f"You play on board {board.number}; you get its mail already.")
        if any(f.userid == me.userid for f in board.followers):
            raise BadRequest(f"You already follow board {board.number}.")
        most = world.config.limits.boards_followed
        if boards_followed(world.session, me.userid) >= most:
            raise BadRequest(
                f"You follow {most} boards in play already, the most at once: unsubscribe "
                "from one first."
            )
        after = replace(
            board,
            followers=(*board.followers, Follower(me.userid, None, world.now)),
            people={**board.people, me.userid: me.account},
        )
        view = board_view(after, world.now)
        subject, body = render_board_mail(view, None, f"You now follow board {board.number}.")
        reply = Reply(
            to=me.account.email,
            subject=subject,
            body=body,
            board=board.number,
            kind=MailKind.FOLLOWER,
        )
        return Decision((reply,), (BoardChange(board, after),))


@dataclass(frozen=True)
class Unsubscribe:
    """Stop following a board."""

    board: int

    def decide(self, world: World, actor: Actor | None) -> Decision:
        me = acting(actor)
        board = world.board(self.board)
        if not any(f.userid == me.userid for f in board.followers):
            raise BadRequest(f"You do not follow board {board.number}.")
        after = replace(board, followers=tuple(f for f in board.followers if f.userid != me.userid))
        told = note(
            me.account.email,
            f"{board.title()} - unsubscribed",
            f"You no longer follow board {board.number}.",
            board.number,
            kind=MailKind.NOTICE,
        )
        return Decision((told,), (BoardChange(board, after),))
