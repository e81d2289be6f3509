"""The admin's events: ``pbm tournament create|start|list|show|cancel`` and ``pbm league
create|season|list``. A thin layer over the use cases; what they change is mailed to the
players as any change is."""

from __future__ import annotations

import click

from pbm.cli.output import emit, json_option
from pbm.cli.rules import parse_options
from pbm.cli.startup import NOW_HELP, open_site, parse_now, parse_time
from pbm.store.events import EventStatus
from pbm.usecases import unit
from pbm.usecases.events import leagues, tournaments
from pbm.usecases.text import fmt_time

TIME_HELP = (
    'The time control: "classic 7/21", "days 3", "fischer 10d+36h max 10d", "ICCF 10/50d" '
    "(default: the site's)."
)


@click.group()
def tournament() -> None:
    """Round robins: create, start, list, show, cancel."""


@tournament.command("create")
@click.option("--game", "game_name", required=True, help="The game.")
@click.option("--kind", type=click.Choice(["roundrobin"]), default="roundrobin", show_default=True)
@click.option("--players", type=int, required=True, help="How many play.")
@click.option("--time", "time_control", default=None, metavar="SPEC", help=TIME_HELP)
@click.option("--double", is_flag=True, help="A double round robin: each pairing twice.")
@click.option("--starts", default=None, metavar="DATE", help="Start on this date if not full.")
@click.option("--vacation-days", type=int, default=None, help="The most vacation days it counts.")
@click.option("--variant", default=None, help="The game's variant (default: its first).")
@click.option("--option", "options", multiple=True, metavar="KEY=VALUE", help="A game option.")
@click.option("--name", default=None, help="Its name (default: game, kind and number).")
@click.option("--now", "now_text", default=None, metavar="ISO-TIME", help=NOW_HELP)
@click.pass_context
def create(
    ctx: click.Context,
    game_name: str,
    kind: str,
    players: int,
    time_control: str | None,
    double: bool,
    starts: str | None,
    vacation_days: int | None,
    variant: str | None,
    options: tuple[str, ...],
    name: str | None,
    now_text: str | None,
) -> None:
    """Open a tournament for entries; prints its number."""
    starts_at = None if starts is None else parse_time(starts, "--starts", "2026-12-01")
    with open_site(ctx, parse_now(now_text) if now_text else None) as site:
        action = tournaments.CreateEvent(
            game_name,
            players,
            time=time_control,
            double=double,
            starts_at=starts_at,
            vacation_days=vacation_days,
            variant=variant,
            options=parse_options(options),
            name=name,
            kind=kind,
        )
        unit.run(site, action)
        click.echo(tournaments.newest(site))


@tournament.command("start")
@click.argument("number", type=int, metavar="T")
@click.option("--now", "now_text", default=None, metavar="ISO-TIME", help=NOW_HELP)
@click.pass_context
def start(ctx: click.Context, number: int, now_text: str | None) -> None:
    """Start T with the players who joined (3 at least)."""
    with open_site(ctx, parse_now(now_text) if now_text else None) as site:
        replies = unit.run(site, tournaments.StartEvent(number))
        click.echo(f"tournament {number} started: {len(replies)} player(s) told")


@tournament.command("cancel")
@click.argument("number", type=int, metavar="T")
@click.pass_context
def cancel(ctx: click.Context, number: int) -> None:
    """Cancel T and its boards in play (the players are told)."""
    with open_site(ctx) as site:
        unit.run(site, tournaments.CancelEvent(number))
        click.echo(f"tournament {number} cancelled")


@tournament.command("result")
@click.argument("number", type=int, metavar="T")
@click.argument("board", type=int)
@click.argument("result", type=click.Choice(["1-0", "0-1", "1/2-1/2"]))
@click.pass_context
def result(ctx: click.Context, number: int, board: int, result: str) -> None:
    """Correct the result of a finished game of T (the standings follow)."""
    with open_site(ctx) as site:
        unit.run(site, tournaments.CorrectResult(number, board, result))
        click.echo(f"board {board}: {result}")


