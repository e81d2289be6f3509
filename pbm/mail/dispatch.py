"""Mail commands -> service calls: the one thin module between the command language and
the service layer (the CLI has its own, ``pbm.cli.admin``)."""

from __future__ import annotations

from dataclasses import dataclass

from pbm import commands as c
from pbm import service as svc
from pbm.replies import Reply


@dataclass(frozen=True, slots=True)
class Context:
    """Who sent the command and what came with it."""

    sender: str
    message_id: str | None
    comment: str
    token: str | None = None  # set in reply mode: the verified reply token
    plan: svc.MovePlan | None = None  # a move command's plan (``plan``), made beforehand


def _auth(ctx: Context, password: str) -> svc.Auth:
    # In reply mode the token address proves who the sender is; the password
    # slot of the bound command is only a filler.
    if ctx.token is not None:
        return svc.ReplyToken(ctx.token)
    return svc.Password(password)


def plan(service: svc.Service, cmd: c.Command, ctx: Context) -> svc.MovePlan | None:
    """Work out a move command ahead, outside the write lock (``Service.plan_move``)."""
    if not isinstance(cmd, c.Move):
        return None
    return service.plan_move(
        cmd.board,
        cmd.userid,
        _auth(ctx, cmd.password),
        cmd.move_text,
        comment=ctx.comment,
        expected_move=cmd.expect_ply,
    )


def run(service: svc.Service, cmd: c.Command, ctx: Context) -> list[Reply]:
    """Carry out one command; raises ``ServiceError`` when it is refused."""
    common = {"sender": ctx.sender, "message_id": ctx.message_id}
    match cmd:
        case c.Signup(userid, password, email):
            return service.signup(userid, password, email or ctx.sender, message_id=ctx.message_id)
        case c.Password(userid, password, new_password):
            return service.change_password(
                userid, svc.Password(password), new_password, message_id=ctx.message_id
            )
        case c.Address(userid, password, email):
            return service.change_address(
                userid, svc.Password(password), email, message_id=ctx.message_id
            )
        case c.Help(game):
            return service.help(game, **common)
        case c.Games(userid, game):
            return service.games(userid, game=game, **common)
        case c.Challenge():
            return service.challenge(
                cmd.game,
                cmd.userid1,
                cmd.userid2,
                variant=cmd.variant,
                options=cmd.options,
                nag_days=cmd.nag_days,
                forfeit_days=cmd.forfeit_days,
                sender=ctx.sender,
                message_id=ctx.message_id,
            )
        case c.Move():
            auth = _auth(ctx, cmd.password)
            if cmd.move_text.lower() == "resign":
                return service.resign(cmd.board, cmd.userid, auth, comment=ctx.comment, **common)
            return service.move(
                cmd.board,
                cmd.userid,
                auth,
                cmd.move_text,
                comment=ctx.comment,
                expected_move=cmd.expect_ply,
                sender=ctx.sender,
                message_id=ctx.message_id,
                plan=ctx.plan,
            )
        case c.Resign():
            return service.resign(
                cmd.board, cmd.userid, _auth(ctx, cmd.password), comment=ctx.comment, **common
            )
        case c.Undo():
            return service.undo(cmd.board, cmd.userid, _auth(ctx, cmd.password), **common)
        case c.Accept():
            return service.accept_undo(cmd.board, cmd.userid, _auth(ctx, cmd.password), **common)
        case c.Reject():
            return service.reject_undo(cmd.board, cmd.userid, _auth(ctx, cmd.password), **common)
        case c.Cancel():
            return service.cancel(cmd.board, cmd.userid, _auth(ctx, cmd.password), **common)
        case c.Chat():
            return service.chat(
                cmd.board, cmd.userid, _auth(ctx, cmd.password), ctx.comment, **common
            )
        case c.Subscribe():
            return service.subscribe(cmd.board, cmd.userid, _auth(ctx, cmd.password), **common)
        case c.Unsubscribe():
            return service.unsubscribe(cmd.board, cmd.userid, _auth(ctx, cmd.password), **common)
        case c.Show(_, board):
            return service.show(board, **common)
        case c.History(_, board):
            return service.history(board, **common)
        case c.Moves(_, board):
            return service.legal_moves(board, **common)
        case c.Vacation(userid, password, days):
            return service.vacation(userid, svc.Password(password), days, **common)
        case c.Queue():
            return service.queue(
                cmd.board,
                cmd.userid,
                _auth(ctx, cmd.password),
                cmd.move_text,
                cmd.if_move,
                **common,
            )
        case c.Ratings(game):
            return service.ratings(game, **common)
    raise svc.BadRequest(
        f"The command {type(cmd).__name__.lower()} is not available on this server yet."
    )
