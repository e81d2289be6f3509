"""Queued and conditional moves: answers written in advance, played when the opponent moves.

A player waiting for his opponent may queue moves (``queue MOVE [if THEIRS]``);
the moment the opponent moves, the first that fits is played
(``pbm.usecases.moves.answer_from_queue``) and the rest are dropped.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from pbm.games import BadNotation, GameState, IllegalMove
from pbm.replies import Reply
from pbm.usecases.auth import Actor
from pbm.usecases.changes import BoardChange
from pbm.usecases.moves import acting, seat_in_play
from pbm.usecases.refusals import BadRequest, NotYourTurn
from pbm.usecases.text import note, wrap
from pbm.usecases.unit import Decision
from pbm.usecases.world import Queued, World

MAX_QUEUED = 20  # queued moves per player and board


@dataclass(frozen=True)
class Queue:
    """Queue ``move`` as the answer to the opponent's next move (only to ``if_move``, if given).

    ``move`` None forgets the player's queue on the board.
    """

    board: int
    move: str | None
    if_move: str | None = None

    def decide(self, world: World, actor: Actor | None) -> Decision:
        me = acting(actor)
        board = world.board(self.board)
        seat = seat_in_play(board, me)
        mine = [q for q in board.queue if q.userid == me.userid]
        title = f"{board.title()} - queued moves"
        if self.move is None:
            if not mine:
                raise BadRequest(f"You have no queued moves on board {board.number}.")
            after = replace(board, queue=tuple(q for q in board.queue if q.userid != me.userid))
            text = f"Your {len(mine)} queued move(s) on board {board.number} are forgotten."
            reply = note(me.account.email, title, text, board.number, counted=False)
            return Decision((reply,), (BoardChange(board, after),))
        state = board.state
        if state.to_move == seat:
            raise NotYourTurn(
                f"It is your turn on board {board.number}: send the move itself. Queue a move "
                "while you wait for your opponent."
            )
        if self.move.strip().lower() == "resign":
            raise BadRequest("Only moves can be queued, not resign.")
        if len(mine) >= MAX_QUEUED:
            raise BadRequest(
                f"You have {len(mine)} queued moves on board {board.number} already; "
                "that is the most."
            )
        them = board.name(board.player_at(1 - seat))
        _check(state, self.move, self.if_move, them)
        added = Queued(me.userid, self.move, self.if_move, world.now)
        after = replace(board, queue=(*board.queue, added))
        lines = wrap(
            f"Queued on board {board.number}. When {them} moves, the first of these that fits "
            "and is legal is played at once; the rest are dropped:"
        )
        for i, q in enumerate([*mine, added], start=1):
            cond = f"   if {them} plays {q.if_move}" if q.if_move else ""
            lines.append(f"  {i}. {q.move_text}{cond}")
        lines += [
            "",
            *wrap(f"Forget them: {board.game} queue {board.number} {me.display} PASSWORD clear"),
        ]
        reply = Reply(
            to=me.account.email,
            subject=title,
            body="\n".join(lines) + "\n",
            board=board.number,
            reply_as=me.userid,
            counted=False,
        )
        return Decision((reply,), (BoardChange(board, after),))


def _check(state: GameState, move: str, if_move: str | None, them: str) -> None:
    """Refuse a queued move that can be seen to be wrong already."""
    if if_move is not None:
        try:
            after, canonical = state.play(if_move)
        except IllegalMove as exc:
            raise BadRequest(f"{if_move} is not a move {them} can make now: {exc}") from None
        try:
            after.play(move)
        except IllegalMove as exc:
            raise BadRequest(f"After {them}'s {canonical}, {move} is not legal: {exc}") from None
        return
    legal = state.legal_moves()
    if legal:
        try:
            state.play(legal[0])[0].play(move)
        except BadNotation as exc:
            raise BadRequest(f"{move} is not a move: {exc}") from None
        except IllegalMove:
            pass  # it may well be legal after another reply
