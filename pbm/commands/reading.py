"""Reading commands: show (board), history, moves, record, games, ratings."""

from __future__ import annotations

from pbm import verbs
from pbm.commands.arguments import BOARD, OPTIONAL_USERID, USERID
from pbm.commands.grammar import Args, Built, Command, Context, reply_command
from pbm.usecases import nextgame
from pbm.usecases.queries import reading


def _show(args: Args, ctx: Context) -> Built:
    return reading.Show(ctx.board(args), ctx.sender), None


def _history(args: Args, ctx: Context) -> Built:
    return reading.History(ctx.board(args), ctx.sender), None


def _moves(args: Args, ctx: Context) -> Built:
    return reading.LegalMoves(ctx.board(args), ctx.sender), None


def _record(args: Args, ctx: Context) -> Built:
    return reading.Records(ctx.board(args), ctx.sender), None


def _games(args: Args, ctx: Context) -> Built:
    if args.userid is not None and ctx.game is None:  # games UID: the next game first
        return nextgame.PlayerGames(ctx.sender, args.userid), None
    return reading.ActiveBoards(ctx.sender, args.userid, ctx.game), None


def _ratings(args: Args, ctx: Context) -> Built:
    assert ctx.game is not None
    return reading.Ratings(ctx.sender, ctx.game), None


COMMANDS = (
    Command(
        ("games",),
        (USERID,),
        "a player's boards: those waiting for his move first, by least time left, "
        "then the rest, his challenges and those that lapsed",
        _games,
    ),
    reply_command(verbs.SHOW, (BOARD,), _show),
    reply_command(verbs.HISTORY, (BOARD,), _history),
    reply_command(verbs.MOVES, (BOARD,), _moves),
    reply_command(verbs.RECORD, (BOARD,), _record),
    Command(
        ("games",), (OPTIONAL_USERID,), "active boards of G (of a player)", _games, per_game=True
    ),
    Command(("ratings",), (), "the rating list of G", _ratings, per_game=True),
)
