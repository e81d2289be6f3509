"""Board commands: challenge, move, resign, claim, draw, undo, accept, reject, cancel, queue."""

from __future__ import annotations

from collections.abc import Callable

from pbm.commands.arguments import BOARD, MOVE, OPTIONS, PASSWORD, QUEUED, USERID, USERID1, USERID2
from pbm.commands.grammar import Args, Built, Command, Context
from pbm.usecases import challenges, moves, proposals, queue
from pbm.usecases.unit import Action

PLAYER = (BOARD, USERID, PASSWORD)  # who acts on which board: given by a reply address


def _challenge(args: Args, ctx: Context) -> Built:
    assert ctx.game is not None and args.userid is not None and args.userid2 is not None
    action = challenges.Challenge(
        ctx.game,
        args.userid,
        args.userid2,
        sender=ctx.sender,
        variant=args.variant,
        options=dict(args.options),
        nag_days=args.nag_days,
        forfeit_days=args.forfeit_days,
        comment=ctx.comment,
        time=args.time,
    )
    return action, None


def _move(args: Args, ctx: Context) -> Built:
    assert args.move is not None
    board = ctx.board(args)
    if args.move.lower() == "resign":
        return moves.Resign(board, ctx.comment), ctx.who(args)
    move = moves.Move(board, args.move, args.expect, ctx.comment, args.claim, ctx.message_id)
    return move, ctx.who(args)


def _queue(args: Args, ctx: Context) -> Built:
    move = None if args.clear else args.move
    return queue.Queue(ctx.board(args), move, args.if_move), ctx.who(args)


def _on_board(make: Callable[[int], Action]) -> Callable[[Args, Context], Built]:
    """``build`` of a command that is just a player acting on a board."""

    def build(args: Args, ctx: Context) -> Built:
        return make(ctx.board(args)), ctx.who(args)

    return build


def _resign(args: Args, ctx: Context) -> Built:
    return moves.Resign(ctx.board(args), ctx.comment), ctx.who(args)


COMMANDS = (
    Command(
        ("challenge",),
        (USERID1, USERID2, OPTIONS),
        "challenge a player to a new board (the rest of the mail goes with it); USERID1 "
        "moves first; it starts when the other accepts",
        _challenge,
        per_game=True,
    ),
    Command(
        ("move",),
        (*PLAYER, MOVE),
        "play MOVE (with #N: only as move N; MOVE claim: claim a draw after it)",
        _move,
        per_game=True,
        by_reply=True,
        reply_shown="MOVE[#N]",
        reply_note="or: move MOVE[#N]",
    ),
    Command(("resign",), PLAYER, "give up", _resign, per_game=True, by_reply=True),
    Command(
        ("undo",),
        PLAYER,
        "ask to take back your last move",
        _on_board(proposals.Undo),
        per_game=True,
        by_reply=True,
    ),
    Command(
        ("accept",),
        PLAYER,
        "accept a challenge; agree to your opponent's undo request or draw offer",
        _on_board(proposals.Accept),
        per_game=True,
        by_reply=True,
    ),
    Command(
        ("reject", "decline"),
        PLAYER,
        "decline a challenge; refuse an undo request or draw offer",
        _on_board(proposals.Reject),
        per_game=True,
        by_reply=True,
    ),
    Command(
        ("cancel",),
        PLAYER,
        "cancel a board (at once before any move, else when both ask)",
        _on_board(proposals.Cancel),
        per_game=True,
        by_reply=True,
    ),
    Command(
        ("draw",),
        PLAYER,
        "offer a draw (games with draws)",
        _on_board(proposals.OfferDraw),
        per_game=True,
        by_reply=True,
    ),
    Command(
        ("claim",),
        PLAYER,
        "claim a draw the rules allow (threefold repetition...)",
        _on_board(moves.Claim),
        per_game=True,
        by_reply=True,
    ),
    Command(
        ("queue",),
        (*PLAYER, QUEUED),
        "a move played the moment your opponent moves (only if he plays OPPONENT-MOVE); "
        "several are alternatives, in order; clear: forget them",
        _queue,
        per_game=True,
        by_reply=True,
        note="or: ... clear",
        reply_note="or: queue clear",
    ),
)
