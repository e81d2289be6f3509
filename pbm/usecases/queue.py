"""Conditional move trees: answers written in advance, played the moment the opponent moves.

A player waiting for his opponent gives lines (``queue B UID PW`` and a line after
``if`` on each line below it, or ``queue MOVE if THEIRS``), checked by the rules when
given and merged into his tree on the board (``pbm.usecases.trees``); ``queue ...
show`` shows it and ``queue ... clear`` forgets it. When the opponent moves, the tree's
answer to his move is played at once (``pbm.usecases.moves.answer_from_queue``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from pbm.model import Board, Queued
from pbm.refusals import BadRequest, NotYourTurn
from pbm.replies import MailKind, Reply
from pbm.usecases.auth import Actor
from pbm.usecases.changes import BoardChange
from pbm.usecases.moves import acting, seat_in_play
from pbm.usecases.text import wrap
from pbm.usecases.trees import (
    MAX_LINES,
    MAX_PLIES,
    Conflict,
    Names,
    Tree,
    checked_lines,
    merge_all,
)
from pbm.usecases.unit import Decision
from pbm.usecases.world import World

ADD, SHOW, CLEAR = "add", "show", "clear"


@dataclass(frozen=True)
class Queue:
    """Add ``lines`` to the acting player's tree on ``board`` (``what`` ``add``), show it
    (``show``) or forget it (``clear``)."""

    board: int
    lines: tuple[str, ...] = ()
    what: str = ADD

    def decide(self, world: World, actor: Actor | None) -> Decision:
        me = acting(actor)
        board = world.board(self.board)
        seat = seat_in_play(board, me)
        mine = next((q for q in board.queue if q.userid == me.userid), None)
        tree = Tree.from_json(mine.lines) if mine is not None else Tree()
        them = board.name(board.player_at(1 - seat))
        if self.what == SHOW:
            return Decision((_answer(board, me, tree, them, "Your conditional tree"),))
        if self.what == CLEAR:
            if mine is None:
                raise BadRequest(f"You have no conditional tree on board {board.number}.")
            after = replace(board, queue=tuple(q for q in board.queue if q is not mine))
            text = f"Your conditional tree on board {board.number} is forgotten."
            reply = _reply(board, me, "\n".join(wrap(text)) + "\n")
            return Decision((reply,), (BoardChange(board, after),))
        state = board.state
        if state.to_move == seat:
            raise NotYourTurn(
                f"It is your turn on board {board.number}: send the move itself. A "
                "conditional tree is given while you wait for your opponent."
            )
        if not self.lines:
            raise BadRequest(_HOW.format(game=board.game, board=board.number, me=me.display))
        names = Names(them, board.move_number)
        texts = _lines(self.lines)
        if len(texts) > MAX_LINES:  # refused before a move of them is played out
            raise BadRequest(
                f"A tree holds at most {MAX_LINES} lines; your mail gives {len(texts)}: "
                f"line {MAX_LINES + 1} is one too many."
            )
        try:
            given = checked_lines(board.rules, state, texts, names)
            merged = merge_all(tree, given)
        except Conflict as exc:
            raise BadRequest(str(exc)) from None
        stored = Queued(me.userid, merged.to_json(), world.now)
        kept = tuple(q for q in board.queue if q is not mine)
        after = replace(board, queue=(*kept, stored))
        reply = _answer(after, me, merged, them, "Your conditional tree now")
        return Decision((reply,), (BoardChange(board, after),))


_HOW = (
    "Give the lines of your tree after the command, one a line, each beginning with "
    "'if': {game} queue {board} {me} PASSWORD, then on the lines below it, say: if "
    "THEIR-MOVE then YOUR-MOVE if THEIR-MOVE then YOUR-MOVE. Or in one line: {game} "
    "queue {board} {me} PASSWORD YOUR-MOVE if THEIR-MOVE."
)


def _lines(given: Sequence[str]) -> list[str]:
    """The lines given, each once, in order, without empty ones."""
    return list(dict.fromkeys(line.strip() for line in given if line.strip()))


def _answer(board: Board, me: Actor, tree: Tree, them: str, lead: str) -> Reply:
    """The tree as indented text, and what it does."""
    if not tree:
        lines = wrap(f"You have no conditional tree on board {board.number}.")
    else:
        count = len(tree.lines)
        lines = wrap(f"{lead} on board {board.number} ({count} of {MAX_LINES} lines):")
        lines += tree.render(them)
        lines += [
            "",
            *wrap(
                f"When {them} plays a move your tree answers, your answer is played at once, "
                "costing no time on your clock, and what follows it in the tree stays for "
                f"{them}'s next move; a move off the tree drops it. Lines hold at most "
                f"{MAX_PLIES} moves."
            ),
        ]
    how = (
        f"Show it: {board.game} queue {board.number} {me.display} PASSWORD show (by reply: "
        "queue show). Forget it: ... clear (queue clear)."
    )
    lines += ["", *wrap(how)]
    return _reply(board, me, "\n".join(lines) + "\n")


def _reply(board: Board, me: Actor, body: str) -> Reply:
    return Reply(
        to=me.account.email,
        subject=f"{board.title()} - queued moves",
        body=body,
        board=board.number,
        reply_as=me.userid,
        kind=MailKind.BOARD,
    )
