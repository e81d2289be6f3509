"""Tournament and league commands: tournament list/show/join/leave, league join/leave,
and their help (``help tournament``, ``help league``), which says the leaving rule
before anyone joins."""

from __future__ import annotations

from typing import Any

from pbm.commands.arguments import PASSWORD, USERID
from pbm.commands.grammar import NUMBER, Arg, Args, Built, Command, Context, Reader, listed
from pbm.usecases.events import leagues, tournaments
from pbm.usecases.events.running import LEAVING_RULE
from pbm.usecases.queries.reading import Answer
from pbm.usecases.text import wrap


def _event(reader: Reader) -> dict[str, Any]:
    text = reader.word("T")
    if NUMBER.fullmatch(text) is None or int(text) == 0:
        raise reader.fail(f"T must be a tournament number like 3, not {text!r}.")
    return {"topic": text}  # the event's number: what the command is about


def _game(reader: Reader) -> dict[str, Any]:
    word = reader.word("GAME")
    name, _, variant = word.partition("/")
    if name.lower() not in reader.games:
        raise reader.fail(f"There is no game {name!r} here; games: {listed(reader.games)}.")
    return {"game": name.lower(), "variant": variant.lower() or None}


EVENT = Arg("T", _event)
GAME = Arg("GAME[/VARIANT]", _game)


def _number(args: Args) -> int:
    assert args.topic is not None
    return int(args.topic)


def _list(args: Args, ctx: Context) -> Built:
    return tournaments.ListEvents(ctx.sender), None


def _show(args: Args, ctx: Context) -> Built:
    return tournaments.ShowEvent(_number(args), ctx.sender), None


def _join(args: Args, ctx: Context) -> Built:
    return tournaments.JoinEvent(_number(args), ctx.sender), ctx.who(args)


def _leave(args: Args, ctx: Context) -> Built:
    return tournaments.LeaveEvent(_number(args), ctx.sender), ctx.who(args)


def _league_join(args: Args, ctx: Context) -> Built:
    assert args.game is not None
    return leagues.JoinLeague(args.game, ctx.sender, args.variant), ctx.who(args)


def _league_leave(args: Args, ctx: Context) -> Built:
    assert args.game is not None
    return leagues.LeaveLeague(args.game, ctx.sender, args.variant), ctx.who(args)


TOURNAMENT_HELP = "\n".join(
    [
        *wrap(
            "Tournaments are round robins of 3 to 14 players: every pairing plays at once, "
            "each player with White as often as can be (FIDE's Berger tables), or twice "
            "with colours swapped in a double round robin. One game, variant and time "
            "control for the whole event; vacations stop its clocks as any board's (an "
            "event may cap the days). The admin opens events; they start when full or "
            "at their date. You get one mail when it starts, listing all your boards, "
            "and one when it ends, with the final standings; each board's mail names it."
        ),
        "",
        *wrap(
            "Standings: a win 1, a draw 1/2, a loss 0. Ties are broken, in ICCF's order, "
            "by the number of wins, then Sonneborn-Berger, then the direct encounter; "
            "then the place is shared."
        ),
        "",
        *wrap("The leaving rule, before you join: " + LEAVING_RULE),
        "",
        "  tournament list                  the events open to join and those in play",
        "  tournament show T                the standings and the crosstable of T",
        "  tournament join T UID PASSWORD   enter T",
        "  tournament leave T UID PASSWORD  leave T (under the rule above)",
        "",
        *wrap(
            "Cups are knockouts of 4 to 64 players seeded by rating, the top seeds "
            "drawing byes: each match is two games with the colours swapped; a tie is "
            "decided by a third game, in which the higher seed has White and must win. "
            "Leaving or two losses on time lose the match."
        ),
        "",
        *wrap("Leagues: help league."),
    ]
)
LEAGUE_HELP = "\n".join(
    [
        *wrap(
            "Each game has a league: divisions of round robins by rating, renewed by "
            "themselves each season. When a season's last game ends the next one is made: "
            "the top 2 of each division move up and the bottom 2 move down; a player who lost "
            "more than half of his games on time drops out; everyone else is entered again "
            "unless he said league leave. New players join the lowest division with room."
        ),
        "",
        *wrap("In a division the leaving rule is a tournament's: " + LEAVING_RULE),
        "",
        "  league join GAME UID PASSWORD    enter the league of GAME, from next season",
        "  league leave GAME UID PASSWORD   leave it when this season ends",
        "  (GAME/VARIANT: the league of another variant than the game's first)",
        "",
        *wrap("Each division is a tournament: tournament list and tournament show T."),
    ]
)


def _help_tournament(args: Args, ctx: Context) -> Built:
    return Answer(ctx.sender, "pbm - help tournament", TOURNAMENT_HELP + "\n"), None


def _help_league(args: Args, ctx: Context) -> Built:
    return Answer(ctx.sender, "pbm - help league", LEAGUE_HELP + "\n"), None


COMMANDS = (
    Command(("tournament list",), (), "events open to join, and in play", _list),
    Command(("tournament show",), (EVENT,), "an event's standings and crosstable", _show),
    Command(("tournament join",), (EVENT, USERID, PASSWORD), "enter an event", _join),
    Command(
        ("tournament leave",),
        (EVENT, USERID, PASSWORD),
        "leave one (help tournament: the rule)",
        _leave,
    ),
    Command(
        ("league join",),
        (GAME, USERID, PASSWORD),
        "enter the league of GAME (and VARIANT)",
        _league_join,
    ),
    Command(
        ("league leave",), (GAME, USERID, PASSWORD), "leave it at the season's end", _league_leave
    ),
    Command(
        ("help tournament",),
        (),
        "how events are played, and the leaving rule",
        _help_tournament,
    ),
    Command(("help league",), (), "how leagues run", _help_league),
)
