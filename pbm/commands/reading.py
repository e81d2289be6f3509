"""Reading commands: show (board), history, moves, record, games, ratings."""

from __future__ import annotations

from pbm.commands.arguments import BOARD, OPTIONAL_USERID, USERID
from pbm.commands.grammar import Args, Built, Command, Context
from pbm.usecases import reading


def _show(args: Args, ctx: Context) -> Built:
    return reading.Show(ctx.board(args), ctx.sender), None


def _history(args: Args, ctx: Context) -> Built:
    return reading.History(ctx.board(args), ctx.sender), None


def _moves(args: Args, ctx: Context) -> Built:
    return reading.LegalMoves(ctx.board(args), ctx.sender), None


def _record(args: Args, ctx: Context) -> Built:
    return reading.Records(ctx.board(args), ctx.sender), None


def _games(args: Args, ctx: Context) -> Built:
    return reading.ActiveBoards(ctx.sender, args.userid, ctx.game), None


def _ratings(args: Args, ctx: Context) -> Built:
    assert ctx.game is not None
    return reading.Ratings(ctx.sender, ctx.game), None


COMMANDS = (
    Command(("games",), (USERID,), "a player's active boards", _games),
    Command(
        ("show", "board"),
        (BOARD,),
        "the current diagram",
        _show,
        per_game=True,
        by_reply=True,
    ),
    Command(
        ("history",),
        (BOARD,),
        "the move list with comments",
        _history,
        per_game=True,
        by_reply=True,
    ),
    Command(("moves",), (BOARD,), "every legal move", _moves, per_game=True, by_reply=True),
    Command(
        ("record", "pgn"),
        (BOARD,),
        "the game's record (text, JSON, PGN for chess) as files",
        _record,
        per_game=True,
        by_reply=True,
    ),
    Command(
        ("games",), (OPTIONAL_USERID,), "active boards of G (of a player)", _games, per_game=True
    ),
    Command(("ratings",), (), "the rating list of G", _ratings, per_game=True),
)
