"""The correspondence comforts' commands: notify (a digest), next (the most urgent board)."""

from __future__ import annotations

from pbm.commands.arguments import NOTIFY, PASSWORD, USERID
from pbm.commands.grammar import Args, Built, Command, Context
from pbm.usecases import digests, nextgame


def _notify(args: Args, ctx: Context) -> Built:
    assert args.notify is not None
    return digests.SetNotify(args.notify), ctx.who(args)


def _next(args: Args, ctx: Context) -> Built:
    return nextgame.Next(), ctx.who(args)


COMMANDS = (
    Command(
        ("notify",),
        (USERID, PASSWORD, NOTIFY),
        "board mails as they happen (each, the default), or one mail at these times a "
        "day (digest 08:00 Europe/Berlin) listing the boards that wait for your move",
        _notify,
    ),
    Command(
        ("next",),
        (USERID, PASSWORD),
        "the board mail of your most urgent board (the least time left), to answer by reply",
        _next,
    ),
)
