"""Talking and following: chat, subscribe, unsubscribe."""

from __future__ import annotations

from pbm import verbs
from pbm.commands.arguments import BOARD, MESSAGE, PASSWORD, USERID
from pbm.commands.grammar import Args, Built, Context, reply_command
from pbm.usecases import talk

PLAYER = (BOARD, USERID, PASSWORD)


def _chat(args: Args, ctx: Context) -> Built:
    # In a reply the message may begin on the command's own line ("chat Good luck!").
    text = f"{args.message or ''}\n{ctx.comment}".strip("\n")
    return talk.Chat(ctx.board(args), text), ctx.who(args)


def _subscribe(args: Args, ctx: Context) -> Built:
    return talk.Subscribe(ctx.board(args)), ctx.who(args)


def _unsubscribe(args: Args, ctx: Context) -> Built:
    return talk.Unsubscribe(ctx.board(args)), ctx.who(args)


COMMANDS = (
    reply_command(
        verbs.CHAT,
        PLAYER,
        _chat,
        reply_args=(MESSAGE,),
        note="the message is the rest of the mail, not this line",
        reply_note="the message: the rest of this line and of the mail",
    ),
    reply_command(verbs.SUBSCRIBE, PLAYER, _subscribe),
    reply_command(verbs.UNSUBSCRIBE, PLAYER, _unsubscribe),
)