@tournament.command("list")
@click.option(
    "--status",
    type=click.Choice([*(s.value for s in EventStatus), "all"]),
    default=None,
    help="Only these (default: open and in play).",
)
@json_option
@click.pass_context
def list_(ctx: click.Context, status: str | None, as_json: bool) -> None:
    """Tournaments: number, name, game, status, players, games over."""
    statuses: tuple[str, ...] = (
        (EventStatus.OPEN, EventStatus.PLAYING)
        if status is None
        else tuple(EventStatus)
        if status == "all"
        else (status,)
    )
    with open_site(ctx) as site:
        found = tournaments.listed(site, statuses)
    records = [
        {
            "number": x.event.number,
            "name": x.event.name,
            "game": x.event.game,
            "variant": x.event.variant,
            "status": x.event.status.value,
            "players": f"{x.entries}/{x.event.players}",
            "games over": f"{x.finished}/{x.games}",
            "time control": x.event.time_control,
            "starts": fmt_time(x.event.starts_at) if x.event.starts_at else "-",
        }
        for x in found
    ]
    headers = ("number", "name", "game", "status", "players", "games over", "starts")
    emit(records, as_json, headers, lambda r: tuple(r[h] for h in headers))


@tournament.command("show")
@click.argument("number", type=int, metavar="T")
@click.pass_context
def show(ctx: click.Context, number: int) -> None:
    """The standings and the crosstable of T."""
    with open_site(ctx) as site:
        click.echo("\n".join(tournaments.shown(site, number)))


@click.group()
def league() -> None:
    """Leagues: one a game, divisions renewed each season."""


@league.command("create")
@click.argument("game_name", metavar="GAME")
@click.option("--time", "time_control", default=None, metavar="SPEC", help=TIME_HELP)
@click.option("--size", type=int, default=10, show_default=True, help="Players a division.")
@click.option("--vacation-days", type=int, default=None, help="The most vacation days it counts.")
@click.option("--variant", default=None, help="The game's variant (default: its first).")
@click.pass_context
def league_create(
    ctx: click.Context,
    game_name: str,
    time_control: str | None,
    size: int,
    vacation_days: int | None,
    variant: str | None,
) -> None:
    """Make GAME's league.

    Without it, the first entry by mail makes one with the site's defaults.
    """
    with open_site(ctx) as site:
        unit.run(site, leagues.CreateLeague(game_name, time_control, size, vacation_days, variant))
        click.echo(f"{game_name} league made")


@league.command("season")
@click.argument("game_name", metavar="GAME")
@click.option("--variant", default=None, help="The league's variant (default: the game's first).")
@click.option("--now", "now_text", default=None, metavar="ISO-TIME", help=NOW_HELP)
@click.pass_context
def season(ctx: click.Context, game_name: str, variant: str | None, now_text: str | None) -> None:
    """Run GAME's season change by hand (its first season too)."""
    with open_site(ctx, parse_now(now_text) if now_text else None) as site:
        replies = unit.run(site, leagues.SeasonChange(game_name, variant))
        click.echo(f"{game_name} league: a new season; {len(replies)} mail(s)")


@league.command("list")
@json_option
@click.pass_context
def league_list(ctx: click.Context, as_json: bool) -> None:
    """Leagues: game, variant, season, members, divisions.

    Each division is a tournament; its number is shown with it.
    """
    with open_site(ctx) as site:
        found = leagues.listed(site)
    records = [
        {
            "game": x.league.game,
            "variant": x.league.variant,
            "season": x.league.season,
            "members": x.members,
            "divisions": " ".join(str(e.number) for e in x.divisions) or "-",
        }
        for x in found
    ]
    headers = ("game", "variant", "season", "members", "divisions")
    emit(records, as_json, headers, lambda r: tuple(r[h] for h in headers))


def register(main: click.Group) -> None:
    """Add ``tournament`` and ``league`` to the ``pbm`` group."""
    main.add_command(tournament)
    main.add_command(league)
