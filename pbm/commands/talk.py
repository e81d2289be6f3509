"""Talking and following: chat, subscribe, unsubscribe."""

from __future__ import annotations

from pbm.commands.arguments import BOARD, MESSAGE, PASSWORD, USERID
from pbm.commands.grammar import Args, Built, Command, Context
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
    Command(
        ("chat",),
        PLAYER,
        "send the rest of the mail to the players and followers of the board",
        _chat,
        per_game=True,
        by_reply=True,
        reply_args=(MESSAGE,),
        note="the message is the rest of the mail, not this line",
        reply_note="the message: the rest of this line and of the mail",
    ),
    Command(
        ("subscribe",),
        PLAYER,
        "follow a board: get every board mail",
        _subscribe,
        per_game=True,
        by_reply=True,
    ),
    Command(
        ("unsubscribe",),
        PLAYER,
        "stop following it",
        _unsubscribe,
        per_game=True,
        by_reply=True,
    ),
)
