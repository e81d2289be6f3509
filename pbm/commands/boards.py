"""Board commands: challenge, move, resign, claim, draw, undo, accept, reject, cancel, queue,
rematch."""

from __future__ import annotations

from collections.abc import Callable

from pbm import verbs
from pbm.commands.arguments import BOARD, MOVE, OPTIONS, PASSWORD, QUEUED, USERID, USERID1, USERID2
from pbm.commands.grammar import Args, Built, Command, Context, reply_command
from pbm.usecases import challenges, moves, proposals, queue, rematch
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
    board, who = ctx.board(args), ctx.who(args)
    if args.clear or args.show:
        return queue.Queue(board, what=queue.CLEAR if args.clear else queue.SHOW), who
    # The lines of a tree: the rest of the command's line, and those below it that
    # begin with "if" (the rest of the mail is a comment).
    below = [ln.strip() for ln in ctx.comment.splitlines() if ln.strip().lower().startswith("if ")]
    lines = ([args.move] if args.move else []) + below
    return queue.Queue(board, tuple(lines)), who


def _rematch(args: Args, ctx: Context) -> Built:
    return rematch.Rematch(ctx.board(args), ctx.comment), ctx.who(args)


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
    reply_command(verbs.MOVE, (*PLAYER, MOVE), _move, reply_note="or: move MOVE[#N]"),
    reply_command(verbs.RESIGN, PLAYER, _resign),
    reply_command(verbs.UNDO, PLAYER, _on_board(proposals.Undo)),
    reply_command(verbs.ACCEPT, PLAYER, _on_board(proposals.Accept)),
    reply_command(verbs.REJECT, PLAYER, _on_board(proposals.Reject)),
    reply_command(verbs.CANCEL, PLAYER, _on_board(proposals.Cancel)),
    reply_command(verbs.DRAW, PLAYER, _on_board(proposals.OfferDraw)),
    reply_command(verbs.CLAIM, PLAYER, _on_board(moves.Claim)),
    reply_command(verbs.QUEUE, (*PLAYER, QUEUED), _queue),
    reply_command(verbs.REMATCH, PLAYER, _rematch),
)
